import { createHash } from 'node:crypto';
import { coding as tableCoding } from '../vocabulary/codes.ts';
import { dataTrace, EXT, PROFILES, type ProfiledType } from '../vocabulary/extensions.ts';
import { establishmentId, isFiness } from '../vocabulary/formats/finess.ts';
import { COMMUNE_SYSTEM, nosUrl, SOURCE, SYSTEM, URL } from '../vocabulary/systems.ts';
import type { ActivityRecord, DiplomaRecord, OpenDataRecord, SavoirFaireRecord } from './read.ts';

/**
 * The open-data lines as FHIR resources shaped like the live API (DP profiles, meta.source, the
 * data-trace extension with information system RPPS). Pure: the same lines give the same JSON.
 * Resources are active; meta.versionId and meta.lastUpdated are the write path's.
 *
 * Tolerated: empty optional columns (left out of the resource), a `Numéro Voie` that is not a
 * number (left out), an empty `Libellé commune` when `Bureau cedex` reads `<5 digits> <CITY>` (city
 * and postal code taken from it), foreign addresses (bureau cedex kept as an address line), codes
 * without a known code system (a coding without system). Rejected (MapError): what would make an
 * id or identifier wrong — see practitionerId and organizationId.
 */

/** A line whose values cannot be mapped: the reader's `where` and this message make `file:line: reason`. */
export class MapError extends Error {
  override name = 'MapError';
}

export interface Coding {
  system?: string;
  code: string;
  display?: string;
}
type Json = Record<string, unknown>;

/** The lines of one person, grouped by practitionerId. */
export interface Person {
  activities: readonly ActivityRecord[];
  savoirFaire: readonly SavoirFaireRecord[];
  diplomas: readonly DiplomaRecord[];
}

const ID = /^[A-Za-z0-9.-]{1,64}$/;
const ID_TYPE = { '0': 'ADELI', '8': 'RPPS' } as const;

export const NOS = {
  profession: nosUrl('TRE_G15-ProfessionSante'),
  category: nosUrl('TRE_R09-CategorieProfessionnelle'),
  savoirFaireType: nosUrl('TRE_R04-TypeSavoirFaire'),
  mode: nosUrl('TRE_R23-ModeExercice'),
  fonction: nosUrl('TRE_R21-Fonction'),
  genre: nosUrl('TRE_R22-GenreActivite'),
  section: nosUrl('TRE_R06-SectionTableauCNOP'),
  sector: nosUrl('TRE_R02-SecteurActivite'),
  diplomaType: nosUrl('TRE_R14-TypeDiplome'),
  authorizationType: nosUrl('TRE_R17-TypeAutorisation'),
  authorizationField: nosUrl('TRE_R18-DisciplineAutorisation'),
} as const;

/** The terminology of a savoir-faire by its type (TRE_R04), after the ANS profiles' slices. */
const SAVOIR_FAIRE_SYSTEMS: Record<string, string> = {
  S: nosUrl('TRE_R38-SpecialiteOrdinale'),
  C: nosUrl('TRE_R39-Competence'),
  CEX: nosUrl('TRE_R40-CompetenceExclusive'),
  OP: nosUrl('TRE_G13-OrientationParticuliere'),
  CAPA: nosUrl('TRE_R43-CapaciteSavoirFaire'),
  PAC: nosUrl('TRE_R44-QualificationPAC'),
  DNQ: nosUrl('TRE_R42-DESCnonQualifiant'),
  DEC: nosUrl('TRE_R97-DroitExerciceCompl'),
};

/** The terminology of a diploma by its type (TRE_R14): only the one the ANS examples confirm. */
const DIPLOMA_SYSTEMS: Record<string, string> = { DE: URL.r48 };

// ---- ids -----------------------------------------------------------------------------------------

/**
 * The Practitioner id: the IDNPS itself, once checked to be "Type d'identifiant PP" (0 ADELI,
 * 8 RPPS) followed by "Identifiant PP". Stable across imports, readable, and a valid FHIR id.
 */
export function practitionerId(record: OpenDataRecord): string {
  const { typeIdentifiant: type, identifiantPP: pp, idnps } = record.fields;
  if (idnps === '') throw new MapError('no Identification nationale PP');
  if (type !== '0' && type !== '8') throw new MapError(`Type d'identifiant PP "${type}" is neither 0 (ADELI) nor 8 (RPPS)`);
  if (idnps !== type + pp) throw new MapError(`Identification nationale PP "${idnps}" is not Type d'identifiant PP + Identifiant PP ("${type}" + "${pp}")`);
  if (!ID.test(idnps)) throw new MapError(`Identification nationale PP "${idnps}" has characters other than letters, digits, "-" and "."`);
  return idnps;
}

/**
 * The Organization id; undefined for a line without structure. A structure with a FINESS site number
 * is `F` + that number, the id the FINESS feed gives the establishment (src/vocabulary/formats/finess.ts):
 * one structure, one Organization, whichever source comes first. Any other, its technical id.
 */
export function organizationId(activity: ActivityRecord): string | undefined {
  const id = activity.fields.structureId;
  if (id === '') return undefined;
  if (!ID.test(id)) throw new MapError(`Identifiant technique de la structure "${id}" is not 1–64 letters, digits, "-" or "."`);
  return isFiness(activity.fields.finessSite) ? establishmentId(activity.fields.finessSite.trim()) : id;
}

/**
 * What makes an activity itself: the person, their exercice and this situation. Not the structure's
 * name, address or telecoms (the Organization's), nor labels (a relabelled code is the same role).
 */
const ROLE_KEY = [
  'idnps', 'codeProfession', 'codeCategorie', 'codeTypeSavoirFaire', 'codeSavoirFaire', 'codeModeExercice', 'structureId',
  'codeFonction', 'codeGenreActivite', 'codeSectionPharmacien', 'autoriteEnregistrement',
] as const;

/** The PractitionerRole id: `<IDNPS>-<64 bits of SHA-256 of ROLE_KEY>`, readable by person and stable. */
export function roleId(activity: ActivityRecord): string {
  const person = practitionerId(activity);
  const key = ROLE_KEY.map((k) => activity.fields[k]).join('|');
  return `${person}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** Throws the MapError of a line that cannot be imported (what the ids need). */
export function assertMappable(record: OpenDataRecord): void {
  practitionerId(record);
  if (record.kind === 'activity') organizationId(record);
}

// ---- shared shapes --------------------------------------------------------------------------------

function coding(system: string | undefined, code: string, label: string): Coding {
  const c: Coding = system ? { system, code } : { code };
  if (label) c.display = label;
  return c;
}

/** A CodeableConcept of the non-empty codings, or undefined when none has a code. */
function concept(...codings: (Coding | undefined)[]): { coding: Coding[] } | undefined {
  const present = codings.filter((c): c is Coding => c !== undefined && c.code !== '');
  return present.length ? { coding: present } : undefined;
}

/**
 * "Autorité d'enregistrement" holds three `/`-separated parts (`CNOM/CNOM/ARS`). Read as the
 * authorities of the person, of the activity and of the structure, in that order; `Variable` is
 * no authority. The third varies with the activity, so no Organization carries it (structurePart).
 */
function authorities(value: string): [string | null, string | null, string | null] {
  const parts = value.split('/').map((p) => p.trim());
  const at = (i: number) => (parts[i] && parts[i].toLowerCase() !== 'variable' ? parts[i] : null);
  return [at(0), at(1), at(2)];
}

function metaOf(type: ProfiledType, authority: string | null): Json {
  return { source: SOURCE, profile: [...PROFILES[type]], extension: [dataTrace('RPPS', authority)] };
}

function officialIdentifier(typeCode: string, system: string, value: string): Json {
  return { use: 'official', type: { coding: [{ system: URL.idType, code: typeCode }] }, system, value };
}

/** Distinct values by a key, first occurrence first. */
function distinct<T>(values: Iterable<T>, key: (v: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const v of values) if (!seen.has(key(v))) seen.set(key(v), v);
  return [...seen.values()];
}

const conceptKey = (c: { coding: Coding[] }) => c.coding.map((x) => `${x.system ?? ''}|${x.code}`).join(' ');

// ---- Practitioner ----------------------------------------------------------------------------------

type PersonFields = OpenDataRecord['fields'];

function savoirFaireConcept(f: { codeTypeSavoirFaire: string; libelleTypeSavoirFaire: string; codeSavoirFaire: string; libelleSavoirFaire: string }) {
  if (f.codeSavoirFaire === '') return undefined;
  return concept(
    coding(SAVOIR_FAIRE_SYSTEMS[f.codeTypeSavoirFaire], f.codeSavoirFaire, f.libelleSavoirFaire),
    coding(NOS.savoirFaireType, f.codeTypeSavoirFaire, f.libelleTypeSavoirFaire),
  );
}

function professionConcept(f: { codeProfession: string; libelleProfession: string; codeCategorie: string; libelleCategorie: string }) {
  if (f.codeProfession === '') return undefined;
  return concept(coding(NOS.profession, f.codeProfession, f.libelleProfession), coding(NOS.category, f.codeCategorie, f.libelleCategorie));
}

function diplomaConcepts(f: DiplomaRecord['fields']) {
  const diploma = f.codeDiplome === '' ? undefined
    : concept(coding(DIPLOMA_SYSTEMS[f.codeTypeDiplome], f.codeDiplome, f.libelleDiplome), coding(NOS.diplomaType, f.codeTypeDiplome, f.libelleTypeDiplome));
  const authorization = concept(
    coding(NOS.authorizationType, f.codeTypeAutorisation, f.libelleTypeAutorisation),
    coding(NOS.authorizationField, f.codeDisciplineAutorisation, f.libelleDisciplineAutorisation),
  );
  return [diploma, authorization];
}

function nameOf(f: PersonFields): Json | undefined {
  const family = f.nomExercice;
  const given = f.prenomExercice;
  if (!family && !given) return undefined;
  const name: Json = { text: [family, given].filter(Boolean).join(' ') };
  if (family) name.family = family;
  if (given) name.given = [given];
  if ('codeCivilite' in f && f.codeCivilite) name.prefix = [f.codeCivilite];
  if ('codeCiviliteExercice' in f && f.codeCiviliteExercice) name.suffix = [f.codeCiviliteExercice];
  return name;
}

/**
 * The Practitioner of one person's lines. Identity (names, civilités, authority) comes from the
 * first activity line, else the first SavoirFaire or Dipl_AutExerc line: the extracts repeat the
 * same identity on every line of a person. Qualifications are the union, without repeats, of the
 * professions (with category), the savoir-faire of both files, the diplomas and the authorisations.
 */
export function practitionerOf(person: Person): Json {
  const first = person.activities[0] ?? person.savoirFaire[0] ?? person.diplomas[0];
  if (first === undefined) throw new Error('practitionerOf: a person without any line');
  const id = practitionerId(first);
  const f = first.fields;
  const qualifications = distinct(
    [
      ...[...person.activities, ...person.savoirFaire].map((r) => professionConcept(r.fields)),
      ...[...person.activities, ...person.savoirFaire].map((r) => savoirFaireConcept(r.fields)),
      ...person.diplomas.flatMap((r) => diplomaConcepts(r.fields)),
    ].filter((c) => c !== undefined),
    conceptKey,
  );
  const authority = person.activities[0] ? authorities(person.activities[0].fields.autoriteEnregistrement)[0] : null;
  const resource: Json = {
    resourceType: 'Practitioner',
    id,
    meta: metaOf('Practitioner', authority),
    language: 'fr',
    identifier: [
      officialIdentifier('IDNPS', SYSTEM.idnps, id),
      f.typeIdentifiant === '8' ? officialIdentifier('RPPS', SYSTEM.rpps, f.identifiantPP) : officialIdentifier('ADELI', SYSTEM.adeli, f.identifiantPP),
    ],
    active: true,
  };
  const name = nameOf(f);
  if (name) resource.name = [name];
  if (qualifications.length) resource.qualification = qualifications.map((code) => ({ code }));
  return resource;
}

// ---- Organization ----------------------------------------------------------------------------------

/** The columns of an activity line that describe its structure, the rest being the person's or the activity's. */
const STRUCTURE_COLUMNS = [
  'structureId', 'ancienIdentifiantStructure', 'finessSite', 'siren', 'siret', 'raisonSociale', 'enseigne',
  'codeSecteurActivite', 'libelleSecteurActivite', 'complementDestinataire', 'complementPointGeographique', 'numeroVoie',
  'indiceRepetitionVoie', 'codeTypeVoie', 'libelleTypeVoie', 'libelleVoie', 'mentionDistribution', 'bureauCedex', 'codePostal',
  'codeCommune', 'libelleCommune', 'libelleDepartement', 'libellePays', 'telephone', 'telephone2', 'telecopie', 'email',
] as const;

/**
 * What an Organization is built from: the structure's own columns. Not "Autorité d'enregistrement",
 * whose parts differ between the activities of one structure (CNOM for its doctor, ARS for its
 * nurse): a structure's content must not depend on which of its practitioners' lines is read.
 */
export type StructurePart = Pick<ActivityRecord['fields'], (typeof STRUCTURE_COLUMNS)[number]>;

/**
 * The identifier columns of a structure part and the identifier type left out of an entity's:
 * what mailboxes name an Organization by (src/opendata/snapshot.ts buildOrgKeys). A SIREN names a
 * company, shared by its establishments.
 */
export const KEY_COLUMNS = ['structureId', 'ancienIdentifiantStructure', 'finessSite', 'siret'] as const;
export const NOT_A_KEY = 'SIREN';

/**
 * The structure part of an activity line. organizationOf reads nothing else, so that two lines with
 * the same structure part give the same Organization (the import's digests rely on it).
 */
export function structurePart(activity: ActivityRecord): StructurePart {
  const part = {} as StructurePart;
  for (const key of STRUCTURE_COLUMNS) part[key] = activity.fields[key];
  return part;
}

const HOUSE_NUMBER = /^\d+[A-Za-z]?$/;
const BUREAU = /^(\d{5})\s+(.+)$/;

/**
 * The structure's address as lines after the French postal norm (recipient complement, place
 * complement, street, distribution mention), the street's parts also in `_line` as in the live API.
 */
function addressOf(f: StructurePart): Json | undefined {
  const number = HOUSE_NUMBER.test(f.numeroVoie) ? f.numeroVoie : '';
  const street = [number, f.indiceRepetitionVoie, f.libelleTypeVoie, f.libelleVoie].filter(Boolean).join(' ');
  const bureau = BUREAU.exec(f.bureauCedex);
  let city = f.libelleCommune;
  let postalCode = f.codePostal;
  if (!city && bureau) {
    city = bureau[2].replace(/\s+CEDEX(\s+\d+)?$/i, '');
    postalCode ||= bureau[1];
  }
  const lines: [text: string, street: boolean][] = [
    [f.complementDestinataire, false], [f.complementPointGeographique, false], [street, true], [f.mentionDistribution, false],
  ];
  // Abroad (or with an unreadable bureau cedex) the bureau cedex is the only place the town is.
  if (!city) lines.push([f.bureauCedex, false]);
  const present = lines.filter(([text]) => text !== '');
  const address: Json = {};
  if (f.codeCommune) address.extension = [{ url: EXT.inseeCode, valueCoding: coding(COMMUNE_SYSTEM, f.codeCommune, f.libelleCommune) }];
  if (present.length) address.line = present.map(([text]) => text);
  const line = streetParts(present, street, number, f.codeTypeVoie, f.libelleVoie);
  if (line) address._line = line;
  if (city) address.city = city;
  if (f.libelleDepartement) address.district = f.libelleDepartement;
  if (postalCode) address.postalCode = postalCode;
  if (f.libellePays) address.country = f.libellePays;
  return Object.keys(address).length ? address : undefined;
}

/** The ADXP parts of the street line, in `_line` beside `line` (null for the other lines), as in the live API. */
export function streetParts(lines: readonly [string, boolean][], street: string, number: string, type: string, name: string): (Json | null)[] | undefined {
  const parts = [
    number && { url: EXT.houseNumber, valueString: number },
    type && { url: EXT.streetNameType, valueString: type },
    name && { url: EXT.streetNameBase, valueString: name },
  ].filter(Boolean);
  return street && parts.length ? lines.map(([, isStreet]) => (isStreet ? { extension: parts } : null)) : undefined;
}

function telecomOf(f: StructurePart): Json[] {
  const out: Json[] = [];
  if (f.telephone) out.push({ system: 'phone', value: f.telephone, rank: 1 });
  if (f.telephone2) out.push({ system: 'phone', value: f.telephone2, rank: 2 });
  if (f.telecopie) out.push({ system: 'fax', value: f.telecopie });
  if (f.email) out.push({ system: 'email', value: f.email });
  return out;
}

function organizationType(slice: string, c: Coding): Json {
  return { extension: [{ url: EXT.organizationTypes, valueCode: slice }], coding: [c] };
}

/**
 * The Organization (a geographical entity) of an activity line, or undefined for a line without
 * structure. Its technical id is also its RPPS-rang identifier (the live API's `F<FINESS>…` values
 * have that form) and "Ancien identifiant de la structure" its IDNST (`1`+FINESS, `3`+SIRET…).
 */
export function organizationOf(activity: ActivityRecord): Json | undefined {
  const id = organizationId(activity);
  if (id === undefined) return undefined;
  const f = structurePart(activity);
  const identifier = [officialIdentifier('RPPSRG', SYSTEM.rppsRang, id)];
  if (f.ancienIdentifiantStructure) identifier.push(officialIdentifier('IDNST', SYSTEM.idnst, f.ancienIdentifiantStructure));
  if (f.finessSite) identifier.push(officialIdentifier('FINEG', SYSTEM.finess, f.finessSite));
  if (f.siren) identifier.push(officialIdentifier('SIREN', SYSTEM.sirene, f.siren));
  if (f.siret) identifier.push(officialIdentifier('SIRET', SYSTEM.sirene, f.siret));
  const type = [organizationType('organizationType', tableCoding('fr-core-cs-v2-3307', 'GEOGRAPHICAL-ENTITY', true))];
  if (f.codeSecteurActivite) type.push(organizationType('secteurActiviteRASS', coding(NOS.sector, f.codeSecteurActivite, f.libelleSecteurActivite)));
  const resource: Json = {
    resourceType: 'Organization',
    id,
    meta: metaOf('Organization', null),
    language: 'fr',
    identifier,
    active: true,
    type,
  };
  if (f.raisonSociale) resource.name = f.raisonSociale;
  if (f.enseigne) resource.alias = [f.enseigne];
  const telecom = telecomOf(f);
  if (telecom.length) resource.telecom = telecom;
  const address = addressOf(f);
  if (address) resource.address = [address];
  return resource;
}

// ---- PractitionerRole --------------------------------------------------------------------------------

/** The PractitionerRole of an activity line: the person, the structure if any, and the activity's codes. */
export function roleOf(activity: ActivityRecord): Json {
  const f = activity.fields;
  const organization = organizationId(activity);
  const codes = [
    concept(coding(NOS.profession, f.codeProfession, f.libelleProfession)),
    concept(coding(NOS.mode, f.codeModeExercice, f.libelleModeExercice)),
    concept(coding(NOS.fonction, f.codeFonction, f.libelleFonction)),
    concept(coding(NOS.genre, f.codeGenreActivite, f.libelleGenreActivite)),
    concept(coding(NOS.section, f.codeSectionPharmacien, f.libelleSectionPharmacien)),
  ].filter((c) => c !== undefined);
  const resource: Json = {
    resourceType: 'PractitionerRole',
    id: roleId(activity),
    meta: metaOf('PractitionerRole', authorities(f.autoriteEnregistrement)[1]),
    language: 'fr',
    active: true,
    practitioner: { reference: `Practitioner/${practitionerId(activity)}` },
  };
  if (organization) resource.organization = { reference: `Organization/${organization}` };
  if (codes.length) resource.code = codes;
  return resource;
}

// ---- labels ---------------------------------------------------------------------------------------

export interface Label {
  /** null where the code's terminology is not known (see SAVOIR_FAIRE_SYSTEMS, DIPLOMA_SYSTEMS). */
  system: string | null;
  code: string;
  label: string;
}

/** The (system, code, label) triples a line carries, for a search of codes by their labels. */
export function labelsOf(record: OpenDataRecord): Label[] {
  const f = record.fields as Partial<Record<string, string>>;
  const pairs: [string | undefined, string, string][] = [
    [NOS.profession, 'codeProfession', 'libelleProfession'],
    [NOS.category, 'codeCategorie', 'libelleCategorie'],
    [NOS.savoirFaireType, 'codeTypeSavoirFaire', 'libelleTypeSavoirFaire'],
    [SAVOIR_FAIRE_SYSTEMS[f.codeTypeSavoirFaire ?? ''], 'codeSavoirFaire', 'libelleSavoirFaire'],
    [NOS.mode, 'codeModeExercice', 'libelleModeExercice'],
    [NOS.fonction, 'codeFonction', 'libelleFonction'],
    [NOS.genre, 'codeGenreActivite', 'libelleGenreActivite'],
    [NOS.section, 'codeSectionPharmacien', 'libelleSectionPharmacien'],
    [NOS.sector, 'codeSecteurActivite', 'libelleSecteurActivite'],
    [NOS.diplomaType, 'codeTypeDiplome', 'libelleTypeDiplome'],
    [DIPLOMA_SYSTEMS[f.codeTypeDiplome ?? ''], 'codeDiplome', 'libelleDiplome'],
    [NOS.authorizationType, 'codeTypeAutorisation', 'libelleTypeAutorisation'],
    [NOS.authorizationField, 'codeDisciplineAutorisation', 'libelleDisciplineAutorisation'],
  ];
  return pairs.flatMap(([system, codeKey, labelKey]) => {
    const code = f[codeKey];
    const label = f[labelKey];
    return code && label ? [{ system: system ?? null, code, label }] : [];
  });
}
