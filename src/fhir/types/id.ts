import { unescape } from '../escape.ts';
import { notSupported } from '../outcome.ts';
import type { Condition } from '../search-request.ts';
import { sql } from '../statement.ts';
import type { SearchType } from './search-type.ts';

/**
 * `_id`: a token read from the resource table's own column (its unique key): exact and
 * case-sensitive, `:not` allowed. It has no index rows.
 */
type IdCondition = Extract<Condition, { kind: 'token' }>;

const ids = (c: IdCondition) => c.values.map((v) => v.code!);

export const id: SearchType<IdCondition> = {
  table: { name: 'resource', alias: 'i' },

  parse(param, modifier, raws, name) {
    if (modifier !== undefined && modifier !== 'not') {
      throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on token parameter ${param.code}`, name);
    }
    return { kind: 'token', param, not: modifier === 'not', values: raws.map((r) => ({ code: unescape(r, name) })) };
  },

  match: (c) => sql`i.id = any(${ids(c)}::text[])`,

  rows: (c, _hints, type) => sql`select i.rid from resource i where i.type = ${type} and i.id = any(${ids(c)}::text[])`,
};
