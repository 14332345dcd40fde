import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { buildApp, makeDeps } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { registry } from '../src/registry/index.ts';
import { startTracing } from '../src/tracing.ts';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { API_KEY } from './helpers/search.ts';
import { freePort, getFresh, startServer } from './helpers/server.ts';

/**
 * Traces (src/tracing.ts): none without OTEL_EXPORTER_OTLP_ENDPOINT; with the SDK, a span per
 * request and per SQL statement, in the caller's trace, read back from the SDK's in-memory
 * exporter; and the real server posting them to an OTLP receiver.
 */
const headers = { 'service-api-key': API_KEY };
const db = await testDatabase(t);
await load(db, [path.join(FIXTURES, 'directory')]);

t.test('traces: none without the SDK; with it, a span per request and per statement', async (t) => {
  const off = await testApp(t, { db, env: { API_KEYS: API_KEY } });
  t.notOk(off.app.hasPlugin('@fastify/otel'), 'off: no request instrumentation');
  t.notOk(trace.getTracer('annuaire-fhir').startSpan('x').isRecording(), 'off: the API is a no-op');
  t.equal((await off.app.inject({ url: '/fhir/v2/Practitioner?identifier=810100000002', headers })).statusCode, 200);

  const exporter = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceVersion: 'test', exporter });
  t.teardown(() => tracing.shutdown());
  const deps = makeDeps(loadConfig({ API_KEYS: API_KEY, CURSOR_SECRET: 'test-secret-0123456789' }), db, registry);
  const app = await buildApp({ ...deps, tracing });
  t.teardown(() => app.close());
  t.ok(app.hasPlugin('@fastify/otel'), 'on: requests instrumented');
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';
  const res = await app.inject({
    url: '/fhir/v2/PractitionerRole?_id=role-paul-martin-cabinet&_include=*',
    headers: { ...headers, traceparent: `00-${traceId}-${parent}-01`, 'x-request-id': 'traced-1' },
  });
  t.equal(res.statusCode, 200);
  await app.inject({ url: '/metrics' });
  const spans = exporter.getFinishedSpans();
  const request = spans.find((s) => s.kind === SpanKind.SERVER);
  t.ok(request, 'a request span');
  t.equal(request?.name, 'GET /fhir/:version/:type', 'named by its route');
  t.equal(request?.spanContext().traceId, traceId, 'in the caller\'s trace (traceparent)');
  t.equal(request?.parentSpanContext?.spanId, parent, 'under the caller\'s span');
  t.equal(request?.attributes['url.path'], '/fhir/v2/PractitionerRole', 'its path without the search values');
  t.same(request?.attributes['http.request.header.x-request-id'], ['traced-1'], 'and the request id the logs know');
  t.equal(request?.attributes['http.response.status_code'], 200);
  const statements = spans.filter((s) => s.attributes['db.system'] === 'postgresql');
  t.ok(statements.length >= 2, `a span per statement (${statements.length}: the page and the includes)`);
  t.ok(statements.every((s) => s.spanContext().traceId === traceId), 'in the same trace (the scrape\'s statements, untraced, make none)');
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const ancestors = (s: (typeof spans)[number]) => {
    const out: string[] = [];
    for (let p = s.parentSpanContext?.spanId; p && byId.has(p); p = byId.get(p)!.parentSpanContext?.spanId) out.push(p);
    return out;
  };
  t.ok(statements.every((s) => ancestors(s).includes(request!.spanContext().spanId)), 'under the request\'s span');
  t.ok(statements.every((s) => /^\s*(select|explain|with)\b/i.test(String(s.attributes['db.query.text']))), 'with the statement\'s text');
  t.notOk(statements.some((s) => String(s.attributes['db.query.text']).includes('role-paul-martin-cabinet')), 'never its parameters');
  t.match(statements[0].name, /^[A-Z]+$/, 'named by its operation');
  t.notOk(spans.some((s) => String(s.attributes['url.path']).startsWith('/metrics')), 'scrapes are not traced');

  await tracing.shutdown();
  t.notOk(trace.getTracer('annuaire-fhir').startSpan('x').isRecording(), 'shut down: a no-op again');
});

t.test('the server with OTEL_EXPORTER_OTLP_ENDPOINT posts its spans to an OTLP receiver', async (t) => {
  const posts: { path: string; type: string; body: Buffer }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', type: String(req.headers['content-type']), body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.teardown(() => receiver.close());
  const port = await freePort();
  const proc = startServer(t, {
    PORT: String(port), DATABASE_URL: db.url, API_KEYS: API_KEY,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  t.equal(await proc.ready(1), 1, 'ready', { output: proc.output });
  t.match(proc.output, /tracing: spans exported over OTLP/, 'the log says so');
  const { status } = await getFresh(port, '/fhir/v2/Practitioner?identifier=810100000002', API_KEY);
  t.equal(status, 200);
  for (let i = 0; i < 50 && !posts.some((b) => b.body.includes('db.query.text')); i++) await new Promise((r) => setTimeout(r, 100));
  const traces = posts.filter((b) => b.path === '/v1/traces');
  t.ok(traces.length > 0, 'spans posted to <endpoint>/v1/traces');
  t.ok(traces.every((b) => b.type === 'application/x-protobuf'), 'as OTLP protobuf');
  const all = Buffer.concat(traces.map((b) => b.body));
  for (const text of ['annuaire-fhir', 'GET /fhir/:version/:type', 'db.query.text', 'postgresql']) t.ok(all.includes(text), `holding ${text}`);
  t.notOk(all.includes('810100000002'), 'and no search value');
  proc.server.kill('SIGTERM');
  t.equal(await proc.exited, 0, 'stops cleanly');
});
