// JSON text of the shapes shared by all resource builders: codings, meta with the data-trace
// extension, identifiers, MSS mailboxes; the URIs and codes come from src/vocabulary/. Shapes follow shared/docs/ans-research.md §2 and the real-API-derived examples.
//
// Builders emit JSON text, not objects: JSON.stringify of nested objects is the bottleneck on
// Node 20, while concatenating pre-serialised constant fragments is several times faster.
// Rule: free text (names, addresses, e-mails…) always goes through `str()` (JSON.stringify);
// only values we format ourselves (codes, ids, digits, dates) are interpolated raw.

import { coding } from '../vocabulary/codes.ts';
import { dataTrace, EXT, PROFILES, type InformationSystem, type ProfiledType } from '../vocabulary/extensions.ts';
import { SOURCE, URL, type SystemKey } from '../vocabulary/systems.ts';

// Two-level caches (system → code → JSON) avoid building a key string on every call.
const codingJsonCache = [new Map<string, Map<string, string>>(), new Map<string, Map<string, string>>()];
const conceptJsonCache = [new Map<string, Map<string, string>>(), new Map<string, Map<string, string>>()];

function cached(cache: Map<string, Map<string, string>>, key: string, code: string, make: () => string): string {
  let bySystem = cache.get(key);
  if (bySystem === undefined) {
    bySystem = new Map();
    cache.set(key, bySystem);
  }
  let v = bySystem.get(code);
  if (v === undefined) {
    v = make();
    bySystem.set(code, v);
  }
  return v;
}

/** JSON text of `coding(key, code, withDisplay)`, cached. */
export function codingJson(key: SystemKey, code: string, withDisplay = false): string {
  return cached(codingJsonCache[withDisplay ? 1 : 0], key, code, () => JSON.stringify(coding(key, code, withDisplay)));
}

/** JSON text of a CodeableConcept with a single coding, cached. */
export function conceptJson(key: SystemKey, code: string, withDisplay = false): string {
  return cached(conceptJsonCache[withDisplay ? 1 : 0], key, code, () => `{"coding":[${codingJson(key, code, withDisplay)}]}`);
}

/** JSON string literal for free text. */
export const str = (s: string): string => JSON.stringify(s);

/** JSON text of `{"use":"official","type":{…IDNPS…},"system":…,"value":…}`. */
export function officialIdentifier(typeCode: string, system: string, value: string): string {
  return `{"use":"official","type":${conceptJson('fr-core-cs-v2-0203', typeCode)},"system":"${system}","value":${str(value)}}`;
}

const META_HEAD = '{"versionId":"1","lastUpdated":"';
const metaTail = Object.fromEntries(
  Object.entries(PROFILES).map(([type, profiles]) => [type, `","source":"${SOURCE}","profile":${JSON.stringify(profiles)},"extension":[`]),
) as Record<ProfiledType, string>;

/** JSON text of dataTrace(), cached: few (system, authority) pairs recur across millions of resources. */
const dataTraceCache = new Map<string, string>();
function dataTraceJson(system: InformationSystem, authority: string | null): string {
  const key = `${system}|${authority ?? ''}`;
  let v = dataTraceCache.get(key);
  if (v === undefined) dataTraceCache.set(key, (v = JSON.stringify(dataTrace(system, authority))));
  return v;
}

/** meta with versionId, lastUpdated, source, profiles and the data-trace extension. */
export function meta(resourceType: ProfiledType, lastUpdated: string, system: InformationSystem, authority: string | null): string {
  return `${META_HEAD}${lastUpdated}${metaTail[resourceType]}${dataTraceJson(system, authority)}]}`;
}

export type MailboxType = 'PER' | 'CAB' | 'ORG' | 'APP';

const MSSANTE_EXT = JSON.stringify({ url: EXT.emailType, valueCoding: { system: URL.r256, code: 'MSSANTE' } });

/**
 * An MSS mailbox telecom (datatype profile as-mailbox-mss): system email, use work,
 * fr-core-contact-point-email-type = MSSANTE, and as-ext-mailbox-mss-metadata with the BAL type.
 */
export function mssTelecom(
  value: string,
  type: MailboxType,
  opts: { description?: string; service?: string; digitization?: boolean } = {},
): string {
  let md = `{"url":"type","valueCodeableConcept":${conceptJson('TRE_R257-TypeBAL', type)}}`;
  if (opts.description) md += `,{"url":"description","valueString":${str(opts.description)}}`;
  if (opts.service) md += `,{"url":"service","valueString":${str(opts.service)}}`;
  if (opts.digitization !== undefined) md += `,{"url":"digitization","valueBoolean":${opts.digitization}}`;
  return `{"extension":[${MSSANTE_EXT},{"url":"${EXT.mailboxMetadata}","extension":[${md}]}],"system":"email","value":${str(value)},"use":"work"}`;
}

export function reference(resourceType: string, id: string): string {
  return `{"reference":"${resourceType}/${id}"}`;
}

