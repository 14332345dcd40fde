import { codesOf, coding, type Coding } from '../vocabulary/codes.ts';
import { dataTrace, EXT, PROFILES } from '../vocabulary/extensions.ts';
import { ACTIVE_STATE, establishmentId, legalEntityId, PHARMACY_CATEGORY } from '../vocabulary/formats/finess.ts';
import { CODE_SYSTEMS, COMMUNE_SYSTEM, SOURCE, SYSTEM, URL, type SystemKey } from '../vocabulary/systems.ts';
import type { EstablishmentRecord, FinessAddress, FinessRecord, FinessTelecom, LegalEntityRecord } from './finess-read.ts';
import { streetParts } from './map.ts';

/**
 * FINESS records as FHIR Organizations shaped like the live API and the directory's generated
 * ones: an establishment is a GEOGRAPHICAL-ENTITY `F<FINESS>` part of its legal entity, a
 * LEGAL-ENTITY `J<FINESS>`. Pure: the same record (and day) gives the same JSON; meta.versionId and
 * meta.lastUpdated are the write path's.
 *
 * An establishment with a WGS84 point is also a Location of the same id (locationOf), managed by
 * its Organization.
 *
 * Left out: the tariff mode (modefixationtarifaire) and budget type, which have no code table here;
 * a secondary address.
 */

type Json = Record<string, unknown>;

/** The day "now" is, for a closing date: YYYY-MM-DD in UTC. */
const todayUtc = (): string => new Date().toISOString().slice(0, 10);

// ---- codes ---------------------------------------------------------------------------------------

const known = new Map<SystemKey, Set<string>>();

/** `key|code` with its table's label when the table has the code, else without display (never invented). */
function tableCoding(key: SystemKey, code: string): Coding {
  let codes = known.get(key);
  if (codes === undefined) known.set(key, (codes = new Set(codesOf(key))));
  return codes.has(code) ? coding(key, code, true) : { system: CODE_SYSTEMS[key], code };
}

/** A type slice (as-ext-organization-types), or a plain concept for a slice without name (TRE_R66). */
function typeElement(slice: string | null, key: SystemKey, code: string): Json {
  const concept = { coding: [tableCoding(key, code)] };
  return slice ? { extension: [{ url: EXT.organizationTypes, valueCode: slice }], ...concept } : concept;
}

function officialIdentifier(typeCode: string, system: string, value: string): Json {
  return { use: 'official', type: { coding: [{ system: URL.idType, code: typeCode }] }, system, value };
}

// ---- shared shapes -------------------------------------------------------------------------------

function metaOf(type: 'Organization' | 'Location'): Json {
  return { source: SOURCE, profile: [...PROFILES[type]], extension: [dataTrace('FINESS', null)] };
}

/** IDNST `1`+FINESS and the FINESS number typed FINEG (an establishment) or FINEJ (a legal entity). */
function finessIdentifiers(finess: string, type: 'FINEG' | 'FINEJ'): Json[] {
  return [officialIdentifier('IDNST', SYSTEM.idnst, `1${finess}`), officialIdentifier(type, SYSTEM.finess, finess)];
}

/** An entity's Organization identifiers: IDNST, FINESS, and an establishment's SIRET or a legal entity's SIREN. */
export function identifiersOf(rec: FinessRecord): Json[] {
  if (rec.kind === 'legal') {
    const identifier = finessIdentifiers(rec.finess, 'FINEJ');
    if (rec.data.siren) identifier.push(officialIdentifier('SIREN', SYSTEM.sirene, rec.data.siren));
    return identifier;
  }
  const identifier = finessIdentifiers(rec.finess, 'FINEG');
  if (rec.data.siret) identifier.push(officialIdentifier('SIRET', SYSTEM.sirene, rec.data.siret));
  return identifier;
}

/** In service: etatObjet A and no closing date reached. */
export function isActive(state: string, closed: string, today = todayUtc()): boolean {
  return state === ACTIVE_STATE && !(closed !== '' && closed <= today);
}

/** Whether an establishment has a Location (locationOf): a geographic address with a WGS84 point. */
export const hasLocation = (rec: FinessRecord): boolean => rec.kind === 'establishment' && rec.data.address?.point !== undefined;

function periodExtension(start: string, end: string): Json | undefined {
  if (!start && !end) return undefined;
  const valuePeriod: Json = {};
  if (start) valuePeriod.start = start;
  if (end) valuePeriod.end = end;
  return { url: EXT.organizationPeriod, valuePeriod };
}

function telecomOf(t: FinessTelecom): Json[] {
  return [
    ...t.phones.map((value, i) => ({ system: 'phone', value, rank: i + 1 })),
    ...t.faxes.map((value) => ({ system: 'fax', value })),
    ...t.emails.map((value) => ({ system: 'email', value })),
  ];
}

const HOUSE_NUMBER = /^\d+$/;
const DELIVERY = /^(\d{5})\s+(.+)$/;

function geolocation(a: FinessAddress): Json | undefined {
  if (!a.point) return undefined;
  return {
    url: EXT.geolocation,
    extension: [{ url: 'latitude', valueDecimal: a.point.latitude }, { url: 'longitude', valueDecimal: a.point.longitude }],
  };
}

/**
 * An address as lines after the French postal norm (place complement, street, lieu-dit), the
 * street's parts also in `_line` as in the live API. The street line is the feed's ligneQuatre,
 * else built from its parts (the street type as its code, as the live API shows it). The town is
 * ligneAcheminement, which may also hold the postal code (`75015 PARIS`).
 */
function addressOf(a: FinessAddress): Json | undefined {
  const number = HOUSE_NUMBER.test(a.number) ? a.number : '';
  const street = a.streetLine || [number, a.numberSuffix, a.streetType, a.street].filter(Boolean).join(' ');
  const delivery = DELIVERY.exec(a.delivery);
  const city = delivery ? delivery[2] : a.delivery;
  const postalCode = a.postalCode || delivery?.[1] || '';
  const lines: [text: string, street: boolean][] = [[a.placeComplement, false], [street, true], [a.locality, false]];
  const present = lines.filter(([t]) => t !== '');
  const extension = [
    a.commune && { url: EXT.inseeCode, valueCoding: { system: COMMUNE_SYSTEM, code: a.commune } },
    geolocation(a),
  ].filter(Boolean);
  const address: Json = {};
  if (extension.length) address.extension = extension;
  if (present.length) address.line = present.map(([t]) => t);
  const line = streetParts(present, street, number, a.streetType, a.street);
  if (line) address._line = line;
  if (city) address.city = city;
  if (postalCode) address.postalCode = postalCode;
  return Object.keys(address).length ? address : undefined;
}

/** name (the long name, else the short one), alias (the short one when it differs). */
function nameOf(resource: Json, long: string, short: string): void {
  const name = long || short;
  if (name) resource.name = name;
  if (short && short !== name) resource.alias = [short];
}

/** name, alias, telecom, address. */
function describe(resource: Json, long: string, short: string, telecom: FinessTelecom, address: FinessAddress | undefined): void {
  nameOf(resource, long, short);
  const t = telecomOf(telecom);
  if (t.length) resource.telecom = t;
  const a = address && addressOf(address);
  if (a) resource.address = [a];
}

// ---- Organizations -------------------------------------------------------------------------------

/** A pharmacy licence as the directory writes it (`75#001234`) or its bare number. */
const LICENCE = /^((\d{2,3}|2[AB])#)?\d{1,6}$/;

function establishmentExtensions(d: EstablishmentRecord['data']): Json[] {
  const period = periodExtension(d.opened, d.closed);
  const licence = d.category === PHARMACY_CATEGORY && LICENCE.test(d.externalRef) ? { url: EXT.pharmacyLicence, valueString: d.externalRef } : undefined;
  return [period, licence].filter((e) => e !== undefined);
}

/** The Organization of an establishment (a geographical entity), part of its legal entity. */
export function establishmentOf(rec: EstablishmentRecord, today = todayUtc()): Json {
  const d = rec.data;
  const identifier = identifiersOf(rec);
  const type = [typeElement('organizationType', 'fr-core-cs-v2-3307', 'GEOGRAPHICAL-ENTITY')];
  if (d.category) type.push(typeElement(null, 'TRE_R66-CategorieEtablissement', d.category));
  if (d.espic) type.push(typeElement('sphParticipation', 'TRE_R73-ESPIC', d.espic));
  const resource: Json = { resourceType: 'Organization', id: establishmentId(rec.finess), meta: metaOf('Organization'), language: 'fr' };
  const extension = establishmentExtensions(d);
  if (extension.length) resource.extension = extension;
  Object.assign(resource, { identifier, active: isActive(d.state, d.closed, today), type });
  describe(resource, d.name, d.shortName, d.telecom, d.address);
  resource.partOf = { reference: `Organization/${legalEntityId(rec.legal)}` };
  return resource;
}

/**
 * The Location of an establishment that has a WGS84 point, undefined without one: the place of its
 * Organization (same id, same identifiers, names and address), `inactive` when the establishment is
 * closed. A point of known BAN precision says it in the position-precision extension (`commune`:
 * only the commune's centre).
 */
export function locationOf(rec: EstablishmentRecord, today = todayUtc()): Json | undefined {
  const d = rec.data;
  const point = d.address?.point;
  if (!hasLocation(rec) || !d.address || !point) return undefined;
  const id = establishmentId(rec.finess);
  const resource: Json = {
    resourceType: 'Location', id, meta: metaOf('Location'), language: 'fr',
    identifier: finessIdentifiers(rec.finess, 'FINEG'), status: isActive(d.state, d.closed, today) ? 'active' : 'inactive',
  };
  nameOf(resource, d.name, d.shortName);
  resource.mode = 'instance';
  resource.address = addressOf(d.address);
  const position: Json = { longitude: point.longitude, latitude: point.latitude };
  if (point.precision) position.extension = [{ url: EXT.positionPrecision, valueCode: point.precision }];
  resource.position = position;
  resource.managingOrganization = { reference: `Organization/${id}` };
  return resource;
}

/** The Organization of a legal entity. */
export function legalEntityOf(rec: LegalEntityRecord, today = todayUtc()): Json {
  const d = rec.data;
  const identifier = identifiersOf(rec);
  const type = [typeElement('organizationType', 'fr-core-cs-v2-3307', 'LEGAL-ENTITY')];
  if (d.legalStatus) type.push(typeElement('statutJuridiqueINSEE', 'TRE_R72-FinessStatutJuridique', d.legalStatus));
  if (d.ape) type.push(typeElement('activiteINSEE', 'TRE_R75-InseeNAFrev2Niveau5', d.ape));
  const resource: Json = { resourceType: 'Organization', id: legalEntityId(rec.finess), meta: metaOf('Organization'), language: 'fr' };
  const period = periodExtension(d.created, d.closed);
  if (period) resource.extension = [period];
  Object.assign(resource, { identifier, active: isActive(d.state, d.closed, today), type });
  describe(resource, d.name, d.shortName, d.telecom, d.address);
  return resource;
}
