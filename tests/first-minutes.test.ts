/**
 * What a newcomer meets in the first minutes, over a real socket with the bytes curl sends and the
 * default settings: accents typed into a URL, misspelt or unsupported parameters, broken
 * percent-encoding (in the query string and in a POST _search body).
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { parseRaw, rawRequest } from './helpers/raw-http.ts';
import { API_KEY, matchIds, type Bundle } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
await load(db, [path.join(FIXTURES, 'directory')]);
await app.listen({ port: 0, host: '127.0.0.1' });
const port = (app.server.address() as { port: number }).port;

/** A request as curl writes it: the target's bytes as given (raw UTF-8 included), the key, a form body. */
async function curl(target: string, body?: string, extra = '') {
  const head = `${body === undefined ? 'GET' : 'POST'} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\nSERVICE-API-KEY: ${API_KEY}\r\n${extra}`;
  const bytes = body === undefined
    ? Buffer.from(`${head}Connection: close\r\n\r\n`, 'utf8')
    : Buffer.from(`${head}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`, 'utf8');
  const res = parseRaw(await rawRequest(port, bytes));
  return { ...res, json: () => JSON.parse(res.body) };
}
const issueOf = (res: { json(): { resourceType: string; issue: { code: string; diagnostics: string; expression?: string[] }[] } }) => {
  const o = res.json();
  if (o.resourceType !== 'OperationOutcome') throw new Error(`not an OperationOutcome: ${JSON.stringify(o).slice(0, 200)}`);
  return o.issue[0];
};
/** The diagnostics of the warning entry of a searchset (search.mode = outcome). */
const warningsOf = (b: Bundle) =>
  (b.entry ?? []).filter((e) => e.search.mode === 'outcome').flatMap((e) => (e.resource.issue as { severity: string; diagnostics: string }[]).map((i) => `${i.severity}: ${i.diagnostics}`));

const LEFEVRE = ['pra-helene-lefevre', 'pra-jean-lefevre'];

t.test('an accent typed into the URL: a 400 that says how to send it, and each way it says works', async (t) => {
  const res = await curl('/fhir/v2/Practitioner?active=true&family=lefèvre');
  t.equal(res.status, 400);
  t.match(res.headers['content-type'], /^application\/fhir\+json/);
  t.equal(res.headers['x-content-type-options'], 'nosniff');
  const issue = issueOf(res);
  t.equal(issue.code, 'invalid');
  t.same(issue.expression, ['family'], 'names the parameter');
  t.match(issue.diagnostics, /percent-encode/);
  t.match(issue.diagnostics, /%C3%A9/, 'shows how an accent is written');
  t.match(issue.diagnostics, /curl -G --data-urlencode/);
  t.match(issue.diagnostics, /POST \[type\]\/_search/);
  t.match(issue.diagnostics, /family=lef%C3%A8vre/, 'and the parameter, encoded');

  const encoded = await curl('/fhir/v2/Practitioner?active=true&family=lef%C3%A8vre');
  t.equal(encoded.status, 200, 'percent-encoded as it says');
  t.same(matchIds(encoded.json()), LEFEVRE);
  const posted = await curl('/fhir/v2/Practitioner/_search', 'family=lefèvre');
  t.equal(posted.status, 200, 'raw UTF-8 in a form body (curl -d) is fine');
  t.same(matchIds(posted.json()), LEFEVRE);

  const inPath = await curl('/fhir/v2/Practitioner/pra-hélène');
  t.equal(inPath.status, 400);
  t.match(issueOf(inPath).diagnostics, /not percent-encoded.*%C3%A9/, 'in the path: the same advice, no parameter to name');
  t.equal(issueOf(inPath).expression, undefined);
});

t.test('ignored parameters are named in a warning entry; 400 under handling=strict', async (t) => {
  const cases: [string, string[], string, string][] = [
    ['Practitioner?familly=martin', [], 'familly', 'familly is not a search parameter of Practitioner (did you mean family?); ignored'],
    ['PractitionerRole?practitioner.foo=1', [], 'practitioner.foo', 'practitioner.foo: foo is not a search parameter of Practitioner; ignored'],
    ['Organization?_has:Foo:bar:baz=1', [], '_has:Foo:bar:baz', '_has:Foo:bar:baz: Foo is not a resource type of this server; ignored'],
    ['Practitioner?family=lefevre&_containedType=contained', LEFEVRE, '_containedType', 'parameter _containedType is not supported; ignored'],
    ['Practitioner?family=lefevre&_contained=true', LEFEVRE, '_contained', '_contained=true is not supported: contained resources are not searched; ignored'],
  ];
  for (const [query, matches, name, warning] of cases) {
    const res = await curl(`/fhir/v2/${query}`);
    t.equal(res.status, 200, query);
    const b = res.json() as Bundle;
    if (matches.length) t.same(matchIds(b), matches, `${query}: the other parameters apply`);
    else t.ok((b.entry?.length ?? 0) > 1, `${query}: the whole directory, as before`);
    t.same(warningsOf(b), [`warning: ${warning}`], `${query}: one warning naming it`);
    t.notMatch(b.link.find((l) => l.relation === 'self')?.url ?? '', new RegExp(name.replace(/[.:]/g, '\\$&')), 'left out of self');
    const strict = await curl(`/fhir/v2/${query}`, undefined, 'Prefer: handling=strict\r\n');
    t.equal(strict.status, 400, `${query} under handling=strict`);
    t.same({ code: issueOf(strict).code, expression: issueOf(strict).expression, diagnostics: issueOf(strict).diagnostics }, { code: 'not-supported', expression: [name], diagnostics: warning.replace(/; ignored$/, '') });
  }
  const clean = (await curl('/fhir/v2/Practitioner?family=lefevre')).json() as Bundle;
  t.same(warningsOf(clean), [], 'no warning entry when everything applies');
});

t.test('broken percent-encoding is a 400 naming the parameter, in the URL and in a form body', async (t) => {
  for (const [bad, name] of [['name=%E0%A4%A', 'name'], ['name=%C3%28', 'name'], ['family=100%', 'family'], ['given=%zz', 'given'], ['fa%C3mily=x', 'fa%C3mily']]) {
    for (const [how, res] of [['GET', await curl(`/fhir/v2/Practitioner?active=true&${bad}`)], ['POST', await curl('/fhir/v2/Practitioner/_search?active=true', bad)]] as const) {
      t.equal(res.status, 400, `${how} ${bad}`);
      const issue = issueOf(res);
      t.same({ code: issue.code, expression: issue.expression }, { code: 'invalid', expression: [name] }, `${how} ${bad}: names ${name}`);
      t.match(issue.diagnostics, /not valid percent-encoding/);
    }
  }
  const ok = await curl('/fhir/v2/Practitioner?given=h%C3%A9l%C3%A8ne&family=lef%C3%A8vre');
  t.equal(ok.status, 200, 'well-formed encoding');
  t.same(matchIds(ok.json()), ['pra-helene-lefevre']);
  const plus = await curl('/fhir/v2/Practitioner?family=le+gall');
  t.same(matchIds(plus.json()), ['pra-marie-le-gall', 'pra-yann-le-gall'], '+ is a space');
});
