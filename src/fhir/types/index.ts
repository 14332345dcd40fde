import type { BoundParam } from '../../registry/index.ts';
import { date } from './date.ts';
import { id } from './id.ts';
import { near } from './near.ts';
import { pair } from './pair.ts';
import { phonetic } from './phonetic.ts';
import { reference } from './reference.ts';
import type { SearchType } from './search-type.ts';
import { string } from './string.ts';
import { token } from './token.ts';

export * from './search-type.ts';

/**
 * The types whose values live in an index table of their own, in the one order every table list
 * follows (IndexRows, COPY streams, the bulk load). `_id` is read from the resource table instead.
 */
export const INDEXED = { token, string, date, reference, phonetic, near, pair } as const;
export type IndexKind = keyof typeof INDEXED;
export const INDEX_KINDS = Object.keys(INDEXED) as IndexKind[];

/** The index table a parameter's rows go to; undefined for a column (`_id`). */
export function indexKind(param: BoundParam): IndexKind | undefined {
  if (param.column === 'id') return undefined;
  if (param.type === 'special') return param.special!;
  return param.phonetic ? 'phonetic' : param.type;
}

/** The index table whose rows count a parameter's values (value_count, sql/012); undefined: not counted. */
export function countedKind(param: BoundParam): IndexKind | undefined {
  const kind = indexKind(param);
  return kind && (INDEXED[kind].counts as { counted(p: BoundParam): boolean } | undefined)?.counted(param) ? kind : undefined;
}

/** The module of a parameter: its index table's, or the column it is read from. */
export function searchType(param: BoundParam): SearchType {
  const kind = indexKind(param);
  return (kind === undefined ? id : INDEXED[kind]) as SearchType;
}
