import { withMailboxes } from './mailbox.ts';

/**
 * One structure, one Organization: what the RPPS lines and the FINESS feed each say of it, and its
 * MSSanté mailboxes, merged. Pure: the same parts give the same JSON, whatever the order in which
 * the sources were imported.
 *
 * Precedence (docs/open-data.md): FINESS, the register of establishments, wins for what both
 * describe — active, names, address, telephones, extensions, partOf. The RPPS adds what FINESS has
 * not: its identifiers (RPPS-rang technical id, and any other the feed lacks) and its type slices
 * (the activity sector). The data-trace names every source present.
 */

type Json = Record<string, unknown>;

export interface OrganizationParts {
  /** the Organization the RPPS lines alone describe (src/opendata/map.ts organizationOf). */
  rpps?: Json;
  /** the Organization the FINESS feed alone describes (src/opendata/finess-map.ts). */
  finess?: Json;
  /** its MSSanté telecoms, in address order. */
  mailboxes: readonly Json[];
}

const identifierKey = (i: Json) => `${i.system ?? ''}|${i.value ?? ''}`;
const typeKey = (t: Json) => ((t.coding as Json[] | undefined) ?? []).map((c) => `${c.system ?? ''}|${c.code ?? ''}`).join(' ');

/** The elements of `more` whose key `base` lacks, after `base`'s. */
function union(base: unknown, more: unknown, key: (x: Json) => string): Json[] {
  const a = (base as Json[] | undefined) ?? [];
  const seen = new Set(a.map(key));
  return [...a, ...((more as Json[] | undefined) ?? []).filter((x) => !seen.has(key(x)))];
}

/** The Organization of a structure's parts, or undefined when no source describes it (mailboxes alone make none). */
export function organizationFromParts(parts: OrganizationParts): Json | undefined {
  const { rpps, finess } = parts;
  const base = finess ?? rpps;
  if (base === undefined) return undefined;
  let org: Json = base;
  if (finess && rpps) {
    const meta = finess.meta as Json;
    org = {
      ...finess,
      meta: { ...meta, extension: [...((rpps.meta as Json).extension as Json[]), ...(meta.extension as Json[])] },
      identifier: union(finess.identifier, rpps.identifier, identifierKey),
      type: union(finess.type, rpps.type, typeKey),
    };
    if (finess.telecom === undefined && rpps.telecom !== undefined) org = { ...org, telecom: rpps.telecom };
    if (finess.address === undefined && rpps.address !== undefined) org = { ...org, address: rpps.address };
  }
  return withMailboxes(org, parts.mailboxes);
}
