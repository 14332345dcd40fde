import type { Sql } from '../db.ts';
import { concat, entry, subset, subsetting } from '../fhir/bundle.ts';
import { renderQuery, type RenderOptions } from '../fhir/compile.ts';
import type { SearchRequest } from '../fhir/search-request.ts';
import type { Statement } from '../fhir/statement.ts';
import { run } from './run.ts';

/**
 * Bundle entries as the executor gets them: written by PostgreSQL (renderQuery), one value for a
 * whole page, or in JavaScript when `_summary` or `_elements` subset each resource.
 */
export interface Entries {
  /** the entries shown, comma-separated UTF-8 JSON ('' when none). */
  json: Buffer;
  /** entries in `json`. */
  count: number;
  /** rows the statement returned: one more than `count` when a page has a next one. */
  rows: number;
  /** the `key` column of the last entry shown: where the next page starts. */
  last?: string;
  /** keys and ids of the entries shown, in order (only when asked for, else empty). */
  rids: string[];
  ids: string[];
}

export const Entries: { none: Entries } = {
  none: Object.freeze({ json: Buffer.alloc(0), count: 0, rows: 0, rids: [], ids: [] }) as Entries,
};

// ids are [A-Za-z0-9.-] (src/fhir/reference.ts ID_RE): no comma, ASCII.
const list = (b: Buffer | null) => (b === null || b.length === 0 ? [] : b.toString('latin1').split(','));

/** `rows` (rid, type, id, content, ord, key) rendered by the database. */
export async function fetchEntries(db: Sql, rows: Statement, o: RenderOptions): Promise<Entries> {
  const [[rowCount, last, rids, ids, json]] = (await run(db, renderQuery(rows, o)).raw()) as unknown as (Buffer | null)[][];
  const n = Number(rowCount!.toString('latin1'));
  return {
    json: json ?? Buffer.alloc(0),
    count: Math.min(n, o.shown),
    rows: n,
    last: last?.toString('utf8'),
    rids: list(rids),
    ids: list(ids),
  };
}

/**
 * The page of matches: `shown` entries of `rows` and whether there is a next page (the statement
 * asks for one more). `_summary` and `_elements` subset each resource here, from the rows themselves.
 */
export async function fetchPage(db: Sql, req: SearchRequest, rows: Statement, base: string, keys: boolean, shown = req.count): Promise<Entries> {
  if (!subsetting(req)) return fetchEntries(db, rows, { base, mode: 'match', shown, keys });
  const raw = (await run(db, rows).raw()) as unknown as Buffer[][];
  const page = raw.slice(0, shown);
  const parts: (string | Buffer)[] = [];
  page.forEach(([, type, id, content], i) => {
    if (i) parts.push(',');
    parts.push(...entry(`${base}/${type.toString('utf8')}/${id.toString('utf8')}`, subset(req, content), 'match'));
  });
  return {
    json: concat(parts),
    count: page.length,
    rows: raw.length,
    last: page.at(-1)?.[5].toString('utf8'),
    rids: page.map(([rid]) => rid.toString('latin1')),
    ids: page.map(([, , id]) => id.toString('latin1')),
  };
}

/** Two runs of entries as one: `a`'s, then `b`'s (a sorted page that crosses from phase 1 to 2). */
export function concatEntries(a: Entries, b: Entries): Entries {
  if (a.count === 0) return { ...b, rows: a.rows + b.rows };
  if (b.rows === 0) return a;
  return {
    json: b.count ? concat([a.json, ',', b.json]) : a.json,
    count: a.count + b.count,
    rows: a.rows + b.rows,
    last: b.count ? b.last : a.last,
    rids: [...a.rids, ...b.rids],
    ids: [...a.ids, ...b.ids],
  };
}
