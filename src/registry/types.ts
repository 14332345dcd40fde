/** Types of the search-parameter registry (src/registry/params.ts is the table itself). */

export const RESOURCE_TYPES = ['Practitioner', 'Organization', 'PractitionerRole', 'Location', 'Device', 'HealthcareService'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
/** Types with a search endpoint; Device and HealthcareService are stored only to be included. */
export const SEARCHABLE_TYPES = ['Practitioner', 'Organization', 'PractitionerRole', 'Location'] as const satisfies readonly ResourceType[];

export const VERSIONS = ['v1', 'v2'] as const;
export type Version = (typeof VERSIONS)[number];
/** The resource types each API version searches. */
export const VERSION_TYPES: Record<Version, readonly ResourceType[]> = {
  v1: ['Organization'],
  v2: ['Practitioner', 'Organization', 'PractitionerRole', 'Location'],
};
/**
 * The resource types each API version reads (`GET [base]/Type/id`): every stored type in v2, so that
 * the fullUrl of an included Device or HealthcareService is where it can be read.
 */
export const READ_TYPES: Record<Version, readonly ResourceType[]> = {
  v1: ['Organization'],
  v2: RESOURCE_TYPES,
};

export type ParamType = 'token' | 'string' | 'date' | 'reference' | 'special';

/**
 * One step of an extraction path, evaluated like FHIRPath over the JSON resource:
 * - `'name'`: a single-valued element (an array there is a type error);
 * - `'name[]'`: a repeating element (must be an array);
 * - `{ ext: url }`: the `extension` array, filtered on `url`;
 * - `'value[x]'`: the one `valueXxx` element of an extension, whatever its type;
 * - `{ where: [...steps], is: 'X' }`: keeps the nodes for which the sub-path yields 'X'.
 */
export type Step = string | { ext: string } | { where: Step[]; is: string };
export type Path = Step[];

export interface Alias {
  name: string;
  versions: Version[];
  /** a date prefix the alias implies (`_since=T` means `_lastUpdated=geT`). */
  prefix?: string;
}

export interface SearchParamDef {
  code: string;
  type: ParamType;
  base: ResourceType[];
  /** API versions that accept the canonical code (empty: stored only for _include/_revinclude). */
  versions: Version[];
  aliases?: Alias[];
  description: string;
  /** canonical URL of the SearchParameter this one implements, when there is one. */
  definition?: string;
  /** the element paths whose values are indexed (union). */
  paths: Path[];
  /**
   * Token values read from a resource column instead of an index table (only `_id`): the column is
   * a unique key, a separate index would only duplicate it.
   */
  column?: 'id';
  /** reference: the resource types a reference may point at. */
  target?: ResourceType[];
  /**
   * date on an `instant` element (meta.lastUpdated): a point, not the range of its written
   * precision, so `eq` with milliseconds finds a value stored to the second. Searched on `low` only.
   */
  instant?: boolean;
  /** token on a FHIR boolean: stored values must be JSON booleans, searched values true or false. */
  boolean?: boolean;
  /**
   * token on a `code` element: the code system its binding implies. Codes are stored without a
   * system, so `impliedSystem|code` means the bare code, `impliedSystem|` any value, and `|code`
   * (explicitly no system) nothing.
   */
  impliedSystem?: string;
  /**
   * `_sort` accepts it: the resource's key is its lowest folded value ascending, its highest
   * descending (strings), its value (`_id`, `_lastUpdated`); a resource without one sorts last.
   */
  sortable?: boolean;
  /** string: modifiers that select a sub-parameter (`name:family` → `family`). */
  parts?: Record<string, string>;
  /**
   * string searched by sound and spelling, word by word (FHIR's `phonetic`): its values are indexed
   * as words with their French phonetic keys (src/fhir/types/phonetic.ts), not as strings.
   */
  phonetic?: boolean;
  /**
   * `special`: which special search it is, each with its own syntax and index (src/fhir/types):
   * `near`, a distance from a point to a `position` (latitude, longitude in WGS84 degrees); `pair`,
   * two string parameters together (`pair`).
   */
  special?: 'near' | 'pair';
  /**
   * `special` `pair`: the codes of two string parameters of the type indexed together, a row for
   * each folded value of the first with each of the second of the same resource
   * (src/fhir/types/pair.ts). Searched by no name of its own: a search with a prefix on each of the
   * two reads it (src/fhir/parse.ts).
   */
  pair?: [string, string];
  /**
   * token or reference whose values are (nearly) unique to a few resources (identifiers, ids,
   * references): a search on one value reads a handful of index rows whatever the value, so its
   * plan does not depend on the value and is made once per connection (src/fhir/compile.ts
   * `valueIndependent`, src/db.ts). Never on parameters with common values (codes, booleans).
   */
  selective?: boolean;
}

/** A definition bound to one resource type: what the compiler and the extractors work with. */
export interface BoundParam extends SearchParamDef {
  resourceType: ResourceType;
  /** stable 32-bit identity stored in every index row: hash of "<ResourceType>.<code>". */
  id: number;
}
