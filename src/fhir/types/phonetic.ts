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

/**
 * The rids whose words match `word` at `level` or better: a union of lookups, each on its own index
 * (a disjunction would let PostgreSQL walk the parameter's rows in key order instead). The one-typo
 * spellings are joined as a set, not compared as an array: the planner then does not estimate each
 * of its hundreds of values.
 */
function wordRows(param: number, word: string, level: MatchLevel): Statement {
  const exact = stmt`select p.rid from phonetic_idx p where p.param = ${param} and p.word = ${word}`;
  if (level === 0) return exact;
  const sound = stmt`select p.rid from phonetic_idx p where p.param = ${param} and p.sound = ${soundOf(word)}`;
  if (level === 1 || word.length < TYPO_MIN_LENGTH) return stmt`${exact} union ${sound}`;
  const typo = stmt`select p.rid from phonetic_idx p where p.param = ${param} and p.word in (select unnest(${typoVariants(word)}::text[]))`;
  return stmt`${exact} union ${sound} union ${typo}`;
}

/** The rids of the resources `words` match at `level` or better. */
function valueRows(param: number, words: string[], level: MatchLevel): Statement {
  const each = words.map((w) => stmt`select w.rid from (${wordRows(param, w, level)}) w`);
  // Several words: all of them, or the words joined as one.
  if (words.length === 1) return each[0];
  return stmt`select a.rid from (${join(each, 'intersect')}) a union select j.rid from (${wordRows(param, words.join(''), level)}) j`;
}

/** The rids the condition's values match at `level` or better. */
function rowsUpTo(c: PhoneticCondition, level: MatchLevel): Statement {
  return join(c.values.map((words) => stmt`select v.rid from (${valueRows(c.param.id, words, level)}) v`), 'union');
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
