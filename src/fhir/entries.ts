import type { SearchRequest } from './search-request.ts';
import { stmt, type Statement } from './statement.ts';

/**
 * The entries of a searchset Bundle, in one place: their format, the statement that has PostgreSQL
 * write a page's entries from its rows, and the JavaScript path for pages whose resources are
 * subsetted (`_summary`, `_elements`). Pure: the runner (src/store/runner.ts) executes the
 * statement and hands its raw row here. A page of any size crosses from the database as one value,
 * never as four columns per resource.
 */
export interface Entries {
  /** the entries shown, comma-separated UTF-8 JSON (empty when none). */
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

export const noEntries: Entries = Object.freeze({ json: Buffer.alloc(0), count: 0, rows: 0, rids: [], ids: [] }) as Entries;

export type EntryMode = 'match' | 'include' | 'outcome';

/**
 * `{"fullUrl":…,"resource":…,"search":{"mode":…}}`, or with `"extension":[…]` after the mode (a
 * measured match: src/fhir/compile.ts measuredPageQuery): written only from these parts.
 */
const ENTRY_OPEN = '{"fullUrl":';
const ENTRY_RESOURCE = ',"resource":';
const entryClose = (mode: EntryMode) => `,"search":{"mode":"${mode}"}}`;
const extendedOpen = (mode: EntryMode) => `,"search":{"mode":"${mode}","extension":`;
const EXTENDED_CLOSE = '}}';

/** One entry, as the parts of a Bundle's bytes (subsetted resources, the warning entry); `extension`: its search.extension's JSON. */
export function entry(fullUrl: string, resource: string | Buffer, mode: EntryMode, extension?: Buffer): (string | Buffer)[] {
  const head = `${ENTRY_OPEN}${JSON.stringify(fullUrl)}${ENTRY_RESOURCE}`;
  return extension ? [head, resource, extendedOpen(mode), extension, EXTENDED_CLOSE] : [head, resource, entryClose(mode)];
}

/**
 * Where each resource type is read (`fullUrl` = base/Type/id): the searched version's base, except
 * for included types that version does not serve (a v1 search including a PractitionerRole).
 */
export interface Bases {
  base: string;
  /** types read under another base. */
  others?: Readonly<Record<string, string>>;
}

export const baseOf = (bases: Bases, type: string): string => bases.others?.[type] ?? bases.base;

export interface RenderOptions {
  bases: Bases;
  mode: EntryMode;
  /** rows to render at most (the statement may return one more: a next page). */
  shown: number;
  /** return the keys and ids of the entries (for _include/_revinclude). */
  keys: boolean;
  /** the rows have a seventh column, `extension`: the JSON of each entry's search.extension. */
  extension?: boolean;
}

/**
 * The statement that has PostgreSQL write `rows` (rid, type, id, content, ord, key) as entries, in
 * one row: how many rows there were, the key of the last entry shown (where a next page starts),
 * the entries' keys and ids when includes need them, and the entries, comma-separated, in `ord`
 * order.
 */
export function renderStatement(rows: Statement, o: RenderOptions): Statement {
  const shown = stmt`p.n <= ${o.shown}`;
  const others = Object.entries(o.bases.others ?? {});
  const own = stmt`${`${o.bases.base}/`}::text`;
  const base = others.length === 0
    ? own
    : stmt`(case ${others.reduce((cases, [type, b]) => stmt`${cases} when p.type = ${type} then ${`${b}/`}::text`, stmt``)} else ${own} end)`;
  const url = stmt`to_json(${base} || p.type || '/' || p.id)::text`;
  const close = o.extension ? stmt`${extendedOpen(o.mode)}::text || p.extension || ${EXTENDED_CLOSE}::text` : stmt`${entryClose(o.mode)}::text`;
  const entry = stmt`${ENTRY_OPEN}::text || ${url} || ${ENTRY_RESOURCE}::text || p.content || ${close}`;
  return stmt`
    select count(*) as rows, (array_agg(p.key order by p.n desc) filter (where ${shown}))[1] as last,
      ${o.keys ? stmt`string_agg(p.rid::text, ',' order by p.n) filter (where ${shown})` : stmt`null`} as rids,
      ${o.keys ? stmt`string_agg(p.id, ',' order by p.n) filter (where ${shown})` : stmt`null`} as ids,
      string_agg(${entry}, ',' order by p.n) filter (where ${shown}) as entries
    from (select q.rid, q.type, q.id, q.content, q.key,${o.extension ? stmt` q.extension,` : stmt``} row_number() over (order by q.ord) as n from (${rows}) q) p`;
}

// ids are [A-Za-z0-9.-] (src/fhir/reference.ts ID_RE): no comma, ASCII.
const list = (b: Buffer | null | undefined) => (b == null || b.length === 0 ? [] : b.toString('latin1').split(','));

/** The entries of renderStatement's one row, as raw column bytes. */
export function renderedEntries([rows, last, rids, ids, json]: (Buffer | null)[], shown: number): Entries {
  const n = Number(rows!.toString('latin1'));
  return { json: json ?? Buffer.alloc(0), count: Math.min(n, shown), rows: n, last: last?.toString('utf8'), rids: list(rids), ids: list(ids) };
}

/** Whether `_elements` or `_summary` asks for less than whole resources. */
export const subsetting = (req: SearchRequest): boolean =>
  (req.elements?.length ?? 0) > 0 || req.summary === 'true' || req.summary === 'text' || req.summary === 'data';

/**
 * A subsetted page's entries, written here from its raw rows (rid, type, id, content, ord, key and,
 * on a measured page, extension): the first `shown` of them, each resource cut down to what
 * `_elements` or `_summary` keeps.
 */
export function subsettedEntries(req: SearchRequest, rows: Buffer[][], bases: Bases, shown: number): Entries {
  const page = rows.slice(0, shown);
  const parts: (string | Buffer)[] = [];
  page.forEach(([, type, id, content, , , extension], i) => {
    if (i) parts.push(',');
    const t = type.toString('utf8');
    parts.push(...entry(`${baseOf(bases, t)}/${t}/${id.toString('utf8')}`, subset(req, content), 'match', extension ?? undefined));
  });
  return {
    json: concat(parts),
    count: page.length,
    rows: rows.length,
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

const SUMMARY_ELEMENTS: Record<string, string[]> = {
  Practitioner: ['identifier', 'active', 'name', 'telecom', 'address', 'gender', 'birthDate'],
  Organization: ['identifier', 'active', 'type', 'name', 'partOf'],
  PractitionerRole: ['identifier', 'active', 'period', 'practitioner', 'organization', 'code', 'specialty', 'location', 'telecom'],
};
const ALWAYS = ['resourceType', 'id', 'meta', 'implicitRules'];
const SUBSETTED = { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED', display: 'subsetted' };

/** A resource cut down to what `_elements` or `_summary` keeps, tagged SUBSETTED when anything went. */
export function subset(req: SearchRequest, content: Buffer): Buffer {
  let keep: Set<string> | undefined;
  let drop: Set<string> | undefined;
  if (req.elements?.length) keep = new Set([...ALWAYS, ...req.elements]);
  else if (req.summary === 'true') keep = new Set([...ALWAYS, ...(SUMMARY_ELEMENTS[req.type] ?? [])]);
  else if (req.summary === 'text') keep = new Set([...ALWAYS, 'text']);
  else if (req.summary === 'data') drop = new Set(['text']);
  else return content;
  const r = JSON.parse(content.toString('utf8')) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let removed = false;
  for (const [k, v] of Object.entries(r)) {
    if ((keep && !keep.has(k)) || drop?.has(k)) removed = true;
    else out[k] = v;
  }
  if (!removed) return content;
  const meta = { ...((out.meta as Record<string, unknown>) ?? {}) };
  meta.tag = [...((meta.tag as unknown[]) ?? []), SUBSETTED];
  out.meta = meta;
  return Buffer.from(JSON.stringify(out), 'utf8');
}

/** Concatenates strings and buffers into one Buffer (one allocation, strings encoded in place); `length`: their bytes, when known. */
export function concat(parts: (string | Buffer)[], length?: number): Buffer {
  let n = length ?? 0;
  if (length === undefined) for (const p of parts) n += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
  const out = Buffer.allocUnsafe(n);
  let at = 0;
  for (const p of parts) at += typeof p === 'string' ? out.write(p, at, 'utf8') : p.copy(out, at);
  return out;
}
