// npm run bench -- --scale <s> [--duration <seconds>] [--skip-load] [--classes a,b] [--total-none] [--database-url <url>]
//
// Generates (or reuses) the dataset, measures the COPY floor and the loader (bulk and incremental),
// then drives the server over HTTP and the same SQL directly, class by class, at concurrency 1 and
// 16, with a Fastify hello-world as the HTTP ceiling, then every class mixed at 16. Writes
// bench/results/scale-<s>.{md,json} and, on a full national run, docs/performance.md.
// See bench/README.md.

import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { COPY_TABLES } from '../src/store/copy-encode.ts';
import { searchPoolOptions } from '../src/store/execution.ts';
import { SERVER_NODE_FLAGS } from '../src/node-flags.ts';
import { connectPools, connectUrl, migrate, splitPool, type Sql } from '../src/db.ts';
import { startEmbedded, type EmbeddedHandle } from '../src/embedded.ts';
import { LOADER_CONNECTIONS } from '../src/load/loader.ts';
import { buildClasses, CLASS_NAMES, inMixedRun, NEXT_PAGE_SOURCES, searchPath, SINGLE_CONDITION, sortedDeepStarts, TOTAL_SOURCES, type ClassName, type QueryClass } from './classes.ts';
import {
  BENCH_DIR, diskPlan, existingDataset, formatBytes, freeBytes, generateDataset, incrementalSlice, sampleResources, scaleDir,
  type Dataset,
} from './dataset.ts';
import {
  floorRun, hashName, httpOk, httpRun, loadGeneratorName, log, mixedChildRun, portInUse, postmasterOf, probe, setOwnRoots, startChild, treeCpuMs, withCpu,
  type Child, type RunStats,
} from './drive.ts';
import { runLoadJob } from './load-child.ts';
import { exportBench, renderExport, type ExportBench } from './export.ts';
import { explainPage, floorRunner, prepareOps, type FloorOp } from './floor.ts';
import { CHART, evaluateTargets, renderChart, renderMarkdown, renderPerformance, type BenchResult, type ClassResult, type LoadFigures } from './report.ts';
import { deepWalk, fetchPaths, nextPages, sortedDeep } from './walk.ts';
import { replicaScenario } from './replica.ts';
import { mirrorScenario } from './mirror.ts';
import { openDataScenario, renderOpenData, type OpenDataFigures } from './open-data.ts';

const USAGE = `usage: npm run bench -- [options]

  --scale <s>                 dataset scale (1 = 1.8 M practitioners), default 0.1
  --duration <seconds>        per class and concurrency, default 10
  --skip-load                 reuse the database loaded by an earlier run (bench/data/scale-<s>/db)
  --classes a,b               only these query classes (default: all): ${CLASS_NAMES.join(', ')}
                              (deep: the three deep-walk classes; mixed: the mixed run over the classes chosen,
                              or over every class when alone; in the default form, alternated with _total=none)
  --total-none                the variant: _total=none appended to every path (total-accurate aside)
  --database-url <url>        an external PostgreSQL instead of the embedded one; its database must be
                              empty unless --skip-load (a scratch database bench_incr is created next to it)
  --seed <n>                  dataset and sampling seed, default 1
  --port <n>                  server port on 127.0.0.1, default 18431 (hello-world: port + 1)
  --incremental <fraction>    share of the dataset loaded incrementally, default 0.1 (0 = skip)
  --sample <n>                resources sampled per type to draw query values from, default 2000
  --out <dir>                 report folder, default bench/results
  --mixed-only                the mixed run over the classes chosen, without measuring each
  --server-dir <dir>          the searches served by another checkout's build (npm run build there), same database
  --replica                   the replica scenario instead (bench/replica.ts): searches at c=16 on a hot
                              standby while --incremental is loaded on its primary; replica-scale-<s>.md

  --export                    also the bulk export scenario: a full $export against the COPY floor, the
                              server's RSS, identifier lookups at c=16 during exports (bench/export.ts)

  --mirror                    also mirror the database from the server with npm run sync, then a 1 % change set (bench/mirror.ts)

  --open-data                 also the open-data import: npm run import of generated extracts against npm run load --bulk
                              of the same resources, a daily re-import, lookups during an import (bench/open-data.ts)
  -h, --help`;

const CONCURRENCY = [1, 16];
const DEFAULT_OUT = path.join(BENCH_DIR, 'results');
const PERFORMANCE_DOC = path.join(BENCH_DIR, '..', 'docs', 'performance.md');
/** From this heading on, docs/performance.md is written by hand (measurements behind constants of the code) and kept by every run. */
const KEPT_HEADING = '## Measurements behind the code';

async function keptPart(file: string): Promise<string> {
  const text = existsSync(file) ? await readFile(file, 'utf8') : '';
  const at = text.indexOf(`\n${KEPT_HEADING}\n`);
  return at < 0 ? '' : text.slice(at + 1);
}
const MIXED_CONCURRENCY = 16;
/** The mixed run lasts this long at least: a class's p99 needs a few hundred of its requests, not 50. */
const MIXED_MIN_S = 30;
/** Pairs of mixed runs (default form, then `_total=none`) in a run of the default form. */
const MIXED_PAIRS = 2;

/** A path with `_total=none` appended, unless it says `_total` or is a next link (its total is carried). */
const withoutCount = (p: string) => (/[?&](_total|_cursor)=/.test(p) ? p : `${p}${p.includes('?') ? '&' : '?'}_total=none`);
const BENCH_KEY = 'bench-key-5c1f0e7a2b';
/** The server's CURSOR_SECRET: the same in every run, so that collected next links stay valid. */
const CURSOR_SECRET = 'bench-cursor-secret-0123456789';
const MAIN_DB = 'bench';
const INCR_DB = 'bench_incr';

const withDb = (url: string, db: string) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
};
const dbOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const la = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

interface Options {
  scale: number;
  duration: number;
  skipLoad: boolean;
  classes: ClassName[];
  /** the variant: `_total=none` appended to every path. */
  totalNone: boolean;
  databaseUrl?: string;
  seed: number;
  port: number;
  incremental: number;
  /** --incremental given on the command line: with --skip-load, the incremental load still runs. */
  incrementalGiven: boolean;
  sample: number;
  out: string;
  /** --export: the bulk export scenario (bench/export.ts). */
  export: boolean;
  argv: string;
  replica: boolean;
  mirror: boolean;
  /** --open-data: the open-data import scenario (bench/open-data.ts). */
  openData: boolean;
  /** --server-dir: the checkout whose build serves the searches (another commit, from a git worktree). */
  serverDir?: string;
  /** --mixed-only: the mixed run over the classes chosen, without measuring each. */
  mixedOnly: boolean;
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      scale: { type: 'string', default: '0.1' },
      duration: { type: 'string', default: '10' },
      'skip-load': { type: 'boolean', default: false },
      classes: { type: 'string' },
      'total-none': { type: 'boolean', default: false },
      'database-url': { type: 'string' },
      seed: { type: 'string', default: '1' },
      port: { type: 'string', default: '18431' },
      incremental: { type: 'string' },
      sample: { type: 'string', default: '2000' },
      out: { type: 'string', default: DEFAULT_OUT },
      replica: { type: 'boolean', default: false },
      export: { type: 'boolean', default: false },
      mirror: { type: 'boolean', default: false },
      'open-data': { type: 'boolean', default: false },
      'server-dir': { type: 'string' },
      'mixed-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const num = (name: string, v: string, ok: (n: number) => boolean) => {
    const n = Number(v);
    if (!Number.isFinite(n) || !ok(n)) throw new Error(`--${name}: bad value "${v}"`);
    return n;
  };
  const classes = values.classes ? values.classes.split(',').map((s) => s.trim()).filter(Boolean) : [...CLASS_NAMES];
  const unknown = classes.filter((c) => !(CLASS_NAMES as readonly string[]).includes(c));
  if (unknown.length) throw new Error(`--classes: unknown ${unknown.join(', ')} (known: ${CLASS_NAMES.join(', ')})`);
  const url = values['database-url'];
  if (url !== undefined) {
    const u = new URL(url);
    if (!/^postgres(ql)?:$/.test(u.protocol)) throw new Error('--database-url must be a postgres:// URL');
    if (!['127.0.0.1', 'localhost', '[::1]', ''].includes(u.hostname)) throw new Error('--database-url: only a PostgreSQL on this machine (127.0.0.1) is accepted');
  }
  const serverDir = values['server-dir'] === undefined ? undefined : path.resolve(values['server-dir']);
  if (serverDir !== undefined && !existsSync(path.join(serverDir, 'package.json'))) throw new Error(`--server-dir: ${serverDir} holds no package.json`);
  return {
    scale: num('scale', values.scale!, (n) => n > 0 && n <= 40),
    duration: num('duration', values.duration!, (n) => n >= 1 && n <= 600),
    skipLoad: values['skip-load']!,
    classes: classes as ClassName[],
    totalNone: values['total-none']!,
    databaseUrl: url,
    seed: num('seed', values.seed!, (n) => Number.isInteger(n) && n >= 0),
    port: num('port', values.port!, (n) => Number.isInteger(n) && n > 1024 && n < 65535),
    incremental: num('incremental', values.incremental ?? '0.1', (n) => n >= 0 && n <= 1),
    incrementalGiven: values.incremental !== undefined,
    sample: num('sample', values.sample!, (n) => Number.isInteger(n) && n >= 10),
    out: values.out!,
    export: values.export!,
    argv: argv.join(' '),
    replica: values.replica!,
    mirror: values.mirror!,
    openData: values['open-data']!,
    serverDir,
    mixedOnly: values['mixed-only']!,
  };
}

/**
 * The floor of any load: the NDJSON COPYed into a one-column jsonb table, in its best form — the
 * table created in the COPY's own transaction and the rows written FREEZE, as the bulk loader writes
 * its tables (with wal_level=minimal, the embedded default, neither goes through the WAL).
 */
async function copyFloor(sql: Sql, ds: Dataset, postmaster: number | undefined): Promise<LoadFigures & { tableBytes: number }> {
  await sql`drop table if exists bench_copy_floor`;
  await sql`checkpoint`;
  const pg0 = treeCpuMs(postmaster);
  const t0 = performance.now();
  await sql.begin(async (tx) => {
    await tx`create table bench_copy_floor (doc jsonb)`;
    for (const f of ds.files) {
      const w = await tx`copy bench_copy_floor (doc) from stdin with (format csv, quote e'\\x01', delimiter e'\\x02', freeze)`.writable();
      await pipeline(createReadStream(f.path, { highWaterMark: 1 << 20 }), w);
    }
  });
  const ms = performance.now() - t0;
  const pg1 = treeCpuMs(postmaster);
  const [{ n, bytes }] = await sql<{ n: string; bytes: string }[]>`
    select count(*) as n, pg_total_relation_size('bench_copy_floor') as bytes from bench_copy_floor`;
  await sql`drop table bench_copy_floor`;
  await sql`checkpoint`;
  const resources = Number(n);
  if (resources !== ds.totalResources) throw new Error(`COPY floor: ${resources} rows for ${ds.totalResources} resources`);
  const cpu = pg0 === undefined || pg1 === undefined ? undefined : { pgMs: pg1 - pg0 };
  return { resources, bytes: ds.totalBytes, ms, rps: resources / (ms / 1000), tableBytes: Number(bytes), cpu };
}

function postmasterPid(pgdata: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function databaseStats(sql: Sql): Promise<BenchResult['database'] & { resources: number }> {
  const [{ size }] = await sql<{ size: string }[]>`select pg_database_size(current_database()) as size`;
  const tables: Record<string, number> = {};
  const rows: Record<string, number> = {};
  for (const t of COPY_TABLES) {
    const [r] = await sql<{ bytes: string; n: number }[]>`
      select pg_total_relation_size(${t}::regclass) as bytes, greatest(reltuples, 0)::float8 as n from pg_class where oid = ${t}::regclass`;
    tables[t] = Number(r.bytes);
    rows[t] = Math.round(r.n);
  }
  const [{ n }] = await sql<{ n: string }[]>`select count(*) as n from resource`;
  return { embedded: false, sizeBytes: Number(size), tables, rows, resources: Number(n) };
}

async function main(): Promise<number> {
  let opts: Options | undefined;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!opts) {
    console.log(USAGE);
    return 0;
  }
  if (opts.replica) {
    const headers = { 'service-api-key': BENCH_KEY, accept: 'application/fhir+json' };
    return replicaScenario({ ...opts, headers, apiKey: BENCH_KEY, cursorSecret: CURSOR_SECRET });
  }
  const started = new Date();
  const commit = gitCommit();
  const loadavg: Record<string, number[]> = { 'at start': la() };
  const notes: string[] = [];
  // The server's configuration as it will run (the environment passes through to it: WORKERS,
  // DB_POOL_SIZE, HEAVY_SEARCHES, METRICS_ENABLED …), with the bench's key and no limit per key.
  const config = loadConfig({ ...process.env, API_KEYS: BENCH_KEY, RATE_LIMIT: '0', MAX_CONCURRENT_PER_KEY: '0' });
  const serverWorkers = config.workers || os.availableParallelism();
  const headers = { 'service-api-key': BENCH_KEY, accept: 'application/fhir+json' };
  const dir = scaleDir(opts.scale);
  await mkdir(dir, { recursive: true });
  for (const p of [opts.port, opts.port + 1]) {
    if (await portInUse(p)) {
      console.error(`port ${p} on 127.0.0.1 is in use: choose another with --port`);
      return 1;
    }
  }

  // 1. dataset
  let ds = await existingDataset(opts.scale, opts.seed);
  const reused = ds !== undefined;
  if (!ds) {
    const plan = diskPlan(opts.scale, { haveDataset: false, load: !opts.skipLoad, incremental: opts.incremental > 0 });
    const free = await freeBytes(dir);
    if (free < plan.total) {
      console.error(
        `not enough free disk for scale ${opts.scale}: ${formatBytes(free)} free under ${dir}, about ${formatBytes(plan.total)} needed ` +
          `(NDJSON ${formatBytes(plan.ndjson)}, database ${formatBytes(plan.db)}, WAL up to ${formatBytes(plan.wal)}, incremental copy ${formatBytes(plan.incrementalCopy)}, +10 %)`,
      );
      return 1;
    }
    log(`generating scale ${opts.scale} into ${dir} (about ${formatBytes(plan.ndjson)})`);
    ds = await generateDataset(opts.scale, opts.seed, log);
  } else {
    log(`reusing the dataset in ${dir} (${ds.totalResources.toLocaleString('en-US')} resources, ${formatBytes(ds.totalBytes)})`);
  }
  const files = ds.files.map((f) => f.path); // dependency order: Organization, Practitioner, PractitionerRole, Device, HealthcareService

  // 2. query values
  log(`sampling ${opts.sample} resources per type`);
  const samples = await sampleResources(ds, opts.sample, opts.seed);
  const all = buildClasses(samples, opts.seed, opts.totalNone);
  // `--classes mixed` alone: the mixed run over every class, without measuring them one by one;
  // with --mixed-only, over the classes chosen.
  const mixedAll = opts.classes.length === 1 && opts.classes[0] === 'mixed';
  const mixedOnly = mixedAll || opts.mixedOnly;
  const wanted = (n: ClassName) => mixedAll || opts.classes.includes(n) || (opts.mixedOnly && n === 'mixed');

  // 3. database
  let handle: EmbeddedHandle | undefined;
  let adminUrl: string;
  let mainUrl: string;
  if (opts.databaseUrl) {
    mainUrl = opts.databaseUrl;
    adminUrl = withDb(mainUrl, dbOf(mainUrl) === 'postgres' ? 'template1' : 'postgres');
  } else {
    log(`starting the embedded PostgreSQL in ${path.join(dir, 'db')}`);
    // A national server's share of the memory, not the embedded default's laptop share.
    handle = await startEmbedded({ dataDir: path.join(dir, 'db'), persistent: true, profile: { sharedBuffers: '40%' }, log: () => {} });
    adminUrl = handle.url;
    mainUrl = withDb(handle.url, MAIN_DB);
  }
  // CPU accounting: the benchmark's own processes are this one (and its children) and, when
  // embedded, the postmaster and its backends; the rest of the machine's CPU use is someone else's.
  const admin = connectUrl(adminUrl, { max: 2 });
  // A DATABASE_URL is a local cluster (benchmarks target loopback only): its postmaster is found the same way.
  const postmaster = handle ? postmasterPid(path.join(dir, 'db', 'pg')) : await postmasterOf(admin);
  setOwnRoots([process.pid, ...(postmaster ? [postmaster] : [])], postmaster);
  const children: Child[] = [];
  const pools: Sql[] = [admin];
  const cleanup = async () => {
    for (const c of children.splice(0)) await c.stop().catch(() => {});
    for (const p of pools.splice(0)) await p.end({ timeout: 5 }).catch(() => {});
    await handle?.stop().catch(() => {});
  };
  const onSignal = () => void cleanup().then(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const result: Partial<BenchResult> = { notes, explain: [] };
  try {
    const [{ server_version: pgVersion }] = await admin<{ server_version: string }[]>`show server_version`;
    const [{ exists: mainExists }] = await admin<{ exists: boolean }[]>`select exists (select 1 from pg_database where datname = ${dbOf(mainUrl)}) as exists`;

    if (!opts.skipLoad) {
      let reclaim = 0;
      if (!opts.databaseUrl && mainExists) {
        const [{ size }] = await admin<{ size: string }[]>`select pg_database_size(${MAIN_DB}) as size`;
        reclaim = Number(size);
      }
      const plan = diskPlan(opts.scale, { haveDataset: true, load: true, incremental: opts.incremental > 0 });
      const free = (await freeBytes(dir)) + reclaim;
      if (free < plan.total) {
        console.error(`not enough free disk to load scale ${opts.scale}: ${formatBytes(free)} available, about ${formatBytes(plan.total)} needed ` +
          `(database ${formatBytes(plan.db)}, WAL up to ${formatBytes(plan.wal)}, incremental copy ${formatBytes(plan.incrementalCopy)})`);
        return 1;
      }
      if (!opts.databaseUrl) {
        await admin.unsafe(`drop database if exists ${ident(MAIN_DB)} with (force)`);
        await admin.unsafe(`create database ${ident(MAIN_DB)}`);
      }
    } else if (!mainExists) {
      console.error(`--skip-load: there is no loaded database ${dbOf(mainUrl)}; run once without --skip-load`);
      return 1;
    }
    let main = connectUrl(mainUrl, { max: LOADER_CONNECTIONS });
    pools.push(main);
    await migrate(main);
    const [{ any }] = await main<{ any: boolean }[]>`select exists (select 1 from resource) as any`;

    if (!opts.skipLoad) {
      if (any) {
        console.error(`the database ${dbOf(mainUrl)} is not empty: the bulk load needs an empty one (or use --skip-load)`);
        return 1;
      }
      log(`COPY floor: ${ds.totalResources.toLocaleString('en-US')} lines into a one-column jsonb table`);
      const copy = await copyFloor(main, ds, postmaster);
      log(`  ${Math.round(copy.rps).toLocaleString('en-US')} resources/s (${(copy.ms / 1000).toFixed(1)} s)`);
      result.copyFloor = copy;

      log('loader without the database: read + parse + extract only');
      result.parseOnly = await runLoadJob<LoadFigures & { workers: number }>({ kind: 'parse-only', files });
      result.parseOnly.ratioToCopy = result.parseOnly.rps / copy.rps;
      log(`  ${Math.round(result.parseOnly.rps).toLocaleString('en-US')} resources/s, ${Math.round(result.parseOnly.indexRowsPerS!).toLocaleString('en-US')} index rows/s`);

      log('bulk load with the loader');
      const bulk = await runLoadJob({ kind: 'load', url: mainUrl, files, bulk: true, label: 'bulk', postmaster });
      bulk.bytes = ds.totalBytes;
      bulk.ratioToCopy = bulk.rps / copy.rps;
      log(`  ${Math.round(bulk.rps).toLocaleString('en-US')} resources/s, ${Math.round(bulk.indexRowsPerS!).toLocaleString('en-US')} index rows/s (${(bulk.ms / 1000).toFixed(1)} s)`);
      result.bulk = bulk;

      if (opts.incremental > 0) {
        // CREATE DATABASE … TEMPLATE needs the source without sessions: our pool to it is closed first.
        await main.end({ timeout: 5 });
        pools.splice(pools.indexOf(main), 1);
        result.incremental = await incremental(opts, ds, admin, mainUrl, copy.rps, postmaster);
        main = connectUrl(mainUrl, { max: LOADER_CONNECTIONS });
        pools.push(main);
      } else {
        result.incremental = { skipped: '--incremental 0' };
      }
    } else if (!any) {
      console.error(`--skip-load: the database ${dbOf(mainUrl)} is empty; run once without --skip-load`);
      return 1;
    } else if (opts.incrementalGiven && opts.incremental > 0) {
      // Incremental load on the loaded database; its floor is a COPY of the same slice.
      const slice = await incrementalSlice(ds, opts.incremental);
      log(`COPY floor of the incremental slice: ${slice.count.toLocaleString('en-US')} lines`);
      const sliceDs: Dataset = { ...ds, files: ds.files.map((f) => ({ ...f, path: path.join(slice.dir, path.basename(f.path)) })), totalResources: slice.count, totalBytes: slice.bytes };
      const copy = await copyFloor(main, sliceDs, postmaster);
      log(`  ${Math.round(copy.rps).toLocaleString('en-US')} resources/s (${(copy.ms / 1000).toFixed(1)} s)`);
      result.copyFloor = { ...copy, method: 'COPY of the incremental slice (this run loaded nothing else)' };
      await main.end({ timeout: 5 });
      pools.splice(pools.indexOf(main), 1);
      result.incremental = await incremental(opts, ds, admin, mainUrl, copy.rps, postmaster);
      main = connectUrl(mainUrl, { max: LOADER_CONNECTIONS });
      pools.push(main);
    }
    // The loads leave gigabytes of dirty pages: written out now, not by a checkpoint during the searches.
    await main`checkpoint`;
    const stats = await databaseStats(main);
    const { resources: loaded, ...database } = stats;
    database.embedded = !opts.databaseUrl;
    if (loaded < ds.totalResources) notes.push(`the database holds ${loaded} resources, the dataset ${ds.totalResources}`);
    await main.end({ timeout: 5 });
    pools.splice(pools.indexOf(main), 1);

    // 4. servers
    loadavg['before the searches'] = la();
    const logFile = path.join(dir, 'server.log');
    log(`starting the server on 127.0.0.1:${opts.port} (log: ${logFile})`);
    // The server as `npm start` runs it: its build (npm run build), with the same node flags.
    // --server-dir: another commit's build on the same database and paths (alternated runs of two builds).
    const serverDir = opts.serverDir ?? process.cwd();
    const built = spawnSync('npm', ['run', 'build'], { encoding: 'utf8', cwd: serverDir });
    if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr || built.stdout}`);
    if (opts.serverDir) {
      const other = gitCommit(serverDir);
      notes.push(`The server is the build of ${serverDir}${other ? ` at commit ${other.id}${other.dirty ? ' (with uncommitted changes)' : ''}` : ''}, not this checkout's.`);
    }
    const startServer = () => startChild(path.join(serverDir, 'dist', 'server.js'), [], {
      PORT: String(opts.port), HOST: '127.0.0.1', DATABASE_URL: mainUrl, RATE_LIMIT: '0', MAX_CONCURRENT_PER_KEY: '0', API_KEYS: BENCH_KEY,
      LOG_LEVEL: 'warn', LOAD_DEMO_DATA: 'false', CURSOR_SECRET, EXPORT_DIR: path.join(dir, 'exports'),
    }, logFile, () => httpOk(`http://127.0.0.1:${opts.port}/ready`), 120_000, SERVER_NODE_FLAGS); // as `npm start` runs it
    let server = await startServer();
    children.push(server);
    /** Restarts the server if it is gone (noted in the report); true when it had to. */
    const ensureServer = async (where: string): Promise<boolean> => {
      const gone = server.exited();
      if (!gone) return false;
      const msg = `the server process ended during ${where} (exit code ${gone.code}, signal ${gone.signal}); it was restarted and the run repeated`;
      log(`  ${msg}`);
      notes.push(msg);
      children.splice(children.indexOf(server), 1);
      server = await startServer();
      children.push(server);
      return true;
    };
    const serverRun = async <T extends RunStats>(where: string, run: () => Promise<T>): Promise<T> => {
      await ensureServer(`the run before ${where}`);
      const st = await withCpu(server.proc.pid, run);
      return (await ensureServer(where)) ? withCpu(server.proc.pid, run) : st;
    };
    const hello = await startChild(path.join('bench', 'hello.ts'), [String(opts.port + 1)], {}, path.join(dir, 'hello.log'),
      () => httpOk(`http://127.0.0.1:${opts.port + 1}/hello`));
    children.push(hello);

    // The floor runs on as many connections as the server has in all (its WORKERS processes with
    // DB_POOL_SIZE each), split between the pools as the server splits them (src/db.ts), the counts'
    // pool timing out at TOTAL_BUDGET_MS as the server's does.
    const floorPools = connectPools(mainUrl, searchPoolOptions(config, serverWorkers));
    pools.push(floorPools.sql, floorPools.generic, floorPools.heavy, floorPools.count);
    const floorSearch = floorRunner(floorPools, config);
    const base = `http://127.0.0.1:${opts.port}`;

    log('hello-world ceiling');
    const ceiling = [];
    for (const c of CONCURRENCY) {
      const http = await withCpu(hello.proc.pid, () => httpRun({ port: opts.port + 1, paths: ['/hello'], concurrency: c, durationS: opts.duration, headers, seed: opts.seed }));
      ceiling.push({ concurrency: c, http });
      log(`  c=${c}: ${Math.round(http.rps)} req/s, p99 ${http.p99.toFixed(2)} ms`);
    }
    result.ceiling = ceiling;

    // The classes whose paths are next links of this server, collected before any class runs.
    const collected = new Map<ClassName, QueryClass[]>();
    const variant = (description: string) => ({ concurrency: CONCURRENCY, totalNone: opts.totalNone, description });
    if (wanted('deep')) {
      const first = searchPath('Practitioner', [['_count', '1000']], opts.totalNone);
      log(`deep walk: ${first} following the next links`);
      await ensureServer('start-up');
      const walk = await deepWalk(opts.port, first, headers);
      const { windows, ...w } = walk;
      result.deepWalk = w;
      log(`  ${walk.pages} pages in ${(walk.totalMs / 1000).toFixed(1)} s; first ${walk.firstPageMs.toFixed(1)} ms, ` +
        walk.depths.map((d) => `${d.label} ${d.ms.toFixed(1)} ms`).join(', '));
      collected.set('deep', windows.map((x) => ({
        name: x.name,
        paths: x.paths,
        ...variant(x.name === 'deep-first' ? `${first}, first page`
          : `next links of the 5 pages ending at ${walk.depths[x.name === 'deep-mid' ? 0 : 1].label} (page ${walk.depths[x.name === 'deep-mid' ? 0 : 1].page})`),
      })));
    }
    if (wanted('next-page')) {
      // up to 200 first pages of each source class, spread over its paths
      const firsts = NEXT_PAGE_SOURCES.flatMap((n) => {
        const p = all.get(n)!.paths;
        const step = Math.max(1, Math.floor(p.length / 200));
        return p.filter((_, i) => i % step === 0).slice(0, 200);
      });
      log(`next-page: the next links of ${firsts.length} first pages (${NEXT_PAGE_SOURCES.join(', ')})`);
      await ensureServer('start-up');
      const paths = await nextPages(opts.port, firsts, headers);
      collected.set('next-page', [{
        name: 'next-page', paths,
        ...variant(`the next link of the first page of sampled ${NEXT_PAGE_SOURCES.join(', ')} searches (${paths.length} of ${firsts.length} have one), as the server wrote it`),
      }]);
    }
    if (wanted('sorted-deep')) {
      const depth = 100_000;
      log(`sorted-deep: the pages at depth ${depth.toLocaleString('en-US')} (or half the matches) of each sort, through next links of pages of 1000`);
      await ensureServer('start-up');
      const deep = await sortedDeep(opts.port, sortedDeepStarts(samples, opts.totalNone), headers, depth);
      const at = deep.depths.map((d) => `${d.label} at ${d.depth.length ? d.depth.map((x) => x.toLocaleString('en-US')).join(', ') : 'none (too few matches)'}`);
      log(`  ${at.join('; ')}`);
      collected.set('sorted-deep', [{
        name: 'sorted-deep', paths: deep.paths,
        ...variant(`the sorted-first sorts at depth ${depth.toLocaleString('en-US')} (or half the matches): a next link reached with _count=1000, taken without _count (a default page), each sort drawn as often; depths: ${at.join('; ')}`),
      }]);
    }
    // How often the first pages of broad searches carry a total (up to 200 paths per class, each once).
    const sources = TOTAL_SOURCES.filter(wanted);
    if (sources.length) {
      log(`totals: the first pages of ${sources.join(', ')}, each once`);
      await ensureServer('start-up');
      result.totals = [];
      for (const n of sources) {
        const paths = [...new Set(all.get(n)!.paths)].slice(0, 200);
        let withTotal = 0;
        await fetchPaths(opts.port, paths, headers, 1, 120_000, (_, text) => {
          if (/"total":\d/.test(text.slice(0, 600))) withTotal++;
        });
        result.totals.push({ class: n, single: SINGLE_CONDITION.includes(n), pages: paths.length, withTotal });
        log(`  ${n}: ${withTotal} of ${paths.length} with a total`);
      }
    }
    const classes: QueryClass[] = CLASS_NAMES.filter(wanted).flatMap((n) => all.get(n) ?? collected.get(n) ?? []);
    for (const c of classes) {
      const distinct = new Set(c.paths).size;
      if (distinct < 20 && c.name !== 'total-accurate' && !c.name.startsWith('deep-')) notes.push(`class ${c.name} has only ${distinct} distinct paths`);
    }

    const out: ClassResult[] = [];
    const floorOps = new Map<string, FloorOp[]>();
    for (const cls of mixedOnly ? [] : classes) {
      if (cls.paths.length === 0) {
        log(`${cls.name}: no paths, skipped`);
        continue;
      }
      const seed = hashName(cls.name) ^ opts.seed;
      const ops = await prepareOps(floorSearch, config, base, cls.paths);
      floorOps.set(cls.name, ops);
      const res: ClassResult = {
        name: cls.name, description: cls.description, distinctPaths: new Set(cls.paths).size, examplePath: cls.paths[0],
        totalNone: cls.totalNone, loadavg1: os.loadavg()[0], runs: [],
      };
      log(`${cls.name}: ${cls.paths.length} paths (load average ${res.loadavg1.toFixed(2)})`);
      // Warm-up, not recorded: every path once (the measured runs draw from these paths, and their
      // pages must come from memory, as on a server that has been serving), then one second at c=4.
      const warm = await fetchPaths(opts.port, [...new Set(cls.paths)], headers, 4, 120_000);
      log(`  warm-up: ${warm.done} of ${res.distinctPaths} paths in ${(warm.ms / 1000).toFixed(1)} s`);
      await serverRun(`${cls.name} warm-up`, () => httpRun({ port: opts.port, paths: cls.paths, concurrency: 4, durationS: 1, headers, seed: seed + 1 }));
      for (const c of cls.concurrency) {
        const http = await serverRun(`${cls.name} c=${c}`, () => httpRun({ port: opts.port, paths: cls.paths, concurrency: c, durationS: opts.duration, headers, seed }));
        const floor = await withCpu(undefined, () => floorRun(floorSearch, ops, c, opts.duration, seed));
        const ratio = http.rps / floor.rps;
        res.runs.push({ concurrency: c, http, floor, ratio });
        log(`  c=${c}: HTTP ${Math.round(http.rps)} req/s p50 ${http.p50.toFixed(2)} p99 ${http.p99.toFixed(2)} max ${http.max.toFixed(1)} err ${http.errors}` +
          ` (server ${http.serverCpuPct?.toFixed(0)} % CPU, ${http.serverCpuMsPerReq?.toFixed(2)} ms/req; PostgreSQL ${http.dbCpuMsPerReq?.toFixed(2)} ms/req; machine ${http.machineBusyPct?.toFixed(0)} % busy, ${http.stealPct?.toFixed(0)} % stolen)` +
          ` | floor ${Math.round(floor.rps)} req/s p50 ${floor.p50.toFixed(2)} p99 ${floor.p99.toFixed(2)} err ${floor.errors} | ratio ${ratio.toFixed(2)}`);
        if (http.errors) await describeErrors(cls, opts.port, headers, notes, http);
        if (floor.errors) notes.push(`${cls.name} c=${c}: ${floor.errors} floor errors, first: ${floor.firstError}`);
      }
      out.push(res);
    }
    result.classes = out;

    // The mixed run: every class measured above but the deep walk's and total-accurate, drawn uniformly.
    const mixable = classes.filter((c) => c.paths.length && inMixedRun(c.name));
    if (wanted('mixed') && mixable.length) {
      const durationS = Math.max(opts.duration, MIXED_MIN_S);
      if (mixedOnly) {
        log(`mixed: warm-up, every path of ${mixable.length} classes once`);
        await fetchPaths(opts.port, [...new Set(mixable.flatMap((c) => c.paths))], headers, 4, 600_000);
      }
      // In the default form, alternated with the same paths without counts: what the totals cost.
      const forms: ('default' | 'none')[] = opts.totalNone ? ['none'] : Array.from({ length: 2 * MIXED_PAIRS }, (_, i) => (i % 2 ? 'none' : 'default'));
      for (const [i, form] of forms.entries()) {
        const none = form === 'none' && !opts.totalNone;
        log(`mixed${forms.length > 1 ? ` ${i + 1}/${forms.length}, ${form === 'none' ? '_total=none' : 'default form'}` : ''}: ${mixable.length} classes at c=${MIXED_CONCURRENCY} for ${durationS} s`);
        const mixed = await serverRun('the mixed run', () => mixedChildRun({
          port: opts.port, classes: mixable.map((c) => ({ name: c.name, paths: none ? c.paths.map(withoutCount) : c.paths })), concurrency: MIXED_CONCURRENCY,
          durationS, headers, seed: hashName('mixed') ^ opts.seed,
        }));
        if (forms.length > 1) (result.mixedAlternated ??= []).push({ form, stats: mixed });
        if (i === 0) result.mixed = mixed;
        log(`  ${Math.round(mixed.rps)} req/s, p50 ${mixed.p50.toFixed(2)} p99 ${mixed.p99.toFixed(2)} max ${mixed.max.toFixed(1)} err ${mixed.errors}; ` +
          `CPU ms/req server ${mixed.serverCpuMsPerReq?.toFixed(2)}, PostgreSQL ${mixed.dbCpuMsPerReq?.toFixed(2)}`);
        for (const [name, st] of Object.entries(mixed.classes)) {
          if (i === 0) log(`    ${name}: ${st.requests} requests, p50 ${st.p50.toFixed(2)} p99 ${st.p99.toFixed(2)} max ${st.max.toFixed(1)} err ${st.errors}`);
          if (st.errors) notes.push(`mixed run ${i + 1} (${form}), ${name}: ${st.errors} errors, first: ${st.firstError}`);
        }
      }
    }

    let exported: ExportBench | undefined;
    if (opts.export) {
      await ensureServer('start-up');
      exported = await exportBench({
        port: opts.port, headers, url: mainUrl, serverPid: server.proc.pid!, identifierPaths: all.get('identifier')!.paths,
        durationS: opts.duration, seed: hashName('export') ^ opts.seed,
      });
    }

    if (opts.mirror) {
      await ensureServer('the run before the mirror');
      const inc = result.incremental && 'rps' in result.incremental ? result.incremental.rps : undefined;
      result.mirror = await mirrorScenario({ admin, upstreamDbUrl: mainUrl, upstream: `${base}/fhir/v2`, key: BENCH_KEY, incrementalRps: inc });
    }

    let openData: OpenDataFigures | undefined;
    if (opts.openData) {
      openData = await openDataScenario({
        admin, baseUrl: mainUrl, scale: opts.scale, seed: opts.seed, dir, port: opts.port + 2, headers, cursorSecret: CURSOR_SECRET,
        apiKey: BENCH_KEY, durationS: opts.duration,
      });
    }

    // 5. EXPLAIN of the classes whose statements are the slowest (c=1 floor p99; the deep pages and
    // the accurate count are plain index scans), each on the slowest of a few sampled paths
    const worst = [...out].filter((c) => !c.name.startsWith('deep') && c.name !== 'total-accurate' && c.runs[0]?.floor)
      .sort((a, b) => b.runs[0].floor!.p99 - a.runs[0].floor!.p99).slice(0, 4);
    for (const c of worst) {
      const ops = floorOps.get(c.name)!;
      let best: { path: string; plan: string; ms: number } | undefined;
      for (let i = 0; i < Math.min(8, ops.length); i++) {
        const op = ops[(i * 7919) % ops.length];
        const plan = await explainPage(floorSearch, op, config);
        const ms = [...plan.matchAll(/Execution Time: ([\d.]+)/g)].reduce((a, m) => a + Number(m[1]), 0);
        if (!best || ms > best.ms) best = { path: op.path, plan, ms };
      }
      if (best) result.explain!.push({ class: c.name, path: best.path, plan: best.plan });
    }
    loadavg['at the end'] = la();

    const finished = new Date();
    const report: BenchResult & { export?: ExportBench; openData?: OpenDataFigures } = {
      date: started.toISOString().slice(0, 10),
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      elapsedS: (finished.getTime() - started.getTime()) / 1000,
      commit,
      options: { ...opts, databaseUrl: opts.databaseUrl ? '(external)' : undefined, concurrency: CONCURRENCY, mixedConcurrency: MIXED_CONCURRENCY },
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? '?',
        memoryBytes: os.totalmem(),
        node: process.version,
        postgres: pgVersion,
        platform: `${os.type()} ${os.release()} ${os.arch()}`,
        loadavg,
      },
      dataset: {
        dir: path.relative(process.cwd(), ds.dir), seed: ds.seed,
        counts: Object.fromEntries(ds.files.map((f) => [f.type, f.count])),
        totalResources: ds.totalResources, bytes: ds.totalBytes, reused, generateMs: ds.generatedMs,
      },
      database,
      copyFloor: result.copyFloor,
      parseOnly: result.parseOnly,
      bulk: result.bulk,
      incremental: result.incremental,
      http: {
        loadGenerator: loadGeneratorName(16),
        loadGeneratorC1: loadGeneratorName(1),
        server: { workers: serverWorkers, dbPoolSize: config.dbPoolSize, heavySearches: config.heavySearches || os.availableParallelism(), metricsEnabled: config.metricsEnabled, searchParallelWorkers: config.searchParallelWorkers },
        floorPools: (({ max, genericMax }) => ({ custom: max, generic: genericMax }))(splitPool(config.dbPoolSize * serverWorkers)),
      },
      ceiling: result.ceiling!,
      classes: result.classes!,
      deepWalk: result.deepWalk,
      mixed: result.mixed,
      mixedAlternated: result.mixedAlternated,
      mirror: result.mirror,
      explain: result.explain!,
      targets: [],
      notes,
      export: exported,
      openData,
    };
    notes.push(`The load generator (${loadGeneratorName(16)} at concurrency 16), the server, PostgreSQL and the SQL floor share the same 2 cores: at concurrency 16 every figure includes that contention.`);
    const runs = [...report.ceiling, ...report.classes.flatMap((c) => c.runs)].flatMap((r) => [r.http, ...(r.floor ? [r.floor] : [])])
      .concat(report.mixed ? [report.mixed] : []);
    const steal = runs.map((r) => r.stealPct).filter((x): x is number => x !== undefined);
    if (steal.length) {
      const worst = Math.max(...steal);
      const mean = steal.reduce((a, b) => a + b, 0) / steal.length;
      notes.push(`CPU time stolen by the host (steal in /proc/stat: this VM's vCPUs were ready to run and the host ran something else) during the search runs: ${mean.toFixed(1)} % of the machine on average, ${worst.toFixed(1)} % at worst` +
        (worst > 5 ? ': the runs with high steal measure the host as much as the code (the figure is in the JSON, per run).' : '.'));
    }
    const others = runs.map((r) => r.othersBusyPct).filter((x): x is number => x !== undefined);
    if (others.length) {
      const worst = Math.max(...others);
      const mean = others.reduce((a, b) => a + b, 0) / others.length;
      notes.push(`CPU used by processes other than the benchmark's (other people's work on this machine): ${mean.toFixed(0)} % of the machine on average over the runs, ${worst.toFixed(0)} % at worst` +
        (worst > 10 ? ': the runs with a high "others %" are perturbed.' : '.') +
        ' The load averages count the benchmark\'s own processes too (16 busy backends at concurrency 16), so they are no measure of outside load.');
    }
    report.targets = evaluateTargets(report);
    await mkdir(opts.out, { recursive: true });
    // One report per scale and form, overwritten by the next such run (the history is in git); a
    // run on a subset of the classes does not overwrite the full one.
    const full = opts.classes.length === CLASS_NAMES.length;
    const stem = path.join(opts.out, `scale-${opts.scale}${opts.totalNone ? '-total-none' : ''}${full ? '' : mixedOnly ? '-mixed' : '-partial'}`);
    await writeFile(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(`${stem}.md`, renderMarkdown(report) + (exported ? renderExport(exported) : '') + (openData ? renderOpenData(openData) : ''));
    log(`report: ${stem}.md (${(report.elapsedS / 60).toFixed(1)} min)`);
    // docs/performance.md shows the national figures in the default form, from the report in bench/results.
    if (opts.scale === 1 && full && !opts.totalNone && path.resolve(opts.out) === path.resolve(DEFAULT_OUT)) {
      const sections = (exported ? renderExport(exported) : '') + (openData ? renderOpenData(openData) : '');
      const kept = await keptPart(PERFORMANCE_DOC);
      await writeFile(PERFORMANCE_DOC, renderPerformance(report, path.relative(path.dirname(PERFORMANCE_DOC), `${stem}.md`), { sections, kept }));
      await writeFile(path.join(path.dirname(PERFORMANCE_DOC), CHART), renderChart(report));
      log(`docs: ${path.relative(process.cwd(), PERFORMANCE_DOC)}`);
    }
    for (const t of report.targets) log(`  ${t.met === null ? 'n/a   ' : t.met ? 'met   ' : 'MISSED'} ${t.name}: ${t.measured} (goal ${t.goal})`);
    return 0;
  } finally {
    await cleanup();
  }
}

/** The commit measured, and whether src/ or bench/ had uncommitted changes. */
function gitCommit(cwd = process.cwd()): BenchResult['commit'] {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd });
  if (head.status !== 0) return undefined;
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'bench'], { encoding: 'utf8', cwd });
  return { id: head.stdout.trim(), dirty: status.status === 0 && status.stdout.trim() !== '' };
}

async function describeErrors(cls: QueryClass, port: number, headers: Record<string, string>, notes: string[], http: RunStats): Promise<void> {
  for (let i = 0; i < Math.min(40, cls.paths.length); i++) {
    const p = cls.paths[(i * 104729) % cls.paths.length];
    const r = await probe(port, p, headers).catch((e: Error) => ({ status: 0, ms: 0, body: e.message }));
    if (r.status < 200 || r.status >= 300) {
      notes.push(`${cls.name} c=${http.concurrency}: ${http.errors} errors; e.g. ${r.status} in ${r.ms.toFixed(0)} ms for ${p}: ${r.body.slice(0, 300)}`);
      return;
    }
  }
  notes.push(`${cls.name} c=${http.concurrency}: ${http.errors} errors under load (none when probing paths one at a time${http.firstError ? `; first socket error: ${http.firstError}` : ''})`);
}

/** The loader on top of a copy of the loaded database: new resources, indexes in place. */
async function incremental(opts: Options, ds: Dataset, admin: Sql, mainUrl: string, copyRps: number, postmaster: number | undefined): Promise<LoadFigures | { skipped: string }> {
  const slice = await incrementalSlice(ds, opts.incremental);
  log(`incremental load: ${slice.count.toLocaleString('en-US')} new resources (${(opts.incremental * 100).toFixed(0)} % slice, ids prefixed "b") on top of a copy of the loaded database`);
  const src = dbOf(mainUrl);
  const incrUrl = withDb(mainUrl, INCR_DB);
  try {
    await admin.unsafe(`drop database if exists ${ident(INCR_DB)} with (force)`);
    await admin.unsafe(`create database ${ident(INCR_DB)} template ${ident(src)} strategy file_copy`);
  } catch (err) {
    return { skipped: `could not copy the database (${(err as Error).message})` };
  }
  const sql = connectUrl(incrUrl, { max: LOADER_CONNECTIONS });
  try {
    // The copy's value indexes (where inserts land at random) are read into shared buffers first, as
    // a serving database's would be: its files were just written, and this machine's page cache does
    // not keep them.
    await sql`create extension if not exists pg_prewarm`;
    const t0 = performance.now();
    const [{ blocks }] = await sql<{ blocks: string }[]>`
      select coalesce(sum(pg_prewarm(c.oid)), 0) as blocks from pg_class c
      where c.relkind = 'i' and c.relnamespace = 'public'::regnamespace
        and c.relname not like '%\\_rid' and c.relname <> 'resource_pkey'`; // key indexes only grow at their right edge
    log(`  prewarmed the copy's indexes: ${formatBytes(Number(blocks) * 8192)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await sql`checkpoint`;
    const fig = await runLoadJob({ kind: 'load', url: incrUrl, files: slice.files, bulk: false, label: 'incremental', postmaster });
    fig.bytes = slice.bytes;
    fig.ratioToCopy = fig.rps / copyRps;
    fig.method = `${(opts.incremental * 100).toFixed(0)} % of every file (first lines, ids prefixed "b": inserts) loaded with \`loadFiles\` (batches of 1000), in a process of its own, into a copy of the loaded database (CREATE DATABASE … TEMPLATE, its indexes prewarmed), indexes in place`;
    log(`  ${Math.round(fig.rps).toLocaleString('en-US')} resources/s, ${Math.round(fig.indexRowsPerS!).toLocaleString('en-US')} index rows/s (${(fig.ms / 1000).toFixed(1)} s)`);
    return fig;
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${ident(INCR_DB)} with (force)`);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
