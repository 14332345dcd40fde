// Organizations: FINESS legal entities (EJ) with their geographical entities (EG), RPPS-rang
// cabinets, and SIREN-only companies. Orgs are emitted group by group (an EJ, then its EGs), so
// every partOf points backwards in the file. While emitting, the generator records each org's
// id partition and "pool" (hospital, pharmacy, cabinet…) so roles, devices and services can pick
// a plausible owner by index later without keeping the resources. A geographical entity with a
// point is also a Location of the same id, given to the caller as its Organization is emitted.

import { EXT, type InformationSystem } from '../vocabulary/extensions.ts';
import { COMMUNE_SYSTEM, SYSTEM, type SystemKey } from '../vocabulary/systems.ts';
import { CITIES, phonePrefix, STREET_NAMES, STREET_TYPES, type City } from './places.ts';
import { Rng, Weighted } from './prng.ts';
import { codingJson, meta, mssTelecom, officialIdentifier, reference, str } from './fhir-common.ts';
import { finessNumber, ORG_PART, organizationId, rppsNumber, sirenNumber, siretNumber } from './ids.ts';
import { familyName, upperNoAccents } from './names.ts';
import { POOL, POOL_COUNT, type Pool } from './professions.ts';
import { dateWithin, isoDate, lastUpdated } from './time.ts';

// ---- Distributions (documented in docs/generator.md) --------------------------------------------

/** Relative weights of the kinds of group; each group emits one or more orgs. */
export const GROUP_WEIGHTS = {
  cabinet: 315,
  company: 35,
  pharmacy: 21,
  medicoSocial: 15,
  otherCare: 3,
  healthCentre: 2.5,
  privateClinic: 1.5,
  publicHospital: 1.4,
  espic: 0.7,
  laboratory: 0.6,
} as const;
type GroupKind = keyof typeof GROUP_WEIGHTS;
const GROUP_DIST = new Weighted(Object.entries(GROUP_WEIGHTS) as [GroupKind, number][]);

export const ORG_INACTIVE_SHARE = 0.03;
export const ORG_PERIOD_SHARE = 0.6;
export const ORG_ALIAS_SHARE = 0.12;
export const ORG_ACCENTED_NAME_SHARE = 0.5;
/** Active geographical FINESS entities with a point (and so a Location): ~75 % as in the feed; pharmacies, laboratories and EHPAD less. */
export const LOCATED_SHARE = { leastCovered: 0.65, other: 0.82 } as const;
/** Of the points, those only a commune's centre (the feed's 5-character BAN keys) and those of a street without number. */
export const POINT_PRECISION_SHARE = { commune: 0.002, street: 0.1 } as const;
/** Per-org stream of the points: drawing them leaves every other byte of the output as it was. */
const STREAM_POINT = 6;

const CITY_DIST = new Weighted(CITIES.map((c) => [c, c.weight] as const));
const STREET_TYPE_DIST = new Weighted(STREET_TYPES.map((t) => [t, t[2]] as const));

const SAINTS = [
  'SAINT-JOSEPH', 'SAINT-LOUIS', 'SAINTE-ANNE', 'SAINT-VINCENT-DE-PAUL', 'SAINT-ANTOINE', 'SAINTE-MARGUERITE',
  'SAINT-MARTIN', 'SAINT-JEAN', 'NOTRE-DAME', 'SAINT-FRANÇOIS', 'SAINTE-THÉRÈSE', 'SAINT-CAMILLE', 'SAINT-ROCH',
  'SAINT-JACQUES', 'SAINTE-CLAIRE', 'SAINT-GATIEN', 'SAINT-ÉLOI',
];
const PEOPLE = [
  'PASTEUR', 'MARIE CURIE', 'AMBROISE PARÉ', 'RENÉ LAENNEC', 'HENRI MONDOR', 'GEORGES POMPIDOU', 'BICHAT',
  'CHARLES NICOLLE', 'ÉDOUARD HERRIOT', 'JEAN MERMOZ', 'ANTOINE BÉCLÈRE', 'FERNAND WIDAL', 'LÉON BÉRARD',
  'SIMONE VEIL', 'PAUL BROUSSE', 'ALBERT SCHWEITZER', 'JULES VERNE', 'ÉMILE ROUX', "JEANNE D'ARC", 'FRANÇOIS RABELAIS',
];
const NATURE = [
  'LES LILAS', 'LES TILLEULS', 'LES CÈDRES', 'LES GLYCINES', 'LES HORTENSIAS', 'LES MIMOSAS', 'LA ROSERAIE',
  'LES ÉGLANTINES', 'LE CLOS FLEURI', 'LES CHÊNES', 'LES PINS', 'LES OLIVIERS', 'LES MARRONNIERS', 'LES SAULES',
  'LES BLEUETS', 'LES COQUELICOTS', "L'OASIS", 'LES QUATRE SAISONS', 'BEAUSOLEIL', 'BELLEVUE', 'MONTPLAISIR',
  'LE VAL FLEURI', 'LES TERRASSES', 'LA CHÂTAIGNERAIE', 'LES SOURCES', 'LE PARC', "LES JARDINS D'ÉDEN", "L'ÉTOILE",
  'LES AMANDIERS', 'LES VIGNES', 'LES TROIS RIVIÈRES', 'LES EAUX-VIVES', 'LE BOIS JOLI', "VAL D'OR",
];
const PLACES = [
  'DU CENTRE', 'DE LA GARE', 'DE LA MAIRIE', 'DU MARCHÉ', 'DES HALLES', 'DU PARC', 'DU PORT', "DE L'ÉGLISE",
  'DES ARCADES', 'DU LAC', 'DU CHÂTEAU', 'DE LA PLACE', 'DU PONT', 'DES ÉCOLES', 'DU STADE', 'DE LA POSTE',
  'DU MOULIN', 'DES TILLEULS', 'DES LILAS', 'DU VIEUX BOURG', 'SAINT-MICHEL', 'SAINT ANTOINE', 'PASTEUR',
  'VOLTAIRE', 'GAMBETTA', 'JEAN JAURÈS', 'DES ACACIAS', 'CENTRALE', 'PRINCIPALE', 'DES QUATRE CHEMINS',
];

// ---- Org specification (what a group decides before the FHIR shape is built) --------------------

type OrgSpec = {
  part: number;
  legal: boolean;
  name: string;
  alias: string | null;
  sector: string;
  category: string | null;
  statut: string | null;
  sph: string | null;
  naf: string | null;
  typeEtab: 'P' | 'S' | null;
  /** IDNST value and the business identifiers (in output order after IDNST). */
  idnst: string;
  finess: string | null;
  siren: string | null;
  siret: string | null;
  rppsRang: string | null;
  partOfGroupHead: boolean;
  city: City;
  pool: Pool;
  pharmacy: boolean;
  system: InformationSystem;
  authority: string | null;
  mssShare: number;
  faxShare: number;
  emailShare: number;
};

/** What later phases need to know about the organizations, by index. */
export type OrgIndex = {
  count: number;
  /** Id partition (ORG_PART) per org index: organizationId(i, part[i]). */
  part: Uint8Array;
  /** Org indexes per pool (POOL), in emission order. */
  pools: Int32Array[];
  /** 1 for an org with an active Location (same id): its roles refer to it. */
  located: Uint8Array;
};

/** JSON text of the Reference to organization i. */
export function orgRef(index: OrgIndex, i: number): string {
  return reference('Organization', organizationId(i, index.part[i]));
}

// ---- Helpers -----------------------------------------------------------------------------------

const ARS_BY_REGION: Record<string, string> = { '11': 'ARS-11', '84': 'ARS-84', '93': 'ARS-93' };

function upperCity(c: City): string {
  return c.name.toUpperCase();
}

/** "DE SAINT-ÉTIENNE", "DU MANS", "D'ANGERS", "DES SABLES-D'OLONNE", "DE LA ROCHELLE". */
function deCity(c: City): string {
  const n = c.name;
  if (n.startsWith('Le ')) return `DU ${n.slice(3).toUpperCase()}`;
  if (n.startsWith('Les ')) return `DES ${n.slice(4).toUpperCase()}`;
  if (n.startsWith('La ')) return `DE LA ${n.slice(3).toUpperCase()}`;
  if (n.startsWith("L'")) return `DE ${n.toUpperCase()}`;
  if (/^[AEIOUYÉÈÂÎÔH]/i.test(n)) return `D'${n.toUpperCase()}`;
  return `DE ${n.toUpperCase()}`;
}

function upperFamily(rng: Rng): string {
  return familyName(rng).toUpperCase();
}

function pickWeighted<T>(rng: Rng, entries: ReadonlyArray<readonly [T, number]>): T {
  let total = 0;
  for (const [, w] of entries) total += w;
  let x = rng.next() * total;
  for (const [v, w] of entries) {
    x -= w;
    if (x < 0) return v;
  }
  return entries[entries.length - 1][0];
}

function shortHospital(c: City): string {
  return `CH ${upperCity(c)}`;
}

// ---- Identifier serials (unique per kind, derived from running counters) -------------------------

type Counters = { finess: Map<string, number>; siren: number; cabinet: number };

function rppsRangOf(c: Counters, rng: Rng): string {
  // RPPS of a (deterministically chosen) practitioner + a 3-digit rang. Unique because the serial is.
  return rppsNumber(c.cabinet++) + String(rng.range(1, 3)).padStart(3, '0');
}

/** FINESS serials are counted per department, so each department has 10^6 numbers available. */
function finessOf(c: Counters, city: City): string {
  const dept = city.dept.slice(0, 2);
  const k = c.finess.get(dept) ?? 0;
  c.finess.set(dept, k + 1);
  return finessNumber(dept, k);
}

function sirenOf(c: Counters, first: number): string {
  return sirenNumber(first, c.siren++);
}

function ddmmyyyy(ms: number): string {
  const d = isoDate(ms);
  return `${d.slice(8, 10)}${d.slice(5, 7)}${d.slice(0, 4)}`;
}

// ---- Group builders -----------------------------------------------------------------------------

function base(city: City, partial: Partial<OrgSpec> & Pick<OrgSpec, 'name' | 'sector' | 'idnst' | 'pool'>): OrgSpec {
  return {
    part: ORG_PART.finess,
    legal: false,
    alias: null,
    category: null,
    statut: null,
    sph: null,
    naf: null,
    typeEtab: null,
    finess: null,
    siren: null,
    siret: null,
    rppsRang: null,
    partOfGroupHead: false,
    city,
    pharmacy: false,
    system: 'FINESS',
    authority: null,
    mssShare: 0.2,
    faxShare: 0.35,
    emailShare: 0.2,
    ...partial,
  };
}

function legalEntity(
  rng: Rng, c: Counters, city: City, name: string, sector: string, statut: string, sph: string | null,
  naf: string | null, sirenFirst: number,
): OrgSpec {
  const finess = finessOf(c, city);
  return base(city, {
    legal: true, name, sector, statut, sph, naf: rng.chance(0.7) ? naf : null, finess,
    siren: rng.chance(0.92) ? sirenOf(c, sirenFirst) : null,
    idnst: `1${finess}`, pool: POOL.legalEntity, mssShare: 0.12,
    authority: rng.chance(0.6) ? (ARS_BY_REGION[city.region] ?? null) : null,
  });
}

function geographicalEntity(
  rng: Rng, c: Counters, ej: OrgSpec, city: City, site: number, name: string, sector: string, category: string | null,
  pool: Pool, naf: string | null,
): OrgSpec {
  const finess = finessOf(c, city);
  let rppsRang: string | null = null;
  if (rng.chance(0.3)) rppsRang = rng.chance(0.6) ? `F${finess}` : `F${finess}${ddmmyyyy(dateWithin(rng, 25))}`;
  return base(city, {
    name, sector, category, pool, finess, rppsRang,
    statut: rng.chance(0.7) ? ej.statut : null,
    sph: ej.sph !== null && rng.chance(0.8) ? ej.sph : null,
    naf: rng.chance(0.3) ? naf : null,
    typeEtab: rng.chance(0.5) ? (site === 0 ? 'P' : 'S') : null,
    siret: ej.siren !== null && rng.chance(0.85) ? siretNumber(ej.siren, site) : null,
    idnst: `1${finess}`, partOfGroupHead: true, mssShare: 0.25,
    authority: rng.chance(0.6) ? (ARS_BY_REGION[city.region] ?? null) : null,
  });
}

function siteCity(rng: Rng, city: City): City {
  return rng.chance(0.6) ? city : CITY_DIST.sample(rng);
}

function publicHospital(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const chu = city.weight >= 14 && rng.chance(0.5);
  let name: string;
  if (chu) name = pickWeighted(rng, [[`CENTRE HOSPITALIER UNIVERSITAIRE ${deCity(city)}`, 3], [`CHU ${deCity(city)}`, 3], [`CHRU ${upperCity(city)}`, 1]]);
  else {
    const other = CITY_DIST.sample(rng);
    name = pickWeighted(rng, [
      [`CENTRE HOSPITALIER ${deCity(city)}`, 6], [`CH ${upperCity(city)}`, 2],
      [`CENTRE HOSPITALIER INTERCOMMUNAL ${upperCity(city)}-${upperCity(other)}`, 1],
      [`HOPITAL LOCAL ${deCity(city)}`, 1], [`GROUPE HOSPITALIER ${rng.pick(PEOPLE)}`, 1],
    ]);
  }
  const statut = chu ? '15' : pickWeighted(rng, [['13', 40], ['14', 25], ['11', 15], ['10', 2], ['29', 8], ['15', 2]] as const);
  const ej = legalEntity(rng, c, city, name, 'SA01', statut, '1', '86.10Z', 2);
  const out = [ej];
  const sites = chu ? rng.range(3, 9) : rng.range(1, 4);
  for (let s = 0; s < sites; s++) {
    const sc = s === 0 ? city : siteCity(rng, city);
    const kind = s === 0 ? 'main' : pickWeighted(rng, [['site', 60], ['ehpad', 15], ['cmp', 10], ['usld', 5], ['had', 5], ['rehab', 5]] as const);
    const short = chu ? `CHU ${upperCity(city)}` : shortHospital(city);
    switch (kind) {
      case 'main':
        out.push(geographicalEntity(rng, c, ej, sc, s, chu ? `HOPITAL ${rng.pick(PEOPLE)}` : name, 'SA01', chu ? '101' : '106', POOL.hospital, '86.10Z'));
        break;
      case 'site':
        out.push(geographicalEntity(rng, c, ej, sc, s, rng.chance(0.5) ? `HOPITAL ${rng.pick([...PEOPLE, ...SAINTS])}` : `${short} - SITE ${rng.pick(NATURE)}`, 'SA01', chu ? '101' : '106', POOL.hospital, '86.10Z'));
        break;
      case 'ehpad':
        out.push(geographicalEntity(rng, c, ej, sc, s, `EHPAD ${rng.pick(NATURE)}`, 'SA17', '200', POOL.medicoSocial, '87.10A'));
        break;
      case 'cmp':
        out.push(geographicalEntity(rng, c, ej, sc, s, `CMP ${rng.pick([...NATURE, ...PEOPLE])}`, 'SA12', '156', POOL.medicoSocial, '86.10Z'));
        break;
      case 'usld':
        out.push(geographicalEntity(rng, c, ej, sc, s, `USLD ${short}`, 'SA01', '106', POOL.hospital, '86.10Z'));
        break;
      case 'had':
        out.push(geographicalEntity(rng, c, ej, sc, s, `HAD ${short}`, 'SA01', '127', POOL.hospital, '86.10Z'));
        break;
      case 'rehab':
        out.push(geographicalEntity(rng, c, ej, sc, s, `CENTRE DE RÉÉDUCATION ${rng.pick(NATURE)}`, 'SA01', '109', POOL.hospital, '86.10Z'));
        break;
    }
  }
  return out;
}

function privateClinic(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const x = rng.chance(0.5) ? rng.pick(SAINTS) : rng.pick([...NATURE, ...PLACES]);
  const brand = pickWeighted(rng, [[`CLINIQUE ${x}`, 4], [`POLYCLINIQUE ${deCity(city)}`, 2], [`HOPITAL PRIVÉ ${deCity(city)}`, 1]]);
  const statut = pickWeighted(rng, [['95', 45], ['73', 25], ['72', 20], ['75', 10]] as const);
  const legalPrefix = statut === '95' ? 'SAS' : statut === '73' ? 'SA' : statut === '72' ? 'SARL' : 'SOCIETE';
  const ej = legalEntity(rng, c, city, `${legalPrefix} ${brand}`, 'SA04', statut, rng.chance(0.7) ? '0' : '9', '86.10Z', rng.range(3, 5));
  const out = [ej];
  const sites = rng.range(1, 2);
  for (let s = 0; s < sites; s++) {
    const category = pickWeighted(rng, [['128', 30], ['129', 20], ['109', 20], ['122', 8], ['127', 5], ['161', 7], ['108', 5], ['126', 3], ['112', 2]] as const);
    const name = s === 0 ? brand : category === '109' ? `CENTRE DE RÉÉDUCATION ${rng.pick(NATURE)}` : `CLINIQUE ${rng.pick([...SAINTS, ...NATURE])}`;
    out.push(geographicalEntity(rng, c, ej, s === 0 ? city : siteCity(rng, city), s, name, 'SA04', category, POOL.hospital, '86.10Z'));
  }
  return out;
}

function espic(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const statut = pickWeighted(rng, [['60', 30], ['61', 30], ['63', 20], ['65', 10], ['47', 10]] as const);
  const name = statut === '63' ? `FONDATION ${rng.pick([...SAINTS, ...PEOPLE])}` : statut === '47' ? `GROUPE HOSPITALIER MUTUALISTE ${deCity(city)}` : `ASSOCIATION ${rng.pick([...SAINTS, ...PEOPLE])}`;
  const ej = legalEntity(rng, c, city, name, 'SA03', statut, '6', '86.10Z', rng.chance(0.7) ? 7 : 8);
  const out = [ej];
  const sites = rng.range(1, 5);
  for (let s = 0; s < sites; s++) {
    const cancer = rng.chance(0.1);
    const sector = cancer ? 'SA36' : 'SA03';
    const category = cancer ? '131' : pickWeighted(rng, [['129', 40], ['109', 30], ['128', 20], ['161', 10]] as const);
    const siteName = cancer ? `INSTITUT DE CANCÉROLOGIE ${rng.pick(PEOPLE)}` : `HOPITAL ${rng.pick([...SAINTS, ...PEOPLE])}`;
    out.push(geographicalEntity(rng, c, ej, s === 0 ? city : siteCity(rng, city), s, siteName, sector, category, POOL.hospital, '86.10Z'));
  }
  return out;
}

function medicoSocial(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const statut = pickWeighted(rng, [['60', 35], ['61', 15], ['17', 15], ['21', 10], ['03', 5], ['95', 15], ['63', 5]] as const);
  let name: string;
  if (statut === '17') name = `CCAS ${deCity(city)}`;
  else if (statut === '03') name = `COMMUNE ${deCity(city)}`;
  else if (statut === '95') name = `SAS ${rng.pick(NATURE)} SENIORS`;
  else if (statut === '63') name = `FONDATION ${rng.pick([...SAINTS, ...PEOPLE])}`;
  else name = pickWeighted(rng, [[`ASSOCIATION ${rng.pick([...NATURE, ...SAINTS])}`, 5], [`ADAPEI ${city.dept}`, 1], [`APAJH ${city.dept}`, 1], [`ASSOCIATION DÉPARTEMENTALE DE SAUVEGARDE ${city.dept}`, 1]]);
  const ej = legalEntity(rng, c, city, name, pickWeighted(rng, [['SA17', 5], ['SA16', 3], ['SA41', 1]] as const), statut, pickWeighted(rng, [['0', 6], ['7', 2], ['9', 2]] as const), '87.10A', rng.pick([2, 7, 7, 8, 3]));
  const out = [ej];
  const sites = rng.range(1, 7);
  for (let s = 0; s < sites; s++) {
    const sc = s === 0 ? city : siteCity(rng, city);
    const kind = pickWeighted(rng, [['elderly', 55], ['disability', 30], ['child', 10], ['social', 5]] as const);
    let sector: string;
    let category: string;
    let siteName: string;
    if (kind === 'elderly') {
      sector = 'SA17';
      category = pickWeighted(rng, [['200', 70], ['202', 15], ['207', 8], ['209', 7]] as const);
      const prefix = category === '202' ? 'RÉSIDENCE AUTONOMIE' : category === '207' ? 'ACCUEIL DE JOUR' : category === '209' ? 'SPASAD' : rng.pick(['EHPAD', 'EHPAD', 'RESIDENCE', 'MAISON DE RETRAITE']);
      siteName = `${prefix} ${rng.pick([...NATURE, ...SAINTS])}`;
    } else if (kind === 'disability') {
      sector = 'SA16';
      category = pickWeighted(rng, [['183', 25], ['246', 20], ['182', 15], ['186', 10], ['188', 8], ['192', 5], ['194', 4], ['195', 4], ['196', 1], ['249', 4], ['198', 4]] as const);
      const prefix: Record<string, string> = { '183': 'IME', '246': 'ESAT', '182': 'SESSAD', '186': 'ITEP', '188': 'EEAP', '192': 'IEM', '194': 'INSTITUT POUR DÉFICIENTS VISUELS', '195': 'INSTITUT POUR DÉFICIENTS AUDITIFS', '196': 'INSTITUT SOURDS-AVEUGLES', '249': 'CRP', '198': 'CPO' };
      siteName = `${prefix[category]} ${rng.pick([...NATURE, ...PEOPLE])}`;
    } else if (kind === 'child') {
      sector = 'SA20';
      category = pickWeighted(rng, [['177', 40], ['175', 20], ['159', 10], ['166', 10], ['172', 5], ['236', 5], ['238', 5], ['241', 5]] as const);
      siteName = category === '175' ? `FOYER DE L'ENFANCE ${deCity(sc)}` : category === '177' ? `MECS ${rng.pick(NATURE)}` : `${rng.pick(['CENTRE', 'FOYER', 'SERVICE'])} ${rng.pick(NATURE)}`;
    } else {
      sector = 'SA21';
      category = pickWeighted(rng, [['214', 50], ['165', 20], ['178', 10], ['180', 10], ['213', 10]] as const);
      const prefix: Record<string, string> = { '214': 'CHRS', '165': 'ACT', '178': 'CAARUD', '180': 'LHSS', '213': 'LAM' };
      siteName = `${prefix[category]} ${rng.pick(NATURE)}`;
    }
    out.push(geographicalEntity(rng, c, ej, sc, s, siteName, sector, category, POOL.medicoSocial, kind === 'elderly' ? '87.10A' : null));
  }
  return out;
}

function healthCentre(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const statut = pickWeighted(rng, [['60', 40], ['47', 15], ['03', 15], ['65', 10], ['80', 20]] as const);
  const name = statut === '03' ? `COMMUNE ${deCity(city)}` : statut === '47' ? `MUTUELLE ${rng.pick(NATURE)}` : statut === '80' ? `SISA ${rng.pick(PLACES)} ${upperCity(city)}` : `ASSOCIATION ${rng.pick([...NATURE, ...PEOPLE])}`;
  const ej = legalEntity(rng, c, city, name, statut === '80' ? 'SA52' : 'SA05', statut, '0', '86.21Z', statut === '03' ? 2 : 7);
  const out = [ej];
  const sites = rng.range(1, 3);
  for (let s = 0; s < sites; s++) {
    const sc = s === 0 ? city : siteCity(rng, city);
    const kind = statut === '80' ? 'msp' : pickWeighted(rng, [['cds', 55], ['dental', 25], ['msp', 20]] as const);
    if (kind === 'msp') out.push(geographicalEntity(rng, c, ej, sc, s, `MAISON DE SANTÉ PLURIPROFESSIONNELLE ${deCity(sc)}`, 'SA52', null, POOL.healthCentre, '86.21Z'));
    else if (kind === 'dental') out.push(geographicalEntity(rng, c, ej, sc, s, `CENTRE DE SANTE DENTAIRE ${rng.pick([...PLACES, ...NATURE])}`, 'SA05', '125', POOL.healthCentre, '86.23Z'));
    else out.push(geographicalEntity(rng, c, ej, sc, s, rng.chance(0.3) ? `CENTRE DE SANTÉ MUNICIPAL ${upperCity(sc)}` : `CENTRE DE SANTE ${rng.pick([...PEOPLE, ...NATURE])}`, 'SA05', '124', POOL.healthCentre, '86.21Z'));
  }
  return out;
}

function laboratory(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const brand = rng.chance(0.5) ? `BIO ${rng.pick(NATURE)}` : `LABORATOIRE ${upperFamily(rng)}`;
  const statut = pickWeighted(rng, [['101', 50], ['91', 25], ['86', 15], ['85', 10]] as const);
  const ej = legalEntity(rng, c, city, `SELAS ${brand}`, 'SA25', statut, null, '86.90B', rng.range(3, 9));
  const out = [ej];
  const sites = rng.range(1, 10);
  for (let s = 0; s < sites; s++) {
    const sc = s === 0 ? city : siteCity(rng, city);
    out.push(geographicalEntity(rng, c, ej, sc, s, `${brand} - SITE ${upperCity(sc)}`, rng.chance(0.8) ? 'SA25' : 'SA29', null, POOL.laboratory, '86.90B'));
  }
  return out;
}

function otherCare(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const kind = pickWeighted(rng, [['dialysis', 30], ['prevention', 30], ['pmi', 15], ['transport', 15], ['blood', 5], ['military', 5]] as const);
  const out: OrgSpec[] = [];
  if (kind === 'military') {
    const ej = legalEntity(rng, c, city, `HOPITAL D'INSTRUCTION DES ARMÉES ${rng.pick(PEOPLE)}`, 'SA02', '01', '1', '86.10Z', 1);
    out.push(ej, geographicalEntity(rng, c, ej, city, 0, ej.name, 'SA02', '114', POOL.hospital, '86.10Z'));
    return out;
  }
  if (kind === 'transport') {
    const fam = upperFamily(rng);
    const ej = legalEntity(rng, c, city, `SARL AMBULANCES ${fam}`, 'SA10', '72', null, '86.90A', rng.range(3, 5));
    out.push(ej, geographicalEntity(rng, c, ej, city, 0, `AMBULANCES ${fam}`, 'SA10', null, POOL.medicoSocial, '86.90A'));
    return out;
  }
  if (kind === 'blood') {
    const ej = legalEntity(rng, c, city, 'ETABLISSEMENT FRANÇAIS DU SANG', 'SA37', '26', '0', '86.90F', 2);
    out.push(ej, geographicalEntity(rng, c, ej, city, 0, `EFS - SITE ${upperCity(city)}`, 'SA37', '132', POOL.hospital, '86.90F'));
    return out;
  }
  const statut = pickWeighted(rng, [['60', 50], ['02', 20], ['61', 20], ['28', 10]] as const);
  const name = statut === '02' ? `DÉPARTEMENT ${city.dept}` : statut === '28' ? `GIP ${rng.pick(NATURE)}` : `ASSOCIATION ${rng.pick([...NATURE, ...PEOPLE])}`;
  const sector = kind === 'dialysis' ? 'SA34' : kind === 'pmi' ? 'SA15' : 'SA12';
  const ej = legalEntity(rng, c, city, name, sector, statut, kind === 'dialysis' ? '6' : '0', '86.90F', statut === '02' ? 2 : 7);
  out.push(ej);
  const sites = rng.range(1, 3);
  for (let s = 0; s < sites; s++) {
    const sc = s === 0 ? city : siteCity(rng, city);
    if (kind === 'dialysis') {
      const cat = pickWeighted(rng, [['141', 50], ['138', 25], ['146', 25]] as const);
      out.push(geographicalEntity(rng, c, ej, sc, s, `CENTRE DE DIALYSE ${rng.pick([...NATURE, ...PLACES])}`, 'SA34', cat, POOL.hospital, '86.90F'));
    } else if (kind === 'pmi') {
      const cat = pickWeighted(rng, [['223', 70], ['228', 30]] as const);
      out.push(geographicalEntity(rng, c, ej, sc, s, cat === '223' ? `CENTRE DE PMI ${rng.pick(PLACES)}` : `CENTRE DE PLANIFICATION ${deCity(sc)}`, 'SA15', cat, POOL.medicoSocial, null));
    } else {
      const cat = pickWeighted(rng, [['197', 35], ['189', 25], ['190', 20], ['221', 5], ['156', 15]] as const);
      const prefix: Record<string, string> = { '197': 'CSAPA', '189': 'CMPP', '190': 'CAMSP', '221': 'BAPU', '156': 'CMP' };
      out.push(geographicalEntity(rng, c, ej, sc, s, `${prefix[cat]} ${rng.pick([...NATURE, ...PEOPLE])}`, 'SA12', cat, POOL.medicoSocial, null));
    }
  }
  return out;
}

function pharmacy(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const fam = upperFamily(rng);
  const x = pickWeighted(rng, [[fam, 4], [rng.pick(PLACES), 4], [`${fam} ET ${upperFamily(rng)}`, 1], [`GRANDE PHARMACIE ${deCity(city)}`, 1]]);
  const brand = x.startsWith('GRANDE PHARMACIE') ? x : `PHARMACIE ${x}`;
  const statut = pickWeighted(rng, [['85', 35], ['100', 15], ['91', 10], ['102', 10], ['70', 20], ['75', 10]] as const);
  const prefix: Record<string, string> = { '85': 'SELARL ', '100': 'SELURL ', '91': 'SELAS ', '102': 'SELASU ', '70': '', '75': 'SNC ' };
  const ej = legalEntity(rng, c, city, `${prefix[statut]}${brand}`, 'SA33', statut, null, '47.73Z', rng.range(3, 8));
  ej.pharmacy = true;
  if (rng.chance(0.5)) ej.rppsRang = `F${ej.finess}${ddmmyyyy(dateWithin(rng, 30))}`;
  const eg = geographicalEntity(rng, c, ej, city, 0, brand, rng.chance(0.99) ? 'SA33' : 'SA65', null, POOL.pharmacy, '47.73Z');
  eg.pharmacy = true;
  return [ej, eg];
}

type CabinetKind = 'medical' | 'dental' | 'nursing' | 'physio' | 'midwife' | 'paramedical';
const CABINET_KINDS: ReadonlyArray<readonly [CabinetKind, number]> = [
  ['medical', 35], ['nursing', 25], ['physio', 15], ['dental', 12], ['paramedical', 11], ['midwife', 2],
];
const CABINET_POOL: Record<CabinetKind, Pool> = {
  medical: POOL.cabinetMedical, dental: POOL.cabinetDental, nursing: POOL.cabinetNursing,
  physio: POOL.cabinetPhysio, midwife: POOL.cabinetMidwife, paramedical: POOL.cabinetParamedical,
};
const CABINET_AUTHORITY: Record<CabinetKind, string | null> = {
  medical: 'CNOM', dental: 'ONCD', nursing: 'ONI', physio: 'CNOMK', midwife: 'CNOSF', paramedical: null,
};
const CABINET_NAF: Record<CabinetKind, readonly string[]> = {
  medical: ['86.21Z', '86.21Z', '86.22C', '86.22A', '86.22B'], dental: ['86.23Z'], nursing: ['86.90D'],
  physio: ['86.90E'], midwife: ['86.90D'], paramedical: ['86.90E', '86.90F'],
};

function cabinetName(rng: Rng, kind: CabinetKind, city: City): string {
  const fam = upperFamily(rng);
  const x = rng.pick([...PLACES, ...NATURE]);
  switch (kind) {
    case 'medical':
      return pickWeighted(rng, [
        [`CABINET MEDICAL ${x}`, 4], [`CABINET MÉDICAL ${x}`, 1], [`CABINET DU DR ${fam}`, 3], [`CABINET DU DOCTEUR ${fam}`, 2],
        [`CABINET MEDICAL ${deCity(city)}`, 1], [`CABINET DE RADIOLOGIE ${x}`, 0.5], [`CABINET DE CARDIOLOGIE ${x}`, 0.5],
        [`MAISON MEDICALE ${x}`, 1], [`CABINET SAINT ANTOINE`, 0.1],
      ]);
    case 'dental':
      return pickWeighted(rng, [[`CABINET DENTAIRE ${x}`, 4], [`CABINET DENTAIRE DU DR ${fam}`, 3], [`CABINET D'ORTHODONTIE ${x}`, 1]]);
    case 'nursing':
      return pickWeighted(rng, [
        [`CABINET INFIRMIER ${x}`, 4], [`CABINET DE SOINS INFIRMIERS ${x}`, 2], [`CABINET INFIRMIER ${fam}`, 2],
        [`CABINET INFIRMIER ${fam}-${upperFamily(rng)}`, 1], [`SOINS INFIRMIERS ${deCity(city)}`, 1],
      ]);
    case 'physio':
      return pickWeighted(rng, [[`CABINET DE KINESITHERAPIE ${x}`, 4], [`CABINET DE MASSO-KINÉSITHÉRAPIE ${x}`, 2], [`CABINET DE KINÉSITHÉRAPIE ${fam}`, 2]]);
    case 'midwife':
      return pickWeighted(rng, [[`CABINET DE SAGE-FEMME ${fam}`, 2], [`CABINET DE SAGES-FEMMES ${x}`, 1]]);
    case 'paramedical':
      return pickWeighted(rng, [
        [`CABINET D'ORTHOPHONIE ${x}`, 4], [`CABINET DE PODOLOGIE ${x}`, 3], [`CABINET D'ORTHOPTIE ${x}`, 1],
        [`CABINET D'ERGOTHÉRAPIE ${x}`, 1], [`CABINET DE PSYCHOMOTRICITÉ ${x}`, 1], [`OPTIQUE ${x}`, 1], [`AUDITION ${fam}`, 0.5],
      ]);
  }
}

function cabinet(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const kind = pickWeighted(rng, CABINET_KINDS);
  const legal = rng.chance(0.75);
  const group = rng.chance(0.4);
  const rang = rppsRangOf(c, rng);
  return [base(city, {
    part: ORG_PART.cabinet, legal, name: cabinetName(rng, kind, city),
    alias: group ? (rng.chance(0.3) ? 'CABINET DE GROUPE' : null) : rng.chance(0.05) ? 'CABINET INDIVIDUEL' : null,
    sector: group ? 'SA08' : 'SA07',
    naf: rng.chance(0.5) ? rng.pick(CABINET_NAF[kind]) : null,
    idnst: `4${rang}`, rppsRang: `${legal ? 'REJ' : 'REG'}${rang}`,
    pool: CABINET_POOL[kind], system: rng.chance(0.9) ? 'RPPS' : 'CG',
    authority: rng.chance(0.5) ? CABINET_AUTHORITY[kind] : null,
    mssShare: 0.03, faxShare: 0.1, emailShare: 0.1,
  })];
}

function company(rng: Rng, c: Counters): OrgSpec[] {
  const city = CITY_DIST.sample(rng);
  const statut = pickWeighted(rng, [['85', 30], ['79', 25], ['88', 15], ['101', 10], ['100', 8], ['74', 7], ['80', 5]] as const);
  const fam = upperFamily(rng);
  const x = rng.pick([...PLACES, ...NATURE]);
  const name: Record<string, string> = {
    '85': `SELARL DU DR ${fam}`, '79': `SCM ${x}`, '88': `SCP ${fam}-${upperFamily(rng)}`, '101': `SELAS ${x}`,
    '100': `SELURL ${fam}`, '74': `SOCIETE CIVILE ${x}`, '80': `SISA ${x}`,
  };
  const siren = sirenOf(c, rng.range(3, 9));
  return [base(city, {
    part: ORG_PART.company, legal: true, name: name[statut], sector: rng.chance(0.9) ? 'SA09' : 'SA43', statut,
    naf: rng.chance(0.6) ? rng.pick(['86.21Z', '86.22C', '86.23Z', '86.90D', '86.90E']) : null,
    siren, idnst: `2${siren}`, pool: POOL.company, system: rng.chance(0.7) ? 'RPPS' : 'CG',
    authority: rng.chance(0.4) ? 'ENREG' : null, mssShare: 0.02, faxShare: 0.05, emailShare: 0.1,
  })];
}

const GROUP_BUILDERS: Record<GroupKind, (rng: Rng, c: Counters) => OrgSpec[]> = {
  cabinet, company, pharmacy, medicoSocial, otherCare, healthCentre, privateClinic, publicHospital, espic, laboratory,
};

// ---- FHIR shape (JSON text, see fhir-common.ts) -------------------------------------------------

const typeCache = new Map<string, string>();
function typeElement(slice: string | null, key: SystemKey, code: string): string {
  const k = `${slice}|${key}|${code}`;
  let v = typeCache.get(k);
  if (v === undefined) {
    const c = codingJson(key, code, true);
    v = slice ? `{"extension":[{"url":"${EXT.organizationTypes}","valueCode":"${slice}"}],"coding":[${c}]}` : `{"coding":[${c}]}`;
    typeCache.set(k, v);
  }
  return v;
}

function slug(name: string): string {
  return upperNoAccents(name).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 28).replace(/-$/, '');
}

function phone(rng: Rng, city: City, mobile = false): string {
  const prefix = mobile ? rng.pick(['06', '07']) : phonePrefix(city);
  return prefix + rng.digits(10 - prefix.length);
}

/** A geographical entity's point near its city's centre, its precision, or undefined (no coordinates). */
type Point = { latitude: string; longitude: string; precision: 'housenumber' | 'street' | 'commune' };

const LEAST_COVERED = new Set(['500', '200', '611']);

function pointOf(seed: number, i: number, spec: OrgSpec): Point | undefined {
  const rng = new Rng(seed, STREAM_POINT, i);
  const covered = spec.pharmacy || spec.pool === POOL.laboratory || LEAST_COVERED.has(spec.category ?? '') ? LOCATED_SHARE.leastCovered : LOCATED_SHARE.other;
  if (!rng.chance(covered)) return undefined;
  const { latitude, longitude } = spec.city;
  if (rng.chance(POINT_PRECISION_SHARE.commune)) return { latitude: String(latitude), longitude: String(longitude), precision: 'commune' };
  const precision = rng.chance(POINT_PRECISION_SHARE.street) ? 'street' : 'housenumber';
  // Within ~2 km of the centre: the town itself.
  return { latitude: (latitude + (rng.next() - 0.5) * 0.04).toFixed(6), longitude: (longitude + (rng.next() - 0.5) * 0.06).toFixed(6), precision };
}

function address(rng: Rng, city: City, point?: Point): string {
  const postalCode = rng.pick(city.postalCodes);
  const [typeCode, typeLabel] = STREET_TYPE_DIST.sample(rng);
  const street = rng.pick(STREET_NAMES);
  const hasNumber = typeCode !== 'PL' || rng.chance(0.3);
  const num = String(rng.chance(0.7) ? rng.range(1, 60) : rng.range(61, 350));
  let parts = hasNumber ? `{"url":"${EXT.houseNumber}","valueString":"${num}"},` : '';
  parts += `{"url":"${EXT.streetNameType}","valueString":"${typeCode}"},{"url":"${EXT.streetNameBase}","valueString":${str(street)}}`;
  // La Poste style (upper case, no accents, no hyphens) or the commune's own spelling.
  const cityText = rng.chance(0.5) ? upperNoAccents(city.name).replace(/[-']/g, ' ') : city.name;
  let out = `{"extension":[{"url":"${EXT.inseeCode}","valueCoding":{"system":"${COMMUNE_SYSTEM}","code":"${city.insee}"}}`;
  if (point) out += `,{"url":"${EXT.geolocation}","extension":[{"url":"latitude","valueDecimal":${point.latitude}},{"url":"longitude","valueDecimal":${point.longitude}}]}`;
  out += ']';
  if (rng.chance(0.6)) out += `,"line":[${str(`${hasNumber ? `${num} ` : ''}${typeLabel} ${street}`)}]`;
  return `${out},"_line":[{"extension":[${parts}]}],"city":${str(cityText)},"postalCode":"${postalCode}"}`;
}

const ORG_MSS_LOCAL = ['secretariat', 'accueil', 'secretariat.cardiologie', 'urgences', 'direction', 'pharmacie', 'admissions', 'imagerie', 'laboratoire', 'consultations', 'secretariat.medical'];
const ORG_MSS_SERVICES: Record<string, string> = {
  'secretariat.cardiologie': 'Cardiologie', urgences: 'Urgences', pharmacie: 'Pharmacie', imagerie: 'Imagerie médicale',
  laboratoire: 'Laboratoire', consultations: 'Consultations externes',
};
const APP_MSS_LOCAL = ['resultats', 'dmp', 'lab.resultats', 'imagerie.cr', 'noreply.dpi', 'comptes-rendus'];

function telecom(rng: Rng, spec: OrgSpec, orgSlug: string): string[] {
  const out: string[] = [];
  if (rng.chance(spec.part === ORG_PART.cabinet ? 0.75 : 0.85)) {
    out.push(`{"system":"phone","value":"${phone(rng, spec.city, spec.part === ORG_PART.cabinet && rng.chance(0.2))}","rank":1}`);
  }
  if (rng.chance(spec.faxShare)) out.push(`{"system":"fax","value":"${phone(rng, spec.city)}"}`);
  if (rng.chance(spec.emailShare)) {
    const value = pickWeighted(rng, [
      [`contact@${orgSlug}.fr`, 3], [`accueil.${orgSlug}@orange.fr`, 1], [`${orgSlug}@wanadoo.fr`, 1], [`secretariat@${orgSlug}.com`, 1],
    ]);
    out.push(`{"system":"email","value":${str(value)}}`);
  }
  if (rng.chance(spec.mssShare)) {
    const domain = rng.chance(0.8) ? `${orgSlug}.mssante.fr` : rng.pick(['aura.mssante.fr', 'sante-idf.mssante.fr', 'bretagne.mssante.fr', 'sante-paca.mssante.fr', 'esante-occitanie.mssante.fr']);
    const mailboxes = rng.chance(0.2) ? 2 : 1;
    for (let m = 0; m < mailboxes; m++) {
      if (rng.chance(0.8)) {
        const local = rng.pick(ORG_MSS_LOCAL);
        out.push(mssTelecom(`${local}${m > 0 ? m + 1 : ''}@${domain}`, 'ORG', {
          description: rng.chance(0.6) ? `${spec.name.slice(0, 30)} - ${local.replace('.', ' ')}` : undefined,
          service: rng.chance(0.4) ? ORG_MSS_SERVICES[local] : undefined,
          digitization: rng.chance(0.5) ? rng.chance(0.5) : undefined,
        }));
      } else {
        out.push(mssTelecom(`${rng.pick(APP_MSS_LOCAL)}${m > 0 ? m + 1 : ''}@${domain}`, 'APP', { digitization: rng.chance(0.5) ? true : undefined }));
      }
    }
  }
  return out;
}

function identifiers(spec: OrgSpec): string {
  let ids = officialIdentifier('IDNST', SYSTEM.idnst, spec.idnst);
  if (spec.finess) ids += `,${officialIdentifier(spec.legal ? 'FINEJ' : 'FINEG', SYSTEM.finess, spec.finess)}`;
  if (spec.siren) ids += `,${officialIdentifier('SIREN', SYSTEM.sirene, spec.siren)}`;
  if (spec.siret) ids += `,${officialIdentifier('SIRET', SYSTEM.sirene, spec.siret)}`;
  if (spec.rppsRang) ids += `,${officialIdentifier('RPPSRG', SYSTEM.rppsRang, spec.rppsRang)}`;
  return `[${ids}]`;
}

/** The Location of a geographical entity: its Organization's id, FINESS identifiers, names and address, and the point. */
function locationJson(id: string, updated: string, spec: OrgSpec, name: string, alias: string | undefined, addressJson: string, point: Point): string {
  const identifier = `${officialIdentifier('IDNST', SYSTEM.idnst, spec.idnst)},${officialIdentifier('FINEG', SYSTEM.finess, spec.finess!)}`;
  let out = `{"resourceType":"Location","id":"${id}","meta":${meta('Location', updated, 'FINESS', null)},"language":"fr","identifier":[${identifier}],"status":"active","name":${str(name)}`;
  if (alias) out += `,"alias":[${str(alias)}]`;
  const precision = `"extension":[{"url":"${EXT.positionPrecision}","valueCode":"${point.precision}"}]`;
  out += `,"mode":"instance","address":${addressJson},"position":{${precision},"longitude":${point.longitude},"latitude":${point.latitude}}`;
  return `${out},"managingOrganization":${reference('Organization', id)}}`;
}

function buildOrganization(rng: Rng, spec: OrgSpec, i: number, headIndex: number, index: OrgIndex, seed: number, onLocation: (json: string) => void): string {
  const name = rng.chance(ORG_ACCENTED_NAME_SHARE) ? spec.name : upperNoAccents(spec.name);
  const id = organizationId(i, spec.part);
  const updated = lastUpdated(rng);
  const head = `{"resourceType":"Organization","id":"${id}","meta":${meta('Organization', updated, rng.chance(0.1) ? 'CG' : spec.system, spec.authority)}`;
  if (rng.chance(ORG_INACTIVE_SHARE)) {
    // Tombstone: id, meta, identifier, active:false, and the name (Organization keeps it).
    return `${head},"identifier":${identifiers(spec)},"active":false,"name":${str(name)}}`;
  }
  let out = `${head},"language":"fr"`;
  const ext: string[] = [];
  if (rng.chance(ORG_PERIOD_SHARE)) ext.push(`{"url":"${EXT.organizationPeriod}","valuePeriod":{"start":"${isoDate(dateWithin(rng, 40))}"}}`);
  if (spec.pharmacy) ext.push(`{"url":"${EXT.pharmacyLicence}","valueString":"${spec.city.dept.slice(0, 2)}#${String(rng.range(1, 4999)).padStart(6, '0')}"}`);
  if (ext.length) out += `,"extension":[${ext.join(',')}]`;
  out += `,"identifier":${identifiers(spec)},"active":true`;
  out += `,"type":[${typeElement('organizationType', 'fr-core-cs-v2-3307', spec.legal ? 'LEGAL-ENTITY' : 'GEOGRAPHICAL-ENTITY')}`;
  out += `,${typeElement('secteurActiviteRASS', 'TRE_R02-SecteurActivite', spec.sector)}`;
  if (spec.category) out += `,${typeElement(null, 'TRE_R66-CategorieEtablissement', spec.category)}`;
  if (spec.statut) out += `,${typeElement('statutJuridiqueINSEE', 'TRE_R72-FinessStatutJuridique', spec.statut)}`;
  if (spec.sph) out += `,${typeElement('sphParticipation', 'TRE_R73-ESPIC', spec.sph)}`;
  if (spec.naf) out += `,${typeElement('activiteINSEE', 'TRE_R75-InseeNAFrev2Niveau5', spec.naf)}`;
  if (spec.typeEtab) out += `,${typeElement('typeEtablissement', 'as-cs-type-etablissement', spec.typeEtab)}`;
  out += `],"name":${str(name)}`;
  let alias: string | undefined;
  if (spec.alias || rng.chance(ORG_ALIAS_SHARE)) {
    alias = spec.alias ?? (spec.part === ORG_PART.finess && !spec.legal
      ? upperNoAccents(spec.name).replace(/^CENTRE HOSPITALIER /, 'CH ')
      : slug(spec.name).toUpperCase().replace(/-/g, ' '));
    out += `,"alias":[${str(alias)}]`;
  }
  const tel = telecom(rng, spec, slug(spec.name));
  if (tel.length) out += `,"telecom":[${tel.join(',')}]`;
  if (rng.chance(spec.part === ORG_PART.company ? 0.9 : 0.97)) {
    const point = spec.part === ORG_PART.finess && !spec.legal ? pointOf(seed, i, spec) : undefined;
    const addressJson = address(rng, spec.city, point);
    out += `,"address":[${addressJson}]`;
    if (point) {
      index.located[i] = 1;
      onLocation(locationJson(id, updated, spec, name, alias, addressJson, point));
    }
  }
  if (spec.partOfGroupHead && headIndex !== i) out += `,"partOf":${orgRef(index, headIndex)}`;
  return `${out}}`;
}

// ---- Driver -------------------------------------------------------------------------------------

/**
 * Stream of organizations. Fills `index` (partitions, pools, located) as it goes; the Location of a
 * geographical entity with a point goes to `onLocation` before its Organization is yielded.
 */
export function* organizations(seed: number, count: number, index: OrgIndex, onLocation: (json: string) => void = () => {}): Generator<string> {
  const rng = new Rng(seed, 1);
  const counters: Counters = { finess: new Map(), siren: 0, cabinet: 0 };
  const pools: number[][] = Array.from({ length: POOL_COUNT }, () => []);
  let i = 0;
  while (i < count) {
    const group = GROUP_BUILDERS[GROUP_DIST.sample(rng)](rng, counters);
    const head = i;
    for (const spec of group) {
      if (i >= count) break;
      index.part[i] = spec.part;
      pools[spec.pool].push(i);
      yield buildOrganization(rng, spec, i, head, index, seed, onLocation);
      i++;
    }
  }
  index.pools = pools.map((p) => Int32Array.from(p));
}

export function newOrgIndex(count: number): OrgIndex {
  return { count, part: new Uint8Array(count), pools: Array.from({ length: POOL_COUNT }, () => new Int32Array(0)), located: new Uint8Array(count) };
}
