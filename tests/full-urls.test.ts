import t from 'tap';
import { FIXTURES, testApp } from './helpers/app.ts';

/**
 * Every fullUrl of a searchset is the address where its resource is read: included types a
 * version does not serve point to v2, where every stored type is read.
 */
const API_KEY = 'full-urls-test-key-0123';
const headers = { 'SERVICE-API-KEY': API_KEY };

interface Bundle {
  entry?: { fullUrl: string; resource: { resourceType: string; id: string }; search: { mode: string } }[];
  link: { relation: string; url: string }[];
}

t.test('the fullUrl of every match and include answers a read of that resource', async (t) => {
  const { app } = await testApp(t, { paths: [FIXTURES], env: { API_KEYS: API_KEY } });
  const searches = [
    '/fhir/v1/Organization?_revinclude=PractitionerRole:organization',
    '/fhir/v1/Organization?_revinclude=*&_include=*',
    '/fhir/v2/Organization?_revinclude=*&_include=*',
    '/fhir/v2/PractitionerRole?_include=*',
    '/fhir/v2/Practitioner?_revinclude=PractitionerRole:practitioner&_elements=name',
    '/fhir/v2/Location?near=48.853402|2.348785|10&_include=Location:organization&_count=2',
    '/fhir/v2/Location?near=48.853402|2.348785|10&_elements=name&_count=2',
  ];
  const seen = new Set<string>();
  for (const first of searches) {
    for (let url: string | undefined = first; url; ) {
      const res = await app.inject({ method: 'GET', url, headers });
      t.equal(res.statusCode, 200, url);
      const bundle = res.json() as Bundle;
      for (const e of bundle.entry ?? []) {
        if (e.search.mode === 'outcome') continue;
        seen.add(e.resource.resourceType);
        const read = await app.inject({ method: 'GET', url: e.fullUrl.replace('http://fhir.test', ''), headers });
        t.equal(read.statusCode, 200, `${e.fullUrl} (${e.search.mode} of ${first})`);
        const body = read.json() as { resourceType: string; id: string };
        t.same([body.resourceType, body.id], [e.resource.resourceType, e.resource.id], `${e.fullUrl} is that resource`);
      }
      url = bundle.link.find((l) => l.relation === 'next')?.url.replace('http://fhir.test', '');
    }
  }
  t.same([...seen].sort(), ['Device', 'HealthcareService', 'Location', 'Organization', 'Practitioner', 'PractitionerRole'], 'every stored type was met');
});

t.test('reads: every stored type in v2, only Organization in v1; Device and HealthcareService are not searched', async (t) => {
  const { app } = await testApp(t, { paths: [FIXTURES], env: { API_KEYS: API_KEY } });
  const v2 = (await app.inject({ method: 'GET', url: '/fhir/v2/metadata' })).json() as { rest: { resource: { type: string; interaction: { code: string }[] }[] }[] };
  const interactions = Object.fromEntries(v2.rest[0].resource.map((r) => [r.type, r.interaction.map((i) => i.code).join(',')]));
  t.same(interactions, { Practitioner: 'read,search-type', Organization: 'read,search-type', PractitionerRole: 'read,search-type', Location: 'read,search-type', Device: 'read', HealthcareService: 'read', CodeSystem: '' });
  const v1 = (await app.inject({ method: 'GET', url: '/fhir/v1/metadata' })).json() as { rest: { resource: { type: string }[] }[] };
  t.same(v1.rest[0].resource.map((r) => r.type), ['Organization', 'CodeSystem']);
  const openapi = (await app.inject({ method: 'GET', url: '/fhir/v2/openapi.json' })).json() as { paths: Record<string, unknown> };
  t.ok(openapi.paths['/Device/{id}'], 'OpenAPI: Device read');
  t.notOk(openapi.paths['/Device'], 'OpenAPI: no Device search');
  t.equal((await app.inject({ method: 'GET', url: '/fhir/v2/Device', headers })).statusCode, 404, 'no Device search');
  t.equal((await app.inject({ method: 'GET', url: '/fhir/v1/PractitionerRole/x', headers })).statusCode, 404, 'v1 reads Organization only');
  t.equal((await app.inject({ method: 'GET', url: '/fhir/v2/Device/no-such-device', headers })).statusCode, 404, 'an unknown Device');
});
