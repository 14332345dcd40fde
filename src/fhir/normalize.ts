/**
 * The one folding function of string search. It builds every `string_idx.norm` value at write time
 * and every query value at search time, so it is part of the stored data: changing it means
 * re-indexing. Case and diacritics fold (NFD, combining marks dropped), letters without a
 * decomposition fold as PostgreSQL's `unaccent` does, punctuation and symbols become spaces and
 * whitespace collapses.
 */
const LETTERS: Record<string, string> = {
  'æ': 'ae', 'œ': 'oe', 'ø': 'o', 'ł': 'l', 'ß': 'ss', 'đ': 'd', 'ð': 'd', 'þ': 'th', 'ħ': 'h',
  'ı': 'i', 'ĳ': 'ij', 'ĸ': 'q', 'ŀ': 'l', 'ŉ': "'n", 'ŋ': 'n', 'ŧ': 't', 'ſ': 's', 'ƒ': 'f',
};
const LETTER_RE = new RegExp(`[${Object.keys(LETTERS).join('')}]`, 'gu');

/** The folding as written (Unicode normalisation and regular expressions): the reference. */
export function normalizeFull(value: string): string {
  return value
    .normalize('NFD')
    .toLowerCase()
    .replace(/\p{M}+/gu, '')
    .replace(LETTER_RE, (c) => LETTERS[c] ?? c)
    .replace(/[\p{P}\p{S}\p{C}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/**
 * ASCII text folds without Unicode tables: letters to lower case, digits kept, everything else
 * (punctuation, symbols, controls, white space) to one space, no space at either end — exactly
 * what normalizeFull does to ASCII. undefined for text with a non-ASCII character.
 */
function normalizeAscii(value: string): string | undefined {
  let out = '';
  let pendingSpace = false;
  for (let i = 0; i < value.length; i++) {
    let c = value.charCodeAt(i);
    if (c >= 128) return undefined;
    if (c >= 65 && c <= 90) c += 32;
    else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) {
      pendingSpace = out.length > 0;
      continue;
    }
    if (pendingSpace) {
      out += ' ';
      pendingSpace = false;
    }
    out += String.fromCharCode(c);
  }
  return out;
}

/**
 * Folded values of recent non-ASCII inputs: a directory repeats its names, cities and street
 * words millions of times. Bounded: emptied when full.
 */
const folded = new Map<string, string>();
const FOLDED_MAX = 50_000;

export function normalize(value: string): string {
  const ascii = normalizeAscii(value);
  if (ascii !== undefined) return ascii;
  let n = folded.get(value);
  if (n === undefined) {
    n = normalizeFull(value);
    if (folded.size >= FOLDED_MAX) folded.clear();
    folded.set(value, n);
  }
  return n;
}

/**
 * The smallest string above every string that starts with `prefix`, under COLLATE "C" (code point
 * order): prefix search becomes `norm >= prefix and norm < upper`, which a btree serves with any
 * plan, generic or custom.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000; // skip surrogates
    if (next <= 0x10ffff) return cps.join('') + String.fromCodePoint(next);
  }
  return undefined; // every character is U+10FFFF: no upper bound
}
