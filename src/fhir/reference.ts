/**
 * A resource id: 1–64 of A-Z a-z 0-9 - . (FHIR's id), not made only of dots (`.` and `..` would
 * read as path segments in every URL that carries the id).
 */
const ID = '(?!\\.+(?![A-Za-z0-9\\-.]))[A-Za-z0-9\\-.]{1,64}';

/**
 * A literal reference as index data: `Type/id`, an absolute URL with any base ending in `/Type/id`,
 * optionally versioned (`/_history/n`). Contained (`#x`) and `urn:` references are not links.
 */
const REF_RE = new RegExp(`(?:^|/)([A-Z][A-Za-z]{1,63})/(${ID})(?:/_history/[A-Za-z0-9\\-.]{1,64})?$`);

export function parseReference(reference: string): { type: string; id: string } | undefined {
  if (reference.startsWith('#') || reference.startsWith('urn:')) return undefined;
  const m = REF_RE.exec(reference);
  return m ? { type: m[1], id: m[2] } : undefined;
}

export const ID_RE = new RegExp(`^${ID}$`);
