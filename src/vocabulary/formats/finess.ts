/**
 * The catalogue of the FINESS+ JSON feed ("FINESS - Structures", finess-structures-*.json.gz): the
 * key spellings of the real files (which differ from the published schema), the codes the reader
 * relies on, the FINESS number check and the ids of the resources made from it.
 *
 * One legal entity (EJ) a `pmej[]` item, its establishments (ET) in `ege[]`. An empty value is an
 * absent key or an explicit null; strings may be padded with spaces.
 */

/** The top-level keys: `pmej` holds the data; `gco`/`gcc` (groupings) are not read. */
export const TOP = {
  schemaVersion: 'schemaVersion',
  generatedAt: 'generatedAt',
  legalEntities: 'pmej',
  gco: 'gco',
  gcc: 'gcc',
} as const;

/** The keys a top-level object of the feed may start with: what recognises a file by content. */
export const FEED_FIRST_KEYS: readonly string[] = [TOP.schemaVersion, TOP.generatedAt, TOP.legalEntities];

/** A legal entity (`pmej[i]`). Note the upper-case `PMEJ`. */
export const PMEJ = {
  general: 'informationsGeneralesPMEJ',
  addresses: 'adresse',
  contacts: 'contact',
  establishments: 'ege',
  state: 'etatObjet',
  lastUpdate: 'dateDerniereMaj',
} as const;

/** In `informationsGeneralesPMEJ`. */
export const PMEJ_GENERAL = {
  finess: 'numFinessPm',
  name: 'denominationPm',
  longName: 'denominationLonguePmSmsse',
  siren: 'siren',
  ape: 'codeApe',
  legalStatus: 'statutJuridique',
  created: 'dateCreation',
  closed: 'dateFermeture',
} as const;

/** An establishment (`pmej[i].ege[j]`). Note `categorieentite…` and `modefixationtarifaire` as spelled. */
export const EGE = {
  general: 'informationsGeneralesEGE',
  category: 'categorieentiteGeographiqueExercice',
  tariffMode: 'modefixationtarifaire',
  addresses: 'adresse',
  contacts: 'contact',
  state: 'etatObjet',
  lastUpdate: 'dateDerniereMaj',
} as const;

/** In `informationsGeneralesEGE`. `espic` is a list of 0 or 1 code. */
export const EGE_GENERAL = {
  finess: 'numFinessEge',
  shortName: 'nomEgeCourt',
  longName: 'nomEgeLong',
  nameComplement: 'complementDenominationEg',
  siret: 'siret',
  espic: 'espic',
  externalRef: 'numeroReferenceExterne',
  opened: 'dateOuverture',
  closed: 'dateFermeture',
} as const;

/** An item of `adresse[]`. */
export const ADDRESS = {
  usage: 'usageAdresse',
  number: 'numeroVoie',
  streetType: 'typeVoie',
  street: 'libelleVoie',
  streetLine: 'ligneQuatre',
  streetComplement: 'complementVoie',
  placeComplement: 'complementPointGeographique',
  locality: 'lieuDit',
  commune: 'cogCommune',
  delivery: 'ligneAcheminement',
  postalCode: 'codePostal',
  coordinates: 'coordonneesGeographique',
} as const;

/** In `coordonneesGeographique`: six strings; which pair is WGS84 varies by record. */
export const COORDINATES = {
  x: 'coordonneeX',
  y: 'coordonneeY',
  latitude: 'directionLatitude',
  longitude: 'directionLongitude',
  banKey: 'cleInInteropBAN',
  banScore: 'scoreBAN',
} as const;

/** An item of `contact[]`: the numbers are in its `telecom` object. */
export const CONTACT = {
  telecom: 'telecom',
  phone: 'telephone',
  fax: 'telecopie',
  email: 'courriel',
} as const;

/** usageAdresse (TRE_R377): the establishment's geographic address; `04`, `06` are secondary. */
export const GEOGRAPHIC_ADDRESS = '03';
/** usageAdresse of a legal entity's own address. */
export const LEGAL_ADDRESS = '02';
/** etatObjet of a record in service (`I`: inactive). */
export const ACTIVE_STATE = 'A';
/** TRE_R66 category of a pharmacy (pharmacie d'officine): its numeroReferenceExterne may be its licence. */
export const PHARMACY_CATEGORY = '620';

const FINESS = /^(\d{2}|2[AB])\d{7}$/;

/** Whether a (trimmed) value is a FINESS number: a department (2A/2B for Corsica) and 7 digits. */
export function isFiness(value: string): boolean {
  return FINESS.test(value.trim());
}

/**
 * The Organization id of an establishment. Decided: an RPPS structure's id for a FINESS site is
 * also `F`+FINESS, so both sources meet on one Organization.
 */
export function establishmentId(finess: string): string {
  return `F${finess}`;
}

/** The Organization id of a legal entity. */
export function legalEntityId(finess: string): string {
  return `J${finess}`;
}
