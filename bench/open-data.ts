// The open-data import scenario of the benchmark (npm run bench -- --open-data): the generated
// extracts of the three sources (RPPS PS_LibreAcces, the FINESS feed, the MSSanté extraction) of the
// bench's scale imported by `npm run import` into an empty database,
// against `npm run load -- --bulk` of the same resources as NDJSON; then a daily re-import (1 % of
// the lines changed) against the first import's time; then identifier lookups at c=16 on a server of
// that database while another day is imported, against the same lookups before.

import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS, LOADER_NODE_FLAGS } from '../src/node-flags.ts';
import { connectUrl, migrate, type Sql } from '../src/db.ts';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { searchPath } from './classes.ts';
import { httpOk, httpRun, log, startChild, withCpu, type RunStats } from './drive.ts';
import { lookupTable } from './export.ts';
import { runLoadJob } from './load-child.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IMPORT_DB = 'bench_opendata';
const NDJSON_DB = 'bench_opendata_ndjson';
const CHANGE_RATE = 0.01;
const RPPS = 'https://rpps.esante.gouv.fr';
const SOURCES = ['rpps', 'finess', 'mss'] as const;

interface ImportRun {
  ms: number;
  code: number;
  /** the import process's peak resident memory, as it reports it. */
  peakMb: number;
  /** writer_run.detail of the run (src/opendata/import.ts ImportSummary). */
  counts: { lines: number; rejected: number; counts: Record<string, { new: number; changed: number; deactivated: number; unchanged: number }> };
}

export interface OpenDataFigures {
  scale: number;
  lines: number;
  first: { resources: number; ms: number; rps: number; peakMb: number };
  ndjsonBulk: { resources: number; ms: number; rps: number };
  /** first import's rate ÷ the bulk load's (goal ≥ 0.5). */
  ratioToBulk: number;
  daily: { ms: number; ratioToFirst: number; written: number; counts: ImportRun['counts']['counts'] };
  lookups: { quiet: RunStats; during: RunStats; p99Ratio: number; importMs: number };
  method: string;
}

export interface OpenDataOptions {
  admin: Sql;
  /** any database URL of the bench's PostgreSQL (the scenario's databases are made beside it). */
  baseUrl: string;
  scale: number;
  seed: number;
  dir: string;
  port: number;
  headers: Record<string, string>;
  cursorSecret: string;
  apiKey: string;
  durationS: number;
}

const withDb = (url: string, db: string) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
};

/** Days 0, 1 and 2 of the extracts (ZIPs, as downloaded), kept while their options are the same. */
async function extracts(dir: string, scale: number, seed: number): Promise<string[]> {
  const manifest = path.join(dir, 'manifest.json');
  const want = JSON.stringify({ scale, seed, changeRate: CHANGE_RATE, days: 3, sources: SOURCES });
  const days = [0, 1, 2].map((d) => path.join(dir, `day-${d}`));
  if (existsSync(manifest) && readFileSync(manifest, 'utf8') === want) return days;
  await mkdir(dir, { recursive: true });
  for (const [day, outDir] of days.entries()) {
    const t0 = performance.now();
    const s = await generateOpenData({ scale, seed, day, changeRate: CHANGE_RATE, outDir, zip: true, sources: SOURCES });
    log(`  open data day ${day}: ${s.files.reduce((n, f) => n + f.lines, 0).toLocaleString('en-US')} lines in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  writeFileSync(manifest, want);
  return days;
}

/** `npm run import -- <dir>` in a process of its own; its run's counts from writer_run. */
function runImport(sql: Sql, url: string, dir: string): Promise<ImportRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...LOADER_NODE_FLAGS, '--import', 'tsx', path.join(ROOT, 'src', 'cli', 'import.ts'), dir], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    child.once('exit', async (code) => {
      const ms = performance.now() - t0;
      for (const line of out.trim().split('\n').slice(-4)) log(`  import: ${line}`);
      if (code !== 0 && code !== 2) return reject(new Error(`npm run import ended with code ${code}: ${out.trim().split('\n').at(-1)}`));
      const [run] = await sql<{ counts: ImportRun['counts'] }[]>`select detail as counts from writer_run where kind = 'import' order by id desc limit 1`;
      const peak = /peak memory ([\d,]+) MB/.exec(out);
      resolve({ ms, code: code!, counts: run.counts, peakMb: peak ? Number(peak[1].replace(/,/g, '')) : NaN });
    });
  });
}

const written = (c: ImportRun['counts']['counts']) => Object.values(c).reduce((n, t) => n + t.new + t.changed + t.deactivated, 0);

/** Every resource of a database as NDJSON, by COPY on a connection of its own (bench/export.ts). */
async function exportNdjson(url: string, file: string): Promise<void> {
  const sql = connectUrl(url, { max: 1 });
  try {
    await pipeline(await sql`copy (select content from resource order by rid) to stdout`.readable(), createWriteStream(file));
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export async function openDataScenario(o: OpenDataOptions): Promise<OpenDataFigures> {
  const dir = path.join(o.dir, 'open-data');
  log(`open data: extracts of scale ${o.scale} (days 0, 1, 2; ${CHANGE_RATE * 100} % of lines changed a day) in ${dir}`);
  const days = await extracts(dir, o.scale, o.seed);
  const url = withDb(o.baseUrl, IMPORT_DB);
  const ndjsonUrl = withDb(o.baseUrl, NDJSON_DB);
  for (const db of [IMPORT_DB, NDJSON_DB]) {
    await o.admin.unsafe(`drop database if exists ${db} with (force)`);
    await o.admin.unsafe(`create database ${db}`);
  }
  const sql = connectUrl(url, { max: 2 });
  let server: Awaited<ReturnType<typeof startChild>> | undefined;
  try {
    await migrate(sql);
    log('open data: npm run import of day 0 into an empty database');
    const first = await runImport(sql, url, days[0]);
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from resource`;
    const firstFig = { resources: n, ms: first.ms, rps: n / (first.ms / 1000), peakMb: first.peakMb };
    log(`  ${Math.round(firstFig.rps).toLocaleString('en-US')} resources/s (${n.toLocaleString('en-US')} in ${(first.ms / 1000).toFixed(1)} s)`);

    const file = path.join(dir, 'day-0.ndjson');
    await exportNdjson(url, file);
    const ndjson = connectUrl(ndjsonUrl, { max: 1 });
    await migrate(ndjson);
    await ndjson.end({ timeout: 1 });
    log('open data: npm run load -- --bulk of the same resources as NDJSON into an empty database');
    const bulk = await runLoadJob({ kind: 'load', url: ndjsonUrl, files: [file], bulk: true, label: 'open-data ndjson' });
    log(`  ${Math.round(bulk.rps).toLocaleString('en-US')} resources/s (${(bulk.ms / 1000).toFixed(1)} s)`);
    await o.admin.unsafe(`drop database if exists ${NDJSON_DB} with (force)`);

    log('open data: npm run import of day 1 (a daily re-import)');
    const daily = await runImport(sql, url, days[1]);

    log(`open data: a server on ${IMPORT_DB}, identifier lookups at c=16, then again while day 2 is imported`);
    server = await startChild(path.join('dist', 'server.js'), [], {
      PORT: String(o.port), HOST: '127.0.0.1', DATABASE_URL: url, RATE_LIMIT: '0', MAX_CONCURRENT_PER_KEY: '0', API_KEYS: o.apiKey, LOG_LEVEL: 'warn',
      LOAD_DEMO_DATA: 'false', CURSOR_SECRET: o.cursorSecret,
    }, path.join(dir, 'server.log'), () => httpOk(`http://127.0.0.1:${o.port}/ready`), 120_000, SERVER_NODE_FLAGS);
    const ids = await sql<{ v: string }[]>`
      select i->>'value' as v from resource r, jsonb_array_elements(r.content->'identifier') i
      where r.type = 'Practitioner' and i->>'system' = ${RPPS} order by md5(r.id) limit 2000`;
    const paths = ids.map(({ v }) => searchPath('Practitioner', [['identifier', v]]));
    const lookups = (durationS: number, seed: number) =>
      withCpu(server!.proc.pid, () => httpRun({ port: o.port, paths, concurrency: 16, durationS, headers: o.headers, seed }));
    await lookups(1, o.seed + 1); // warm-up
    const quiet = await lookups(o.durationS, o.seed);
    const during = { imported: undefined as ImportRun | undefined };
    const importing = runImport(sql, url, days[2]).then((r) => (during.imported = r));
    const busy = await lookups(Math.max(3, Math.round(daily.ms / 1000)), o.seed);
    const day2 = await importing;
    log(`  quiet p99 ${quiet.p99.toFixed(2)} ms, during the import p99 ${busy.p99.toFixed(2)} ms (${busy.errors} errors; the import took ${(day2.ms / 1000).toFixed(1)} s)`);

    return {
      scale: o.scale,
      lines: first.counts.lines,
      first: firstFig,
      ndjsonBulk: { resources: bulk.resources, ms: bulk.ms, rps: bulk.rps },
      ratioToBulk: firstFig.rps / bulk.rps,
      daily: { ms: daily.ms, ratioToFirst: daily.ms / first.ms, written: written(daily.counts.counts), counts: daily.counts.counts },
      lookups: { quiet, during: busy, p99Ratio: busy.p99 / quiet.p99, importMs: day2.ms },
      method:
        `The generated extracts of the three sources (\`npm run generate -- --format open-data --scale ${o.scale} --zip\`: the RPPS ZIP, the FINESS feed, the MSSanté ZIP; days 0–2, ${CHANGE_RATE * 100} % of the lines changed each day) ` +
        'imported by `npm run import` (a process of its own, its start included) into an empty database; the bulk figure is `npm run load -- --bulk` ' +
        '(loadFiles in a process of its own) of the very resources the import stored, exported as NDJSON, into another empty database. ' +
        `The daily re-import is day 1 on top of day 0. Lookups: \`Practitioner?identifier=<RPPS>\` of 2,000 imported practitioners at c=16 on a server of that database, ${o.durationS} s quiet, ` +
        'then while day 2 is imported (the lookups last as long as the day-1 import took, 3 s at least).',
    };
  } finally {
    await server?.stop();
    await sql.end({ timeout: 5 });
    await o.admin.unsafe(`drop database if exists ${IMPORT_DB} with (force)`);
    await o.admin.unsafe(`drop database if exists ${NDJSON_DB} with (force)`);
  }
}

/** The report's section. */
export function renderOpenData(f: OpenDataFigures): string {
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const c = f.daily.counts;
  const counts = (['persons', 'structures', 'roles'] as const).map((t) => `${t}: ${int(c[t].new)} new, ${int(c[t].changed)} changed, ${int(c[t].deactivated)} deactivated, ${int(c[t].unchanged)} unchanged`);
  return [
    '',
    '## Open-data import (npm run import)',
    '',
    `Scale ${f.scale}: ${int(f.lines)} lines (RPPS and MSSanté) and the FINESS feed, ${int(f.first.resources)} resources; ` +
      `the first import's peak memory ${int(f.first.peakMb)} MB.`,
    '',
    '| run | time | resources/s | target | measured |',
    '|---|---|---|---|---|',
    `| first import, empty database | ${s(f.first.ms)} | ${int(f.first.rps)} | ≥ 0.5 × the bulk load | ${f.ratioToBulk.toFixed(2)} × |`,
    `| \`npm run load -- --bulk\`, the same resources as NDJSON | ${s(f.ndjsonBulk.ms)} | ${int(f.ndjsonBulk.rps)} | | |`,
    `| daily re-import (1 % of lines changed) | ${s(f.daily.ms)} | | ≤ 0.25 × the first import's time | ${f.daily.ratioToFirst.toFixed(2)} × (${int(f.daily.written)} resources written) |`,
    '',
    `Daily re-import: ${counts.join('; ')}.`,
    '',
    `Identifier lookups at c=16 during an import (${s(f.lookups.importMs)}) against quiet: p99 **${f.lookups.p99Ratio.toFixed(2)} ×** (target ≤ 3 ×).`,
    '',
    ...lookupTable([['quiet', f.lookups.quiet], ['during an import', f.lookups.during]]),
    '',
    f.method,
    '',
  ].join('\n');
}
