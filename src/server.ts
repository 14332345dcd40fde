import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildApp, makeDeps } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db.ts';
import { finishInterruptedBulk } from './load/bulk.ts';
import { loadFiles } from './load/loader.ts';
import { expandPaths } from './load/sources.ts';
import { registry } from './registry/index.ts';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const log = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers["service-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
  });
  log.info(config.databaseUrl ? 'connecting to DATABASE_URL' : `starting the embedded PostgreSQL in ${path.resolve(config.dataDir)}`);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    persistent: true,
    max: config.dbPoolSize,
    statementTimeoutMs: config.statementTimeoutMs,
    log: (m) => log.debug({ postgres: m.trim() }),
  });
  const rebuilt = await finishInterruptedBulk(db.sql);
  if (rebuilt) log.warn(`recreated ${rebuilt} index(es) left behind by an interrupted bulk load`);

  if (db.embedded && config.loadDemoData && existsSync(FIXTURES)) {
    const [{ any }] = await db.sql<{ any: boolean }[]>`select exists (select 1 from resource) as any`;
    if (!any) {
      const s = await loadFiles(db.sql, registry, await expandPaths([FIXTURES]), {
        onReject: (where, reason) => log.warn(`demo data: ${where}: ${reason}`),
      });
      log.info(`demo data loaded from fixtures/: ${s.inserted} resources`);
    }
  }

  const deps = makeDeps(config, db.sql, registry);
  const app = await buildApp(deps, { loggerInstance: log });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal}: closing (in-flight requests finish first)`);
    const force = setTimeout(() => process.exit(1), 15000);
    force.unref();
    try {
      await app.close();
      await db.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  const where = config.publicBaseUrl ?? `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  log.info(`FHIR server ready: ${where}/fhir/v2 (deprecated v1: ${where}/fhir/v1), database ${db.embedded ? 'embedded' : 'DATABASE_URL'}`);
}

main().catch((err) => {
  console.error(`server failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
