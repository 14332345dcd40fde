// npm run bench -- --scale <s> [--duration <seconds>] [--skip-load] [--classes a,b] [--database-url <url>]
//
// Generates (or reuses) the dataset, measures the COPY floor and the loader (bulk and incremental),
// then drives the server over HTTP and the same SQL directly, class by class, at concurrency 1 and
// 16, with a Fastify hello-world as the HTTP ceiling. Writes bench/results/<date>-scale-<s>.{md,json}.
// See bench/README.md.

import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { heavyWidth } from '../src/app.ts';
import { SERVER_NODE_FLAGS } from '../src/node-flags.ts';
import { connectPools, connectUrl, migrate, splitPool, type Sql } from '../src/db.ts';
import { startEmbedded, type EmbeddedHandle } from '../src/embedded.ts';
import { LOADER_CONNECTIONS } from '../src/load/loader.ts';
import { buildClasses, CLASS_NAMES, searchPath, type ClassName, type QueryClass } from './classes.ts';
import {
  BENCH_DIR, diskPlan, existingDataset, formatBytes, freeBytes, generateDataset, incrementalSlice, sampleResources, scaleDir,
  type Dataset,
} from './dataset.ts';
import {
  floorRun, hashName, httpOk, httpRun, loadGeneratorName, portInUse, probe, setOwnRoots, startChild, treeCpuMs, withCpu, type Child, type RunStats,
} from './drive.ts';
import { runLoadJob } from './load-child.ts';
import { explainPage, floorDeps, prepareOps, type FloorOp } from './floor.ts';
import { evaluateTargets, renderMarkdown, type BenchResult, type DeepWalk, type ClassResult, type LoadFigures } from './report.ts';

const USAGE = `usage: npm run bench -- [options]

  --scale <s>                 dataset scale (1 = 1.8 M practitioners), default 0.1
  --duration <seconds>        per class and concurrency, default 10
  --skip-load                 reuse the database loaded by an earlier run (bench/data/scale-<s>/db)
  --classes a,b               only these query classes (default: all): ${CLASS_NAMES.join(', ')}
  --database-url <url>        an external PostgreSQL instead of the embedded one; its database must be
                              empty unless --skip-load (a scratch database bench_incr is created next to it)
  --seed <n>                  dataset and sampling seed, default 1
  --port <n>                  server port on 127.0.0.1, default 18431 (hello-world: port + 1)
  --incremental <fraction>    share of the dataset loaded incrementally, default 0.1 (0 = skip)
  --sample <n>                resources sampled per type to draw query values from, default 2000
  --out <dir>                 report folder, default bench/results
  -h, --help`;

const CONCURRENCY = [1, 16];
const BENCH_KEY = 'bench-key-5c1f0e7a2b';
/** The server's CURSOR_SECRET, also the floor's: deep pages are next links the server signed. */
const CURSOR_SECRET = 'bench-cursor-secret-0123456789';
const MAIN_DB = 'bench';
const INCR_DB = 'bench_incr';

const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
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
  databaseUrl?: string;
  seed: number;
  port: number;
  incremental: number;
  /** --incremental given on the command line: with --skip-load, the incremental load still runs. */
  incrementalGiven: boolean;
  sample: number;
  out: string;
  argv: string;
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
      'database-url': { type: 'string' },
      seed: { type: 'string', default: '1' },
      port: { type: 'string', default: '18431' },
      incremental: { type: 'string' },
      sample: { type: 'string', default: '2000' },
      out: { type: 'string', default: path.join(BENCH_DIR, 'results') },
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
  return {
    scale: num('scale', values.scale!, (n) => n > 0 && n <= 40),
    duration: num('duration', values.duration!, (n) => n >= 1 && n <= 600),
    skipLoad: values['skip-load']!,
    classes: classes as ClassName[],
    databaseUrl: url,
    seed: num('seed', values.seed!, (n) => Number.isInteger(n) && n >= 0),
    port: num('port', values.port!, (n) => Number.isInteger(n) && n > 1024 && n < 65535),
    incremental: num('incremental', values.incremental ?? '0.1', (n) => n >= 0 && n <= 1),
    incrementalGiven: values.incremental !== undefined,
    sample: num('sample', values.sample!, (n) => Number.isInteger(n) && n >= 10),
    out: values.out!,
    argv: argv.join(' '),
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
  for (const t of ['resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx']) {
    const [r] = await sql<{ bytes: string; n: number }[]>`
      select pg_total_relation_size(${t}::regclass) as bytes, greatest(reltuples, 0)::float8 as n from pg_class where oid = ${t}::regclass`;
    tables[t] = Number(r.bytes);
    rows[t] = Math.round(r.n);
  }
  const [{ n }] = await sql<{ n: string }[]>`select count(*) as n from resource`;
  return { embedded: false, sizeBytes: Number(size), tables, rows, resources: Number(n) };
}

interface Walk extends DeepWalk {
  windows: { name: string; paths: string[] }[];
}

/** Follows the next links of Practitioner?_count=1000 to the end, one request at a time. */
async function deepWalk(port: number, headers: Record<string, string>): Promise<Walk> {
  const pageSize = 1000;
  const first = searchPath('Practitioner', [['_total', 'none'], ['_count', String(pageSize)]]);
  const pagePaths: string[] = [];
  const pageMs: number[] = [];
  const pageStart: number[] = [];
  let resources = 0;
  let next: string | undefined = first;
  const t0 = performance.now();
  let lastLog = Date.now();
  while (next) {
    const s = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${next}`, { headers });
    const text = await res.text();
    const ms = performance.now() - s;
    if (!res.ok) throw new Error(`deep walk: ${res.status} on page ${pagePaths.length}: ${text.slice(0, 300)}`);
    pagePaths.push(next);
    pageMs.push(ms);
    pageStart.push(resources);
    let n = 0;
    for (let i = text.indexOf('"mode":"match"'); i >= 0; i = text.indexOf('"mode":"match"', i + 1)) n++;
    resources += n;
    const m = /"relation":"next","url":"([^"]+)"/.exec(text.slice(0, 4096));
    next = m ? (() => { const u = new URL(m[1]); return u.pathname + u.search; })() : undefined;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(`  deep walk: ${pagePaths.length} pages, ${resources.toLocaleString('en-US')} resources`);
    }
  }
  const totalMs = performance.now() - t0;
  const depthTargets: { label: string; depth: number }[] = [
    resources > 200_000 ? { label: 'depth 100k', depth: 100_000 } : { label: 'depth 50 %', depth: Math.floor(resources / 2) },
    resources > 1_000_000 ? { label: 'depth 1M', depth: 1_000_000 } : { label: 'last page (100 %)', depth: pageStart.at(-1)! },
  ];
  const depths = depthTargets.map((t) => {
    const page = Math.min(pagePaths.length - 1, Math.floor(t.depth / pageSize));
    return { label: t.label, depth: pageStart[page], page, ms: pageMs[page] };
  });
  const win = (page: number) => pagePaths.slice(Math.max(1, page - 4), page + 1);
  return {
    pageSize,
    pages: pagePaths.length,
    resources,
    totalMs,
    firstPageMs: pageMs[0],
    depths,
    windows: [
      { name: 'deep-first', paths: [first] },
      { name: 'deep-mid', paths: win(depths[0].page) },
      { name: 'deep-last', paths: win(depths[1].page) },
    ],
  };
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
  const started = new Date();
  const loadavg: Record<string, number[]> = { 'at start': la() };
  const notes: string[] = [];
  // The server's configuration as it will run (the environment passes through to it: WORKERS,
  // DB_POOL_SIZE, HEAVY_SEARCHES …), with the bench's key and no rate limit.
  const config = loadConfig({ ...process.env, API_KEYS: BENCH_KEY, RATE_LIMIT: '0' });
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
  const all = buildClasses(samples, opts.seed);
  const wanted = (n: ClassName) => opts.classes.includes(n);
  for (const [name, c] of all) {
    if (c.paths.length < 20 && wanted(name) && name !== 'total-accurate') notes.push(`class ${name} has only ${c.paths.length} distinct paths in the sample`);
  }

  // 3. database
  let handle: EmbeddedHandle | undefined;
  let adminUrl: string;
  let mainUrl: string;
  if (opts.databaseUrl) {
    mainUrl = opts.databaseUrl;
    adminUrl = withDb(mainUrl, dbOf(mainUrl) === 'postgres' ? 'template1' : 'postgres');
  } else {
    log(`starting the embedded PostgreSQL in ${path.join(dir, 'db')}`);
    handle = await startEmbedded({ dataDir: path.join(dir, 'db'), persistent: true, profile: 'server', log: () => {} });
    adminUrl = handle.url;
    mainUrl = withDb(handle.url, MAIN_DB);
  }
  // CPU accounting: the benchmark's own processes are this one (and its children) and, when
  // embedded, the postmaster and its backends; the rest of the machine's CPU use is someone else's.
  const postmaster = handle ? postmasterPid(path.join(dir, 'db', 'pg')) : undefined;
  setOwnRoots([process.pid, ...(postmaster ? [postmaster] : [])]);
  const admin = connectUrl(adminUrl, { max: 2 });
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
    const built = spawnSync('npm', ['run', 'build'], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr || built.stdout}`);
    const startServer = () => startChild(path.join('dist', 'server.js'), [], {
      PORT: String(opts.port), HOST: '127.0.0.1', DATABASE_URL: mainUrl, RATE_LIMIT: '0', API_KEYS: BENCH_KEY,
      LOG_LEVEL: 'warn', LOAD_DEMO_DATA: 'false', CURSOR_SECRET,
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
    const serverRun = async (where: string, run: () => Promise<RunStats>): Promise<RunStats> => {
      await ensureServer(`the run before ${where}`);
      const st = await withCpu(server.proc.pid, run);
      return (await ensureServer(where)) ? withCpu(server.proc.pid, run) : st;
    };
    const hello = await startChild(path.join('bench', 'hello.ts'), [String(opts.port + 1)], {}, path.join(dir, 'hello.log'),
      () => httpOk(`http://127.0.0.1:${opts.port + 1}/hello`));
    children.push(hello);

    // The floor runs on as many connections as the server has in all (its WORKERS processes with
    // DB_POOL_SIZE each), split between the two pools as the server splits them (src/db.ts).
    const floorPools = connectPools(mainUrl, { ...splitPool(config.dbPoolSize * serverWorkers), heavyMax: heavyWidth(config) * serverWorkers });
    pools.push(floorPools.sql, floorPools.generic, floorPools.heavy);
    const floorSearch = floorDeps(floorPools, config, CURSOR_SECRET);
    const base = `http://127.0.0.1:${opts.port}`;

    log('hello-world ceiling');
    const ceiling = [];
    for (const c of CONCURRENCY) {
      const http = await withCpu(hello.proc.pid, () => httpRun({ port: opts.port + 1, paths: ['/hello'], concurrency: c, durationS: opts.duration, headers, seed: opts.seed }));
      ceiling.push({ concurrency: c, http });
      log(`  c=${c}: ${Math.round(http.rps)} req/s, p99 ${http.p99.toFixed(2)} ms`);
    }
    result.ceiling = ceiling;

    const classes: QueryClass[] = [...all.values()].filter((c) => wanted(c.name as ClassName));
    if (wanted('deep')) {
      log('deep walk: Practitioner?_count=1000 following the next links');
      await ensureServer('start-up');
      const walk = await deepWalk(opts.port, headers);
      const { windows, ...w } = walk;
      result.deepWalk = w;
      log(`  ${walk.pages} pages in ${(walk.totalMs / 1000).toFixed(1)} s; first ${walk.firstPageMs.toFixed(1)} ms, ` +
        walk.depths.map((d) => `${d.label} ${d.ms.toFixed(1)} ms`).join(', '));
      const ta = classes.findIndex((c) => c.name === 'total-accurate');
      const at = ta < 0 ? classes.length : ta;
      classes.splice(at, 0, ...windows.map((x) => ({
        name: x.name,
        description: x.name === 'deep-first' ? 'Practitioner?_total=none&_count=1000, first page'
          : `next links of the 5 pages ending at ${walk.depths[x.name === 'deep-mid' ? 0 : 1].label} (page ${walk.depths[x.name === 'deep-mid' ? 0 : 1].page})`,
        paths: x.paths,
        concurrency: CONCURRENCY,
        totalNone: true,
      })));
    }

    const out: ClassResult[] = [];
    const floorOps = new Map<string, FloorOp[]>();
    for (const cls of classes) {
      const seed = hashName(cls.name) ^ opts.seed;
      const ops = await prepareOps(floorPools, config, base, cls.paths);
      floorOps.set(cls.name, ops);
      const res: ClassResult = {
        name: cls.name, description: cls.description, distinctPaths: cls.paths.length, examplePath: cls.paths[0],
        totalNone: cls.totalNone, loadavg1: os.loadavg()[0], runs: [],
      };
      log(`${cls.name}: ${cls.paths.length} paths (load average ${res.loadavg1.toFixed(2)})`);
      // Warm-up, not recorded: every path once (the measured runs draw from these paths, and their
      // pages must come from memory, as on a server that has been serving), then one second at c=4.
      const warm = await warmPaths(opts.port, cls.paths, headers, 4, 120_000);
      log(`  warm-up: ${warm.done} of ${cls.paths.length} paths in ${(warm.ms / 1000).toFixed(1)} s`);
      await serverRun(`${cls.name} warm-up`, () => httpRun({ port: opts.port, paths: cls.paths, concurrency: 4, durationS: 1, headers, seed: seed + 1 }));
      for (const c of cls.concurrency) {
        const http = await serverRun(`${cls.name} c=${c}`, () => httpRun({ port: opts.port, paths: cls.paths, concurrency: c, durationS: opts.duration, headers, seed }));
        const floor = await withCpu(undefined, () => floorRun(floorSearch, ops, c, opts.duration, seed));
        const ratio = http.rps / floor.rps;
        res.runs.push({ concurrency: c, http, floor, ratio });
        log(`  c=${c}: HTTP ${Math.round(http.rps)} req/s p50 ${http.p50.toFixed(2)} p99 ${http.p99.toFixed(2)} max ${http.max.toFixed(1)} err ${http.errors}` +
          ` (server ${http.serverCpuPct?.toFixed(0)} % CPU, ${http.serverCpuMsPerReq?.toFixed(2)} ms/req; machine ${http.machineBusyPct?.toFixed(0)} % busy, ${http.stealPct?.toFixed(0)} % stolen)` +
          ` | floor ${Math.round(floor.rps)} req/s p50 ${floor.p50.toFixed(2)} p99 ${floor.p99.toFixed(2)} err ${floor.errors} | ratio ${ratio.toFixed(2)}`);
        if (http.errors) await describeErrors(cls, opts.port, headers, notes, http);
        if (floor.errors) notes.push(`${cls.name} c=${c}: ${floor.errors} floor errors, first: ${floor.firstError}`);
      }
      out.push(res);
    }
    result.classes = out;

    // 5. EXPLAIN of the classes whose statements are the slowest (c=1 floor p99; the deep pages and
    // the accurate count are plain index scans), each on the slowest of a few sampled paths
    const worst = [...out].filter((c) => !c.name.startsWith('deep') && c.name !== 'total-accurate' && c.runs[0]?.floor)
      .sort((a, b) => b.runs[0].floor!.p99 - a.runs[0].floor!.p99).slice(0, 4);
    for (const c of worst) {
      const ops = floorOps.get(c.name)!;
      let best: { path: string; plan: string; ms: number } | undefined;
      for (let i = 0; i < Math.min(8, ops.length); i++) {
        const op = ops[(i * 7919) % ops.length];
        const plan = await explainPage(floorPools, op, config);
        const ms = [...plan.matchAll(/Execution Time: ([\d.]+)/g)].reduce((a, m) => a + Number(m[1]), 0);
        if (!best || ms > best.ms) best = { path: op.path, plan, ms };
      }
      if (best) result.explain!.push({ class: c.name, path: best.path, plan: best.plan });
    }
    loadavg['at the end'] = la();

    const finished = new Date();
    const report: BenchResult = {
      date: started.toISOString().slice(0, 10),
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      elapsedS: (finished.getTime() - started.getTime()) / 1000,
      options: { ...opts, databaseUrl: opts.databaseUrl ? '(external)' : undefined, concurrency: CONCURRENCY },
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
        server: { workers: serverWorkers, dbPoolSize: config.dbPoolSize, heavySearches: config.heavySearches || os.availableParallelism() },
        floorPools: (({ max, genericMax }) => ({ custom: max, generic: genericMax }))(splitPool(config.dbPoolSize * serverWorkers)),
      },
      ceiling: result.ceiling!,
      classes: result.classes!,
      deepWalk: result.deepWalk,
      explain: result.explain!,
      targets: [],
      notes,
    };
    notes.push(`The load generator (${loadGeneratorName(16)} at concurrency 16), the server, PostgreSQL and the SQL floor share the same 2 cores: at concurrency 16 every figure includes that contention.`);
    const runs = [...report.ceiling, ...report.classes.flatMap((c) => c.runs)].flatMap((r) => [r.http, ...(r.floor ? [r.floor] : [])]);
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
    // a run on a subset of the classes does not overwrite the day's full report
    const partial = opts.classes.length < CLASS_NAMES.length ? '-partial' : '';
    // an earlier report of the same day is kept: this one gets the next free suffix (-2, -3 …)
    let stem = path.join(opts.out, `${report.date}-scale-${opts.scale}${partial}`);
    for (let n = 2; existsSync(`${stem}.json`) || existsSync(`${stem}.md`); n++) {
      stem = path.join(opts.out, `${report.date}-scale-${opts.scale}${partial}-${n}`);
    }
    await writeFile(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(`${stem}.md`, renderMarkdown(report));
    log(`report: ${stem}.md (${(report.elapsedS / 60).toFixed(1)} min)`);
    const missed = report.targets.filter((t) => t.met === false);
    for (const t of report.targets) log(`  ${t.met === null ? 'n/a   ' : t.met ? 'met   ' : 'MISSED'} ${t.name}: ${t.measured} (goal ${t.goal})`);
    void missed;
    return 0;
  } finally {
    await cleanup();
  }
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
/** Requests every path once, `concurrency` at a time, within `maxMs`. */
async function warmPaths(port: number, paths: string[], headers: Record<string, string>, concurrency: number, maxMs: number): Promise<{ done: number; ms: number }> {
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < paths.length && performance.now() - t0 < maxMs) {
      const res = await fetch(`http://127.0.0.1:${port}${paths[next++]}`, { headers });
      await res.arrayBuffer();
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { done, ms: performance.now() - t0 };
}

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
