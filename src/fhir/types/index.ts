import type { BoundParam } from '../../registry/index.ts';
import { date } from './date.ts';
import { id } from './id.ts';
import type { SearchType } from './search-type.ts';

export * from './search-type.ts';
import { reference } from './reference.ts';
import { string } from './string.ts';
import { token } from './token.ts';

/** The module of a parameter: its registry type, or the column it is read from. */
export function searchType(param: BoundParam): SearchType {
  if (param.column === 'id') return id as SearchType;
  return TYPES[param.type];
}

export const TYPES = { token, string, date, reference } as unknown as Record<BoundParam['type'], SearchType>;
