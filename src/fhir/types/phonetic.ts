import { badRequest, notSupported } from '../outcome.ts';
import { phoneticWords, soundOf, TYPO_MIN_LENGTH, typoVariants } from '../phonetic.ts';
import type { Condition, MatchLevel } from '../search-request.ts';
import { join, stmt, type Statement } from '../statement.ts';
import { unescape } from '../escape.ts';
import { copyText } from './copy.ts';
import { describe, type SearchType } from './search-type.ts';

/**
 * Phonetic (registry `phonetic`): a value matches a resource when each of its words matches some
 * word of the parameter's values — spelled the same after folding (level 0), sounding the same in
 * French (level 1, src/fhir/phonetic.ts), or, for words of TYPO_MIN_LENGTH letters or more, one typo
 * away (level 2) — or when its words joined match one word ("lebihan" and "Le Bihan" alike). A
 * resource's level is the worst of its value's words, the best of the values. Indexed into
 * phonetic_idx (param, word, sound): every word of a value, and its words joined when it has several.
 */
export interface PhoneticRow {
  param: number;
  word: string;
  sound: string;
}

type PhoneticCondition = Extract<Condition, { kind: 'phonetic' }>;

/** One word's index rows matching at `level` or better. */
function wordMatch(word: string, level: MatchLevel): Statement {
  if (level === 0) return stmt`p.word = ${word}`;
  const sound = stmt`p.sound = ${soundOf(word)}`;
  if (level === 1 || word.length < TYPO_MIN_LENGTH) return stmt`(p.word = ${word} or ${sound})`;
  return stmt`(p.word = ${word} or ${sound} or p.word = any(${typoVariants(word)}::text[]))`;
}

/** The rids of the resources `words` matches at `level` or better (a rid may repeat). */
function valueRows(param: number, words: string[], level: MatchLevel): Statement {
  const each = words.map((w) => stmt`select p.rid from phonetic_idx p where p.param = ${param} and ${wordMatch(w, level)}`);
  // Several words: all of them, or the words joined as one.
  const all = each.length === 1 ? each[0] : stmt`(${join(each, 'intersect')})`;
  if (words.length === 1) return all;
  return stmt`${all} union all select p.rid from phonetic_idx p where p.param = ${param} and ${wordMatch(words.join(''), level)}`;
}

/** The rids the condition's values match at `level` or better. */
function rowsUpTo(c: PhoneticCondition, level: MatchLevel): Statement {
  return join(c.values.map((words) => valueRows(c.param.id, words, level)), 'union');
}

export const phonetic: SearchType<PhoneticCondition, PhoneticRow> = {
  table: { name: 'phonetic_idx', alias: 'p', columns: 'word, sound' },

  parse(param, modifier, raws, name) {
    if (modifier !== undefined) throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on phonetic parameter ${param.code}`, name);
    const values = raws.map((r) => phoneticWords(unescape(r, name)));
    if (values.some((w) => w.length === 0)) throw badRequest(`parameter ${name}: "${raws.join(',')}" has no letter or digit to search for`, name);
    return { kind: 'phonetic', param, values };
  },

  modifiers: () => [],

  // Several words of a value match several rows: a condition is a set, never a row predicate.
  match: () => undefined,

  rows(c) {
    const { upTo, above } = c.levels ?? { upTo: 2 };
    const matched = stmt`select m.rid from (${rowsUpTo(c, upTo)}) m`;
    return above === undefined ? matched : stmt`${matched} except select b.rid from (${rowsUpTo(c, above)}) b`;
  },

  rowsOf: {
    index(param, value, emit, fail) {
      if (typeof value !== 'string') fail(`must be a string, found ${describe(value)}`);
      const words = phoneticWords(value as string);
      if (words.length > 1) words.push(words.join(''));
      for (const word of words) emit({ param: param.id, word, sound: soundOf(word) });
    },

    same: (a, b) => a.word === b.word,

    copyText: (row) => `${copyText(row.word)}\t${copyText(row.sound)}`,

    searchValue: (row) => row.word,
  },
};
