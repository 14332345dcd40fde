import type { BoundParam } from '../../registry/index.ts';
import { notSupported } from '../outcome.ts';
import type { Condition } from '../search-request.ts';
import { join, stmt } from '../statement.ts';
import { copyText } from './copy.ts';
import type { SearchType } from './search-type.ts';
import { prefixRanges, type StringRow } from './string.ts';

/**
 * Pair (a `special` parameter, `registry.special = 'pair'`): two string parameters of a type
 * indexed together (family and given names, a city and its postal code), a row for each folded
 * value of the first with each of the second, of any of the resource's elements: a resource has a
 * row matching a prefix on each exactly when it matches both prefixes, so a search with both reads
 * one index range (the first's values, the second's within each) instead of intersecting two
 * sets. Indexed into pair_idx (param, a, b): its rows follow from the two parameters' string rows
 * (`addPairRows`), and the parser folds a prefix condition on each into one condition
 * (src/fhir/parse.ts).
 */
export interface PairRow {
  param: number;
  a: string;
  b: string;
}

type PairCondition = Extract<Condition, { kind: 'pair' }>;

/** Adds to `out` the rows of a pair parameter: each distinct folded value of its first part with each of its second's. */
export function addPairRows(param: BoundParam, a: BoundParam, b: BoundParam, strings: readonly StringRow[], out: PairRow[]): void {
  const firsts: string[] = [];
  const seconds: string[] = [];
  for (const r of strings) {
    if (r.param === a.id) {
      if (!firsts.includes(r.norm)) firsts.push(r.norm);
    } else if (r.param === b.id && !seconds.includes(r.norm)) seconds.push(r.norm);
  }
  for (const x of firsts) for (const y of seconds) out.push({ param: param.id, a: x, b: y });
}

export const pair: SearchType<PairCondition, PairRow> = {
  table: { name: 'pair_idx', alias: 'p', columns: 'a, b' },

  parse(param, _modifier, _raws, name) {
    throw notSupported(`parameter ${name}: ${param.code} is searched through its parts (${param.pair!.join(', ')})`, name);
  },

  modifiers: () => [],

  match(c) {
    const matches = [prefixRanges(stmt`p.a`, c.a), prefixRanges(stmt`p.b`, c.b)].filter((m) => m !== undefined);
    return matches.length === 0 ? undefined : join(matches, 'and');
  },

  rows(c, hints) {
    const match = pair.match(c, hints);
    return stmt`select p.rid from pair_idx p where p.param = ${c.param.id}${match ? stmt` and ${match}` : stmt``}`;
  },

  rowsOf: {
    // Rows come from the parts' string rows (addPairRows), never from an element of their own.
    index() {},
    same: (x, y) => x.a === y.a && x.b === y.b,
    copyText: (row) => `${copyText(row.a)}\t${copyText(row.b)}`,
    searchValue: (row) => row.a,
  },
};
