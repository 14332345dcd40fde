// npm run bench -- --replica --scale <s> [--duration <seconds>] [--incremental <fraction>] [--classes a,b]
//
// The replica scenario (issue 28): a primary (wal_level=replica) bulk-loaded with the dataset and a
// hot standby made from its copy, both from the embedded binaries; the server as `npm start` runs
// it with DATABASE_URL on the primary and DATABASE_READ_URL on the standby. The searches of the
// mixed run at concurrency 16 run once on a quiet pair, then again while the incremental slice is
// loaded on the primary, and the standby's replay lag is sampled every second. Writes
// bench/results/replica-scale-<s>.{md,json}.

import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connectPools, endPools, migrate, connectUrl } from '../src/db.ts';
import { SERVER_NODE_FLAGS } from '../src/node-flags.ts';
import { ReplicaSet } from '../src/store/replicas.ts';
import { primaryCluster, replayed, standbyOf } from '../tests/helpers/replication.ts';
import { buildClasses, inMixedRun, type ClassName } from './classes.ts';
import { existingDataset, generateDataset, incrementalSlice, sampleResources, scaleDir } from './dataset.ts';
import { httpOk, log, mixedChildRun, startChild, type MixedStats, type RunStats } from './drive.ts';
import { runLoadJob } from './load-child.ts';
import type { LoadFigures } from './report.ts';

export interface ReplicaOptions {
  scale: number;
  seed: number;
  port: number;
  /** seconds of the quiet run, and of each run during the load. */
  duration: number;
  incremental: number;
  sample: number;
  classes: ClassName[];
  out: string;
  headers: Record<string, string>;
  apiKey: string;
  cursorSecret: string;
}

const CONCURRENCY = 16;
/** The server's MAX_REPLICA_LAG_S (its default): past it, its searches leave the standby. */
const SERVER_MAX_LAG_S = 30;
const TARGETS = { lagS: 10, slowestMs: 1000 };

/** Durable clusters tuned like the embedded server's, sharing the machine: a fifth of its memory each. */
function settings(): string[] {
  const mb = (share: number) => `${Math.max(128, Math.floor((os.totalmem() * share) / 2 ** 20))}MB`;
  return [
    `shared_buffers = ${mb(0.2)}`, `effective_cache_size = ${mb(0.3)}`, 'work_mem = 32MB', 'maintenance_work_mem = 1GB',
    // WAL kept for a standby that falls behind, and recycled segments, are copied with the primary:
    // enough for minutes of lag, not so much that the two copies outgrow the disk at scale 1.
    'max_wal_size = 4GB', 'wal_buffers = 128MB', 'checkpoint_timeout = 15min', 'random_page_cost = 1.1', 'jit = off',
    'max_connections = 200', "wal_keep_size = '2GB'",
  ];
}

export interface ReplicaReport {
  date: string;
  commit?: string;
  scale: number;
  machine: { cpus: number; memoryBytes: number };
  bulk: LoadFigures;
  incremental: LoadFigures;
  quiet: MixedStats;
  /** the runs made while the load ran, one after the other (the last may end after it). */
  during: MixedStats[];
  /** seconds since the load started, and the standby's lag then (null: not measurable). */
  lag: { s: number; lagS: number | null }[];
  /** seconds after the load ended until the standby had replayed all of it. */
  catchUpS: number;
  targets: { name: string; goal: string; measured: string; met: boolean }[];
}

export async function replicaScenario(o: ReplicaOptions): Promise<number> {
  const teardowns: (() => unknown)[] = [];
  const t = { teardown: (fn: () => unknown) => void teardowns.unshift(fn) };
  try {
    const ds = (await existingDataset(o.scale, o.seed)) ?? (await generateDataset(o.scale, o.seed, log));
    const samples = await sampleResources(ds, o.sample, o.seed);
    const classes = [...buildClasses(samples, o.seed).values()]
      .filter((c) => (o.classes as string[]).includes(c.name) && c.paths.length > 0 && inMixedRun(c.name))
      .map((c) => ({ name: c.name, paths: c.paths }));
    const dir = path.join(scaleDir(o.scale), 'replica');
    await mkdir(dir, { recursive: true });

    log(`primary (wal_level=replica) in ${dir}: bulk load of ${ds.totalResources.toLocaleString('en-US')} resources`);
    const primary = await primaryCluster(t, { dir, settings: settings() });
    const admin = connectUrl(primary.url, { max: 1 });
    await migrate(admin);
    await admin.end({ timeout: 5 });
    const bulk = await runLoadJob({ kind: 'load', url: primary.url, files: ds.files.map((f) => f.path), bulk: true, label: 'bulk' });
    log(`  ${Math.round(bulk.rps).toLocaleString('en-US')} resources/s; the standby: a copy of the stopped primary`);
    const standby = await standbyOf(t, primary);
    await replayed(primary, standby);

    const built = spawnSync('npm', ['run', 'build'], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr || built.stdout}`);
    const logFile = path.join(dir, 'server.log');
    log(`server on 127.0.0.1:${o.port}, searches on the standby (log: ${logFile})`);
    const server = await startChild(path.join('dist', 'server.js'), [], {
      PORT: String(o.port), HOST: '127.0.0.1', DATABASE_URL: primary.url, DATABASE_READ_URL: standby.url, RATE_LIMIT: '0', MAX_CONCURRENT_PER_KEY: '0',
      API_KEYS: o.apiKey, LOG_LEVEL: 'warn', LOAD_DEMO_DATA: 'false', CURSOR_SECRET: o.cursorSecret, MAX_REPLICA_LAG_S: String(SERVER_MAX_LAG_S),
    }, logFile, () => httpOk(`http://127.0.0.1:${o.port}/ready`), 120_000, SERVER_NODE_FLAGS);
    t.teardown(() => server.stop());

    // The lag as the server measures it (src/store/replicas.ts), never out of rotation here.
    const primaryPools = connectPools(primary.url, { max: 1, genericMax: 1 });
    const monitor = ReplicaSet.connect({ url: primary.url, pools: primaryPools }, [standby.url], { max: 1, genericMax: 1 }, { maxLagS: Number.MAX_SAFE_INTEGER });
    await monitor.start();
    t.teardown(async () => {
      await monitor.close();
      await endPools(primaryPools);
    });

    const run = (durationS: number) => mixedChildRun({ port: o.port, classes, concurrency: CONCURRENCY, durationS, headers: o.headers, seed: o.seed });
    log(`searches at c=${CONCURRENCY} on the quiet standby (${o.duration} s)`);
    const quiet = await run(o.duration);
    log(`  p50 ${quiet.p50.toFixed(1)} ms, p99 ${quiet.p99.toFixed(1)} ms, ${quiet.errors} errors`);

    const slice = await incrementalSlice(ds, o.incremental);
    log(`incremental load of ${slice.count.toLocaleString('en-US')} resources on the primary, searches on the standby meanwhile`);
    const t0 = Date.now();
    const lag: ReplicaReport['lag'] = [];
    const sampler = setInterval(() => lag.push({ s: Math.round((Date.now() - t0) / 100) / 10, lagS: monitor.status()[1].lagS }), 1000);
    let loading = true;
    const load = runLoadJob({ kind: 'load', url: primary.url, files: slice.files, bulk: false, label: 'incremental' }).finally(() => (loading = false));
    load.catch(() => {});
    const during: MixedStats[] = [];
    while (loading) during.push(await run(Math.min(o.duration, 5)));
    const incremental = await load;
    const loadEnd = Date.now();
    await replayed(primary, standby);
    const catchUpS = (Date.now() - loadEnd) / 1000;
    clearInterval(sampler);

    const worst = (f: (r: RunStats) => number) => Math.max(...during.map(f));
    const lags = lag.map((l) => l.lagS ?? 0);
    const maxLag = Math.max(0, ...lags);
    const errors = during.reduce((n, r) => n + r.errors, 0);
    const report: ReplicaReport = {
      date: new Date().toISOString().slice(0, 10),
      commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || undefined,
      scale: o.scale,
      machine: { cpus: os.cpus().length, memoryBytes: os.totalmem() },
      bulk,
      incremental,
      quiet,
      during,
      lag,
      catchUpS,
      targets: [
        { name: 'standby replay lag during the load', goal: `< ${TARGETS.lagS} s`, measured: `${maxLag.toFixed(1)} s at most`, met: maxLag < TARGETS.lagS },
        { name: 'slowest search during the load', goal: `< ${TARGETS.slowestMs} ms`, measured: `${worst((r) => r.max).toFixed(0)} ms`, met: worst((r) => r.max) < TARGETS.slowestMs },
        { name: 'failed searches during the load', goal: '0', measured: String(errors), met: errors === 0 },
      ],
    };
    await mkdir(o.out, { recursive: true });
    const stem = path.join(o.out, `replica-scale-${o.scale}`);
    await writeFile(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(`${stem}.md`, renderReplica(report));
    log(`report: ${stem}.md`);
    for (const x of report.targets) log(`  ${x.met ? 'met   ' : 'MISSED'} ${x.name}: ${x.measured} (goal ${x.goal})`);
    return 0;
  } finally {
    for (const fn of teardowns) await Promise.resolve(fn()).catch((err: unknown) => log(`cleanup: ${(err as Error).message}`));
  }
}

const row = (label: string, r: RunStats) =>
  `| ${label} | ${r.requests} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(0)} | ${r.errors} |`;

export function renderReplica(r: ReplicaReport): string {
  const every = Math.max(1, Math.round(r.lag.length / 30));
  const lagRows = r.lag.filter((_, i) => i % every === 0 || i === r.lag.length - 1).map((l) => `| ${l.s.toFixed(0)} | ${l.lagS === null ? '—' : l.lagS.toFixed(1)} |`);
  const past = r.lag.filter((l) => (l.lagS ?? 0) > SERVER_MAX_LAG_S).length;
  return [
    `# Replica scenario — scale ${r.scale} (${r.date}${r.commit ? `, ${r.commit}` : ''})`,
    '',
    `A primary bulk-loaded with the dataset (${Math.round(r.bulk.rps).toLocaleString('en-US')} resources/s with wal_level=replica) and a hot`,
    `standby; the server reads on the standby (DATABASE_READ_URL). Searches of the mixed run at c=${CONCURRENCY},`,
    `on ${r.machine.cpus} cores shared by both clusters, the server, the loader and the load generator.`,
    '',
    '| searches | requests | req/s | p50 ms | p99 ms | max ms | errors |',
    '|---|---|---|---|---|---|---|',
    row('without a load', r.quiet),
    ...r.during.map((d, i) => row(`during the load, run ${i + 1}`, d)),
    '',
    `Incremental load on the primary: ${r.incremental.resources.toLocaleString('en-US')} resources in ${(r.incremental.ms / 1000).toFixed(1)} s ` +
      `(${Math.round(r.incremental.rps).toLocaleString('en-US')} resources/s); the standby had replayed all of it ${r.catchUpS.toFixed(1)} s after it ended.`,
    past > 0 ? `The lag passed the server's MAX_REPLICA_LAG_S (${SERVER_MAX_LAG_S} s) in ${past} samples: those searches went to the primary.` : '',
    '',
    '| s since the load started | standby lag, s |',
    '|---|---|',
    ...lagRows,
    '',
    '| target | goal | measured | |',
    '|---|---|---|---|',
    ...r.targets.map((x) => `| ${x.name} | ${x.goal} | ${x.measured} | ${x.met ? 'met' : 'missed'} |`),
    '',
  ].join('\n');
}
