/**
 * Sound-alike and one-typo matching of names, word by word. Pure: the index stores, per word, the
 * folded word and its `soundOf` key; a search computes the same keys and the `typoVariants` of its
 * words, so a change of `soundOf` bumps SOUND_KEYS_VERSION (src/db.ts `storeSoundKeys` then makes
 * the stored keys again at start-up).
 */
import { normalize } from './normalize.ts';

/** The rules the stored sound keys were made with; tests/phonetic.test.ts pins their keys to it. */
export const SOUND_KEYS_VERSION = 2;

/** The words of a value: folded by `normalize`, split on every character outside [a-z0-9]. */
export function phoneticWords(text: string): string[] {
  return normalize(text).split(/[^a-z0-9]+/).filter((w) => w !== '');
}

const VOWELS = 'aeiouy';
const CONSONANTS = 'bcdfghjklmnpqrstvwxyz'; // y is both, as in the reference

/**
 * Sonnex rules by first letter, first match wins: [pattern, key, letters consumed (default: the
 * pattern's letters)]. A pattern is lower-case letters, then at most one condition on what follows
 * them, not consumed: V a vowel, C a consonant, . any character, $ the end of the word.
 */
type Rule = readonly [pattern: string, key: string, take?: number];
const RULES: Record<string, readonly Rule[]> = {
  a: [
    ['aient$', 'E'], ['ainV', 'E', 2], ['ain', '1'], ['ais$', 'E'], ['aisV', 'Ez'], ['ais', 'Es'],
    ['ail$', 'ai'], ['aill', 'ai'], ['ai', 'E'], ['amm', 'am'], ['amV', 'am', 2], ['am.', '2', 2],
    ['ann', 'an'], ['anV', 'an', 2], ['an', '2'], ['ass', 'as'], ['asC', 'as', 2], ['as.', 'az', 2],
    ['au', 'o'], ['ay$', 'E'], ['ays$', 'E'],
  ],
  b: [['b$', ''], ['bb', 'b'], ['bv', '', 1]],
  c: [
    ['c$', ''], ['ca', 'k', 1], ['cc', 'ks'], ['ce', 's', 1], ['chao', 'k', 2], ['chl', 'kl'],
    ['choe', 'k', 2], ['chr', 'kr'], ['ch', 'C'], ['ci', 's', 1], ['ck', 'k'], ['coeu', 'k', 1],
    ['compt', 'k3t'], ['co', 'k', 1], ['cuei', 'ke', 3], ['cu', 'k', 1], ['cy', 's', 1], ['c', 'k'],
  ],
  d: [['d$', ''], ['ds$', ''], ['dd', 'd']],
  e: [
    ['e$', ''], ['ec$', 'Ec'], ['ef$', 'Ef'], ['eaux$', 'o'], ['eann', 'an'], ['eanV', 'an', 3], ['ean', '2'], ['eau', 'o'],
    ['eff', 'Ef'], ['einV', 'En', 3], ['ein', '1'], ['ei', 'E'], ['ell', 'El'], ['elC', 'E', 1],
    ['emm', 'Em'], ['emp', '2'], ['enn', 'En'], ['enes$', 'En', 2], ['ene$', 'En', 2], ['enV', 'en', 2], ['en', '2'], ['er$', 'E'],
    ['ert$', 'Er'], ['err', 'Er'], ['erf', 'Er', 2], ['es$', ''], ['esch', 'EC'], ['esh', 'E', 2],
    ['esn', 'E', 2], ['ess', 'Es'], ['esC', 'Es', 2], ['es.', 'ez', 2], ['ett', 'Et'], ['et$', 'E'],
    ['eunV', 'en', 3], ['eun.', '1', 3], ['eux$', 'e'], ['euxi', 'ez', 3], ['eu', 'e'], ['ex$', 'Eks'],
    ['eyC', 'E', 2], ['ey.', 'E', 1], ['ez$', 'E'],
  ],
  f: [['ff', 'f']],
  g: [['g$', ''], ['ge', 'j', 1], ['gi', 'j', 1], ['gn', 'n'], ['gy', 'j', 1], ['gu', 'g'], ['gg', 'g']],
  h: [['h', '']],
  i: [
    ['ic$', 'ik'], ['ics$', 'ik'], ['ienn', 'iEn'], ['ienV', 'iEn', 3], ['ien', 'i1'], ['inn', 'in'], ['ine', 'in'],
    ['inV', 'in', 2], ['in', '1'], ['isC', 'is', 2], ['is.', 'iz', 2], ['ixi', 'iz', 2], ['ill', 'i'],
  ],
  l: [['ll', 'l']],
  m: [['mm', 'm']],
  n: [['nn', 'n']],
  o: [
    ['occ', 'ok'], ['oeu', 'e'], ['oient$', 'Ua'], ['oinn', 'Uan'], ['oinV', 'Uan', 3], ['oin', 'U1'], ['oi', 'Ua'], ['omm', 'om'],
    ['omV', 'om', 2], ['om.', '3', 2], ['onn', 'on'], ['onV', 'on', 2], ['on', '3'], ['oss', 'os'],
    ['osC', 'os', 2], ['os.', 'oz', 2], ['ou', 'U'],
  ],
  p: [['p$', ''], ['ph', 'f'], ['pp', 'p'], ['pays$', 'pEi'], ['paysC', 'pEis', 4], ['pays.', 'pEiz', 4]],
  q: [['qur', 'ku', 2], ['qu', 'k'], ['q', 'k']],
  r: [['rr', 'r']],
  s: [['s$', ''], ['ss', 's'], ['sci', 's', 2]],
  t: [['t$', ''], ['tt', 't']],
  u: [['un$', '1']],
  w: [['w', 'v']],
  x: [['x$', ''], ['xc', 'ks'], ['xV', 'kz', 1], ['x.', 'ks', 1]],
  y: [['y', 'i']],
  z: [['zz', 'z']],
};

interface Compiled { letters: string; next: string; key: string; take: number }
const COMPILED = new Map<string, Compiled[]>(Object.entries(RULES).map(([first, rules]) => [
  first,
  rules.map(([pattern, key, take]) => {
    const letters = pattern.replace(/[VC.$]$/, '');
    return { letters, next: pattern.slice(letters.length), key, take: take ?? letters.length };
  }),
]));

function applies(rule: Compiled, word: string, at: number): boolean {
  if (!word.startsWith(rule.letters, at)) return false;
  const after = word[at + rule.letters.length];
  switch (rule.next) {
    case '': return true;
    case '$': return after === undefined;
    case '.': return after !== undefined;
    case 'V': return after !== undefined && VOWELS.includes(after);
    default: return after !== undefined && CONSONANTS.includes(after);
  }
}

/**
 * The French phonetic key of one folded word: Sonnex (F. Bisson, 2014, after its Haskell
 * reference), which keeps sounded consonants and vowels apart (b/p, d/t, m/n, an/on/in) and merges
 * spellings of one sound. Keys are ASCII (the reference's é written E), never truncated. Deviations,
 * each restoring a sound the reference drops or invents: b before v is silent (Lefebvre), the n of
 * ain+vowel is kept, no n before a vowel is nasal (on, ean, ien, oin: Simone, Jeane, Fabiene,
 * Antoine), a final ene is è+n as its folded ène is (Fontene = Fontaine), the consonant after os is
 * kept; a word of silent letters only (d, es) keys as itself.
 */
export function soundOf(word: string): string {
  let key = '';
  for (let at = 0; at < word.length;) {
    const rule = COMPILED.get(word[at])?.find((r) => applies(r, word, at));
    key += rule ? rule.key : word[at];
    at += rule ? rule.take : 1;
  }
  return key || word;
}

/** Words shorter than this match by spelling or sound only: one typo away from a short word is too many words. */
export const TYPO_MIN_LENGTH = 5;

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const LETTERS_DIGITS = `${LETTERS}0123456789`;

/**
 * Every distinct string at optimal-string-alignment distance exactly 1 from a word of
 * TYPO_MIN_LENGTH letters or more (one letter inserted, dropped, replaced, or two neighbours
 * swapped), over a-z, and 0-9 too when the word has a digit; [] for a shorter word. Ordered by
 * position, then insert, drop, replace, swap.
 */
export function typoVariants(word: string): string[] {
  if (word.length < TYPO_MIN_LENGTH) return [];
  const alphabet = /[0-9]/.test(word) ? LETTERS_DIGITS : LETTERS;
  const out = new Set<string>();
  for (let i = 0; i <= word.length; i++) {
    const head = word.slice(0, i);
    for (const c of alphabet) out.add(head + c + word.slice(i));
    if (i === word.length) break;
    const tail = word.slice(i + 1);
    out.add(head + tail);
    for (const c of alphabet) if (c !== word[i]) out.add(head + c + tail);
    if (i + 1 < word.length && word[i] !== word[i + 1]) out.add(head + word[i + 1] + word[i] + word.slice(i + 2));
  }
  return [...out];
}

/** The one-typo spellings of a word that sound otherwise: those of level 2 only (level 1 holds the rest). */
export const typoSpellings = (word: string): string[] => {
  const sound = soundOf(word);
  return typoVariants(word).filter((v) => soundOf(v) !== sound);
};

/** Whether two strings are at optimal-string-alignment distance 0 or 1, by comparing them directly. */
export function withinOneTypo(a: string, b: string): boolean {
  if (a === b) return true;
  const [long, short] = a.length >= b.length ? [a, b] : [b, a];
  if (long.length - short.length > 1) return false;
  let i = 0;
  while (long[i] === short[i]) i++;
  if (long.length > short.length) return long.slice(i + 1) === short.slice(i);
  return long.slice(i + 1) === short.slice(i + 1)
    || (long[i] === short[i + 1] && long[i + 1] === short[i] && long.slice(i + 2) === short.slice(i + 2));
}
