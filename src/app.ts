import formbody from '@fastify/formbody';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { KeyStore } from './auth/keys.ts';
import type { Config } from './config.ts';
import { probePools, type PoolState, type Pools, type Sql } from './db.ts';
import { classifyDbError, RETRY_AFTER_SECONDS } from './db-errors.ts';
import { Exporter } from './export/exporter.ts';
import { formPairs } from './fhir/form-encoding.ts';
import { FhirError, outcome, type IssueType } from './fhir/outcome.ts';
import { Metrics } from './metrics.ts';
import type { Registry } from './registry/index.ts';
import { explorerRoutes } from './routes/explorer.ts';
import { exportRoutes } from './routes/export.ts';
import { fhirRoutes, FHIR_JSON } from './routes/fhir.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { REQUEST_ID_HEADER, requestId } from './request-id.ts';
import { terminologyRoutes } from './routes/terminology.ts';
import { clientErrorHandler, frameworkErrors, security } from './routes/security.ts';
import { DeadlineExceeded, SearchTimedOut } from './store/errors.ts';
import { executionPolicy } from './store/execution.ts';
import { SearchRouter } from './store/router.ts';
import type { ReplicaSet } from './store/replicas.ts';
import type { Tracing } from './tracing.ts';

/**
 * The application as a plugin-built instance that never listens: server.ts owns the port, the
 * logger and the signals; tests build it and use app.inject.
 */
export interface AppDeps {
  config: Config;
  /** the pool API keys are read from (src/auth/keys.ts). */
  sql: Sql;
  registry: Registry;
  /** searches and reads: lanes, replicas, the deadline (src/store/router.ts). */
  router: SearchRouter;
  /** API keys: verification with a short-lived in-memory copy (src/auth/keys.ts). */
  keys: KeyStore;
  /** bulk export jobs ($export): their queue, runs and files (src/export/exporter.ts). */
  exporter: Exporter;
  softwareVersion: string;
  startedAt: string;
  /** the demo data the OpenAPI examples are read from (src/routes/explorer.ts). */
  demoDir: string;
  /** the Prometheus metrics (src/metrics.ts), unless METRICS_ENABLED=false. */
  metrics?: Metrics;
  /** the OpenTelemetry SDK, started before the app when OTEL_EXPORTER_OTLP_ENDPOINT is set (src/tracing.ts). */
  tracing?: Pick<Tracing, 'plugin'>;
}

/** fixtures/directory: this file and the bundle (dist/server.js) are both one level deep. */
const DEMO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'directory');

/** `replicas`: hot standbys (DATABASE_READ_URL) that searches, reads and key checks run on. */
export function makeDeps(config: Config, db: Pools & { url?: string }, registry: Registry, softwareVersion = '0.1.0', replicas?: ReplicaSet): AppDeps {
  const router = new SearchRouter({
    pools: { sql: db.sql, generic: db.generic, heavy: db.heavy, count: db.count },
    replicas,
    cursorSecret: config.cursorSecret,
    includeCap: config.includeCap,
    policy: executionPolicy(config),
  });
  return {
    config,
    sql: db.sql,
    registry,
    keys: new KeyStore(db.sql, replicas ? { read: (work) => replicas.read((pools) => work(pools.sql)) } : {}),
    softwareVersion,
    startedAt: new Date().toISOString().slice(0, 10),
    demoDir: DEMO_DIR,
    router,
    metrics: config.metricsEnabled ? new Metrics({ router, sql: db.sql }) : undefined,
    exporter: new Exporter({
      sql: db.sql,
      url: db.url,
      dir: path.resolve(config.exportDir ?? path.join(config.dataDir, 'exports')),
      jobs: config.exportJobs,
      queue: config.exportQueue,
      ttlHours: config.exportTtlHours,
      fileBytes: config.exportFileBytes,
    }),
  };
}

const STATUS_CODE: Record<number, IssueType> = {
  400: 'invalid', 401: 'login', 403: 'forbidden', 404: 'not-found', 405: 'not-supported', 406: 'not-supported',
  408: 'timeout', 413: 'too-long', 414: 'too-long', 415: 'not-supported', 429: 'throttled', 431: 'too-long', 503: 'transient',
};

/**
 * The answer to a failure of storage: its typed failures (src/store/errors.ts) and the driver's
 * (src/db-errors.ts) are 503s; undefined for anything else.
 */
export function storageFailure(err: unknown): FhirError | undefined {
  if (err instanceof SearchTimedOut) return new FhirError(503, 'timeout', 'the search took too long and was cancelled; narrow it down with more selective parameters');
  if (err instanceof DeadlineExceeded) return new FhirError(503, 'transient', 'the database did not answer in time; try again');
  const failure = classifyDbError(err);
  if (failure === 'timeout') return new FhirError(503, 'timeout', 'the request took too long and was cancelled');
  if (failure === 'transient') return new FhirError(503, 'transient', 'the database is unavailable just now: try again');
  return undefined;
}

export async function buildApp(deps: AppDeps, opts: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    trustProxy: true,
    // Every log line of a request carries its id; an incoming X-Request-Id is kept when valid (src/request-id.ts).
    requestIdHeader: false,
    genReqId: requestId,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: deps.config.maxBodyBytes,
    routerOptions: { maxParamLength: 200 },
    clientErrorHandler: clientErrorHandler(deps.config),
    frameworkErrors: frameworkErrors(),
    ...opts,
  });

  // Traces first: @fastify/otel must see every hook and route that follows.
  if (deps.tracing) await app.register(deps.tracing.plugin);
  // Every answer names its request, errors included (the hooks that may refuse it come after).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header(REQUEST_ID_HEADER, req.id);
    done();
  });
  // Request metrics and GET /metrics: before any route, so that every route is given its kind (src/routes/metrics.ts).
  metricsRoutes(app, deps.metrics, deps.config);

  // Form bodies keep their order and repeated names (pairs, not an object), and are checked like query strings.
  await app.register(formbody, { bodyLimit: deps.config.maxBodyBytes, parser: (s: string) => formPairs(s) as never });
  app.addContentTypeParser(['application/fhir+json', 'application/json'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  // API keys, rate limits, URL length, security headers: root-level hooks (src/routes/security.ts).
  await security(app, deps);

  const answer = (reply: FastifyReply, err: FhirError) => {
    for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
    // Every 503 says when to come back (a timeout, keys that could not be checked …).
    if (err.status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return reply.code(err.status).type(FHIR_JSON).send(err.outcome);
  };
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    if (err instanceof FhirError) return answer(reply, err);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (body too large, bad content type, malformed body …)
      return reply.code(status).type(FHIR_JSON).send(outcome('error', STATUS_CODE[status] ?? 'invalid', err.message));
    }
    const failure = storageFailure(err);
    if (failure) {
      // Not a bug: the database is away, restarting or overloaded; the driver's cause stays in the log.
      const driver = classifyDbError(err);
      if (driver) req.log.warn({ err }, driver === 'timeout' ? 'statement timeout' : 'database unavailable');
      return answer(reply, failure);
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).type(FHIR_JSON).send(outcome('error', 'exception', 'internal server error'));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).type(FHIR_JSON).send(outcome('error', 'not-found', `No such endpoint: ${req.method} ${req.url.split('?')[0]}`));
  });

  app.get('/health', async () => ({ status: 'ok' }));
  // Ready when every pool runs `select 1` within PROBE_DEADLINE_MS. A heavy connection answers
  // only after the heavy search it runs: late while heavy searches run, it is busy, not broken.
  app.get('/ready', async (_req, reply) => {
    const pools: Record<string, PoolState> = await probePools(deps.router.pools);
    if (pools.heavy === 'timeout' && deps.router.lanes.heavy.load.active > 0) pools.heavy = 'busy';
    const failed = Object.keys(pools).filter((name) => pools[name] !== 'ok' && pools[name] !== 'busy');
    // With replicas, every database's state and lag; ready while one of them can answer a search.
    const databases = deps.router.replicas?.status();
    const serving = failed.length === 0 || databases?.some((d) => d.role === 'replica' && d.state === 'up');
    if (serving) return { status: 'ready', pools, ...(databases ? { databases } : {}) };
    return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).send({ status: 'unavailable', failed, pools, ...(databases ? { databases } : {}) });
  });

  await app.register(async (scope) => exportRoutes(scope, deps));
  await app.register(async (scope) => terminologyRoutes(scope, deps));
  await app.register(async (scope) => fhirRoutes(scope, deps));
  // The OpenAPI documents, /docs and the home page (src/routes/explorer.ts).
  await app.register(async (scope) => explorerRoutes(scope, deps));
  // Export jobs run once the app is ready and stop (back to the queue) when it closes.
  app.addHook('onReady', async () => deps.exporter.start(app.log));
  app.addHook('onClose', async () => deps.exporter.close());
  return app;
}
