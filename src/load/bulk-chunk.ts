import { ExtractError } from '../fhir/extract.ts';
import type { Registry } from '../registry/index.ts';
import { InvalidResource, prepareResource } from '../fhir/resource.ts';
import type { WriteEntry } from '../store/write.ts';
import { CopyEncoder } from '../store/copy-encode.ts';
import { keyHashes } from './key-set.ts';
import { prepare } from './prepare.ts';
import { byteLines, lineEntries } from './sources.ts';

/**
 * One chunk of a bulk load: whole NDJSON lines in, the COPY data of the five tables out. Line i of
 * the chunk (0-based) is resource `ridBase + i`: keys are assigned before the lines are read, so
 * chunks are encoded in parallel and written in order (a blank, bad or Bundle line leaves its key
 * unused). Pure: it runs in a worker thread or, without workers, on the main thread.
 */
export interface BulkChunkRequest {
  kind: 'bulk';
  id: number;
  file: string;
  /** number of the chunk's first line in the file (1-based). */
  first: number;
  /** lines in `bytes`. */
  lines: number;
  ridBase: number;
  /** the load's start (ms): meta.lastUpdated of a resource without one, the same in every chunk. */
  now: number;
  bytes: Uint8Array;
}

/** Interned token systems (uri, id), sent to the workers as the main thread learns them. */
export interface SystemsUpdate {
  kind: 'systems';
  systems: [string, number][];
}

/**
 * Everything of a chunk that is not a row of the COPY, in line order: a rejected entry, or an
 * entry written after the bulk load by the ordinary upsert (a Bundle line's entries, a deletion).
 * `h1`/`h2` hash the entry's `Type/id` (keyHashes).
 */
export interface ChunkOther {
  line: number;
  where: string;
  reason?: string;
  /** a rejected resource's Type/id, when it has both. */
  key?: string;
  entry?: WriteEntry;
  h1?: number;
  h2?: number;
}

export interface BulkChunkResult {
  id: number;
  /** COPY data of resource, token_idx, string_idx, date_idx, reference_idx (binary or UTF-8 text: COPY_BINARY). */
  tables: Uint8Array[];
  resources: number;
  indexRows: number;
  /** per resource in the COPY, in order: its line in the chunk (0-based) and the two key hashes. */
  copied: Uint32Array;
  others: ChunkOther[];
  /** token systems written as SYSTEM_MARK (not interned when the chunk was encoded). */
  unknownSystems: string[];
  /** the chunk's distinct code labels, (system or '', code, label) triples, flat. */
  labels: string[];
  /** the chunk's resources counted per value (CopyEncoder.counts: token systems as marks of `unknownSystems` or ids). */
  counts: Map<string, number>;
  error?: undefined;
}

/** The Type/id of a value that has a resourceType and an id, both strings. */
function resourceKey(value: unknown): string | undefined {
  const { resourceType, id } = value as { resourceType?: unknown; id?: unknown };
  return typeof resourceType === 'string' && typeof id === 'string' ? `${resourceType}/${id}` : undefined;
}

export function bulkChunk(registry: Registry, systems: ReadonlyMap<string, number>, m: BulkChunkRequest): BulkChunkResult {
  const now = new Date(m.now);
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  const enc = new CopyEncoder(systems);
  const copied: number[] = [];
  const others: ChunkOther[] = [];
  for (const { n, start, end, line, utf8 } of byteLines(bytes, m.first, m.lines)) {
    const i = n - m.first;
    // The bytes of the text lineEntries parses (without a byte order mark on a file's first line):
    // UTF-8, as PostgreSQL takes them (a line that is not is rejected, never copied).
    const raw = { bytes, start: n === 1 && line.charCodeAt(0) === 0xfeff ? start + 3 : start, end };
    for (const entry of lineEntries(m.file, n, line, utf8)) {
      if (entry.kind === 'resource' && entry.text !== undefined) {
        // A whole line that is one resource: a row of the COPY.
        try {
          const p = prepareResource(registry, entry.value, now, entry.text);
          enc.add(m.ridBase + i, p, raw);
          const [h1, h2] = keyHashes(`${p.type}/${p.id}`);
          copied.push(i, h1, h2);
        } catch (err) {
          if (!(err instanceof InvalidResource || err instanceof ExtractError)) throw err;
          others.push({ line: i, where: entry.where, reason: err.message, key: resourceKey(entry.value) });
        }
        continue;
      }
      // Bad lines, a Bundle's entries, deletions: reported, or written after the COPY by upsert.
      const p = prepare(registry, entry);
      if (p.entry === undefined) others.push({ line: i, where: p.where, reason: p.reason });
      else {
        const [h1, h2] = keyHashes(`${p.entry.type}/${p.entry.id}`);
        others.push({ line: i, where: p.where, entry: p.entry, h1, h2 });
      }
    }
  }
  return {
    id: m.id,
    tables: enc.take(),
    resources: enc.resources,
    indexRows: enc.indexRows,
    copied: Uint32Array.from(copied),
    others,
    unknownSystems: enc.unknown,
    labels: enc.labels,
    counts: enc.counts,
  };
}
