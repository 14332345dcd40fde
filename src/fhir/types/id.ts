import { notSupported } from '../outcome.ts';
import type { Condition } from '../search-request.ts';
import { stmt } from '../statement.ts';
import type { SearchType } from './search-type.ts';
import { tokenParts } from './token.ts';

/**
 * `_id`: a token read from the resource table's own column (its unique key): exact and
 * case-sensitive, `:not` allowed. It has no index rows. An id has no system (and no `|`): `|id` is
 * the id, `system|id` and `system|` are no id at all.
 */
type IdCondition = Extract<Condition, { kind: 'token' }>;

const ids = (c: IdCondition) => c.values.map((v) => v.code!);

/** The id a value names, or undefined when it names none (a system). */
function idOf(raw: string, name: string): string | undefined {
  const [system, code] = tokenParts(raw, name);
  return system ? undefined : code;
}

export const id: SearchType<IdCondition> = {
  table: { name: 'resource', alias: 'i' },

  parse(param, modifier, raws, name) {
    if (modifier !== undefined && modifier !== 'not') {
      throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on token parameter ${param.code}`, name);
    }
    const not = modifier === 'not';
    const values = raws.map((r) => idOf(r, name)).filter((v) => v !== undefined).map((code) => ({ code }));
    return values.length === 0 && !not ? { kind: 'none' } : { kind: 'token', param, not, values };
  },

  modifiers: () => ['not'],

  match: (c) => stmt`i.id = any(${ids(c)}::text[])`,

  rows: (c, _hints, type) => stmt`select i.rid from resource i where i.type = ${type} and i.id = any(${ids(c)}::text[])`,
};
