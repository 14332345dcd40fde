import { badRequest } from './outcome.ts';

/**
 * `application/x-www-form-urlencoded` text (a query string, a POST _search body) → its pairs in
 * order, repeated names kept. URLSearchParams decodes it, but keeps a `%` without two hex digits
 * as it is and turns percent-encoded bytes that are not UTF-8 into U+FFFD: a search on what is
 * left would quietly find something else, so such a parameter is refused, named.
 */
export function formPairs(text: string): [string, string][] {
  if (text.includes('%')) for (const part of text.split('&')) checkEncoding(part);
  return [...new URLSearchParams(text)];
}

/** The pairs of a request URL's query string. */
export function queryPairs(url: string): [string, string][] {
  const q = url.indexOf('?');
  return q < 0 ? [] : formPairs(url.slice(q + 1));
}

const decode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
};

function checkEncoding(part: string): void {
  if (!part.includes('%') || decode(part) !== undefined) return;
  const eq = part.indexOf('=');
  const rawName = eq < 0 ? part : part.slice(0, eq);
  const name = decode(rawName) ?? rawName;
  const shown = part.length > 80 ? `${part.slice(0, 80)}…` : part;
  throw badRequest(
    `parameter ${name}: "${shown}" is not valid percent-encoding: each % is followed by two hex digits, and the bytes they make are UTF-8 (é is %C3%A9, a literal % is %25)`,
    name,
  );
}
