// The benchmark's dataset: generated once per scale into bench/data/scale-<s>/ (git-ignored) and
// reused while its manifest matches the files; a seeded sample of resources read from it; the
// id-shifted slice loaded by the incremental measurement.

import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, stat, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBytes, generate, plannedCounts, RESOURCE_TYPES, type ResourceType } from '../src/generate/index.ts';
import { Rng } from '../src/generate/prng.ts';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const DATA_ROOT = path.join(BENCH_DIR, 'data');

export const scaleDir = (scale: number) => path.join(DATA_ROOT, `scale-${scale}`);

export interface DatasetFile {
  type: ResourceType;
  path: string;
  count: number;
  bytes: number;
}

export interface Dataset {
  dir: string;
  scale: number;
  seed: number;
  files: DatasetFile[];
  totalResources: number;
  totalBytes: number;
  /** set when this run generated the files. */
  generatedMs?: number;
  generatedRate?: number;
}

const MANIFEST = 'manifest.json';

/**
 * Bytes per 1.0 of scale, measured (see bench/README.md): NDJSON 7.20 GiB (docs/generator.md); the
 * loaded database (resource table + four index tables + their indexes) ≈ 3.0 × the NDJSON (21.4 GiB
 * at scale 1.0 since resources are stored uncompressed, sql/007; 17.9 GiB before); WAL is
 * bounded by max_wal_size (8 GB) of the embedded server profile, plus the checkpoint lag.
 */
export const NDJSON_BYTES_PER_SCALE = 7.73e9;
export const DB_BYTES_PER_SCALE = 24e9;
const WAL_CAP = 9e9;

export interface DiskPlan {
  ndjson: number;
  db: number;
  wal: number;
  /** the copy of the database that the incremental measurement loads into (dropped afterwards). */
  incrementalCopy: number;
  total: number;
}

export function diskPlan(scale: number, opts: { haveDataset: boolean; load: boolean; incremental: boolean }): DiskPlan {
  const ndjson = opts.haveDataset ? 0 : NDJSON_BYTES_PER_SCALE * scale;
  const db = opts.load ? DB_BYTES_PER_SCALE * scale : 0;
  const wal = opts.load ? Math.min(WAL_CAP, db) : 0;
  const incrementalCopy = opts.load && opts.incremental ? db * 1.1 : 0;
  // slice files of the incremental load: 10 % of the NDJSON at most
  const slice = opts.load && opts.incremental ? 0.1 * NDJSON_BYTES_PER_SCALE * scale : 0;
  const total = (ndjson + db + wal + incrementalCopy + slice) * 1.1 + 512 * 1024 ** 2;
  return { ndjson, db, wal, incrementalCopy, total };
}

/** Free bytes for an unprivileged writer on the file system holding `dir` (or its nearest parent). */
export async function freeBytes(dir: string): Promise<number> {
  let d = path.resolve(dir);
  while (!existsSync(d)) d = path.dirname(d);
  const s = await statfs(d);
  return s.bavail * s.bsize;
}

async function readManifest(dir: string): Promise<Dataset | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as Dataset;
  } catch {
    return undefined;
  }
}

/** The dataset of the manifest when every file is there with its recorded size. */
export async function existingDataset(scale: number, seed: number): Promise<Dataset | undefined> {
  const dir = scaleDir(scale);
  const m = await readManifest(dir);
  if (!m || m.scale !== scale || m.seed !== seed || m.files.length !== RESOURCE_TYPES.length) return undefined;
  for (const f of m.files) {
    const p = path.join(dir, path.basename(f.path));
    const st = await stat(p).catch(() => undefined);
    if (!st || st.size !== f.bytes) return undefined;
    f.path = p;
  }
  return { ...m, dir, generatedMs: undefined, generatedRate: undefined };
}

export async function generateDataset(scale: number, seed: number, log: (s: string) => void): Promise<Dataset> {
  const dir = scaleDir(scale);
  await mkdir(dir, { recursive: true });
  const summary = await generate({ scale, seed, outDir: dir, gzip: false, log: (l) => log(`  generate: ${l}`) });
  const ds: Dataset = {
    dir,
    scale,
    seed,
    files: summary.files.map((f) => ({ type: f.type, path: f.path, count: f.count, bytes: f.fileBytes })),
    totalResources: summary.totalResources,
    totalBytes: summary.totalFileBytes,
  };
  await writeFile(path.join(dir, MANIFEST), `${JSON.stringify(ds, null, 2)}\n`);
  return { ...ds, generatedMs: summary.elapsedMs, generatedRate: summary.resourcesPerSecond };
}

export { formatBytes, plannedCounts };

/**
 * Reads the lines of the given (sorted, 0-based) indexes of a file without decoding the others:
 * newlines are found in the raw buffers, only the chosen lines are turned into strings.
 */
export async function readLines(file: string, wanted: number[], onLine: (index: number, line: string) => void): Promise<number> {
  let w = 0;
  let lineNo = 0;
  let carry: Buffer[] = [];
  const stream = createReadStream(file, { highWaterMark: 4 << 20 });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) {
        if (w < wanted.length && wanted[w] === lineNo) carry.push(chunk.subarray(start));
        break;
      }
      if (w < wanted.length && wanted[w] === lineNo) {
        const line = Buffer.concat([...carry, chunk.subarray(start, nl)]).toString('utf8');
        onLine(lineNo, line);
        w++;
      }
      carry = [];
      lineNo++;
      start = nl + 1;
    }
    if (w >= wanted.length) {
      stream.destroy();
      break;
    }
  }
  return lineNo;
}

/** k distinct indexes in [0, n), sorted (Floyd's algorithm: O(k) memory). */
export function sampleIndexes(rng: Rng, n: number, k: number): number[] {
  const chosen = new Set<number>();
  for (let j = n - Math.min(k, n); j < n; j++) {
    const t = rng.int(j + 1);
    chosen.add(chosen.has(t) ? j : t);
  }
  return [...chosen].sort((a, b) => a - b);
}

/** Up to `k` resources per type, drawn uniformly with a seeded PRNG. */
export async function sampleResources(ds: Dataset, k: number, seed: number): Promise<Record<ResourceType, Record<string, unknown>[]>> {
  const out = {} as Record<ResourceType, Record<string, unknown>[]>;
  for (const [i, f] of ds.files.entries()) {
    const rng = new Rng(seed, 900 + i);
    const idx = sampleIndexes(rng, f.count, k);
    const rows: Record<string, unknown>[] = [];
    await readLines(f.path, idx, (_n, line) => rows.push(JSON.parse(line) as Record<string, unknown>));
    out[f.type] = rows;
  }
  return out;
}

/**
 * The slice of the incremental measurement: the first `fraction` of every file, each resource under
 * a new id (`b` + id) so that it is an insert on top of the loaded database; references are left
 * alone and point at the loaded resources. Written once and reused.
 */
export async function incrementalSlice(ds: Dataset, fraction: number): Promise<{ dir: string; files: string[]; count: number; bytes: number }> {
  const dir = path.join(ds.dir, `incremental-${fraction}`);
  const manifest = path.join(dir, MANIFEST);
  const done = await readFile(manifest, 'utf8').then((t) => JSON.parse(t) as { files: string[]; count: number; bytes: number }, () => undefined);
  if (done && done.files.every((f) => existsSync(f))) return { dir, ...done };
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  let count = 0;
  let bytes = 0;
  for (const f of ds.files) {
    const n = Math.max(1, Math.round(f.count * fraction));
    const target = path.join(dir, path.basename(f.path));
    const tmp = `${target}.part`;
    const out = createWriteStream(tmp);
    let lineNo = 0;
    let rest = '';
    const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())));
    const input = createReadStream(f.path, { encoding: 'utf8', highWaterMark: 1 << 20 });
    for await (const chunk of input as AsyncIterable<string>) {
      const text = rest + chunk;
      const lines = text.split('\n');
      rest = lines.pop()!;
      const keep: string[] = [];
      for (const line of lines) {
        if (lineNo >= n) break;
        lineNo++;
        if (line === '') continue;
        const shifted = line.replace('"id":"', '"id":"b');
        keep.push(shifted);
        bytes += Buffer.byteLength(shifted) + 1;
        count++;
      }
      if (keep.length) await write(`${keep.join('\n')}\n`);
      if (lineNo >= n) {
        input.destroy();
        break;
      }
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    await rename(tmp, target);
    files.push(target);
  }
  await writeFile(manifest, JSON.stringify({ files, count, bytes }));
  return { dir, files, count, bytes };
}
