import type { Sql } from '../db.ts';
import { concat, subset, subsetting } from '../fhir/bundle.ts';
import { run, sql, type Statement } from '../fhir/statement.ts';
import type { SearchRequest } from '../fhir/search-request.ts';

/**
 * Bundle entries rendered by PostgreSQL. A statement selecting (rid, type, id, content::text) in key
 * order is wrapped so that the database returns one row: the entries already written as the
 * Bundle's JSON (`{"fullUrl":…,"resource":…,"search":{"mode":…}}`, comma-separated), how many rows
 * there were, the last key, and the keys and ids when includes need them. A page of 1000 resources
 * (2 MB) then costs the server one buffer instead of 4000 (a row's four columns), which the garbage
 * collector had to copy while 16 such pages were in flight (minor GCs of 10 ms, 60 ms at worst).
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

export interface RenderOptions {
  /** base of the API version (…/fhir/v2): fullUrl = base/type/id. */
  base: string;
  mode: 'match' | 'include';
  /** rows to render at most (the statement may return one more: a next page). */
  shown: number;
  /** return the keys and ids of the entries (for _include/_revinclude). */
  keys: boolean;
}

/**
 * The text around an entry's type/id and resource, per base and mode: parameters of every render
 * statement, kept rather than built anew for each (see statementText in src/fhir/statement.ts).
 * Bases come from Host headers: at most 64 are kept.
 */
const entryTexts = new Map<string, readonly [prefix: string, suffix: string]>();
function entryParts(base: string, mode: RenderOptions['mode']): readonly [string, string] {
  const key = `${mode} ${base}`;
  let parts = entryTexts.get(key);
  if (parts === undefined) {
    parts = [`${base}/`, `,"search":{"mode":"${mode}"}}`];
    if (entryTexts.size < 64) entryTexts.set(key, parts);
  }
  return parts;
}

/**
 * The statement that renders `rows`: (rid, type, id, content, ord, key), `ord` the entry's place in
 * the Bundle, `key` where a next page would start after it.
 */
export function renderStatement(rows: Statement, o: RenderOptions): Statement {
  const shown = sql`p.n <= ${o.shown}`;
  const [prefix, suffix] = entryParts(o.base, o.mode);
  const entry = sql`'{"fullUrl":' || to_json(${prefix}::text || p.type || '/' || p.id)::text || ',"resource":' || p.content || ${suffix}::text`;
  return sql`
    select count(*) as rows, (array_agg(p.key order by p.n desc) filter (where ${shown}))[1] as last,
      ${o.keys ? sql`string_agg(p.rid::text, ',' order by p.n) filter (where ${shown})` : sql`null`} as rids,
      ${o.keys ? sql`string_agg(p.id, ',' order by p.n) filter (where ${shown})` : sql`null`} as ids,
      string_agg(${entry}, ',' order by p.n) filter (where ${shown}) as entries
    from (select q.rid, q.type, q.id, q.content, q.key, row_number() over (order by q.ord) as n from (${rows}) q) p`;
}

const list = (b: Buffer | null) => (b === null || b.length === 0 ? [] : b.toString('latin1').split(','));

export async function fetchEntries(db: Sql, rows: Statement, o: RenderOptions): Promise<Entries> {
  const [[rowCount, last, rids, ids, json]] = (await run(db, renderStatement(rows, o)).raw()) as unknown as (Buffer | null)[][];
  const n = Number(rowCount!.toString('latin1'));
  return {
    json: json ?? Buffer.alloc(0),
    count: Math.min(n, o.shown),
    rows: n,
    last: last?.toString('utf8'),
    // ids are [A-Za-z0-9.-] (src/fhir/reference.ts ID_RE): no comma, ASCII.
    rids: list(rids),
    ids: list(ids),
  };
}

/**
 * The page of matches: `_count` entries of `rows` and whether there is a next page (the statement
 * asks for one more). `_summary` and `_elements` subset each resource here, in JavaScript, from the
 * rows themselves.
 */
export async function fetchPage(db: Sql, req: SearchRequest, rows: Statement, base: string, keys: boolean, shown = req.count): Promise<Entries> {
  if (!subsetting(req)) return fetchEntries(db, rows, { base, mode: 'match', shown, keys });
  const raw = (await run(db, rows).raw()) as unknown as Buffer[][];
  const page = raw.slice(0, shown);
  const parts: (string | Buffer)[] = [];
  page.forEach(([, type, id, content], i) => {
    const url = `${base}/${type.toString('utf8')}/${id.toString('utf8')}`;
    parts.push(`${i ? ',' : ''}{"fullUrl":${JSON.stringify(url)},"resource":`, subset(req, content), ',"search":{"mode":"match"}}');
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
