import type { Sql } from '../db.ts';
import { concat, subset, subsetting } from '../fhir/bundle.ts';
import { pageQuery, type CompileContext } from '../fhir/compile.ts';
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
  /** key of the last entry shown. */
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

/** The statement that renders the rows of `rows` (rid, type, id, content in key order). */
export function renderStatement(rows: Statement, o: RenderOptions): Statement {
  const shown = sql`p.n <= ${o.shown}`;
  const [prefix, suffix] = entryParts(o.base, o.mode);
  const entry = sql`'{"fullUrl":' || to_json(${prefix}::text || p.type || '/' || p.id)::text || ',"resource":' || p.content || ${suffix}::text`;
  return sql`
    select count(*) as rows, max(p.rid) filter (where ${shown}) as last,
      ${o.keys ? sql`string_agg(p.rid::text, ',' order by p.rid) filter (where ${shown})` : sql`null`} as rids,
      ${o.keys ? sql`string_agg(p.id, ',' order by p.rid) filter (where ${shown})` : sql`null`} as ids,
      string_agg(${entry}, ',' order by p.rid) filter (where ${shown}) as entries
    from (select q.rid, q.type, q.id, q.content, row_number() over (order by q.rid) as n from (${rows}) q) p`;
}

const list = (b: Buffer | null) => (b === null || b.length === 0 ? [] : b.toString('latin1').split(','));

export async function fetchEntries(db: Sql, rows: Statement, o: RenderOptions): Promise<Entries> {
  const [[rowCount, last, rids, ids, json]] = (await run(db, renderStatement(rows, o)).raw()) as unknown as (Buffer | null)[][];
  const n = Number(rowCount!.toString('latin1'));
  return {
    json: json ?? Buffer.alloc(0),
    count: Math.min(n, o.shown),
    rows: n,
    last: last?.toString('latin1'),
    // ids are [A-Za-z0-9.-] (src/fhir/reference.ts ID_RE): no comma, ASCII.
    rids: list(rids),
    ids: list(ids),
  };
}

/**
 * The page of matches after `after` (keyset), `_count` entries and whether there is a next page.
 * `_summary` and `_elements` subset each resource here, in JavaScript, from the rows themselves.
 */
export async function fetchPage(ctx: CompileContext, req: SearchRequest, after: string | undefined, base: string, keys: boolean): Promise<Entries> {
  const rows = pageQuery(ctx, req, after, req.count + 1);
  if (!subsetting(req)) return fetchEntries(ctx.db, rows, { base, mode: 'match', shown: req.count, keys });
  const raw = (await run(ctx.db, rows).raw()) as unknown as Buffer[][];
  const shown = raw.slice(0, req.count);
  const parts: (string | Buffer)[] = [];
  shown.forEach(([, type, id, content], i) => {
    const url = `${base}/${type.toString('utf8')}/${id.toString('utf8')}`;
    parts.push(`${i ? ',' : ''}{"fullUrl":${JSON.stringify(url)},"resource":`, subset(req, content), ',"search":{"mode":"match"}}');
  });
  return {
    json: concat(parts),
    count: shown.length,
    rows: raw.length,
    last: shown.at(-1)?.[0].toString('latin1'),
    rids: shown.map(([rid]) => rid.toString('latin1')),
    ids: shown.map(([, , id]) => id.toString('latin1')),
  };
}
