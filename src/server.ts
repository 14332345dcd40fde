import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildApp, makeDeps } from './app.ts';
import { searchPoolOptions } from './store/execution.ts';
import { DEV_KEY_FILE, ensureCursorSecret, ensureDevKey } from './auth/dev-key.ts';
import { LOG_REDACT } from './auth/redact.ts';
import { ConfigError, listenHost, loadConfig, scaleOutProblem } from './config.ts';
import { connectUrl, endPools, openDatabase } from './db.ts';
import { loadDotEnv } from './env-file.ts';
import { finishInterruptedBulk } from './load/bulk.ts';
import { LOADER_CONNECTIONS, loadFiles } from './load/loader.ts';
import { answerMetricsRequests, isClusterWorker, runPrimary } from './cluster.ts';
import { serveMetrics } from './metrics.ts';
import { startTracing } from './tracing.ts';
import { expandPaths } from './load/sources.ts';
import { registry } from './registry/index.ts';
import { ReplicaSet } from './store/replicas.ts';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

async function main(): Promise<void> {
  let config;
  try {
    loadDotEnv();
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const scaleOut = scaleOutProblem(config);
  if (scaleOut) {
    console.error(`configuration error: ${scaleOut}`);
    process.exit(1);
  }
  const log = pino({
    level: config.logLevel,
    redact: LOG_REDACT,
  });
  const workers = config.workers || availableParallelism();
  const primary = workers > 1 && cluster.isPrimary;
  log.info(config.databaseUrl ? 'connecting to DATABASE_URL' : `starting the embedded PostgreSQL in ${path.resolve(config.dataDir)}`);
  const searchPools = searchPoolOptions(config);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    persistent: true,
    profile: { sharedBuffers: config.embeddedSharedBuffers },
    // The primary of several workers only prepares the database.
    ...(primary ? { max: LOADER_CONNECTIONS, genericMax: 1 } : searchPools),
    statementTimeoutMs: config.statementTimeoutMs,
    log: (m) => log.debug({ postgres: m.trim() }),
    warn: (m) => log.warn(m),
  });
  // What an interrupted bulk load left, and the demo data: on a pool of the loader's size, whatever
  // DB_POOL_SIZE is (a load holds several connections at once and would wait for itself on fewer).
  const loader = connectUrl(db.url, { max: LOADER_CONNECTIONS, statementTimeoutMs: 0 });
  try {
    await finishInterruptedBulk(loader, (m) => log.warn(m));
    if (db.embedded && config.loadDemoData && existsSync(FIXTURES)) {
      const [{ any }] = await loader<{ any: boolean }[]>`select exists (select 1 from resource) as any`;
      if (!any) {
        const s = await loadFiles(loader, registry, await expandPaths([FIXTURES]), {
          onReject: (where, reason) => log.warn(`demo data: ${where}: ${reason}`),
        });
        log.info(`demo data loaded from fixtures/: ${s.inserted} resources`);
      }
    }
  } finally {
    await loader.end({ timeout: 5 });
  }

  // The embedded default without API_KEYS: one development key, kept in DATA_DIR/dev-api-key and
  // shown here at every start (docs/security.md). It goes to stdout, never through the logger.
  let devKey: string | undefined;
  if (db.embedded && config.apiKeys.length === 0) {
    const dev = await ensureDevKey(db.sql, config.dataDir);
    devKey = dev.key;
    log.info(`${dev.created ? 'created a new' : 'using the'} development API key kept in ${dev.file}`);
  }
  // Without CURSOR_SECRET, the embedded default keeps one in DATA_DIR: next links outlive a restart.
  if (db.embedded && !config.cursorSecret) config = { ...config, cursorSecret: await ensureCursorSecret(config.dataDir) };

  const host = listenHost(config);
  const where = config.publicBaseUrl ?? `http://${host === '0.0.0.0' ? 'localhost' : host}:${config.port}`;
  const started = () => showStart({ where, host, docs: config.docsEnabled, devKey, dataDir: config.dataDir });
  if (primary) {
    await endPools(db);
    runPrimary({
      workers,
      // Workers join the prepared database (no embedded start, no demo data, no key of their own)
      // and sign cursors with one key; they listen where the primary would have.
      env: { DATABASE_URL: db.url, CURSOR_SECRET: config.cursorSecret ?? randomBytes(32).toString('base64url'), HOST: host },
      log,
      onListening: started,
      onExit: () => db.close(),
      // The workers' metrics, aggregated here; on METRICS_PORT by a listener of the primary's own.
      metrics: config.metricsEnabled ? { port: config.metricsPort, host } : undefined,
    });
    log.info(`${workers} workers starting on ${where}/fhir/v2`);
    return;
  }

  // Hot standbys: searches, reads and key checks on them, with pools of the same sizes.
  let replicas: ReplicaSet | undefined;
  if (config.databaseReadUrls.length > 0) {
    replicas = ReplicaSet.connect({ url: db.url, pools: db }, config.databaseReadUrls, { ...searchPools, statementTimeoutMs: config.statementTimeoutMs }, {
      maxLagS: config.maxReplicaLagS,
      log: (m) => log.warn(m),
    });
    await replicas.start();
    for (const d of replicas.status()) log.info(`${d.role} ${d.name}: ${d.state}${d.lagS ? ` (${d.lagS} s behind)` : ''}`);
  }
  const deps = makeDeps(config, db, registry, undefined, replicas);
  // Traces only when asked for: the SDK is loaded and installed before the app is built.
  const tracing = config.otelEndpoint ? await startTracing({ serviceVersion: deps.softwareVersion }) : undefined;
  if (tracing) log.info(`tracing: spans exported over OTLP to ${new URL(config.otelEndpoint!).origin}`);
  const app = await buildApp({ ...deps, tracing }, { loggerInstance: log });
  // Metrics: a worker of several answers the primary's scrapes; one process alone serves METRICS_PORT itself.
  if (deps.metrics && isClusterWorker()) answerMetricsRequests(() => deps.metrics!.registries());
  const metricsServer = deps.metrics && config.metricsPort !== undefined && !isClusterWorker()
    ? await serveMetrics(config.metricsPort, host, () => deps.metrics!.text(), (m) => log.warn(m))
    : undefined;
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal}: closing (in-flight requests finish first)`);
    const force = setTimeout(() => process.exit(1), 15000);
    force.unref();
    try {
      metricsServer?.close();
      await app.close();
      await tracing?.shutdown();
      await replicas?.close();
      await db.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host });
  const worker = isClusterWorker() ? `worker ${process.pid}: ` : '';
  log.info(`${worker}FHIR server ready: ${where}/fhir/v2 (deprecated v1: ${where}/fhir/v1), database ${db.embedded ? 'embedded' : 'DATABASE_URL'}`);
  if (!isClusterWorker()) started();
}

/**
 * Where to go once the server listens, for a person at the terminal: on stdout, never through the
 * logger (it holds the development key), with a curl line to paste as it is.
 */
function showStart(o: { where: string; host: string; docs: boolean; devKey?: string; dataDir: string }): void {
  const key = o.devKey ?? '<your key>';
  const listening = o.host === 'localhost'
    ? 'this machine only (localhost); HOST=0.0.0.0 to accept other machines'
    : o.host === '0.0.0.0' || o.host === '::' ? 'every interface' : o.host;
  const lines = [
    '',
    `Listening on:  ${listening}`,
    `Home page:     ${o.where}/`,
    ...(o.docs ? [`API explorer:  ${o.where}/docs`] : []),
    `FHIR base:     ${o.where}/fhir/v2 (an API key in the SERVICE-API-KEY header)`,
    ...(o.devKey ? ['', `Development API key (also in ${path.join(o.dataDir, DEV_KEY_FILE)}):`, `  ${o.devKey}`] : []),
    '',
    'Try it:',
    `  curl -H 'SERVICE-API-KEY: ${key}' '${o.where}/fhir/v2/Practitioner?name=martin'`,
  ];
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

main().catch((err) => {
  console.error(`server failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
