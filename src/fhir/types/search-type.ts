import type { BoundParam, ParamType, ResourceType } from '../../registry/index.ts';
import type { Condition, ParseContext, PlanHints } from '../search-request.ts';
import type { Statement } from '../statement.ts';

/**
 * What a search parameter type is (src/fhir/types/index.ts lists them, one module each). A module
 * owns everything that depends on its type: parsing a query value, the SQL a condition matches
 * with, the index rows an element value gives, their table and COPY text. The parser, the compiler,
 * the extractor and the loaders dispatch on the type and know no more. Adding a parameter of an
 * existing type is a registry entry; adding a type, a module here and its table's migration.
 */

/**
 * Where a type's values are: an index table, with the alias its SQL uses and its columns after
 * `rid, param` (in COPY order), or the resource table.
 */
export interface Table {
  name: string;
  alias: string;
  columns?: string;
}

/**
 * Ends an extraction: the element value is not what the parameter reads. `at` names a part of the
 * value (`system`, `coding[1]`), after the element's own path.
 */
export type Fail = (message: string, at?: string) => never;

export interface SearchType<C extends Condition = Condition, Row = unknown> {
  table: Table;
  /**
   * `name[:modifier]=v1,v2…` → a condition; `raws` are the values split on unescaped commas,
   * `implied` the prefix an alias stands for (`_since`).
   */
  parse(param: BoundParam, modifier: string | undefined, raws: string[], name: string, ctx: ParseContext, type: ResourceType, implied?: string): Condition;
  /** The modifiers `parse` takes on the parameter (`:missing`, the parser's own, aside). */
  modifiers(param: BoundParam): string[];
  /** The predicate a condition's values are on the table's alias; undefined: any value matches. */
  match(c: C, hints: PlanHints): Statement | undefined;
  /** The rids of the resources of `type` that a positive condition selects (a rid may repeat). */
  rows(c: C, hints: PlanHints, type: ResourceType): Statement;
  /**
   * For a driving condition whose `rows` would be read whole: the first `limit` rids of each of
   * its index lookups, each lookup read in rid order with `filter` (the search's other conditions
   * and its cursor, on the alias `r`) checked as it goes. A page's `limit` first matches are among
   * them, and a page costs at most `limit` rows per lookup. undefined: `rows` is read instead.
   */
  pageRows?(c: C, hints: PlanHints, filter: Statement, limit: number): Statement | undefined;
  /**
   * One condition matching exactly the resources both `a` and `b` (two conditions on the same
   * parameter) match, when the type can write it (a single-valued instant: one interval of its
   * one point); undefined: both are kept, each a set of its own.
   */
  conjoin?(a: C, b: C): C | undefined;
  /**
   * A type whose conditions measure each match (near: its distance in km): the match entries of a
   * search with such a condition on its own type carry the measure, and without `_sort` it is read
   * smallest first (src/fhir/compile.ts `measuredBy`).
   */
  measure?: {
    /** Rows (rid, m): the rids `rows` gives, each with its measure `m` (float8). */
    rows(c: C, hints: PlanHints, type: ResourceType): Statement;
    /** The measure of the resource `rid` (a float8 expression; its least, when it has several rows). */
    of(c: C, rid: Statement): Statement;
    /** The JSON text of a match entry's `search.extension` for the measure `m` (a text expression). */
    extension(m: Statement): Statement;
    /**
     * A narrower condition to read a page from first, for a page starting after the measure `from`
     * (undefined: the first page): every match of `c` whose measure is below `bound` is one of its
     * matches. A page it fills with measures below `bound` is the page of `c`. undefined: `c` is
     * read whole.
     */
    narrowed?(c: C, from: number | undefined): { c: C; bound: number } | undefined;
    /**
     * Whether a page of `c` alone reads only the rows around one place, whatever the data (near: a
     * circle of 20 km at most, read narrow first): such a search waits in no lane (src/store/classify.ts).
     */
    local?(c: C): boolean;
  };
  /**
   * Resources counted per value (value_count, sql/012): whether a parameter's values are counted,
   * the keys a row counts under (`system`: a token system's key, its id or a mark) — the same as
   * the SQL of sql/012 — and the keys whose counts add up to a one-condition search's total.
   */
  counts?: {
    counted(param: BoundParam): boolean;
    keys(row: Row, system: (uri: string) => string): string[];
    total(c: C, hints: PlanHints): CountedKeys | undefined;
  };
  /** An index table's type: how element values become its rows (a column's type has none). */
  rowsOf?: {
    /** The index rows of one element value (emit each), or `fail` when it has the wrong shape. */
    index(param: BoundParam, value: unknown, emit: (row: Row) => void, fail: Fail): void;
    /** Two rows of one parameter and resource that are the same (extraction keeps the first). */
    same(a: Row, b: Row): boolean;
    /** A row's COPY text columns after rid and param, tab-separated. `system`: a token system's column. */
    copyText(row: Row, system: (uri: string) => string): string;
    /** A search value of the parameter that finds the row (an example of the OpenAPI documents). */
    searchValue(row: Row): string;
  };
}

/** The counts a total adds up: those of `keys`, or of every key in [from, to) (only for a parameter with one value per resource, whose ranges intersect). */
export type CountedKeys = { keys: string[] } | { from: string; to: string };

export const describe = (v: unknown) => (Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An optional string property of an object; `fail` names it when it is something else. */
export function optionalString(o: Record<string, unknown>, key: string, fail: Fail): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(`must be a string, found ${describe(v)}`, key);
  return v as string;
}

/** The path of a part below another (`a` + `b` → `a.b`, `a` + `[0]` → `a[0]`); undefined: the element itself. */
export function subPath(at: string | undefined, key: string | undefined): string | undefined {
  if (key === undefined) return at;
  if (at === undefined) return key;
  return key.startsWith('[') ? `${at}${key}` : `${at}.${key}`;
}

export type { ParamType };
