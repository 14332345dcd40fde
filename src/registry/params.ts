import { DEFAULT_DISTANCE_KM, MAX_DISTANCE_KM } from '../fhir/types/near.ts';
import { EXT } from '../vocabulary/extensions.ts';
import { CODE_SYSTEMS, SYSTEM } from '../vocabulary/systems.ts';
import type { SearchParamDef, Version } from './types.ts';

/**
 * THE table of search parameters. Extractors, the query compiler, the counts per value, the
 * CapabilityStatement, the OpenAPI documents and docs/search-parameters.md are all derived from it:
 * adding a parameter is adding an entry here.
 *
 * Paths follow the real data of the national API, not the IG's expressions where those are
 * wrong: the data-trace extension lives in `meta.extension`, the smartcard on Practitioner, and
 * `mailbox-mss` indexes only telecoms typed MSSANTE (ordinary e-mails are not MSS mailboxes).
 */

const SP = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/SearchParameter';
const HL7 = 'http://hl7.org/fhir/SearchParameter';

const V2: Version[] = ['v2'];
const V12: Version[] = ['v1', 'v2'];
const MAIN = ['Practitioner', 'Organization', 'PractitionerRole'] as const;
const SEARCHED = [...MAIN, 'Location'] as const;

const mss = [['telecom[]', { where: [{ ext: EXT.emailType }, 'value[x]', 'code'], is: 'MSSANTE' }, 'value']];
const address = (...parts: string[]) => parts.map((p) => ['address[]', p]);
/** Location.address does not repeat. */
const oneAddress = (...parts: string[]) => parts.map((p) => ['address', p]);

/** address, address-city and address-postalcode of a type whose address is at `at`. */
const addressSearch = (type: 'Organization' | 'Location', versions: Version[], at: (...parts: string[]) => string[][]): SearchParamDef[] => [
  {
    code: 'address', type: 'string', base: [type], versions,
    paths: at('line[]', 'city', 'district', 'state', 'postalCode', 'country', 'text'),
    description: 'Any part of the address (line, city, district, state, postal code, country, text).',
    definition: `${HL7}/${type}-address`,
  },
  {
    code: 'address-city', type: 'string', base: [type], versions, paths: at('city'), sortable: true,
    description: 'Municipality.', definition: `${HL7}/${type}-address-city`,
  },
  {
    code: 'address-postalcode', type: 'string', base: [type], versions, paths: at('postalCode'), sortable: true,
    description: 'Postal code; a prefix finds a whole department (address-postalcode=75).',
    definition: `${HL7}/${type}-address-postalcode`,
  },
  {
    code: 'address-city+address-postalcode', type: 'special', special: 'pair', pair: ['address-city', 'address-postalcode'], base: [type], versions: [], paths: [],
    description: 'City and postal code together, read for a search with a prefix on each (address-city=, address-postalcode=).',
  },
];

export const PARAMS: SearchParamDef[] = [
  // ---- common to the three types -------------------------------------------------------------
  {
    code: '_id', type: 'token', base: [...SEARCHED], versions: V12, column: 'id', paths: [['id']], selective: true, sortable: true,
    description: 'Technical id of the resource (exact, case-sensitive).', definition: `${HL7}/Resource-id`,
  },
  {
    code: '_lastUpdated', type: 'date', base: [...SEARCHED], versions: V12, paths: [['meta', 'lastUpdated']], instant: true, sortable: true,
    aliases: [{ name: '_since', versions: ['v1'], prefix: 'ge' }],
    description: 'meta.lastUpdated, an instant. Prefixes eq ne gt lt ge le sa eb ap; a value without a time zone is read in UTC.',
    definition: `${HL7}/Resource-lastUpdated`,
  },
  {
    code: 'active', type: 'token', base: [...MAIN], versions: V12, paths: [['active']], boolean: true,
    description: 'Whether the record is active: true or false.',
  },
  {
    code: 'identifier', type: 'token', base: [...SEARCHED], versions: V12, paths: [['identifier[]']], selective: true,
    description: 'Business identifier: value, system|value, |value or system| (RPPS, IDNPS, FINESS, SIREN, SIRET, RPPS-rang, activity id). Values are case-sensitive.',
  },
  {
    code: 'data-information-system', type: 'token', base: [...SEARCHED], versions: V2,
    aliases: [{ name: 'as-sp-data-information-system', versions: ['v1'] }],
    paths: [['meta', { ext: EXT.dataTrace }, { ext: 'systeme-information' }, 'value[x]']],
    impliedSystem: CODE_SYSTEMS['as-cs-type-systeme-information'],
    description: 'Information system of origin (RPPS, FINESS, MSS, CG), from meta.extension as-ext-data-trace.',
    definition: `${SP}/as-sp-data-information-system`,
  },
  {
    code: 'data-registration-authority', type: 'token', base: [...MAIN], versions: V2,
    aliases: [{ name: 'as-sp-data-registration-authority', versions: ['v1'] }],
    paths: [['meta', { ext: EXT.dataTrace }, { ext: 'autorite-enregistrement' }, 'value[x]']],
    description: 'Registration authority (TRE_R60: CNOM, CNOP, ONI, ARS-…), from meta.extension as-ext-data-trace.',
    definition: `${SP}/as-sp-data-registration-authority`,
  },
  {
    code: 'mailbox-mss', type: 'string', base: [...MAIN], versions: V12, paths: mss,
    description: 'MSSanté secure mailbox (telecom values typed MSSANTE; ordinary e-mails are not indexed).',
    definition: `${SP}/as-sp-mailbox-mss`,
  },
  // ---- Practitioner ----------------------------------------------------------------------------
  {
    code: 'identifier-type', type: 'token', base: ['Practitioner', 'Organization'], versions: V12,
    paths: [['identifier[]', 'type']],
    description: 'Kind of identifier (fr-core-cs-v2-0203: IDNPS, RPPS, IDNST, FINEG, FINEJ, SIREN, SIRET, RPPSRG).',
  },
  {
    code: 'family', type: 'string', base: ['Practitioner'], versions: V2, paths: [['name[]', 'family']], sortable: true,
    description: 'Exercise family name.', definition: `${HL7}/individual-family`,
  },
  {
    code: 'given', type: 'string', base: ['Practitioner'], versions: V2, paths: [['name[]', 'given[]']], sortable: true,
    description: 'Exercise given name.', definition: `${HL7}/individual-given`,
  },
  {
    code: 'family+given', type: 'special', special: 'pair', pair: ['family', 'given'], base: ['Practitioner'], versions: [], paths: [],
    description: 'Family and given names together, read for a search with a prefix on each (family=, given=, name:family=, name:given=).',
  },
  {
    code: 'name', type: 'string', base: ['Practitioner'], versions: V2, sortable: true,
    paths: ['family', 'given[]', 'prefix[]', 'suffix[]', 'text'].map((p) => ['name[]', p]),
    parts: { family: 'family', given: 'given' },
    description: 'Any part of the name (family, given, prefix = civility, suffix = exercise civility, text). name:family= and name:given= search one part.',
    definition: `${HL7}/Practitioner-name`,
  },
  {
    code: 'phonetic', type: 'string', phonetic: true, base: ['Practitioner'], versions: V2,
    paths: [['name[]', 'family'], ['name[]', 'given[]']],
    description: 'Family or given name by sound and spelling, word by word: spelled the same (case, accents, punctuation folded), sounding the same in French (Sonnex), or one typo away for words of 5 letters or more. Without _sort, exact spellings come first, then sound-alikes, then typos.',
    definition: `${HL7}/individual-phonetic`,
  },
  {
    code: 'number-smartcard', type: 'string', base: ['Practitioner'], versions: V2,
    paths: [[{ ext: EXT.smartcard }, { ext: 'number' }, 'value[x]']],
    description: 'Professional card number (as-ext-smartcard, sub-extension number).', definition: `${SP}/as-sp-number-smartcard`,
  },
  {
    code: 'type-smartcard', type: 'token', base: ['Practitioner'], versions: V2,
    paths: [[{ ext: EXT.smartcard }, { ext: 'type' }, 'value[x]']],
    description: 'Professional card type (TRE_R87: CPS, CPF, CPE, CPA).', definition: `${SP}/as-sp-type-smartcard`,
  },
  {
    code: 'qualification-code', type: 'token', base: ['Practitioner'], versions: V2, paths: [['qualification[]', 'code']],
    description: 'Profession (TRE_G15), category (TRE_R09), diploma (TRE_R48/R14) or know-how (TRE_R38 …) code.',
    definition: `${SP}/as-sp-qualification-code`,
  },
  // ---- Organization ----------------------------------------------------------------------------
  {
    code: 'name', type: 'string', base: ['Organization'], versions: V12, paths: [['name'], ['alias[]']], sortable: true,
    description: 'Corporate name or alias.', definition: `${HL7}/Organization-name`,
  },
  {
    code: 'phonetic', type: 'string', phonetic: true, base: ['Organization'], versions: V12, paths: [['name'], ['alias[]']],
    description: 'Corporate name or alias by sound and spelling, word by word: spelled the same (case, accents, punctuation folded), sounding the same in French (Sonnex), or one typo away for words of 5 letters or more. Without _sort, exact spellings come first, then sound-alikes, then typos.',
    definition: `${HL7}/Organization-phonetic`,
  },
  ...addressSearch('Organization', V12, address),
  {
    code: 'address-line', type: 'string', base: ['Organization'], versions: V2, paths: address('line[]'),
    description: 'Street line of the address.', definition: `${SP}/as-sp-address-line`,
  },
  {
    code: 'address-country', type: 'string', base: ['Organization'], versions: ['v1'], paths: address('country'),
    description: 'Country.', definition: `${HL7}/Organization-address-country`,
  },
  {
    code: 'address-state', type: 'string', base: ['Organization'], versions: ['v1'], paths: address('state'),
    description: 'State or region.', definition: `${HL7}/Organization-address-state`,
  },
  {
    code: 'address-use', type: 'token', base: ['Organization'], versions: ['v1'], paths: [['address[]', 'use']],
    impliedSystem: 'http://hl7.org/fhir/address-use',
    description: 'Address use code (home, work, temp, old, billing).', definition: `${HL7}/Organization-address-use`,
  },
  {
    code: 'pharmacy-licence', type: 'string', base: ['Organization'], versions: V12,
    paths: [[{ ext: EXT.pharmacyLicence }, 'value[x]']],
    description: 'Licence number of a dispensing pharmacy.', definition: `${SP}/as-sp-pharmacy-licence`,
  },
  {
    code: 'type', type: 'token', base: ['Organization'], versions: V12, paths: [['type[]']],
    description: 'Organization type (GEOGRAPHICAL-ENTITY, LEGAL-ENTITY), APE/NAF code, legal category, activity sector, establishment category or SPH code.',
    definition: `${HL7}/Organization-type`,
  },
  {
    code: 'partof', type: 'reference', base: ['Organization'], versions: V12, target: ['Organization'], paths: [['partOf']], selective: true,
    description: 'The legal entity a geographical entity belongs to.', definition: `${HL7}/Organization-partof`,
  },
  {
    code: 'endpoint', type: 'reference', base: ['Organization'], versions: ['v1'], target: [], paths: [['endpoint[]']],
    description: 'Technical endpoint of the organization (Endpoint resources are not served here).',
    definition: `${HL7}/Organization-endpoint`,
  },
  // ---- PractitionerRole -----------------------------------------------------------------------
  {
    code: 'practitioner', type: 'reference', base: ['PractitionerRole'], versions: V2, target: ['Practitioner'],
    paths: [['practitioner']], selective: true,
    description: 'The practitioner of the activity.', definition: `${HL7}/PractitionerRole-practitioner`,
  },
  {
    code: 'organization', type: 'reference', base: ['PractitionerRole'], versions: V2, target: ['Organization'],
    paths: [['organization']], selective: true,
    description: 'The organization of the activity.', definition: `${HL7}/PractitionerRole-organization`,
  },
  {
    code: 'role', type: 'token', base: ['PractitionerRole'], versions: V2, paths: [['code[]']],
    description: 'Function, activity kind, exercise mode or pharmacist register section (TRE_R21, R22, R23, R85, R96, R06, G05).',
    definition: `${HL7}/PractitionerRole-role`,
  },
  {
    code: 'location', type: 'reference', base: ['PractitionerRole'], versions: V2, target: ['Location'],
    paths: [['location[]']], selective: true,
    description: 'The place of the activity: the Location of its establishment, when FINESS geolocates it (location.near=… finds practitioners by where they practise).',
    definition: `${HL7}/PractitionerRole-location`,
  },
  // ---- Location: an establishment's place (FINESS geolocation) -----------------------------
  {
    code: 'name', type: 'string', base: ['Location'], versions: V2, paths: [['name'], ['alias[]']], sortable: true,
    description: 'Name of the place (the establishment\'s name) or alias.', definition: `${HL7}/Location-name`,
  },
  {
    code: 'status', type: 'token', base: ['Location'], versions: V2, paths: [['status']],
    impliedSystem: 'http://hl7.org/fhir/location-status',
    description: 'active, suspended or inactive (an establishment closed or no longer in the feed).', definition: `${HL7}/Location-status`,
  },
  {
    code: 'organization', type: 'reference', base: ['Location'], versions: V2, target: ['Organization'],
    paths: [['managingOrganization']], selective: true,
    description: 'The establishment (Organization) the place is of.', definition: `${HL7}/Location-organization`,
  },
  ...addressSearch('Location', V2, oneAddress),
  {
    code: 'near', type: 'special', special: 'near', base: ['Location'], versions: V2, paths: [['position']],
    description: `Within a distance of a point: near=latitude|longitude|distance|units (WGS84 degrees), e.g. near=48.8534|2.3488|2|km. Units km, m, mi or [mi_i] (km when left out); distance ${DEFAULT_DISTANCE_KM} km when left out, at most ${MAX_DISTANCE_KM} km. Without _sort, nearest first, each match entry with its distance in km (search.extension location-distance).`,
    definition: `${HL7}/Location-near`,
  },
  // ---- stored only to be included -------------------------------------------------------------
  {
    code: 'organization', type: 'reference', base: ['Device'], versions: [], target: ['Organization'], paths: [['owner']],
    description: 'Organization owning the device (Device.owner).', definition: `${HL7}/Device-organization`,
  },
  {
    code: 'organization', type: 'reference', base: ['HealthcareService'], versions: [], target: ['Organization'],
    paths: [['providedBy']],
    description: 'Organization providing the service (HealthcareService.providedBy).',
    definition: `${HL7}/HealthcareService-organization`,
  },
];

/**
 * v1 wrote several systems differently (docs/ans-research §1.4, seed §4.7): a v1 query with a v1
 * system is rewritten to the stored v2 system so that it finds what its v2 twin finds.
 */
export const V1_SYSTEM_ALIASES: Record<string, string> = {
  'http://finess.sante.gouv.fr': SYSTEM.finess,
  'http://rpps.fr': SYSTEM.rpps,
  'http://interopsante.org/fhir/CodeSystem/fr-v2-3307': CODE_SYSTEMS['fr-core-cs-v2-3307'],
  'http://interopsante.org/CodeSystem/v2-0203': CODE_SYSTEMS['fr-core-cs-v2-0203'],
  'http://interopsante.org/CodeSystem/fr-v2-0203': CODE_SYSTEMS['fr-core-cs-v2-0203'],
};
