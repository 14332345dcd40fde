import type { Sql } from '../db.ts';
import { ExtractError } from '../fhir/extract.ts';
import type { Registry } from '../registry/index.ts';
import { InvalidResource, prepareResource } from '../fhir/resource.ts';
import { addCounts, emptyCounts, loaderTx, storeLabels, writeBatch, type WriteCounts, type WriteEntry } from '../store/write.ts';
import { TokenSystems } from '../store/token-systems.ts';
import { BulkCopies, BulkIncomplete, endBulk, failBulk, rebuildIndexes, rowsCommitted, startBulk } from './bulk.ts';
import { bulkChunk, type BulkChunkResult, type ChunkOther } from './bulk-chunk.ts';
import { COPY_BINARY, COPY_TABLES, CopyEncoder, countKeys, countLines, resolveSystemMarks } from '../store/copy-encode.ts';
import { binaryRowsWithout } from '../store/pg-binary.ts';
import { KeySet, keyHashes } from './key-set.ts';
import { chunksAhead } from './limits.ts';
import { ordered } from './ordered.ts';
import type { ParsePool } from './parallel.ts';
import { clipReason } from './echo.ts';
import { prepare } from './prepare.ts';
import { lineEntries, type ByteChunk, type LineText, type RawEntry } from './sources.ts';

/**
 * A bulk load into an empty database (`npm run load -- --bulk`, a first open-data import): every
 * resource of the input is written by COPY with its key assigned up front, the index rows beside
 * it, in the five FREEZE transactions of src/load/bulk.ts; the indexes are built once at the end.
 *
 * The input is a stream of sources (BulkSource), whatever made them: files (src/load/loader.ts),
 * the resources an import maps (src/opendata/publish.ts). NDJSON comes in byte chunks that the
 * worker threads turn into COPY data (src/load/bulk-chunk.ts); this thread only takes the results
 * in input order, interns new token systems and writes. An id that comes again (its first
 * occurrence is already on its way into the COPY), a Bundle line's entries and deletions are
 * written after the bulk load, in input order, by the ordinary upsert: the last entry for an id
 * still wins, as in an incremental load.
 */
export type BulkSource =
  | {
      /** names the lines in messages: `name:line`. */
      name: string;
      /** whole NDJSON lines, numbered from 1 in the order they come. */
      chunks: AsyncIterable<ByteChunk>;
      /**
       * the text of some lines again (an id that came again: its bytes went to a worker); a source
       * without it must never repeat an id (the load then fails).
       */
      reread?: (lines: ReadonlySet<number>) => Promise<Map<number, LineText>>;
    }
  /** entries read on this thread (a .json file: a resource or a Bundle). */
  | { entries: AsyncIterable<RawEntry> };

export interface BulkHooks {
  /** `key`: the Type/id of a rejected resource that has both. */
  reject(where: string, reason: string, key?: string): void;
  /** entries taken so far. */
  progress(entries: number): void;
}

export interface BulkResult extends WriteCounts {
  rejected: number;
  rejectedFiles: number;
  indexMs: number;
}

/** An entry written after the bulk: prepared already, or a line of a source to read again (an id that came again). */
type Later = { entry: WriteEntry } | { source: number; line: number };

class StrictFailure extends Error {}

const utf8 = new TextEncoder();

/** Removes the rows of the given keys from a table's COPY text (every row starts with its resource's key). */
function textRowsWithout(table: Uint8Array, rids: Set<string>): { bytes: Uint8Array; rows: number } {
  const kept = Buffer.from(table.buffer, table.byteOffset, table.byteLength)
    .toString('utf8')
    .split('\n')
    .filter((row) => row !== '' && !rids.has(row.slice(0, row.indexOf('\t'))));
  return { bytes: utf8.encode(kept.length ? `${kept.join('\n')}\n` : ''), rows: kept.length };
}

export async function bulkLoad(
  sql: Sql,
  registry: Registry,
  sources: AsyncIterable<BulkSource> | Iterable<BulkSource>,
  opts: { strict?: boolean; batchSize?: number; onIndex?: (name: string, ms: number) => void },
  pool: ParsePool | undefined,
  hooks: BulkHooks,
): Promise<BulkResult> {
  const session = await startBulk(sql);
  let copies: BulkCopies | undefined;
  let committed = false;
  try {
    const counts = emptyCounts();
    let rejected = 0;
    let entries = 0;
    let strictFailed = false;
    /** the NDJSON sources met so far (a Later names one by its place here). */
    const lineSources: Extract<BulkSource, { chunks: unknown }>[] = [];
    let sourceCount = 0;
    const later: Later[] = [];
    const seen = new KeySet();
    const systems = new TokenSystems();
    const known = new Map<string, number>();
    /** the resources counted per value (value_count), written with the rows. */
    const valueCounts = new Map<string, number>();
    const now = new Date();
    const addCounts_ = (from: ReadonlyMap<string, number>, unknown: readonly string[], sign = 1) => {
      for (const [k, n] of from) {
        const key = resolveSystemMarks(k, unknown, (uri) => systems.id(uri));
        valueCounts.set(key, (valueCounts.get(key) ?? 0) + sign * n);
      }
    };
    /** the loaded codes' distinct labels, (system or '', code, label) triples, flat: stored once the rows are. */
    const labels: string[] = [];
    const labelled = new Set<string>();
    const learn = (triples: string[]) => {
      for (let i = 0; i < triples.length; i += 3) {
        const key = `${triples[i]}\u0000${triples[i + 1]}\u0000${triples[i + 2]}`;
        if (!labelled.has(key)) labelled.add(key), labels.push(triples[i], triples[i + 1], triples[i + 2]);
      }
    };
    const [{ rid: first }] = await sql<{ rid: string }[]>`select nextval(pg_get_serial_sequence('resource', 'rid'))::text as rid`;
    let nextRid = Number(first);
    copies = await BulkCopies.open(sql);

    const reject = async (where: string, reason: string, key?: string) => {
      rejected++;
      hooks.reject(where, reason, key);
      if (opts.strict && !strictFailed) {
        strictFailed = true;
        await copies!.abort(new StrictFailure('--strict: an entry was rejected'));
      }
    };

    /** Interns systems first met in a chunk and gives their ids to the workers. */
    const intern = async (uris: string[]) => {
      await systems.intern(sql, uris);
      const fresh = uris.filter((u) => !known.has(u)).map((u): [string, number] => [u, systems.id(u)]);
      for (const [u, id] of fresh) known.set(u, id);
      if (fresh.length) pool?.systems(fresh);
    };

    /** Takes one chunk's result, in input order. */
    const apply = async (r: BulkChunkResult, source: number, firstLine: number, ridBase: number) => {
      const tables = r.tables;
      learn(r.labels);
      if (r.unknownSystems.length) {
        await intern(r.unknownSystems);
        const t = COPY_TABLES.indexOf('token_idx');
        const text = Buffer.from(tables[t].buffer, tables[t].byteOffset, tables[t].byteLength).toString('utf8');
        tables[t] = utf8.encode(resolveSystemMarks(text, r.unknownSystems, (uri) => systems.id(uri)));
      }
      // Lines in order: a resource of the COPY, or another entry (rejected, or written later).
      let cut: Set<string> | undefined;
      let o = 0;
      const other = async (x: ChunkOther) => {
        if (x.reason !== undefined) await reject(x.where, x.reason, x.key);
        else {
          seen.add(x.h1!, x.h2!);
          later.push({ entry: x.entry! });
        }
      };
      for (let i = 0; i < r.copied.length; i += 3) {
        const line = r.copied[i];
        while (o < r.others.length && r.others[o].line < line) await other(r.others[o++]);
        if (seen.add(r.copied[i + 1], r.copied[i + 2])) continue;
        (cut ??= new Set()).add(String(ridBase + line));
        later.push({ source, line: firstLine + line });
      }
      while (o < r.others.length) await other(r.others[o++]);
      let indexRows = r.indexRows;
      let resources = r.resources;
      if (cut) {
        indexRows = 0;
        for (let t = 0; t < tables.length; t++) {
          const x = (COPY_BINARY[COPY_TABLES[t]] ? binaryRowsWithout : textRowsWithout)(tables[t], cut);
          tables[t] = x.bytes;
          if (t === 0) resources = x.rows;
          else indexRows += x.rows;
        }
      }
      entries += r.resources + r.others.length;
      if (strictFailed) return;
      addCounts_(r.counts, r.unknownSystems);
      await copies!.write(tables);
      counts.inserted += resources;
      counts.indexRows += indexRows;
    };

    for await (const source of sources) {
      sourceCount++;
      if ('chunks' in source) {
        const at = lineSources.push(source) - 1;
        // Keys are assigned as chunks are handed out; results are taken back in input order.
        const encode = async (chunk: ByteChunk) => {
          const ridBase = nextRid;
          nextRid += chunk.lines;
          const req = { file: source.name, first: chunk.first, lines: chunk.lines, ridBase, now: now.getTime(), bytes: chunk.bytes };
          const r = pool ? await pool.bulk(req, chunk.owned) : bulkChunk(registry, known, { ...req, kind: 'bulk', id: 0 });
          return { r, first: chunk.first, ridBase };
        };
        for await (const { r, first, ridBase } of ordered(source.chunks, encode, chunksAhead(pool?.size ?? 0))) {
          await apply(r, at, first, ridBase);
          hooks.progress(entries);
        }
      } else {
        // A .json file (a resource or a Bundle) on this thread: resources by COPY, the rest later.
        const enc = new CopyEncoder(known);
        for await (const raw of source.entries) {
          entries++;
          if (raw.kind === 'resource') {
            try {
              const p = prepareResource(registry, raw.value, now);
              const [h1, h2] = keyHashes(`${p.type}/${p.id}`);
              if (seen.add(h1, h2)) {
                if (p.rows.token.some((t) => t.system !== null && !known.has(t.system))) {
                  await intern(p.rows.token.flatMap((t) => (t.system === null ? [] : [t.system])));
                }
                enc.add(nextRid++, p);
              } else {
                later.push({ entry: prepare(registry, raw).entry! });
              }
            } catch (err) {
              if (!(err instanceof InvalidResource || err instanceof ExtractError)) throw err;
              await reject(raw.where, err.message);
            }
            continue;
          }
          const p = prepare(registry, raw);
          if (p.entry === undefined) await reject(p.where, p.reason);
          else {
            const [h1, h2] = keyHashes(`${p.entry.type}/${p.entry.id}`);
            seen.add(h1, h2);
            later.push({ entry: p.entry });
          }
        }
        if (!strictFailed && enc.resources) {
          learn(enc.labels);
          addCounts_(enc.counts, enc.unknown);
          await copies.write(enc.take());
          counts.inserted += enc.resources;
          counts.indexRows += enc.indexRows;
        }
        hooks.progress(entries);
      }
    }

    if (strictFailed) {
      hooks.reject('(bulk load)', 'file rejected (--strict): an entry of the load was rejected, so nothing of this bulk load was written');
      await failBulk(sql, session);
      return { ...emptyCounts(), rejected, rejectedFiles: sourceCount, indexMs: 0 };
    }
    await sql`select setval(pg_get_serial_sequence('resource', 'rid'), greatest(${nextRid - 1}, ${first}::bigint))`;
    // Ids that came again were counted by their chunk but left out of the COPY: not counted here,
    // the upsert that writes them after the load counts them (sql/012's triggers).
    const texts = await laterLines(later, lineSources);
    for (const { source, line } of later.filter((l): l is Extract<Later, { source: number }> => 'source' in l)) {
      const { line: text, utf8 } = texts.get(source)!.get(line)!;
      for (const raw of lineEntries(lineSources[source].name, line, text, utf8)) {
        if (raw.kind !== 'resource') continue;
        const p = prepareResource(registry, raw.value, now, raw.text);
        addCounts_(countKeysMap(countKeys(p.type, p.rows, (uri) => String(systems.id(uri)))), [], -1);
      }
    }
    await copies.write([...COPY_TABLES.map(() => new Uint8Array(0)), utf8.encode(countLines(valueCounts))]);
    await copies.commit();
    committed = true;
    await rowsCommitted(sql);
    await storeLabels(sql, systems, labels);
    const t0 = Date.now();
    await rebuildIndexes(sql, opts.onIndex);
    const indexMs = Date.now() - t0;
    const more = await writeLater(sql, registry, systems, later, lineSources, texts, opts.batchSize ?? 1000);
    await endBulk(sql, session);
    return { ...addCounts(counts, more), rejected, rejectedFiles: 0, indexMs };
  } catch (err) {
    if (!committed) await copies?.abort(err as Error);
    await failBulk(sql, session).catch(() => {});
    throw committed ? new BulkIncomplete(err) : err;
  }
}

/** The text of the lines of ids that came again, read again from their sources (their bytes went to a worker), by source. */
async function laterLines(later: Later[], sources: readonly Extract<BulkSource, { chunks: unknown }>[]): Promise<Map<number, Map<number, LineText>>> {
  const wanted = new Map<number, Set<number>>();
  for (const l of later) if ('source' in l) (wanted.get(l.source) ?? wanted.set(l.source, new Set()).get(l.source)!).add(l.line);
  const texts = new Map<number, Map<number, LineText>>();
  for (const [s, lines] of wanted) {
    const { name, reread } = sources[s];
    if (!reread) throw new Error(`${name}:${Math.min(...lines)}: an id came again in a source that cannot be read again`);
    const found = await reread(lines);
    for (const n of lines) if (!found.has(n)) throw new Error(`${name}:${n}: the line changed while it was being loaded`);
    texts.set(s, found);
  }
  return texts;
}

/** A set of keys as counts of one each. */
const countKeysMap = (keys: Iterable<string>): Map<string, number> => new Map([...keys].map((k) => [k, 1]));

/**
 * The entries of a bulk load that are written by upsert once its rows and indexes are in: in input
 * order, in batches (the last entry of an id in a batch wins, as in an incremental load); `texts`
 * holds the lines of ids that came again, by source (laterLines).
 */
async function writeLater(
  sql: Sql,
  registry: Registry,
  systems: TokenSystems,
  later: Later[],
  sources: readonly { name: string }[],
  texts: ReadonlyMap<number, ReadonlyMap<number, LineText>>,
  batchSize: number,
): Promise<WriteCounts> {
  let counts = emptyCounts();
  let batch: WriteEntry[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const b = batch;
    batch = [];
    counts = addCounts(counts, await loaderTx(sql, (tx) => writeBatch(sql, registry, systems, b, tx)));
  };
  for (const l of later) {
    if ('entry' in l) batch.push(l.entry);
    else {
      const text = texts.get(l.source)!.get(l.line)!;
      for (const raw of lineEntries(sources[l.source].name, l.line, text.line, text.utf8)) {
        const p = prepare(registry, raw);
        if (!p.entry) throw new Error(`${p.where}: the line changed while it was being loaded (${clipReason(p.reason)})`);
        batch.push(p.entry);
      }
    }
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return counts;
}
