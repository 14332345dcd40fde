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

export function normalize(value: string): string {
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
