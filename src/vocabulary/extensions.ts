/** The StructureDefinitions the directory's resources use: extensions and profiles. */

import { URL } from './systems.ts';

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
  geolocation: 'http://hl7.org/fhir/StructureDefinition/geolocation',
  // Defined by this server (no ANS or HL7 definition says how precise a geocoded point is): on
  // Location.position, valueCode housenumber, street or commune (the commune's centre only), after
  // the FINESS feed's BAN key (docs/open-data.md).
  positionPrecision: 'https://annuaire.sante.fr/fhir/StructureDefinition/position-precision',
  deviceArhgos: `${SD}/as-ext-device-number-authorization-arhgos`,
  deviceAuthorizationDate: `${SD}/as-ext-device-authorization-date-device`,
  hcsArhgos: `${SD}/as-ext-healthcareservice-authorization-number-arhgos`,
  hcsImplementationPeriod: `${SD}/as-ext-healthcareservice-implementation-period`,
  /** A searchset entry's distance from the point of a `near` search. */
  locationDistance: 'http://hl7.org/fhir/StructureDefinition/location-distance',
} as const;

/** The directory's own (DP) profile of each resource type, the one the CapabilityStatement names. */
export const DP_PROFILE = {
  Practitioner: `${SD}/as-dp-practitioner`,
  PractitionerRole: `${SD}/as-dp-practitionerrole`,
  Organization: `${SD}/as-dp-organization`,
  Device: `${SD}/as-dp-device`,
  HealthcareService: `${SD}/as-dp-healthcareservice-healthcare-activity`,
  // The directory's guide has no DP profile of Location: the French core one is named.
  Location: `${FR_SD}/fr-core-location`,
} as const;

/** meta.profile by resource type: the French core profile where there is one, then the DP profile. */
export const PROFILES = {
  Practitioner: [`${FR_SD}/fr-core-practitioner`, DP_PROFILE.Practitioner],
  PractitionerRole: [`${FR_SD}/fr-core-practitioner-role`, DP_PROFILE.PractitionerRole],
  Organization: [`${FR_SD}/fr-core-organization`, DP_PROFILE.Organization],
  Device: [DP_PROFILE.Device],
  HealthcareService: [DP_PROFILE.HealthcareService],
  Location: [DP_PROFILE.Location],
} as const;
export type ProfiledType = keyof typeof PROFILES;

/** The values of `systeme-information` (as-cs-type-systeme-information, and MSS which the live API also sends). */
export type InformationSystem = 'RPPS' | 'FINESS' | 'CG' | 'MSS';

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
