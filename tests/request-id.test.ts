import t from 'tap';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp, makeDeps } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { registry } from '../src/registry/index.ts';
import { FIXTURES, load } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { API_KEY } from './helpers/search.ts';

/** Request ids (src/request-id.ts): what a client's complaint quotes is found in the logs. */
const headers = { 'service-api-key': API_KEY };
const db = await testDatabase(t);
await load(db, [path.join(FIXTURES, 'directory')]);

t.test('request ids: kept when given and valid, made otherwise; in the response and every log line', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const deps = makeDeps(loadConfig({ API_KEYS: API_KEY, CURSOR_SECRET: 'test-secret-0123456789' }), db, registry);
  const app = await buildApp(deps, { loggerInstance: pino({ level: 'info' }, stream) });
  t.teardown(() => app.close());
  const logged = (id: string) => lines.filter((l) => l.requestId === id).map((l) => l.msg);
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  const given = 'client-7f3a:2026/11/27+retry=1';
  let res = await app.inject({ url: '/fhir/v2/Practitioner?_id=pra-helene-martin', headers: { ...headers, 'x-request-id': given } });
  t.equal(res.headers['x-request-id'], given, 'a valid id comes back as it was sent');
  t.same(logged(given), ['incoming request', 'request completed'], 'and names every log line of the request');

  res = await app.inject({ url: '/fhir/v2/Practitioner?_id=pra-helene-martin', headers });
  const made = String(res.headers['x-request-id']);
  t.match(made, uuid, 'none sent: a UUID is made');
  t.same(logged(made), ['incoming request', 'request completed'], 'and logged');

  res = await app.inject({ url: '/fhir/v2/Practitioner?_id=pra-helene-martin' });
  t.equal(res.statusCode, 401);
  t.match(String(res.headers['x-request-id']), uuid, 'a refused request has one too');

  for (const bad of ['a'.repeat(129), 'two words', '{"level":60}', 'id;drop', 'é', '']) {
    res = await app.inject({ url: '/health', headers: { 'x-request-id': bad } });
    const id = String(res.headers['x-request-id']);
    t.match(id, uuid, `${JSON.stringify(bad.slice(0, 20))}: replaced`);
    t.notOk(lines.some((l) => l.requestId === bad), 'and never logged');
  }
  res = await app.inject({ url: '/health', headers: { 'x-request-id': 'a'.repeat(128) } });
  t.equal(res.headers['x-request-id'], 'a'.repeat(128), '128 characters are accepted');
  t.match(String(res.headers['access-control-expose-headers']), /X-Request-Id/, 'browser apps may read it');
});
