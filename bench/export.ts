// The bulk export scenario (`npm run bench -- --export`): a full `$export` of the loaded database
// through the server, in resources/s against the COPY floor (the same rows read by
// `COPY (select content from resource) TO STDOUT` and dropped), the server's RSS while it runs, and
// identifier lookups at c=16 with exports running back to back against the same lookups without.

import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { connectUrl } from '../src/db.ts';
import { httpRun, log, withCpu, type RunStats } from './drive.ts';

export interface ExportBench {
  resources: number;
  files: number;
  /** kick-off to manifest, the server otherwise idle. */
  ms: number;
  rps: number;
  copyFloor: { resources: number; ms: number; rps: number };
  ratioToCopy: number;
  /** the server's resident memory (its process and children): before, and the most seen during the exports. */
  rssBeforeBytes: number;
  rssMaxBytes: number;
  lookups: { without: RunStats; during: RunStats; exportsDuring: number; p99Ratio: number };
}

/** Resident memory of a process and its descendants (the cluster's workers), bytes. */
function treeRss(pid: number): number {
  const rss = (p: number) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  };
  const kids = (p: number): number[] => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((t) => readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      return [];
    }
  };
  let sum = 0;
  for (const stack = [pid]; stack.length; ) {
    const p = stack.pop()!;
    sum += rss(p);
    stack.push(...kids(p));
  }
  return sum;
}

/** The floor: every resource's stored text streamed out of PostgreSQL by COPY, and dropped. */
async function copyFloor(url: string): Promise<ExportBench['copyFloor']> {
  // A connection of its own, closed after the COPY (postgres.js may leave it paused at the end).
  const sql = connectUrl(url, { max: 1 });
  try {
    const t0 = performance.now();
    let resources = 0;
    const stream = await sql`copy (select content from resource) to stdout`.readable();
    await pipeline(stream, new Writable({
      write(chunk: Buffer, _enc, done) {
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) resources++;
        done();
      },
    }));
    const ms = performance.now() - t0;
    return { resources, ms, rps: resources / (ms / 1000) };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

interface Manifest { output: { count: number }[] }

/** One full export through the server: kick-off, polls every 100 ms, the manifest; the job deleted after. */
async function runExport(base: string, headers: Record<string, string>): Promise<{ ms: number; resources: number; files: number }> {
  const t0 = performance.now();
  const kick = await fetch(`${base}/fhir/v2/$export`, { headers: { ...headers, prefer: 'respond-async' } });
  if (kick.status !== 202) throw new Error(`$export kick-off: ${kick.status} ${await kick.text()}`);
  const status = kick.headers.get('content-location')!;
  for (;;) {
    const res = await fetch(status, { headers });
    if (res.status === 200) {
      const ms = performance.now() - t0;
      const m = (await res.json()) as Manifest;
      await fetch(status, { method: 'DELETE', headers });
      return { ms, resources: m.output.reduce((n, o) => n + o.count, 0), files: m.output.length };
    }
    if (res.status !== 202) throw new Error(`$export status: ${res.status} ${await res.text()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function exportBench(o: {
  port: number;
  headers: Record<string, string>;
  url: string;
  serverPid: number;
  identifierPaths: string[];
  durationS: number;
  seed: number;
}): Promise<ExportBench> {
  const base = `http://127.0.0.1:${o.port}`;
  log('export: COPY floor (every resource out by COPY TO STDOUT, dropped)');
  const floor = await copyFloor(o.url);
  log(`  ${Math.round(floor.rps).toLocaleString('en-US')} resources/s (${(floor.ms / 1000).toFixed(1)} s)`);

  const rssBeforeBytes = treeRss(o.serverPid);
  let rssMaxBytes = rssBeforeBytes;
  const sampler = setInterval(() => (rssMaxBytes = Math.max(rssMaxBytes, treeRss(o.serverPid))), 200);
  try {
    log('export: a full $export, the server otherwise idle');
    const alone = await runExport(base, o.headers);
    const rps = alone.resources / (alone.ms / 1000);
    log(`  ${alone.resources.toLocaleString('en-US')} resources in ${alone.files} files, ${(alone.ms / 1000).toFixed(1)} s: ${Math.round(rps).toLocaleString('en-US')} resources/s (${(rps / floor.rps).toFixed(2)} × COPY)`);

    const run = () => httpRun({ port: o.port, paths: o.identifierPaths, concurrency: 16, durationS: o.durationS, headers: o.headers, seed: o.seed });
    log('export: identifier lookups at c=16 without an export');
    const without = await withCpu(o.serverPid, run);
    log(`  ${Math.round(without.rps)} req/s p99 ${without.p99.toFixed(2)} ms err ${without.errors}`);

    log('export: the same lookups while exports run back to back');
    let stop = false;
    let exportsDuring = 0;
    const loop = (async () => {
      while (!stop) {
        await runExport(base, o.headers);
        exportsDuring++;
      }
    })();
    const during = await withCpu(o.serverPid, run);
    stop = true;
    await loop;
    const p99Ratio = during.p99 / without.p99;
    log(`  ${Math.round(during.rps)} req/s p99 ${during.p99.toFixed(2)} ms err ${during.errors} (${exportsDuring} exports); p99 ${p99Ratio.toFixed(2)} × without`);
    log(`  server RSS ${(rssBeforeBytes / 2 ** 20).toFixed(0)} MiB before, at most ${(rssMaxBytes / 2 ** 20).toFixed(0)} MiB during the exports`);
    return {
      resources: alone.resources, files: alone.files, ms: alone.ms, rps, copyFloor: floor, ratioToCopy: rps / floor.rps,
      rssBeforeBytes, rssMaxBytes, lookups: { without, during, exportsDuring, p99Ratio },
    };
  } finally {
    clearInterval(sampler);
  }
}

/** The report's section. */
export function renderExport(e: ExportBench): string {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  return [
    '',
    '## Bulk export ($export)',
    '',
    `A full export of ${e.resources.toLocaleString('en-US')} resources (${e.files} files), kick-off to manifest, the server otherwise idle: ` +
      `${(e.ms / 1000).toFixed(1)} s, **${Math.round(e.rps).toLocaleString('en-US')} resources/s**, ${e.ratioToCopy.toFixed(2)} × the COPY floor ` +
      `(${Math.round(e.copyFloor.rps).toLocaleString('en-US')} resources/s: \`COPY (select content from resource) TO STDOUT\`, dropped; target ≥ 0.5 ×).`,
    '',
    `Server RSS: ${mib(e.rssBeforeBytes)} before, at most ${mib(e.rssMaxBytes)} while exports ran.`,
    '',
    `Identifier lookups at c=16, without an export and while exports ran back to back (${e.lookups.exportsDuring} during the run): ` +
      `p99 **${e.lookups.p99Ratio.toFixed(2)} ×** (target ≤ 3 ×, no error).`,
    '',
    ...lookupTable([['without an export', e.lookups.without], ['during exports', e.lookups.during]]),
    '',
  ].join('\n');
}

/** A table of lookup runs (also the open-data scenario's, bench/open-data.ts). */
export function lookupTable(runs: [string, RunStats][]): string[] {
  const row = (name: string, s: RunStats) => `| ${name} | ${Math.round(s.rps)} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.max.toFixed(1)} | ${s.errors} |`;
  return ['| lookups | req/s | p50 ms | p99 ms | max ms | errors |', '|---|---|---|---|---|---|', ...runs.map(([name, s]) => row(name, s))];
}
