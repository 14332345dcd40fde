import { badRequest } from './outcome.ts';

/** FHIR search escapes: `\,` `\|` `\$` `\\` inside a value (R4 §3.1.1.4 / escaping). */

/** Splits on `sep` where it is not escaped by a backslash (escapes are kept for `unescape`). */
export function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

/** `\,` `\|` `\$` `\\` → the character; any other backslash is illegal (400). */
export function unescape(s: string, name: string): string {
  return s.replace(/\\(.?)/gs, (_, c: string) => {
    if (c === ',' || c === '|' || c === '$' || c === '\\') return c;
    throw badRequest(`parameter ${name}: illegal escape "\\${c}" in "${s}" (only \\, \\| \\$ \\\\ are allowed)`, name);
  });
}
