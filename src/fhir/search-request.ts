import type { BoundParam, Registry, ResourceType, Version } from '../registry/index.ts';

/**
 * A search as plain data: what the parser produces from a query string and the compiler turns into
 * SQL. Conditions are ANDed; the values inside one condition are ORed.
 */
export interface TokenValue {
  /** undefined: any system; null: no system (`|code`). */
  system?: string | null;
  /** undefined: any code (`system|`). */
  code?: string;
}

export interface DateValue {
  prefix: 'eq' | 'ne' | 'gt' | 'lt' | 'ge' | 'le' | 'sa' | 'eb' | 'ap';
  low: number;
  high: number;
}

export interface RefValue {
  /** undefined: any type (a bare id on a parameter with no single target type). */
  type?: string;
  id: string;
}

export type Condition =
  /** `text`: `:text`, the words of each value (the codes are then found by their labels). */
  | { kind: 'token'; param: BoundParam; not: boolean; values: TokenValue[]; text?: string[][] }
  | { kind: 'string'; param: BoundParam; mode: 'prefix' | 'exact' | 'contains'; values: string[] }
  | { kind: 'date'; param: BoundParam; values: DateValue[] }
  | { kind: 'reference'; param: BoundParam; values: RefValue[] }
  /**
   * `phonetic`: each value's words, every word of a value matched by some word of the resource (or
   * the value's words joined, by one word); `levels` bounds how loosely (src/fhir/types/phonetic.ts).
   */
  | { kind: 'phonetic'; param: BoundParam; values: string[][]; levels?: MatchLevels }
  /** `near`: within `km` of the point (`lat`, `lon`, WGS84 degrees) on the sphere (src/fhir/types/near.ts). */
  | { kind: 'near'; param: BoundParam; lat: number; lon: number; km: number }
  /** `pair`: a prefix condition on each of a pair's two parameters, as one (src/fhir/types/pair.ts): any value of `a` starting the first, any of `b` the second. */
  | { kind: 'pair'; param: BoundParam; a: string[]; b: string[] }
  | { kind: 'missing'; param: BoundParam; missing: boolean }
  /** resources whose `param` reference points at a `targetType` resource matching `inner`. */
  | { kind: 'chain'; param: BoundParam; targetType: ResourceType; inner: Condition }
  /** resources referenced through `param` (on another type) by a resource matching `inner`. */
  | { kind: 'has'; param: BoundParam; inner: Condition }
  /** matches nothing (e.g. only references to another server). */
  | { kind: 'none' };

/** How a word matches: 0 spelled the same (folded), 1 sounding the same, 2 one typo away. */
export type MatchLevel = 0 | 1 | 2;
/** The match levels a condition takes: up to `upTo`, and above `above` when given (a rank phase). */
export interface MatchLevels {
  upTo: MatchLevel;
  above?: MatchLevel;
}

export interface IncludeSpec {
  /** the reference parameter (its resourceType is the source type). */
  param: BoundParam;
  /** `Type:param:Target`: only targets of that type. */
  targetType?: string;
}

/** One key of `_sort`: a sortable parameter of the type (registry `sortable`), ascending or not. */
export interface SortKey {
  param: BoundParam;
  desc: boolean;
}

export type TotalMode = 'none' | 'estimate' | 'accurate';
export type SummaryMode = 'true' | 'text' | 'data' | 'count' | 'false';

export interface SearchRequest {
  version: Version;
  type: ResourceType;
  conditions: Condition[];
  count: number;
  total?: TotalMode;
  summary?: SummaryMode;
  elements?: string[];
  include: IncludeSpec[];
  revinclude: IncludeSpec[];
  /** `_sort`, in order; empty: key order (rid). */
  sort: SortKey[];
  cursor?: string;
  pretty: boolean;
  /** the parameters applied, as received, in order (the self link lists these and only these). */
  applied: [string, string][];
  /** the applied search criteria (not result parameters), as received: what the cursor's digest covers. */
  criteria: [string, string][];
  /** clamps and other notes for an outcome entry of the Bundle. */
  warnings: string[];
}

/** What parsing a query needs besides the query: the endpoint, the registry, the server's limits. */
export interface ParseContext {
  version: Version;
  type: ResourceType;
  registry: Registry;
  /** Prefer: handling=strict — unknown parameters are errors instead of being ignored. */
  strict: boolean;
  /** absolute base URLs of this server (…/fhir/v1, …/fhir/v2): references to them are local. */
  bases: string[];
  now: number;
  defaultCount: number;
  maxCount: number;
  maxValuesPerParam: number;
  maxParams: number;
}

/**
 * What the planner (src/store/planner.ts) learnt from the database for one search, as plain data:
 * the compiler's only other input.
 */
export interface PlanHints {
  /** id of an interned token system, undefined when no stored token uses it. */
  systemId(uri: string): number | undefined;
  /** `param/needle` of :contains values the planner expects to be common (src/fhir/types/string.ts). */
  commonNeedles?: ReadonlySet<string>;
  /** `param/norm` of prefix values whose range holds fewer rows than a key-order walk would read → those rows. */
  rarePrefixes?: ReadonlyMap<string, number>;
  /**
   * `param/norm` of the other prefix values of a search with a rare one → at most how many rows
   * their range holds (the resources counted under their first three characters).
   */
  prefixBounds?: ReadonlyMap<string, number>;
  /**
   * How a sorted search with conditions reads its first phase (src/fhir/sort.ts): `walk` the first
   * key's index probing the conditions per row (many matches), `hashed` walk it keeping the rows in
   * the matches' set hashed once, or `sorted` read and sort the matches (few). Default `walk`.
   */
  sortPath?: SortPath;
  /**
   * `param/word` of a word of a phonetic value (or of its words joined, from 5 letters) → its
   * one-typo spellings of another sound that the parameter's rows hold: the lookups of its level 2
   * (src/fhir/types/phonetic.ts).
   */
  spellings?: ReadonlyMap<string, readonly string[]>;
}

export type SortPath = 'walk' | 'hashed' | 'sorted';
