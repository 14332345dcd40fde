import { singleValued, type BoundParam } from '../registry/index.ts';
import { matchSet, probe } from './compile.ts';
import type { Condition, PlanHints, SearchRequest, SortKey } from './search-request.ts';
import { ident, join, stmt, type Statement } from './statement.ts';
import { searchType } from './types/index.ts';

/**
 * `_sort` as keyset paging. A resource's key for a string parameter is its lowest folded value
 * ascending, its highest descending; for `_lastUpdated` its instant, for `_id` its id. Ties are
 * broken by the resource key (rid), in the direction of the first sort key.
 *
 * A sorted search is read in two phases. Phase 1: the resources with a value for the first key, in
 * the order of that key's index (walked from the cursor, each resource at its lowest or highest
 * row, the conditions checked per candidate), later keys sorted within equal first keys. Phase 2:
 * the resources without a first-key value, which sort last in both directions, ordered by the
 * other keys and rid. The cursor is the last row's phase, keys and rid: every page starts where
 * the previous one ended, at the same cost at any depth.
 *
 * Keys travel as text: strings as folded, instants as ISO text (cast back to timestamptz), ids as
 * they are. A missing later key is replaced by a sentinel beyond every value, so comparisons are
 * total and it still sorts last.
 */

/** How a sort key is stored: its table, its column, and what a missing value becomes. */
interface KeySource {
  table: 'string_idx' | 'date_idx' | 'resource';
  column: 'norm' | 'low' | 'id';
  /** the SQL type a cursor's text value is cast to. */
  cast: 'text' | 'timestamptz';
  /** beyond every value in the direction of the sort (missing sorts last). */
  sentinel(desc: boolean): string;
}

const SOURCES: Record<'string' | 'date' | 'id', KeySource> = {
  // Folded values never hold U+10FFFF (normalize turns unassigned and private characters into spaces).
  string: { table: 'string_idx', column: 'norm', cast: 'text', sentinel: (desc) => (desc ? '' : '\u{10FFFF}') },
  date: { table: 'date_idx', column: 'low', cast: 'timestamptz', sentinel: (desc) => (desc ? '-infinity' : 'infinity') },
  id: { table: 'resource', column: 'id', cast: 'text', sentinel: (desc) => (desc ? '' : '\u{10FFFF}') },
};

export function sourceOf(param: BoundParam): KeySource {
  if (param.column === 'id') return SOURCES.id;
  if (param.type === 'date') return SOURCES.date;
  if (param.type === 'string') return SOURCES.string;
  throw new Error(`${param.code} cannot sort`);
}

/**
 * A date parameter read from one element that does not repeat (`meta.lastUpdated`): each resource
 * has at most one row of it, so that row is its key and a condition on the parameter is a condition
 * on the key itself.
 */
function oneRow(param: BoundParam): boolean {
  return param.type === 'date' && singleValued(param);
}

/**
 * The conditions of a sorted search on its first key's own parameter when that parameter has one
 * row per resource (`_lastUpdated=ge…&_sort=_lastUpdated`): they bound the walk of the key's index
 * (read from the bound, never from the start) instead of being probed for each row walked.
 */
export function sortBounds(req: SearchRequest): Extract<Condition, { kind: 'date' }>[] {
  const first = req.sort[0]?.param;
  if (!first || !oneRow(first)) return [];
  return req.conditions.filter((c): c is Extract<Condition, { kind: 'date' }> => c.kind === 'date' && c.param.id === first.id);
}

/** The sort keys that apply to a resource type (the registry's `sortable`). */
export const sortable = (param: BoundParam): boolean => param.sortable === true && (param.column === 'id' || param.type === 'date' || param.type === 'string');

/** Where a sorted page starts: after the row of this phase, keys and rid. */
export interface SortCursor {
  phase: 1 | 2;
  /** phase 1: every key; phase 2: every key but the first. */
  keys: string[];
  rid: string;
}

const cmp = (desc: boolean) => (desc ? '<' : '>');
// A date key's text is cast in SQL (a parameter typed timestamptz would go through the driver's Date serializer).
const typed = (src: KeySource, v: string): Statement => (src.cast === 'timestamptz' ? stmt`${v}::text::timestamptz` : stmt`${v}::text`);

/** The key of the resource `rid` for a sort key; null when it has no value. */
function keyValue(key: SortKey, rid: Statement): Statement {
  const src = sourceOf(key.param);
  const col = ident(src.column);
  if (src.table === 'resource') return stmt`(select o.id from resource o where o.rid = ${rid})`;
  const agg = key.desc ? stmt`max(o.${col})` : stmt`min(o.${col})`;
  return stmt`(select ${agg} from ${ident(src.table)} o where o.param = ${key.param.id} and o.rid = ${rid})`;
}

/** The key of the resource `rid` for a later sort key, never null. */
function keyExpr(key: SortKey, rid: Statement): Statement {
  const src = sourceOf(key.param);
  return src.table === 'resource' ? keyValue(key, rid) : stmt`coalesce(${keyValue(key, rid)}, ${typed(src, src.sentinel(key.desc))})`;
}

/**
 * `(k1, …, kn, rid)` strictly after the cursor's values in the sort's order, written out key by key
 * so that each key keeps its own direction.
 */
function after(keys: { expr: Statement; desc: boolean; value: Statement }[]): Statement {
  const alternatives = keys.map((k, i) => join([...keys.slice(0, i).map((e) => stmt`${e.expr} = ${e.value}`), stmt`${k.expr} ${rawOp(cmp(k.desc))} ${k.value}`], 'and'));
  return stmt`(${join(alternatives, 'or')})`;
}

/** An operator of the code's own (never a value). */
function rawOp(op: '<' | '>'): Statement {
  return op === '<' ? stmt`<` : stmt`>`;
}

const direction = (desc: boolean) => (desc ? stmt`desc` : stmt`asc`);

/** A phase's keys: the rows (rid, key, s1…sn) in page order, and how to number them again. */
interface PhaseRows {
  rows: Statement;
  /** the page order over the output columns s1…sn and rid. */
  order: Statement;
}

function outputOrder(dirs: boolean[], ridDesc: boolean): Statement {
  return join([...dirs.map((d, i) => stmt`${ident(`s${i + 1}`)} ${direction(d)}`), stmt`rid ${direction(ridDesc)}`], ',');
}

/**
 * Phase 1: the resources with a first-key value. Walked in the order of that key's index (each
 * resource once, at its lowest or highest row), the conditions probed per candidate when the matches
 * are many, or the matches' set hashed once when they are fewer; when they are few, every match
 * read and sorted (the planner decides, `sortPath`).
 */
function phase1(hints: PlanHints, req: SearchRequest, cursor: SortCursor | undefined, limit: number): PhaseRows {
  const [first, ...rest] = req.sort;
  const src = sourceOf(first.param);
  const path = req.conditions.length === 0 ? 'walk' : (hints.sortPath ?? 'walk');
  const walk = path !== 'sorted';
  const bounds = walk ? sortBounds(req) : [];
  const alias = walk ? 'w' : 'm';
  const rid = stmt`${ident(alias)}.rid`;
  const col = walk ? stmt`w.${ident(src.column)}` : stmt`m.s1`;
  const where: Statement[] = [];
  let from: Statement;
  if (!walk) {
    // OFFSET 0: each match's key is read once, not again wherever the outer query names it.
    from = stmt`(select m.rid, ${keyValue(first, stmt`m.rid`)} as s1 from (${matchSet(hints, req)}) m offset 0) m`;
    where.push(stmt`m.s1 is not null`);
  } else if (src.table === 'resource') {
    from = stmt`resource w`;
    where.push(stmt`w.type = ${req.type}`);
  } else {
    if (bounds.length) {
      // The key's only row, its values matched where the index scan starts and ends.
      const t = ident(searchType(first.param).table.alias);
      const matched = join(bounds.map((c) => searchType(c.param).match(c, hints)!), 'and');
      from = stmt`(select ${t}.* from ${ident(src.table)} ${t} where ${t}.param = ${first.param.id} and ${matched}) w`;
    } else {
      from = stmt`${ident(src.table)} w`;
      where.push(stmt`w.param = ${first.param.id}`);
    }
    if (!oneRow(first.param)) {
      // The rows that are the resource's key: none of its rows of this parameter comes before them.
      // Read from the index alone; two rows of the same folded value are one (DISTINCT ON below).
      const other = stmt`o.${ident(src.column)}`;
      where.push(stmt`not exists (select 1 from ${ident(src.table)} o where o.param = ${first.param.id} and o.rid = w.rid and ${other} ${rawOp(first.desc ? '>' : '<')} ${col})`);
    }
  }
  if (path === 'hashed') {
    // Inside an expression the set is not made a join: PostgreSQL builds it once, hashed (a hashed
    // SubPlan, which the planner checks it will be), and each row walked is one lookup in it.
    where.push(stmt`coalesce(w.rid in (${matchSet(hints, req)}), false)`);
  } else if (walk) {
    // Walked, a condition is a probe of its index for the candidate, never a set built first.
    for (const c of req.conditions) if (!(bounds as Condition[]).includes(c)) where.push(probe(hints, c, req.type, 'w'));
  }
  const later = rest.map((k) => keyExpr(k, rid));
  if (cursor?.phase === 1) {
    const start = typed(src, cursor.keys[0]);
    const last = stmt`${cursor.rid}::bigint`;
    // One key: a row comparison, where the key's index starts its scan. More: the first key bounds
    // the scan, the others decide within equal first keys.
    if (rest.length === 0) where.push(stmt`(${col}, ${rid}) ${rawOp(cmp(first.desc))} (${start}, ${last})`);
    else {
      where.push(stmt`${col} ${first.desc ? stmt`<=` : stmt`>=`} ${start}`);
      where.push(
        after([
          { expr: col, desc: first.desc, value: start },
          ...rest.map((k, i) => ({ expr: later[i], desc: k.desc, value: typed(sourceOf(k.param), cursor.keys[i + 1]) })),
          { expr: rid, desc: first.desc, value: last },
        ]),
      );
    }
  }
  const columns = [col, ...later].map((e, i) => stmt`${e} as ${ident(`s${i + 1}`)}`);
  const order = outputOrder(req.sort.map((k) => k.desc), first.desc);
  const key = join([stmt`1`, col, ...later, stmt`${rid}::text`], ',');
  // The output columns, as ORDER BY names them: DISTINCT ON must match its leading expressions.
  const keys = join([...[col, ...later].map((_, i) => stmt`${ident(`s${i + 1}`)}`), stmt`rid`], ',');
  const rows = stmt`select distinct on (${keys}) ${rid}, ${join(columns, ',')}, json_build_array(${key})::text as key from ${from}
    where ${where.length ? join(where, 'and') : stmt`true`} order by ${order} limit ${limit}`;
  return { rows, order };
}

/** Phase 2: the matches without a first-key value, by the other keys and rid. */
function phase2(hints: PlanHints, req: SearchRequest, cursor: SortCursor | undefined, limit: number): PhaseRows {
  const [first, ...rest] = req.sort;
  const src = sourceOf(first.param);
  const later = rest.map((k) => keyExpr(k, stmt`x.rid`));
  const where: Statement[] = [stmt`not exists (select 1 from ${ident(src.table)} o where o.param = ${first.param.id} and o.rid = x.rid)`];
  if (cursor?.phase === 2) {
    where.push(
      after([
        ...rest.map((k, i) => ({ expr: later[i], desc: k.desc, value: typed(sourceOf(k.param), cursor.keys[i]) })),
        { expr: stmt`x.rid`, desc: first.desc, value: stmt`${cursor.rid}::bigint` },
      ]),
    );
  }
  const columns = later.map((e, i) => stmt`${e} as ${ident(`s${i + 1}`)}`);
  const order = outputOrder(rest.map((k) => k.desc), first.desc);
  const key = join([stmt`2`, ...later, stmt`x.rid::text`], ',');
  const rows = stmt`select x.rid, ${join([...columns, stmt`json_build_array(${key})::text as key`], ',')} from (${matchSet(hints, req)}) x
    where ${join(where, 'and')} order by ${order} limit ${limit}`;
  return { rows, order };
}

/**
 * Whether phase 2 can hold anything: every resource has an id, and a condition on the first key's
 * own parameter (a value, a range) only matches resources that have a value of it.
 */
export const hasPhase2 = (req: SearchRequest): boolean => {
  const first = req.sort[0].param;
  const valued = (c: Condition) => (c.kind === 'date' || c.kind === 'string' || (c.kind === 'token' && !c.not)) && c.param.id === first.id;
  return sourceOf(first).table !== 'resource' && !req.conditions.some(valued);
};

/**
 * The rows (rid, type, id, content, ord, key) of one phase of a sorted page, in page order: at most
 * `limit`, after `cursor` when it is of that phase.
 */
export function sortedPageQuery(hints: PlanHints, req: SearchRequest, phase: 1 | 2, cursor: SortCursor | undefined, limit: number): Statement {
  const { rows, order } = phase === 1 ? phase1(hints, req, cursor, limit) : phase2(hints, req, cursor, limit);
  return stmt`
    select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
    from (select k.rid, k.key, row_number() over (order by ${order}) as ord from (${rows}) k) page
    join resource r on r.rid = page.rid
    order by page.ord`;
}
