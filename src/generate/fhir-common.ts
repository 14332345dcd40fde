// Shapes shared by all resource builders: meta with the data-trace extension, identifiers,
// MSS mailboxes. Shapes follow shared/docs/ans-research.md §2 and the real-API-derived examples.
//
// Builders emit JSON text, not objects: JSON.stringify of nested objects is the bottleneck on
// Node 20, while concatenating pre-serialised constant fragments is several times faster.
// Rule: free text (names, addresses, e-mails…) always goes through `str()` (JSON.stringify);
// only values we format ourselves (codes, ids, digits, dates) are interpolated raw.

import { conceptJson, URL } from './codes.ts';

export const SOURCE = 'https://annuaire.sante.fr';

const SD = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition';
const FR_SD = 'https://hl7.fr/ig/fhir/core/StructureDefinition';

export const EXT = {
  dataTrace: `${SD}/as-ext-data-trace`,
  smartcard: `${SD}/as-ext-smartcard`,
  mailboxMetadata: `${SD}/as-ext-mailbox-mss-metadata`,
  organizationTypes: `${SD}/as-ext-organization-types`,
  pharmacyLicence: `${SD}/as-ext-organization-pharmacy-licence`,
  organizationPeriod: 'http://hl7.org/fhir/StructureDefinition/organization-period',
  emailType: `${FR_SD}/fr-core-contact-point-email-type`,
  inseeCode: `${FR_SD}/fr-core-address-insee-code`,
  houseNumber: 'http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-houseNumber',
  streetNameType: 'http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-streetNameType',
  streetNameBase: 'http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-streetNameBase',
  deviceArhgos: `${SD}/as-ext-device-number-authorization-arhgos`,
  deviceAuthorizationDate: `${SD}/as-ext-device-authorization-date-device`,
  hcsArhgos: `${SD}/as-ext-healthcareservice-authorization-number-arhgos`,
  hcsImplementationPeriod: `${SD}/as-ext-healthcareservice-implementation-period`,
} as const;

export const PROFILES = {
  Practitioner: [`${FR_SD}/fr-core-practitioner`, `${SD}/as-dp-practitioner`],
  PractitionerRole: [`${FR_SD}/fr-core-practitioner-role`, `${SD}/as-dp-practitionerrole`],
  Organization: [`${FR_SD}/fr-core-organization`, `${SD}/as-dp-organization`],
  Device: [`${SD}/as-dp-device`],
  HealthcareService: [`${SD}/as-dp-healthcareservice-healthcare-activity`],
} as const;
export type ProfiledType = keyof typeof PROFILES;

export const SYSTEM = {
  idnps: 'urn:oid:1.2.250.1.71.4.2.1',
  idnst: 'urn:oid:1.2.250.1.71.4.2.2',
  rpps: 'https://rpps.esante.gouv.fr',
  adeli: 'https://adeli.esante.gouv.fr',
  finess: 'https://finess.esante.gouv.fr',
  sirene: 'https://sirene.fr',
  rppsRang: 'https://rppsrang.esante.gouv.fr',
} as const;

export type InformationSystem = 'RPPS' | 'FINESS' | 'CG' | 'MSS';

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

export interface DataTrace {
  url: string;
  extension: ({ url: 'systeme-information'; valueCode: string } | { url: 'autorite-enregistrement'; valueCodeableConcept: { coding: { system: string; code: string }[] } })[];
}

/**
 * The `as-ext-data-trace` extension: `systeme-information` (valueCode) and optionally
 * `autorite-enregistrement` (TRE_R60). It lives in meta.extension, as in the live API.
 */
export function dataTrace(system: InformationSystem, authority: string | null): DataTrace {
  const extension: DataTrace['extension'] = [{ url: 'systeme-information', valueCode: system }];
  if (authority) extension.push({ url: 'autorite-enregistrement', valueCodeableConcept: { coding: [{ system: URL.r60, code: authority }] } });
  return { url: EXT.dataTrace, extension };
}

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

