// The benchmark report: one JSON document (everything measured), a Markdown rendering of it, and
// docs/performance.md with its chart; the targets (bench/README.md) evaluated against the figures.

import path from 'node:path';
import type { MixedStats, RunStats } from './drive.ts';
import { renderMirror, type MirrorFigures } from './mirror.ts';

/** SEARCH_PARALLEL_WORKERS as a run recorded it, between `before` and `after` (nothing for a run before it existed). */
const parallel = (server: { searchParallelWorkers?: number }, before: string, after: string) =>
  server.searchParallelWorkers === undefined ? '' : `${before}SEARCH_PARALLEL_WORKERS=${server.searchParallelWorkers}${after}`;

export interface ClassRun {
  concurrency: number;
  http: RunStats;
  floor?: RunStats;
  /** HTTP requests/s ÷ floor requests/s. */
  ratio?: number;
}

export interface ClassResult {
  name: string;
  description: string;
  distinctPaths: number;
  examplePath: string;
  totalNone: boolean;
  loadavg1: number;
  runs: ClassRun[];
}

export interface LoadFigures {
  resources: number;
  indexRows?: number;
  bytes?: number;
  ms: number;
  rps: number;
  indexRowsPerS?: number;
  /** ingest (rows streamed in) vs the index rebuild + vacuum that follows, for the bulk path. */
  ingestMs?: number;
  /** bulk path: each index build and ANALYZE at the end (ms), in the order they finished (two run at a time). */
  indexBuilds?: Record<string, number>;
  ratioToCopy?: number;
  method?: string;
  /**
   * CPU time spent (ms): by the loader's process (all its threads) and by PostgreSQL (the embedded
   * postmaster and its processes), in all and until the last row was streamed in.
   */
  cpu?: { loaderMs?: number; loaderStreamMs?: number; pgMs?: number; pgStreamMs?: number };
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean | null;
  note?: string;
  /** the run it is measured on: a class at a concurrency, or a class of the mixed run. */
  class?: string;
  concurrency?: number;
  mixed?: boolean;
}

/** The walk through the next links of Practitioner?_count=1000. */
export interface DeepWalk {
  /** the first page's path (reports before 2026-11-26 walked Practitioner?_total=none&_count=1000). */
  first?: string;
  pageSize: number;
  pages: number;
  resources: number;
  totalMs: number;
  firstPageMs: number;
  depths: { label: string; depth: number; page: number; ms: number }[];
}

export interface BenchResult {
  date: string;
  startedAt: string;
  finishedAt: string;
  elapsedS: number;
  /** the commit measured; dirty: src/ or bench/ had uncommitted changes. */
  commit?: { id: string; dirty: boolean };
  options: Record<string, unknown>;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryBytes: number;
    node: string;
    postgres: string;
    platform: string;
    loadavg: Record<string, number[]>;
  };
  dataset: { dir: string; seed: number; counts: Record<string, number>; totalResources: number; bytes: number; reused: boolean; generateMs?: number };
  database: { embedded: boolean; sizeBytes: number; tables: Record<string, number>; rows: Record<string, number> };
  copyFloor?: LoadFigures & { tableBytes?: number };
  /** the loader's CPU side alone (read + parse + extract, no database). */
  parseOnly?: LoadFigures & { workers?: number };
  bulk?: LoadFigures;
  incremental?: LoadFigures | { skipped: string };
  /** npm run bench -- --mirror (bench/mirror.ts). */
  mirror?: MirrorFigures;
  /** how the searches were driven and served. */
  http?: {
    /** the generator of the runs at concurrency 16 (and at 1 in reports without loadGeneratorC1). */
    loadGenerator: string;
    /** the generator of the runs at concurrency 1. */
    loadGeneratorC1?: string;
    /** the server's WORKERS (processes), DB_POOL_SIZE (connections per process), HEAVY_SEARCHES, METRICS_ENABLED and SEARCH_PARALLEL_WORKERS (each absent before it existed). */
    server: { workers: number; dbPoolSize: number; heavySearches: number; metricsEnabled?: boolean; searchParallelWorkers?: number };
    /** connections of the floor's two pools (as many in all as the server's processes have). */
    floorPools: { custom: number; generic: number };
  };
  ceiling: ClassRun[];
  classes: ClassResult[];
  deepWalk?: DeepWalk;
  /** every class but the deep walk's and total-accurate, drawn uniformly by concurrent clients (the first run of the report's form). */
  mixed?: MixedStats;
  /** the mixed run in the default form alternated with the same paths carrying `_total=none` (what the totals cost). */
  mixedAlternated?: { form: 'default' | 'none'; stats: MixedStats }[];
  /** first pages of the classes that ask broadly, each path once at concurrency 1: how many carry `total`. */
  totals?: { class: string; single: boolean; pages: number; withTotal: number }[];
  explain: { class: string; path: string; plan: string }[];
  targets: Target[];
  notes: string[];
}

const f1 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const int = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const ratio = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(2));
const gib = (n: number) => `${(n / 1024 ** 3).toFixed(2)} GiB`;
const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;

const runOf = (r: BenchResult, cls: string, c: number) => r.classes.find((x) => x.name === cls)?.runs.find((x) => x.concurrency === c);

/** A load's CPU time in all (its loader's process and PostgreSQL), 0 when not measured. */
const cpuMs = (x: LoadFigures): number => (x.cpu?.loaderMs ?? 0) + (x.cpu?.pgMs ?? 0);

/** The targets of the issue (set for scale 1.0 on a 2-core machine), evaluated on this run. */
export function evaluateTargets(r: BenchResult): Target[] {
  const out: Target[] = [];
  const copy = r.copyFloor?.rps;
  if (r.bulk && copy) {
    const x = r.bulk.rps / copy;
    // The best the load's CPU time allows: all of it spread over every core, no idle moment.
    const least = cpuMs(r.bulk) / r.machine.cpus;
    const bound = least > 0 && r.copyFloor ? `; its CPU time allows ${ratio(r.copyFloor.ms / least)} × at best on ${r.machine.cpus} cores` : '';
    out.push({ name: 'bulk load', goal: '≥ 0.5 × COPY floor', measured: `${ratio(x)} × (${int(r.bulk.rps)} vs ${int(copy)} resources/s${bound})`, met: x >= 0.5 });
  } else out.push({ name: 'bulk load', goal: '≥ 0.5 × COPY floor', measured: 'not measured (--skip-load)', met: null });
  const inc = r.incremental && 'rps' in r.incremental ? r.incremental : undefined;
  if (inc && copy) {
    const x = inc.rps / copy;
    out.push({ name: 'incremental load', goal: '≥ 0.2 × COPY floor', measured: `${ratio(x)} × (${int(inc.rps)} vs ${int(copy)} resources/s)`, met: x >= 0.2 });
  } else out.push({ name: 'incremental load', goal: '≥ 0.2 × COPY floor', measured: 'not measured', met: null });

  const p99 = (cls: string, limit: number) => {
    const run = runOf(r, cls, 1);
    if (!run) return;
    out.push({
      name: `${cls} c=1 p99`, goal: `< ${limit} ms`, measured: `${f1(run.http.p99)} ms`, met: run.http.p99 < limit && run.http.errors === 0,
      note: run.http.errors ? `${run.http.errors} errors` : undefined, class: cls, concurrency: 1,
    });
  };
  p99('identifier', 3);
  p99('id', 3);
  for (const cls of ['name-prefix', 'postalcode', 'postalcode-city', 'last-updated', 'include', 'revinclude', 'next-page']) p99(cls, 25);
  p99('contains', 150);
  p99('phonetic', 50);
  p99('sorted-first', 50);
  p99('near', 25);

  if (r.totals?.length) {
    const share = (single: boolean) => {
      const rows = r.totals!.filter((x) => x.single === single);
      const pages = rows.reduce((n, x) => n + x.pages, 0);
      return { pages, with: rows.reduce((n, x) => n + x.withTotal, 0) };
    };
    const one = share(true);
    if (one.pages) {
      out.push({ name: 'first pages of one condition carrying total', goal: '≥ 90 %', measured: `${((100 * one.with) / one.pages).toFixed(1)} % (${one.with} of ${one.pages})`, met: one.with >= 0.9 * one.pages });
    }
  }

  const sortedFirst = runOf(r, 'sorted-first', 1);
  const sortedDeep = runOf(r, 'sorted-deep', 1);
  if (sortedFirst && sortedDeep) {
    const x = sortedDeep.http.p99 / sortedFirst.http.p99;
    out.push({
      name: 'sorted-deep c=1 p99', goal: '≤ 1.5 × sorted-first p99', measured: `${ratio(x)} × (${f1(sortedDeep.http.p99)} vs ${f1(sortedFirst.http.p99)} ms)`,
      met: x <= 1.5 && sortedDeep.http.errors === 0, class: 'sorted-deep', concurrency: 1,
    });
  }

  const deep = r.classes.find((c) => c.name === 'deep-first');
  if (deep && r.deepWalk) {
    const first = deep.runs.find((x) => x.concurrency === 1);
    const last = r.classes.find((c) => c.name === 'deep-last')?.runs.find((x) => x.concurrency === 1);
    const label = r.deepWalk.depths.at(-1)?.label ?? '';
    if (first && last) {
      const x = last.http.p50 / first.http.p50;
      out.push({ name: `deep page (${label}) c=1 median`, goal: '≤ 1.5 × first page', measured: `${ratio(x)} × (${f1(last.http.p50)} vs ${f1(first.http.p50)} ms)`, met: x <= 1.5, class: 'deep-last', concurrency: 1 });
    }
  }

  for (const cls of ['identifier', 'id']) {
    const run = runOf(r, cls, 16);
    if (!run?.floor || run.ratio === undefined) continue;
    out.push({ name: `${cls} c=16 throughput`, goal: '≥ 0.7 × floor', measured: `${ratio(run.ratio)} × (${int(run.http.rps)} vs ${int(run.floor.rps)} req/s)`, met: run.ratio >= 0.7, class: cls, concurrency: 16 });
  }

  const alt = r.mixedAlternated;
  if (alt?.length) {
    const mean = (form: string) => {
      const runs = alt.filter((x) => x.form === form);
      return runs.reduce((a, x) => a + x.stats.rps, 0) / runs.length;
    };
    const [withCounts, without] = [mean('default'), mean('none')];
    const each = alt.map((x) => `${x.form === 'none' ? 'none ' : ''}${int(x.stats.rps)}`).join(', ');
    out.push({
      name: 'mixed run throughput with totals', goal: '≥ 0.8 × the same run without counts',
      measured: `${ratio(withCounts / without)} × (${int(withCounts)} vs ${int(without)} req/s; alternated runs: ${each})`, met: withCounts / without >= 0.8,
    });
  }
  const mixed = r.mixed;
  for (const cls of ['identifier', 'id']) {
    const st = mixed?.classes[cls];
    if (!st) continue;
    out.push({
      name: `${cls} in the mixed run p99`, goal: '< 10 ms', measured: `${f1(st.p99)} ms`, met: st.p99 < 10 && st.errors === 0,
      note: st.errors ? `${st.errors} errors` : undefined, class: cls, concurrency: mixed.concurrency, mixed: true,
    });
  }
  const near = mixed?.classes.near;
  const lookup = mixed?.classes.identifier;
  if (near && lookup) {
    out.push({
      name: 'near in the mixed run p99', goal: '≤ 2 × identifier\'s', measured: `${ratio(near.p99 / lookup.p99)} × (${f1(near.p99)} vs ${f1(lookup.p99)} ms)`,
      met: near.p99 <= 2 * lookup.p99 && near.errors === 0, note: near.errors ? `${near.errors} errors` : undefined, class: 'near', concurrency: mixed.concurrency, mixed: true,
    });
  }

  // The slowest request of every run (c=1, c=16 and the mixed run), total-accurate aside.
  const slow = [
    ...r.classes.filter((c) => c.name !== 'total-accurate').flatMap((c) => c.runs.map((x) => ({ name: c.name, concurrency: x.concurrency, max: x.http.max, mixed: false }))),
    ...Object.entries(mixed?.classes ?? {}).map(([name, st]) => ({ name, concurrency: st.concurrency, max: st.max, mixed: true })),
  ].filter((x) => !Number.isNaN(x.max));
  if (slow.length) {
    const worst = slow.reduce((a, b) => (b.max > a.max ? b : a));
    const where = (x: (typeof slow)[number]) => `${x.name} ${x.mixed ? 'mixed' : `c=${x.concurrency}`}`;
    const over = slow.filter((x) => x.max >= 1000).map(where);
    out.push({
      name: 'slowest request', goal: '< 1 s (every class but total-accurate, every run)',
      measured: `${f1(worst.max)} ms (${where(worst)})`, met: over.length === 0, note: over.length ? `over 1 s: ${over.join(', ')}` : undefined,
      class: worst.name, concurrency: worst.concurrency, mixed: worst.mixed,
    });
  }
  return out;
}

function runRow(name: string, run: ClassRun, extra = ''): string {
  const h = run.http;
  const fl = run.floor;
  const cpu = h.serverCpuPct === undefined ? '–' : `${h.serverCpuPct.toFixed(0)} % · ${f1(h.serverCpuMsPerReq)}`;
  const db = h.dbCpuMsPerReq === undefined ? '–' : f1(h.dbCpuMsPerReq);
  const busy = (x: RunStats | undefined) =>
    x?.machineBusyPct === undefined ? '–'
      : `${x.machineBusyPct.toFixed(0)}${x.othersBusyPct === undefined ? '' : ` (${x.othersBusyPct.toFixed(0)}${x.stealPct === undefined ? '' : ` · st ${x.stealPct.toFixed(0)}`})`}`;
  return `| ${name}${extra} | ${run.concurrency} | ${int(h.rps)} | ${f1(h.p50)} | ${f1(h.p99)} | ${f1(h.max)} | ${h.errors} | ${cpu} | ${db} | ${busy(h)} | ${fl ? int(fl.rps) : '–'} | ${fl ? f1(fl.p50) : '–'} | ${fl ? f1(fl.p99) : '–'} | ${fl ? f1(fl.max) : '–'} | ${fl ? fl.errors : '–'} | ${busy(fl)} | ${ratio(run.ratio)} |`;
}

const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const commitText = (c: NonNullable<BenchResult['commit']>) => `${c.id}${c.dirty ? ' (with uncommitted changes in src/ or bench/)' : ''}`;

/** Which form the requests were sent in. */
function formText(r: BenchResult): string {
  if (r.options.totalNone === undefined) {
    return 'Requests: every class but default-total and total-accurate with `_total=none` and include/revinclude with `_count=50` (the form of the reports before the default forms), so no other first page ran a count.';
  }
  return r.options.totalNone
    ? 'Requests: the `_total=none` variant — every path as a client writes it with `_total=none` appended (total-accurate aside), so no first page runs a count.'
    : 'Requests: in the default form, as clients write them — no `_total`, no `_count` (the deep walk and the walks to sorted-deep pages aside, with `_count=1000`): a full first page also runs the count within TOTAL_BUDGET_MS, and so does its floor.';
}

function mixedText(m: MixedStats): string {
  return `${m.concurrency} concurrent clients (node:http, one keep-alive connection each, in the load generator's process) for ${sec(m.durationS * 1000)}, ` +
    `each request drawing a class uniformly (every class measured above but the deep walk's and total-accurate), then one of its paths: ` +
    `**${int(m.rps)} requests/s** in all, p50 ${f1(m.p50)} ms, p99 ${f1(m.p99)} ms, max ${f1(m.max)} ms, ${m.errors} errors` +
    `${m.serverCpuPct === undefined ? '' : `; server ${m.serverCpuPct.toFixed(0)} % CPU`}${m.machineBusyPct === undefined ? '' : `, machine ${m.machineBusyPct.toFixed(0)} % busy`}` +
    `${cpuPerRequest(m) ?? ''}.`;
}

/** CPU time per request of the server and of PostgreSQL, apart and together: the figure that does not depend on the load generator. */
function cpuPerRequest(m: RunStats): string | undefined {
  if (m.serverCpuMsPerReq === undefined || m.dbCpuMsPerReq === undefined) return undefined;
  return `; CPU per request ${f1(m.serverCpuMsPerReq + m.dbCpuMsPerReq)} ms (server ${f1(m.serverCpuMsPerReq)}, PostgreSQL ${f1(m.dbCpuMsPerReq)})`;
}

/** The alternated mixed runs side by side: the default form against `_total=none`. */
function alternatedTable(alt: NonNullable<BenchResult['mixedAlternated']>): string[] {
  const p99 = (m: MixedStats, cls: string) => f1(m.classes[cls]?.p99);
  return [
    'The same mixed run alternated between the default form (a full first page carries `total`) and every path with `_total=none` appended (no count at all):',
    '',
    '| run | form | req/s | p50 | p99 | identifier p99 | id p99 | server CPU | CPU ms/req server · PG |',
    '|---|---|---|---|---|---|---|---|---|',
    ...alt.map((x, i) => `| ${i + 1} | ${x.form === 'none' ? '`_total=none`' : 'default'} | ${int(x.stats.rps)} | ${f1(x.stats.p50)} | ${f1(x.stats.p99)} | ${p99(x.stats, 'identifier')} | ${p99(x.stats, 'id')} | ${x.stats.serverCpuPct === undefined ? '–' : `${x.stats.serverCpuPct.toFixed(0)} %`} | ${f1(x.stats.serverCpuMsPerReq)} · ${f1(x.stats.dbCpuMsPerReq)} |`),
  ];
}

function mixedTable(m: MixedStats): string[] {
  const rows = Object.entries(m.classes).map(([name, st]) => `| ${name} | ${int(st.requests)} | ${f1(st.p50)} | ${f1(st.p99)} | ${f1(st.max)} | ${st.errors} |`);
  return ['| class | requests | p50 | p99 | max | errors |', '|---|---|---|---|---|---|', ...rows];
}

const metText = (t: Target) => (t.met === null ? 'n/a' : t.met ? 'met' : '**missed**');

export function renderMarkdown(r: BenchResult): string {
  const L: string[] = [];
  const m = r.machine;
  L.push(`# Benchmark — scale ${r.options.scale}, ${r.date}${r.options.totalNone ? ', `_total=none` variant' : ''}`, '');
  L.push(`Run \`npm run bench -- ${String(r.options.argv ?? '')}\` took **${(r.elapsedS / 60).toFixed(1)} min** (${r.startedAt} → ${r.finishedAt})${r.commit ? ` at commit ${commitText(r.commit)}` : ''}.`, '');
  L.push(`${formText(r)}`, '');
  L.push('## Machine', '');
  L.push('| | |', '|---|---|');
  L.push(`| CPUs | ${m.cpus} × ${m.cpuModel} |`);
  L.push(`| memory | ${gib(m.memoryBytes)} |`);
  L.push(`| node | ${m.node} (${m.platform}) |`);
  L.push(`| PostgreSQL | ${m.postgres} (${r.database.embedded ? 'embedded, server profile' : 'external DATABASE_URL'}) |`);
  for (const [k, v] of Object.entries(m.loadavg)) L.push(`| load average ${k} | ${v.map((x) => x.toFixed(2)).join(' / ')} (1 / 5 / 15 min) |`);
  L.push('');
  L.push('## Dataset and database', '');
  const d = r.dataset;
  L.push(`Seed ${d.seed}, ${d.reused ? 'reused from' : 'generated into'} \`${d.dir}\`${d.generateMs ? ` in ${sec(d.generateMs)}` : ''}: ` +
    `${int(d.totalResources)} resources, ${gib(d.bytes)} of NDJSON (${Object.entries(d.counts).map(([k, v]) => `${k} ${int(v)}`).join(', ')}).`, '');
  L.push(`Database after the load: ${gib(r.database.sizeBytes)} (${Object.entries(r.database.tables).map(([k, v]) => `${k} ${mib(v)}`).join(', ')}); ` +
    `rows: ${Object.entries(r.database.rows).map(([k, v]) => `${k} ${int(v)}`).join(', ')}.`, '');

  L.push('## Load', '');
  L.push('| path | resources | time | resources/s | index rows/s | × COPY floor | how |', '|---|---|---|---|---|---|---|');
  // The CPU time a load took, and the wall time it needs at least on this machine's cores.
  const cpuText = (x: LoadFigures): string => {
    const c = x.cpu;
    if (!c) return '';
    const parts: string[] = [];
    if (c.loaderMs !== undefined) parts.push(`loader ${sec(c.loaderMs)}${c.loaderStreamMs !== undefined ? ` (${sec(c.loaderStreamMs)} while streaming)` : ''}`);
    if (c.pgMs !== undefined) parts.push(`PostgreSQL ${sec(c.pgMs)}${c.pgStreamMs !== undefined ? ` (${sec(c.pgStreamMs)} while streaming)` : ''}`);
    if (!parts.length) return '';
    const all = cpuMs(x);
    return ` CPU time: ${parts.join(', ')}; ${sec(all)} in all, at least ${sec(all / m.cpus)} of wall time on ${m.cpus} cores.`;
  };
  const lrow = (name: string, x: LoadFigures | undefined, how: string) =>
    x && L.push(`| ${name} | ${int(x.resources)} | ${sec(x.ms)} | ${int(x.rps)} | ${int(x.indexRowsPerS)} | ${ratio(x.ratioToCopy)} | ${how}${cpuText(x)} |`);
  lrow('COPY floor', r.copyFloor, `${r.copyFloor?.method ? `${r.copyFloor.method}: ` : ''}one \`COPY … (format csv, freeze)\` per file into a one-column jsonb table created in the same transaction (${r.copyFloor?.tableBytes ? gib(r.copyFloor.tableBytes) : ''})`);
  lrow('loader CPU only', r.parseOnly, `NDJSON read in byte chunks and turned into the COPY data of the five tables (JSON.parse, validation, extraction, encoding) as the bulk loader does it (${r.parseOnly?.workers ?? '?'} worker threads), in a process of its own, no database: the ceiling of the loader's CPU side`);
  lrow('loader, bulk', r.bulk, `\`loadFiles(…, { bulk: true })\` (what \`npm run load -- --bulk\` runs), in a process of its own, into an empty database; rows streamed in ${r.bulk?.ingestMs ? sec(r.bulk.ingestMs) : '?'}, then indexes built + ANALYZE (rows written COPY FREEZE: no VACUUM)${r.bulk?.indexBuilds ? ` in ${sec(r.bulk.ms - (r.bulk.ingestMs ?? r.bulk.ms))}, two at a time: ${Object.entries(r.bulk.indexBuilds).map(([k, v]) => `${k} ${sec(v)}`).join(', ')}` : ''}`);
  if (r.incremental && 'rps' in r.incremental) lrow('loader, incremental', r.incremental, r.incremental.method ?? '');
  else if (r.incremental) L.push(`| loader, incremental | – | – | – | – | – | skipped: ${r.incremental.skipped} |`);
  if (!r.copyFloor && !r.bulk) L.push('| (load skipped: --skip-load) | | | | | | |');
  L.push('');
  if (r.mirror) L.push(...renderMirror(r.mirror));

  L.push('## Searches', '');
  const h = r.http;
  const describe = (g: string) => (g === 'autocannon' ? 'autocannon, in a process of its own (bench/loadgen.ts)' : `${g} (one thread), a process of its own`);
  const generator = !h ? describe('autocannon')
    : h.loadGeneratorC1 && h.loadGeneratorC1 !== h.loadGenerator ? `at concurrency 1 ${describe(h.loadGeneratorC1)}; at 16 ${describe(h.loadGenerator)}`
    : describe(h.loadGenerator);
  const served = h ? `${h.server.workers} process${h.server.workers > 1 ? 'es' : ''} (WORKERS=${h.server.workers}), DB_POOL_SIZE=${h.server.dbPoolSize} each, HEAVY_SEARCHES=${h.server.heavySearches}, ${parallel(h.server, '', ', ')}` +
    `${h.server.metricsEnabled === false ? 'METRICS_ENABLED=false, ' : ''}` : '';
  L.push(`HTTP: ${generator}, on 127.0.0.1 against the server (child process, ${served}RATE_LIMIT=0, MAX_CONCURRENT_PER_KEY=0, LOG_LEVEL=warn), a path drawn at random for each request. ` +
    `Floor: the server's own runSearch through postgres.js in the bench process, no HTTP (token systems and :contains estimates, page with limit _count+1, the count when the server would run it, the include query)${h ? `, on as many connections as the server has in all (${h.floorPools.custom} + ${h.floorPools.generic})` : ''}. ` +
    'Latencies in ms; errors = non-2xx + socket errors; ratio = HTTP req/s ÷ floor req/s. ' +
    '"server CPU" is the CPU use of the server\'s processes (% of one core: each runs one Node thread, so ~100 % per process means the server is the bottleneck) and their CPU time per request; ' +
    '"PG ms/req" the CPU time per request of the PostgreSQL cluster (its postmaster and every process under it, from /proc): with the server\'s, the cost of a request whatever the load generator takes; ' +
    '"busy %" is the share of the whole machine\'s CPU time (2 cores, every process) that was busy during the run, and in parentheses the part of it used by processes other than the benchmark\'s (other people\'s work: a run with a high figure there is perturbed) and, after "st", the part stolen by the host (the VM\'s vCPUs were ready and the host ran something else: counted as busy, and it slows every process of the run).', '');
  L.push('| class | c | HTTP req/s | p50 | p99 | max | err | server CPU · ms/req | PG ms/req | busy % | floor req/s | p50 | p99 | max | err | busy % | ratio |', '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const run of r.ceiling) L.push(runRow('**hello-world ceiling**', run));
  for (const c of r.classes) for (const run of c.runs) L.push(runRow(c.name, run));
  L.push('');
  L.push('| class | paths | load avg (1 min) at start | example | what |', '|---|---|---|---|---|');
  for (const c of r.classes) L.push(`| ${c.name} | ${c.distinctPaths} | ${c.loadavg1.toFixed(2)} | \`${c.examplePath.replace(/\|/g, '\\|')}\` | ${c.description.replace(/\|/g, '\\|')} |`);
  L.push('');
  if (r.deepWalk) {
    const w = r.deepWalk;
    L.push('## Deep paging', '');
    L.push(`Walked \`${w.first ?? `Practitioner?_total=none&_count=${w.pageSize}`}\` through ${w.pages} pages (${int(w.resources)} resources) in ${sec(w.totalMs)}, following the \`next\` links, one request at a time.`, '');
    L.push('| page | depth (resources before it) | latency during the walk |', '|---|---|---|');
    L.push(`| first | 0 | ${f1(w.firstPageMs)} ms |`);
    for (const x of w.depths) L.push(`| ${x.label} (page ${x.page}) | ${int(x.depth)} | ${f1(x.ms)} ms |`);
    L.push('', 'The classes `deep-first` (first page), `deep-mid` and `deep-last` replay the first page and the `next` URLs of the five pages ending at each depth under load.', '');
  }
  if (r.mixed) {
    L.push('## Mixed run', '');
    L.push(mixedText(r.mixed), '');
    L.push(...mixedTable(r.mixed), '');
    if (r.mixedAlternated?.length) L.push(...alternatedTable(r.mixedAlternated), '');
  }
  L.push('## Targets', '');
  const scale = Number(r.options.scale);
  L.push(scale >= 1
    ? `The targets are set for scale 1.0 on this 2-core machine; this run is at scale ${scale}.`
    : `The targets are set for scale 1.0; this run is at scale ${scale}, so they are only indicative (smaller indexes, more of the data in memory).`, '');
  L.push('| target | goal | measured | met |', '|---|---|---|---|');
  for (const t of r.targets) L.push(`| ${t.name} | ${t.goal} | ${t.measured}${t.note ? ` (${t.note})` : ''} | ${metText(t)} |`);
  L.push('');
  if (r.explain.length) {
    L.push('## EXPLAIN (ANALYZE, BUFFERS) of the slowest classes', '');
    for (const e of r.explain) {
      L.push(`### ${e.class}`, '', `\`${e.path}\``, '', '```', e.plan, '```', '');
    }
  }
  if (r.notes.length) {
    L.push('## Notes', '');
    for (const n of r.notes) L.push(`* ${n}`);
    L.push('');
  }
  return `${L.join('\n')}\n`;
}

/** A target's run: a class at a concurrency, or the load it measures. */
function targetRow(r: BenchResult, t: Target): string {
  const cells = (cls: string, c: string, h: { p50?: number; p99?: number; max?: number; rps: string }, floor: { p50?: number; p99?: number; rps: string }, x: number | undefined) =>
    `| ${t.name} | ${cls} | ${c} | ${f1(h.p50)} | ${f1(h.p99)} | ${f1(h.max)} | ${h.rps} | ${f1(floor.p50)} | ${f1(floor.p99)} | ${floor.rps} | ${ratio(x)} | ${t.goal} | ${t.measured}${t.note ? ` (${t.note})` : ''} | ${metText(t)} |`;
  const load = t.name === 'bulk load' ? r.bulk : t.name === 'incremental load' && r.incremental && 'rps' in r.incremental ? r.incremental : undefined;
  if (load) return cells('–', '–', { rps: `${int(load.rps)} resources/s` }, { rps: `${int(r.copyFloor?.rps)} (COPY)` }, load.ratioToCopy);
  const st = t.mixed ? r.mixed?.classes[t.class ?? ''] : undefined;
  if (st) return cells(t.class!, `${t.concurrency} mixed`, { ...st, rps: int(st.rps) }, { rps: '–' }, undefined);
  const run = t.class !== undefined && t.concurrency !== undefined ? runOf(r, t.class, t.concurrency) : undefined;
  if (run) return cells(t.class!, String(t.concurrency), { ...run.http, rps: int(run.http.rps) }, { ...run.floor, rps: int(run.floor?.rps) }, run.ratio);
  return cells('–', '–', { rps: '–' }, { rps: '–' }, undefined);
}

/** The chart's file, next to docs/performance.md. */
export const CHART = 'performance.svg';

/**
 * docs/performance.md: every target against its floor, the mixed run, `sections` (the export's, the
 * import's), the method, the machine and the command, from one national report (`reportLink`: the
 * report, relative to docs/); then `kept`, the hand-written part carried over from the last one.
 */
export function renderPerformance(r: BenchResult, reportLink: string, opts: { notes?: string[]; sections?: string; kept?: string } = {}): string {
  const notes = opts.notes ?? [];
  const m = r.machine;
  const L: string[] = ['# Performance', ''];
  L.push(`Measured on ${r.date}${r.commit ? ` at commit ${commitText(r.commit)}` : ''}, scale ${r.options.scale} (${int(r.dataset.totalResources)} resources). ` +
    `Written by \`npm run bench\` on every full national run; the whole report is [${path.basename(reportLink)}](${reportLink}).`, '');
  for (const n of notes) L.push(`> ${n}`, '');
  L.push('## Targets', '');
  L.push(`${formText(r)} Latencies in ms at the client; the floor is the same searches run directly with postgres.js (no HTTP); ratio = HTTP req/s ÷ floor req/s.`, '');
  L.push('| target | class | c | p50 | p99 | max | req/s | floor p50 | floor p99 | floor req/s | ratio | goal | measured | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const t of r.targets) L.push(targetRow(r, t));
  L.push('', `![Each class's p99 at concurrency 1 and requests/s at 16, HTTP against its floor](${CHART})`, '');
  L.push('## Mixed run', '');
  if (r.mixed) L.push(mixedText(r.mixed), '', ...mixedTable(r.mixed), '');
  if (r.mixedAlternated?.length) L.push(...alternatedTable(r.mixedAlternated), '');
  else L.push('Not measured in this report.', '');
  if (r.totals?.length) {
    L.push('## Totals of first pages', '', 'Each path of the classes that ask broadly, once, in the default form, one request at a time: the first pages that carry `total`.', '');
    L.push('| class | conditions | first pages | with total | share |', '|---|---|---|---|---|');
    for (const x of r.totals) L.push(`| ${x.class} | ${x.single ? 'one' : 'several'} | ${int(x.pages)} | ${int(x.withTotal)} | ${x.pages ? `${((100 * x.withTotal) / x.pages).toFixed(1)} %` : '–'} |`);
    L.push('');
  }
  if (opts.sections) L.push(opts.sections.trim(), '');
  L.push('## Method', '');
  const h = r.http;
  const load = r.bulk ? 'loads it with the loader in bulk and incrementally against a bare `COPY` floor' : 'reuses the database loaded by an earlier run (`--skip-load`: no load measured)';
  L.push(`A run generates (or reuses) the synthetic dataset (seed ${r.dataset.seed}), ${load}, ` +
    `then drives the server (the build \`npm start\` runs, on 127.0.0.1${h ? `, ${h.server.workers} process${h.server.workers > 1 ? 'es' : ''}, DB_POOL_SIZE=${h.server.dbPoolSize}, HEAVY_SEARCHES=${h.server.heavySearches}${parallel(h.server, ', ', '')}` : ''}) ` +
    `class by class for ${String(r.options.duration ?? '?')} s at concurrency 1 and 16, each request a path drawn at random from values sampled in the data; ` +
    'the floor of a class runs the server\'s own search code on the same paths through postgres.js, without HTTP. ' +
    `${r.mixed ? `Then the classes are mixed at ${r.mixed.concurrency} clients. ` : ''}Load generators, classes, targets and every step: [bench/README.md](../bench/README.md).`, '');
  L.push('## Machine', '');
  L.push('| | |', '|---|---|');
  L.push(`| CPUs | ${m.cpus} × ${m.cpuModel} |`, `| memory | ${gib(m.memoryBytes)} |`, `| node | ${m.node} (${m.platform}) |`,
    `| PostgreSQL | ${m.postgres} (${r.database.embedded ? 'embedded, server profile' : 'external DATABASE_URL'}) |`);
  L.push('');
  L.push('## Reproduce', '');
  L.push('```sh', `npm run bench -- ${String(r.options.argv ?? '')}`.trimEnd(), '```', '');
  if (opts.kept) L.push(opts.kept.trim(), '');
  return `${L.join('\n')}\n`;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The chart of docs/performance.md: per class, the p99 at concurrency 1 and the requests/s at 16, HTTP against
 * the floor, on log scales (the classes span three orders of magnitude).
 */
export function renderChart(r: BenchResult): string {
  const rows = r.classes.filter((c) => c.runs.some((x) => x.floor));
  const panels = [
    { title: 'p99 at concurrency 1, ms (shorter is better)', c: 1, value: (s: RunStats) => s.p99 },
    { title: 'requests/s at concurrency 16 (longer is better)', c: 16, value: (s: RunStats) => s.rps },
  ];
  const label = 170;
  const panelW = 360;
  const gap = 40;
  const rowH = 20;
  const top = 60;
  const width = label + panels.length * (panelW + gap);
  const height = top + rows.length * rowH + 30;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="8" y="16" font-size="13" font-weight="bold">${xml(`scale ${String(r.options.scale)}, ${r.date}: HTTP (dark) against its floor (light)`)}</text>`,
  ];
  rows.forEach((c, i) => out.push(`<text x="${label - 6}" y="${top + i * rowH + 13}" text-anchor="end">${xml(c.name)}</text>`));
  panels.forEach((p, k) => {
    const x0 = label + k * (panelW + gap);
    const values = rows.flatMap((c) => {
      const run = c.runs.find((x) => x.concurrency === p.c);
      return run ? [p.value(run.http), ...(run.floor ? [p.value(run.floor)] : [])] : [];
    }).filter((v) => v > 0 && Number.isFinite(v));
    if (!values.length) return;
    const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)));
    const scale = (v: number) => (panelW * Math.log10(v / lo)) / Math.log10(hi / lo);
    out.push(`<text x="${x0}" y="${top - 20}" font-weight="bold">${xml(p.title)}</text>`);
    for (let t = lo; t <= hi; t *= 10) {
      const x = x0 + scale(t);
      out.push(`<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${top + rows.length * rowH}" stroke="#ddd"/>`,
        `<text x="${x}" y="${top + rows.length * rowH + 14}" text-anchor="middle" fill="#555">${t >= 1 ? t.toLocaleString('en-US') : t}</text>`);
    }
    rows.forEach((c, i) => {
      const run = c.runs.find((x) => x.concurrency === p.c);
      if (!run) return;
      const y = top + i * rowH;
      const bar = (v: number | undefined, dy: number, fill: string) =>
        v !== undefined && v > 0 && Number.isFinite(v) && out.push(`<rect x="${x0}" y="${y + dy}" width="${Math.max(1, scale(v)).toFixed(1)}" height="7" fill="${fill}"><title>${xml(`${c.name} c=${p.c}: ${f1(v)}`)}</title></rect>`);
      bar(p.value(run.http), 3, '#2b5d8a');
      bar(run.floor && p.value(run.floor), 10, '#9cc3e4');
    });
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
