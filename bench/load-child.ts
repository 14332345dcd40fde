// The loader runs of the benchmark, each in a Node process of its own, as `npm run load` runs for a
// user: `node --import tsx bench/load-child.ts <job JSON>`. Progress lines go to stderr; the last
// line of stdout is the run's figures as JSON.
//
// Run inside the benchmark's own process, the loader's main thread shared its heap with everything
// the benchmark holds (generator tables, samples, query classes: 52 MB against the loader's 10 MB
// at scale 0.1). The garbage collector marks the whole heap once per 64 MB of buffers the loader
// allocates, and at scale 0.1 that marking took 5.1 s of the 20 s of streaming (25 % of the main
// thread, the bottleneck of the bulk load), against 1.0 s in a process of its own.

import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectUrl } from '../src/db.ts';
import { loadFiles, loaderConnections } from '../src/load/loader.ts';
import { ParsePool } from '../src/load/parallel.ts';
import type { BulkChunkResult } from '../src/load/bulk-chunk.ts';
import { ndjsonByteChunks } from '../src/load/sources.ts';
import { registry } from '../src/registry/index.ts';
import { LOADER_NODE_FLAGS } from '../src/node-flags.ts';
import { treeCpuMs } from './drive.ts';
import type { LoadFigures } from './report.ts';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const minus = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a - b);

export type LoadJob =
  /** `postmaster`: the embedded PostgreSQL's pid, whose processes' CPU time is measured. */
  | { kind: 'load'; url: string; files: string[]; bulk: boolean; label: string; postmaster?: number }
  | { kind: 'parse-only'; files: string[] };

const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** The loader (`loadFiles`, as `npm run load` calls it) on `url`; rejected entries fail the run. */
async function loaderRun(url: string, files: string[], bulk: boolean, label: string, postmaster?: number): Promise<LoadFigures> {
  const sql = connectUrl(url, { max: loaderConnections() }); // the pool `npm run load` opens
  try {
    let lastProgress = 0;
    let lastLog = Date.now();
    const cpu0 = cpuMs();
    const pg0 = treeCpuMs(postmaster);
    // CPU when the last row was streamed: taken at every progress report (PostgreSQL's at most
    // every 200 ms: it reads /proc).
    let streamCpu = cpu0;
    let streamPg = pg0;
    let pgAt = 0;
    const t0 = performance.now();
    const indexBuilds: Record<string, number> = {};
    const s = await loadFiles(sql, registry, files, {
      bulk,
      onIndex: (name, ms) => {
        indexBuilds[name] = ms;
        log(`  ${label}: ${name} in ${(ms / 1000).toFixed(1)} s`);
      },
      batchSize: 1000,
      onProgress: ({ entries }) => {
        lastProgress = performance.now();
        streamCpu = cpuMs();
        if (lastProgress - pgAt >= 200) {
          pgAt = lastProgress;
          streamPg = treeCpuMs(postmaster);
        }
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          log(`  ${label}: ${entries.toLocaleString('en-US')} entries, ${Math.round(entries / ((performance.now() - t0) / 1000)).toLocaleString('en-US')}/s`);
        }
      },
      onReject: (where, reason) => log(`  ${label}: rejected ${where}: ${reason}`),
    });
    if (s.rejected) throw new Error(`${label}: ${s.rejected} entries rejected`);
    const resources = s.inserted + s.updated;
    const cpu = {
      loaderMs: cpuMs() - cpu0,
      loaderStreamMs: bulk ? streamCpu - cpu0 : undefined,
      pgMs: minus(treeCpuMs(postmaster), pg0),
      pgStreamMs: bulk ? minus(streamPg, pg0) : undefined,
    };
    return {
      resources,
      indexRows: s.indexRows,
      ms: s.elapsedMs,
      rps: resources / (s.elapsedMs / 1000),
      indexRowsPerS: s.indexRows / (s.elapsedMs / 1000),
      ingestMs: bulk ? lastProgress - t0 : undefined,
      indexBuilds: bulk ? indexBuilds : undefined,
      cpu,
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * The bulk loader's CPU side alone, as it runs it (src/load/bulk-load.ts): NDJSON read in byte
 * chunks, turned into the COPY data of the five tables by its worker threads (JSON.parse,
 * validation, extraction, encoding); no database.
 */
async function parseOnly(files: string[]): Promise<LoadFigures & { workers: number }> {
  const workers = Math.min(2, os.availableParallelism());
  const pool = new ParsePool(workers);
  const t0 = performance.now();
  let resources = 0;
  let indexRows = 0;
  let rid = 1;
  try {
    for (const f of files) {
      const queue: Promise<BulkChunkResult>[] = [];
      const take = async () => {
        const r = await queue.shift()!;
        if (r.others.length) throw new Error(`${r.others[0].where}: ${r.others[0].reason ?? 'not a resource of the COPY'}`);
        resources += r.resources;
        indexRows += r.indexRows;
      };
      for await (const c of ndjsonByteChunks(f)) {
        const p = pool.bulk({ file: f, first: c.first, lines: c.lines, ridBase: rid, now: Date.now(), bytes: c.bytes }, c.owned);
        p.catch(() => {});
        queue.push(p);
        rid += c.lines;
        while (queue.length > workers * 4) await take();
      }
      while (queue.length) await take();
    }
  } finally {
    await pool.close();
  }
  const ms = performance.now() - t0;
  return { resources, indexRows, ms, rps: resources / (ms / 1000), indexRowsPerS: indexRows / (ms / 1000), workers, cpu: { loaderMs: cpuMs() } };
}

/** Runs a job in a child process (stderr passed through) and returns its figures. */
export function runLoadJob<T extends LoadFigures>(job: LoadJob): Promise<T> {
  const entry = fileURLToPath(import.meta.url);
  return new Promise<T>((resolve, reject) => {
    const child = spawn(process.execPath, [...LOADER_NODE_FLAGS, '--import', 'tsx', entry, JSON.stringify(job)], {
      cwd: path.resolve(path.dirname(entry), '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as T);
      else reject(new Error(`${job.kind === 'load' ? job.label : 'parse-only'} load process ended with ${signal ?? `code ${code}`}${last ? `: ${last}` : ''}`));
    });
  });
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]) as LoadJob;
  const figures = job.kind === 'load' ? await loaderRun(job.url, job.files, job.bulk, job.label, job.postmaster) : await parseOnly(job.files);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stdout.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
