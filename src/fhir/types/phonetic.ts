import { badRequest, notSupported } from '../outcome.ts';
import { phoneticWords, soundOf, TYPO_MIN_LENGTH, typoSpellings } from '../phonetic.ts';
import type { Condition, MatchLevel, PlanHints } from '../search-request.ts';
import { ident, join, stmt, type Statement } from '../statement.ts';
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

/** One index lookup: the rows of a spelling (`word`) or of a sound. */
interface Lookup {
  column: 'word' | 'sound';
  value: string;
}

/**
 * The lookups that hold the rows matching `word` at `level` or better, when they are known: its
 * spelling (level 0), else its sound (a spelling's rows are among its sound's) and, at level 2, its
 * one-typo spellings of another sound that the planner found in the parameter's rows
 * (PlanHints.spellings). undefined: those spellings were not looked up.
 */
function lookups(hints: PlanHints, param: number, word: string, level: MatchLevel): Lookup[] | undefined {
  if (level === 0) return [{ column: 'word', value: word }];
  const sound: Lookup = { column: 'sound', value: soundOf(word) };
  if (level === 1 || word.length < TYPO_MIN_LENGTH) return [sound];
  const typos = hints.spellings?.get(`${param}/${word}`);
  return typos && [sound, ...typos.map((value): Lookup => ({ column: 'word', value }))];
}

/**
 * The rows of one lookup, the table aliased `alias` (its where clause last: conditions may follow).
 * A spelling is indexed once per resource, a sound may be several times ("de" and "des"): `distinct`
 * keeps a limit on the lookup a limit on resources.
 */
const lookupRows = (param: number, l: Lookup, alias = 'p', distinct = false) => {
  const a = ident(alias);
  return stmt`select ${distinct ? stmt`distinct ` : stmt``}${a}.rid from phonetic_idx ${a} where ${a}.param = ${param} and ${a}.${ident(l.column)} = ${l.value}`;
};

/**
 * The rids whose words match `word` at `level` or better, a rid possibly more than once: lookups
 * appended, each on its own index (a disjunction would let PostgreSQL walk the parameter's rows in
 * key order; a union would hash every row to drop repeats, the whole cost of a common name). One-typo
 * spellings not looked up are joined as a set, not compared as an array: the planner then does not
 * estimate each of its hundreds of values.
 */
function wordRows(hints: PlanHints, param: number, word: string, level: MatchLevel): Statement {
  const known = lookups(hints, param, word, level);
  if (known) return join(known.map((l) => lookupRows(param, l)), 'union all');
  return stmt`${lookupRows(param, { column: 'sound', value: soundOf(word) })} union all ${unlookedTypoRows(param, word)}`;
}

/** The rows of every one-typo spelling of `word`, when the planner did not look them up. */
const unlookedTypoRows = (param: number, word: string) =>
  stmt`select p.rid from phonetic_idx p where p.param = ${param} and p.word in (select unnest(${typoSpellings(word)}::text[]))`;

/** The rids in every one of `sets` (each a statement of rids), joined on the resource. */
function intersection(sets: Statement[]): Statement {
  let all = stmt`(${sets[0]}) w0`;
  for (let i = 1; i < sets.length; i++) {
    const w = ident(`w${i}`);
    all = stmt`${all} join (${sets[i]}) ${w} on ${w}.rid = w0.rid`;
  }
  return stmt`select w0.rid from ${all}`;
}

/**
 * The rids `words` match at `level` or better (a rid may repeat): each word's rows joined on the
 * resource, or the words joined as one word.
 */
function valueRows(hints: PlanHints, param: number, words: string[], level: MatchLevel): Statement {
  if (words.length === 1) return wordRows(hints, param, words[0], level);
  return stmt`${intersection(words.map((w) => wordRows(hints, param, w, level)))} union all ${wordRows(hints, param, words.join(''), level)}`;
}

/**
 * The rids of `word`'s one-typo spellings of another sound alone (of level 2 and not of level 1);
 * undefined when it has none (a short word, or no such spelling in the parameter's rows).
 */
function typoRows(hints: PlanHints, param: number, word: string): Statement | undefined {
  if (word.length < TYPO_MIN_LENGTH) return undefined;
  const typos = hints.spellings?.get(`${param}/${word}`);
  if (typos === undefined) return unlookedTypoRows(param, word);
  return typos.length === 0 ? undefined : join(typos.map((value) => lookupRows(param, { column: 'word', value })), 'union all');
}

/**
 * The rids `words` match at level 2 that may not match at level 1: some word by a typo, the others
 * at any level, or the words joined by a typo. A superset of level 2 minus level 1 that reads a
 * common word's sound only when another word has typos.
 */
function typoValueRows(hints: PlanHints, param: number, words: string[]): Statement[] {
  if (words.length === 1) return [typoRows(hints, param, words[0])].filter((s) => s !== undefined);
  const parts: Statement[] = [];
  words.forEach((word, i) => {
    const typos = typoRows(hints, param, word);
    if (typos !== undefined) parts.push(intersection([typos, ...words.filter((_, j) => j !== i).map((other) => wordRows(hints, param, other, 2))]));
  });
  const joined = typoRows(hints, param, words.join(''));
  return joined === undefined ? parts : [...parts, joined];
}

/** The rids the condition's values match at `level` or better (a rid may repeat). */
function rowsUpTo(hints: PlanHints, c: PhoneticCondition, level: MatchLevel): Statement {
  return join(c.values.map((words) => valueRows(hints, c.param.id, words, level)), 'union all');
}

/**
 * Whether the resource `alias`.rid matches the condition at `level` (0 or 1) or better, its rows
 * probed one lookup at a time: what a rank phase leaves out of the rows it reads.
 */
function matchesUpTo(c: PhoneticCondition, level: 0 | 1, alias: string): Statement {
  const rid = ident(alias);
  const has = (word: string) => stmt`exists (select 1 from phonetic_idx e where e.param = ${c.param.id} and ${level === 0 ? stmt`e.word = ${word}` : stmt`e.sound = ${soundOf(word)}`} and e.rid = ${rid}.rid)`;
  const value = (words: string[]) => (words.length === 1 ? has(words[0]) : stmt`(${join(words.map(has), 'and')}) or ${has(words.join(''))}`);
  return join(c.values.map(value), 'or');
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

  rows(c, hints) {
    const { upTo, above } = c.levels ?? { upTo: 2 };
    // The typo phase reads the typos' rows and what they join, not every row of level 2.
    const typoPhase = upTo === 2 && above === 1;
    const parts = typoPhase ? c.values.flatMap((words) => typoValueRows(hints, c.param.id, words)) : [rowsUpTo(hints, c, upTo)];
    if (parts.length === 0) return stmt`select null::bigint as rid where false`;
    const matched = stmt`select m.rid from (${join(parts, 'union all')}) m`;
    return above === undefined ? matched : stmt`${matched} where not (${matchesUpTo(c, above as 0 | 1, 'm')})`;
  },

  // One value of one word: each of its lookups read in rid order up to the page, a row of a
  // resource that also matches at a level the phase leaves out skipped by a probe.
  pageRows(c, hints, filter, limit) {
    if (c.values.length !== 1 || c.values[0].length !== 1) return undefined;
    const [[word]] = c.values;
    const param = c.param.id;
    const { upTo, above } = c.levels ?? { upTo: 2 };
    // Phase 2 (above 1) reads the typos alone: the sound's rows are all of level 1.
    const read = lookups(hints, param, word, upTo)?.filter((l) => !(above === 1 && l.column === 'sound'));
    if (read === undefined) return undefined;
    if (read.length === 0) return stmt`select null::bigint as rid where false`;
    const skip = above === undefined ? stmt`true` : stmt`not ${matchesUpTo(c, above as 0 | 1, 'r')}`;
    return join(read.map((l) => stmt`(${lookupRows(param, l, 'r', l.column === 'sound')} and ${skip} and ${filter} order by r.rid limit ${limit})`), 'union all');
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
