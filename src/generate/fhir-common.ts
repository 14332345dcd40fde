// Shapes shared by all resource builders: meta with the data-trace extension, identifiers,
// MSS mailboxes. Shapes follow shared/docs/ans-research.md §2 and the real-API-derived examples.

import { coding, URL, type Coding } from './codes.ts';

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

export const SYSTEM = {
  idnps: 'urn:oid:1.2.250.1.71.4.2.1',
  idnst: 'urn:oid:1.2.250.1.71.4.2.2',
  rpps: 'https://rpps.esante.gouv.fr',
  finess: 'https://finess.esante.gouv.fr',
  sirene: 'https://sirene.fr',
  rppsRang: 'https://rppsrang.esante.gouv.fr',
} as const;

export type InformationSystem = 'RPPS' | 'FINESS' | 'CG' | 'MSS';

/** Pre-built `identifier.type` objects (shared, never mutated). */
const idTypeCache = new Map<string, { coding: Coding[] }>();
function identifierType(code: string): { coding: Coding[] } {
  let t = idTypeCache.get(code);
  if (!t) {
    t = { coding: [coding('fr-core-cs-v2-0203', code)] };
    idTypeCache.set(code, t);
  }
  return t;
}

export function officialIdentifier(typeCode: string, system: string, value: string) {
  return { use: 'official', type: identifierType(typeCode), system, value };
}

/** Cached authority CodeableConcepts for `autorite-enregistrement`. */
const authorityCache = new Map<string, { coding: Coding[] }>();
function authorityConcept(code: string): { coding: Coding[] } {
  let c = authorityCache.get(code);
  if (!c) {
    c = { coding: [coding('TRE_R60-AutoriteEnregistrement', code)] };
    authorityCache.set(code, c);
  }
  return c;
}

/**
 * meta with the `as-ext-data-trace` extension: `systeme-information` (valueCode) and optionally
 * `autorite-enregistrement` (TRE_R60). The extension lives in meta.extension as in the live API.
 */
export function meta(
  resourceType: keyof typeof PROFILES,
  lastUpdated: string,
  system: InformationSystem,
  authority: string | null,
) {
  const trace: object[] = [{ url: 'systeme-information', valueCode: system }];
  if (authority) trace.push({ url: 'autorite-enregistrement', valueCodeableConcept: authorityConcept(authority) });
  return {
    versionId: '1',
    lastUpdated,
    source: SOURCE,
    profile: PROFILES[resourceType],
    extension: [{ url: EXT.dataTrace, extension: trace }],
  };
}

export type MailboxType = 'PER' | 'CAB' | 'ORG' | 'APP';

const MSSANTE_EXT = {
  url: EXT.emailType,
  valueCoding: { system: URL.r256, code: 'MSSANTE' },
};
const balTypeCache = new Map<string, object>();
function balType(type: MailboxType): object {
  let v = balTypeCache.get(type);
  if (!v) {
    v = { url: 'type', valueCodeableConcept: { coding: [coding('TRE_R257-TypeBAL', type)] } };
    balTypeCache.set(type, v);
  }
  return v;
}

/**
 * An MSS mailbox telecom (datatype profile as-mailbox-mss): system email, use work,
 * fr-core-contact-point-email-type = MSSANTE, and as-ext-mailbox-mss-metadata with the BAL type.
 */
export function mssTelecom(
  value: string,
  type: MailboxType,
  opts: { description?: string; service?: string; digitization?: boolean } = {},
) {
  const metadata: object[] = [balType(type)];
  if (opts.description) metadata.push({ url: 'description', valueString: opts.description });
  if (opts.service) metadata.push({ url: 'service', valueString: opts.service });
  if (opts.digitization !== undefined) metadata.push({ url: 'digitization', valueBoolean: opts.digitization });
  return {
    extension: [MSSANTE_EXT, { url: EXT.mailboxMetadata, extension: metadata }],
    system: 'email',
    value,
    use: 'work',
  };
}

export function reference(resourceType: string, id: string) {
  return { reference: `${resourceType}/${id}` };
}
