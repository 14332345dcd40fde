// Load drivers: autocannon against a server on 127.0.0.1 (paths drawn at random per request) and
// the same searches as SQL through postgres.js, both for a fixed duration at a fixed concurrency.
// Latencies are recorded per request with sub-millisecond precision (autocannon's own histogram
// rounds to whole milliseconds, too coarse for a 3 ms target).

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import autocannon from 'autocannon';
import type { Config } from '../src/config.ts';
import { Rng } from '../src/generate/prng.ts';
import { execOp, type FloorOp, type Pools } from './floor.ts';

export interface RunStats {
  concurrency: number;
  durationS: number;
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  errors: number;
  /** mean response size (HTTP only). */
  meanBytes?: number;
  /** CPU time of the server process per request, ms (HTTP only). */
  serverCpuMsPerReq?: number;
  /** CPU use of the server process, % of one core (HTTP only): near 100 = its one thread is the bottleneck. */
  serverCpuPct?: number;
  /** share of the machine's CPU time that was busy during the run (all processes, all cores), %. */
  machineBusyPct?: number;
  /**
   * share of the machine's CPU time used by processes that are not the benchmark's (the bench
   * process and its children, the embedded PostgreSQL and its backends), %: other people's work.
   */
  othersBusyPct?: number;
  firstError?: string;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/** Latencies in a growable Float64Array (8 bytes a request). */
class Latencies {
  private buf = new Float64Array(1 << 14);
  n = 0;
  push(v: number): void {
    if (this.n === this.buf.length) {
      const b = new Float64Array(this.buf.length * 2);
      b.set(this.buf);
      this.buf = b;
    }
    this.buf[this.n++] = v;
  }
  stats(concurrency: number, elapsedMs: number, errors: number): RunStats {
    const s = this.buf.slice(0, this.n).sort();
    let sum = 0;
    for (const v of s) sum += v;
    return {
      concurrency,
      durationS: elapsedMs / 1000,
      requests: this.n,
      rps: this.n / (elapsedMs / 1000),
      p50: percentile(s, 0.5),
      p90: percentile(s, 0.9),
      p99: percentile(s, 0.99),
      max: this.n ? s[this.n - 1] : NaN,
      mean: this.n ? sum / this.n : NaN,
      errors,
    };
  }
}

export const hashName = (s: string) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);

export async function httpRun(opts: {
  port: number;
  paths: string[];
  concurrency: number;
  durationS: number;
  headers: Record<string, string>;
  seed: number;
}): Promise<RunStats> {
  const rng = new Rng(opts.seed, 970);
  const lat = new Latencies();
  let bytes = 0;
  let non2xx = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const inst = autocannon(
      {
        url: `http://127.0.0.1:${opts.port}`,
        connections: opts.concurrency,
        pipelining: 1,
        duration: opts.durationS,
        timeout: 60,
        headers: opts.headers,
        requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: opts.paths[rng.int(opts.paths.length)] }) }],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    inst.on('response', (_client, status, resBytes, ms) => {
      if (status >= 200 && status < 300) {
        lat.push(ms);
        bytes += resBytes;
      } else {
        non2xx++;
      }
    });
    inst.on('reqError', (err) => (firstError ??= String(err?.message ?? err)));
  });
  const elapsed = performance.now() - t0;
  const st = lat.stats(opts.concurrency, elapsed, non2xx + result.errors);
  st.meanBytes = lat.n ? bytes / lat.n : 0;
  if (firstError) st.firstError = firstError;
  return st;
}

/** The first non-2xx answer of a path (to show what an erroring class returns). */
export async function probe(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; ms: number; body: string }> {
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  const body = await res.text();
  return { status: res.status, ms: performance.now() - t0, body };
}

export async function floorRun(pools: Pools, config: Config, ops: FloorOp[], concurrency: number, durationS: number, seed: number): Promise<RunStats> {
  const rng = new Rng(seed, 971);
  const lat = new Latencies();
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const end = t0 + durationS * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const op = ops[rng.int(ops.length)];
      const s = performance.now();
      try {
        await execOp(pools, op, config);
        lat.push(performance.now() - s);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const st = lat.stats(concurrency, performance.now() - t0, errors);
  if (firstError) st.firstError = firstError;
  return st;
}

export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface Child {
  proc: ChildProcess;
  /** how the process ended, if it did (a server killed under load must not go unnoticed). */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stop(): Promise<void>;
}

/** A node child running a TypeScript entry through tsx, its output appended to a log file. */
export async function startChild(entry: string, args: string[], env: Record<string, string>, logFile: string, ready: () => Promise<boolean>, timeoutMs = 120_000): Promise<Child> {
  const log = createWriteStream(logFile, { flags: 'a' });
  const proc = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.pipe(log, { end: false });
  proc.stderr!.pipe(log, { end: false });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((r) => proc.once('exit', (code, signal) => ((exited = { code, signal }), r())));
  const stop = async () => {
    if (exited === undefined) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      await exit;
      clearTimeout(t);
    }
    log.end();
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`${entry} exited (code ${exited.code}, signal ${exited.signal}) before it was ready (see ${logFile})`);
    if (await ready().catch(() => false)) return { proc, stop, exited: () => exited };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`${entry} was not ready after ${timeoutMs / 1000} s (see ${logFile})`);
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.ok;
}

const CLK_TCK = 100;

/** CPU time (user + system) of a process so far, ms; undefined off Linux or once it is gone. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** Busy and total CPU time of the whole machine so far (jiffies, all cores). */
export function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const [, ...v] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const n = v.map(Number);
    const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - n[3] - n[4], total };
  } catch {
    return undefined;
  }
}

/** Processes of the benchmark: the trees under the given roots (this process, the postmaster). */
let ownRoots: number[] = [process.pid];
export function setOwnRoots(roots: number[]): void {
  ownRoots = roots;
}

/** CPU time of every process in the trees of `ownRoots`, in jiffies (undefined off Linux). */
export function ownCpuJiffies(): number | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return undefined;
  }
  const procs = new Map<number, { ppid: number; cpu: number }>();
  for (const n of names) {
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(n), { ppid: Number(f[1]), cpu: Number(f[11]) + Number(f[12]) });
    } catch {
      // ended meanwhile
    }
  }
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  let sum = 0;
  const seen = new Set<number>();
  const stack = ownRoots.filter((r) => procs.has(r));
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    sum += procs.get(pid)!.cpu;
    stack.push(...(children.get(pid) ?? []));
  }
  return sum;
}

/** Runs `run` and adds the CPU figures of the machine and, when given, of one process. */
export async function withCpu(pid: number | undefined, run: () => Promise<RunStats>): Promise<RunStats> {
  const m0 = machineCpu();
  const o0 = ownCpuJiffies();
  const p0 = processCpuMs(pid);
  const t0 = performance.now();
  const st = await run();
  const wall = performance.now() - t0;
  const m1 = machineCpu();
  const o1 = ownCpuJiffies();
  const p1 = processCpuMs(pid);
  if (m0 && m1 && m1.total > m0.total) {
    st.machineBusyPct = (100 * (m1.busy - m0.busy)) / (m1.total - m0.total);
    if (o0 !== undefined && o1 !== undefined) {
      st.othersBusyPct = Math.max(0, (100 * (m1.busy - m0.busy - (o1 - o0))) / (m1.total - m0.total));
    }
  }
  if (p0 !== undefined && p1 !== undefined) {
    st.serverCpuPct = (100 * (p1 - p0)) / wall;
    st.serverCpuMsPerReq = st.requests ? (p1 - p0) / st.requests : undefined;
  }
  return st;
}
