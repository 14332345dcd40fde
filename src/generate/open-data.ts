// The lines of the open-data extracts (PS_LibreAcces) of a synthetic directory, day by day.
// Every person, structure and activity is a pure function of (seed, index, the day's changes), so
// the lines stream with memory that does not grow with them, and day d+1 differs from day d only
// by that day's changes. The file-level quirks (encodings, duplicates, bad lines) are added by
// open-data-files.ts.

import iconv from 'iconv-lite';
import { displayOf } from '../vocabulary/codes.ts';
import type { FieldsOf } from '../vocabulary/formats/rpps.ts';
import { finessNumber, rppsNumber, sirenNumber, siretNumber } from './ids.ts';
import { FEMALE_DIST, familyName, MALE_DIST } from './names.ts';
import { CITIES, phonePrefix, STREET_NAMES, STREET_TYPES, type City } from './places.ts';
import { CIVIL_SERVANT_SHARE, drawSpecialty, MILITARY_SHARE } from './practitioner.ts';
import { hash32, Rng, skewedIndex, Weighted } from './prng.ts';
import { DOCTOR, NURSE, PHARMACIST, PROFESSION_DIST, PROFESSIONS } from './professions.ts';

/** Sizes at scale 1: about 1.1 million activity lines. */
export const OPEN_DATA_NATIONAL = { persons: 1_000_000, structures: 300_000 } as const;
/** Above this, FINESS serials (10^6 per department) could repeat. */
export const MAX_OPEN_DATA_SCALE = 3;

export interface ModelOptions {
  scale: number;
  seed: number;
  /** 0 is the first snapshot; day d applies d days of changes to it. */
  day?: number;
  /** Per day, about this share of the activity lines differs from the day before. */
  changeRate?: number;
  /** Share of activities without a structure (replacements). */
  noStructureShare?: number;
  /** Share of persons of the non-ordinal professions still known by their ADELI number. */
  adeliShare?: number;
}

export const DEFAULT_CHANGE_RATE = 0.01;
export const DEFAULT_NO_STRUCTURE_SHARE = 0.03;
export const DEFAULT_ADELI_SHARE = 0.3;

const ACTIVITY_COUNT = new Weighted([[1, 88], [2, 10], [3, 2]] as const);

// ---- the day's changes: each a pure function of (seed, entity, day) --------------------------------

const CHANGE = { left: 1, absent: 2, activity: 3, structure: 4, name: 5 } as const;
/**
 * Of the change rate: an activity and its structure each change at half of it (so about the rate of
 * activity lines differ), and persons change name, leave, miss a day or arrive at a fiftieth of it.
 */
const SHARE_OF_RATE = { activity: 0.5, structure: 0.5, name: 0.02, left: 0.02, absent: 0.02, arrivals: 0.02 } as const;

export function drawn(seed: number, kind: number, entity: number, day: number, p: number): boolean {
  return hash32(seed ^ (kind * 0x9e3779b1), entity, day) / 4294967296 < p;
}

/** How many times an entity changed from day 1 to `day`: the version its lines are drawn with. */
export function version(seed: number, kind: number, entity: number, day: number, p: number): number {
  let v = 0;
  for (let d = 1; d <= day; d++) if (drawn(seed, kind, entity, d, p)) v++;
  return v;
}

/** The draws of version `v` of an entity (version 0 included): one stream per (entity, version). */
function versionRng(seed: number, stream: number, entity: number, v: number): Rng {
  return new Rng(hash32(seed, stream, v), stream, entity);
}

// ---- structures ------------------------------------------------------------------------------------

const STRUCTURE_KINDS = ['cabinet', 'company', 'pharmacy', 'hospital', 'clinic', 'elderly', 'laboratory', 'abroad'] as const;
type StructureKind = (typeof STRUCTURE_KINDS)[number];
const KIND_DIST = new Weighted<StructureKind>([
  ['cabinet', 68], ['company', 9], ['pharmacy', 8], ['hospital', 5], ['clinic', 2.5], ['elderly', 5.3], ['laboratory', 2], ['abroad', 0.2],
]);
const SECTOR: Record<StructureKind, readonly string[]> = {
  cabinet: ['SA07', 'SA07', 'SA08'], company: ['SA09', 'SA42', 'SA43'], pharmacy: ['SA33'], hospital: ['SA01'], clinic: ['SA04'],
  elderly: ['SA17'], laboratory: ['SA25'], abroad: ['SA32'],
};
const FINESS_KINDS: ReadonlySet<StructureKind> = new Set(['hospital', 'clinic', 'elderly', 'laboratory', 'pharmacy']);
export const CITY_DIST = new Weighted(CITIES.map((c) => [c, c.weight] as const));
const STREET_TYPE_DIST = new Weighted(STREET_TYPES.map((t) => [t, t[2]] as const));
const ABROAD = [
  ['99132', 'Royaume-uni', 'LONDON', 'SW1A 1AA'], ['99131', 'Belgique', 'BRUXELLES', '1000'], ['99140', 'Suisse', 'GENEVE', '1201'],
] as const;
const GARDENS = ['LES LILAS', 'LES TILLEULS', 'LES CÈDRES', 'LA ROSERAIE', 'LE CLOS FLEURI', 'LES CHÊNES', "L'OASIS", 'BELLEVUE'];
const STREAM = { kind: 60, structure: 61, person: 62, activity: 63, telecom: 64, marriage: 65 } as const;

type StructureFields = Pick<FieldsOf<'activity'>,
  | 'siret' | 'siren' | 'finessSite' | 'finessJuridique' | 'structureId' | 'raisonSociale' | 'enseigne' | 'complementDestinataire'
  | 'complementPointGeographique' | 'numeroVoie' | 'indiceRepetitionVoie' | 'codeTypeVoie' | 'libelleTypeVoie' | 'libelleVoie'
  | 'mentionDistribution' | 'bureauCedex' | 'codePostal' | 'codeCommune' | 'libelleCommune' | 'codePays' | 'libellePays'
  | 'telephone' | 'telephone2' | 'telecopie' | 'email' | 'codeDepartement' | 'libelleDepartement' | 'ancienIdentifiantStructure'
  | 'codeSecteurActivite' | 'libelleSecteurActivite'>;
type Structure = { kind: StructureKind; city: City; authority: string; fields: StructureFields };
export type { StructureFields, StructureKind };

/** A structure as the day's lines show it, for the other sources (FINESS, MSSanté) that describe the same places. */
export interface StructureOfDay {
  j: number;
  kind: StructureKind;
  city: City;
  fields: StructureFields;
  /** the last day (1..day) its columns changed, 0 if never. */
  lastChange: number;
}

/** A structure's columns, empty: one object shape for every structure (spreads of it stay fast). */
const noStructure = (): StructureFields => ({
  siret: '', siren: '', finessSite: '', finessJuridique: '', structureId: '', raisonSociale: '', enseigne: '',
  complementDestinataire: '', complementPointGeographique: '', numeroVoie: '', indiceRepetitionVoie: '', codeTypeVoie: '',
  libelleTypeVoie: '', libelleVoie: '', mentionDistribution: '', bureauCedex: '', codePostal: '', codeCommune: '',
  libelleCommune: '', codePays: '', libellePays: '', telephone: '', telephone2: '', telecopie: '', email: '',
  codeDepartement: '', libelleDepartement: '', ancienIdentifiantStructure: '', codeSecteurActivite: '', libelleSecteurActivite: '',
});
const EMPTY_STRUCTURE = noStructure();

function structureName(rng: Rng, kind: StructureKind, city: City): string {
  const family = familyName(rng).toUpperCase();
  const town = city.name.toUpperCase();
  switch (kind) {
    case 'cabinet': return rng.chance(0.6) ? `CABINET DU DR ${family}` : `CABINET MEDICAL ${rng.pick(GARDENS)}`;
    case 'company': return rng.chance(0.5) ? `SELARL ${family}` : `SCM ${family} ET ASSOCIES`;
    case 'pharmacy': return rng.chance(0.5) ? `PHARMACIE ${family}` : `PHARMACIE DE ${town}`;
    case 'hospital': return rng.chance(0.7) ? `CENTRE HOSPITALIER DE ${town}` : `CHI ${town}`;
    case 'clinic': return `CLINIQUE ${rng.pick(GARDENS)}`;
    case 'elderly': return `EHPAD ${rng.pick(GARDENS)}`;
    case 'laboratory': return `LABORATOIRE DE BIOLOGIE MEDICALE ${family}`;
    case 'abroad': return `${family} HEALTHCARE LIMITED`;
  }
}

/** Structure j as the files show it on a day (`v`: how many times it changed by then). */
function structure(seed: number, j: number, kind: StructureKind, v: number): Structure {
  const rng = new Rng(seed, STREAM.structure, j);
  const city = CITY_DIST.sample(rng);
  const dept = city.dept.slice(0, 2);
  const f = noStructure();
  f.raisonSociale = structureName(rng, kind, city);
  if (rng.chance(0.1)) f.enseigne = f.raisonSociale.replace(/^(CABINET|SELARL|SCM|PHARMACIE|CLINIQUE) (DU |DE )?/, '');
  if (FINESS_KINDS.has(kind)) {
    f.finessSite = finessNumber(dept, j);
    f.finessJuridique = finessNumber(dept, 999_999 - j);
    f.structureId = `F${f.finessSite}`;
    f.ancienIdentifiantStructure = `1${f.finessSite}`;
  } else if (kind === 'cabinet') {
    const rang = rppsNumber(50_000_000 + j) + String(rng.range(1, 3)).padStart(3, '0');
    f.structureId = `R${rang}`;
    f.ancienIdentifiantStructure = `4${rang}`;
  }
  if (kind === 'company' || kind === 'abroad' || kind === 'pharmacy' || (kind !== 'cabinet' && rng.chance(0.3))) {
    f.siren = sirenNumber(kind === 'hospital' ? 2 : rng.range(3, 8), j);
    f.siret = siretNumber(f.siren, 0);
    if (!f.structureId) {
      f.structureId = `C${f.siret}`;
      f.ancienIdentifiantStructure = `3${f.siret}`;
    }
    if (rng.chance(0.5)) f.siren = '';
  }
  f.complementDestinataire = rng.chance(0.3) ? f.raisonSociale : '';
  f.codeSecteurActivite = rng.pick(SECTOR[kind]);
  f.libelleSecteurActivite = displayOf('TRE_R02-SecteurActivite', f.codeSecteurActivite);
  const [typeCode, typeLabel] = STREET_TYPE_DIST.sample(rng);
  if (kind === 'abroad') {
    const [code, country, town, postal] = rng.pick(ABROAD);
    Object.assign(f, { libelleVoie: `${rng.range(1, 200)} ${rng.pick(['HIGH STREET', 'RUE DE LA LOI', 'RUE DU RHONE'])}`, bureauCedex: `${postal} ${town}` });
    Object.assign(f, { codePostal: postal.split(' ')[0], codePays: code, libellePays: country });
    return { kind, city, authority: 'Variable', fields: f };
  }
  f.numeroVoie = rng.chance(0.9) ? String(rng.range(1, 300)) : rng.chance(0.5) ? 'P' : '';
  f.indiceRepetitionVoie = rng.chance(0.03) ? 'B' : '';
  [f.codeTypeVoie, f.libelleTypeVoie, f.libelleVoie] = [typeCode, typeLabel, rng.pick(STREET_NAMES)];
  f.codePostal = rng.pick(city.postalCodes);
  f.codeCommune = city.insee;
  f.codeDepartement = dept;
  const town = city.name.toUpperCase();
  if (rng.chance(0.04)) f.bureauCedex = `${f.codePostal} ${town}`; // the commune only there
  else {
    f.libelleCommune = city.name;
    if (rng.chance(0.05)) [f.mentionDistribution, f.bureauCedex] = [`CS ${rng.range(10000, 99999)}`, `${f.codePostal} ${town} CEDEX`];
  }
  // What changes from one day to the next: the structure's telecoms (a changed one has a new phone).
  const tel = versionRng(seed, STREAM.telecom, j, v);
  const phone = () => phonePrefix(city) + tel.digits(10 - phonePrefix(city).length);
  if (v > 0 || tel.chance(0.8)) f.telephone = phone();
  if (tel.chance(0.05)) f.telephone2 = phone();
  if (tel.chance(0.2)) f.telecopie = phone();
  if (tel.chance(0.1)) f.email = `contact${tel.range(1, 99)}@${f.raisonSociale.toLowerCase().replace(/[^a-z]+/g, '')}.fr`;
  return { kind, city, authority: FINESS_KINDS.has(kind) && kind !== 'pharmacy' ? 'ARS' : 'CPAM', fields: f };
}

// ---- persons ---------------------------------------------------------------------------------------

/** Where a profession works: hospital-heavy for nurses, pharmacies for pharmacists, cabinets elsewhere. */
const WORKPLACE: Record<'doctor' | 'pharmacist' | 'nurse' | 'other', Weighted<StructureKind>> = {
  doctor: new Weighted<StructureKind>([['cabinet', 55], ['hospital', 25], ['clinic', 6], ['elderly', 3], ['company', 8], ['laboratory', 2], ['abroad', 1]]),
  pharmacist: new Weighted<StructureKind>([['pharmacy', 75], ['hospital', 12], ['laboratory', 10], ['company', 3]]),
  nurse: new Weighted<StructureKind>([['hospital', 45], ['cabinet', 30], ['elderly', 20], ['clinic', 5]]),
  other: new Weighted<StructureKind>([['cabinet', 60], ['hospital', 20], ['company', 12], ['elderly', 8]]),
};
const groupOf = (p: number) => (p === DOCTOR ? 'doctor' : p === PHARMACIST ? 'pharmacist' : p === NURSE ? 'nurse' : 'other');

const MODE: Record<StructureKind, Weighted<'L' | 'S' | 'B'>> = Object.fromEntries(
  STRUCTURE_KINDS.map((k) => [k, new Weighted<'L' | 'S' | 'B'>(k === 'cabinet' || k === 'company' ? [['L', 95], ['S', 4], ['B', 1]] : [['S', 90], ['L', 9], ['B', 1]])]),
) as Record<StructureKind, Weighted<'L' | 'S' | 'B'>>;
/** Fonctions (TRE_R21) by mode; an activity that changes moves to the next one of its list. */
const FONCTION = {
  L: ['FON-01', 'FON-02', 'FON-17'], S: ['FON-AU', 'FON-33', 'FON-35', 'FON-53'], B: ['FON-AU', 'FON-33'],
  pharmacyL: ['FON-03', 'FON-23'], pharmacyS: ['FON-05', 'FON-AU'], replacement: ['FON-22', 'FON-51'],
} as const;
/** Sections of the pharmacists' register (TRE_R06). */
const SECTIONS: Partial<Record<StructureKind, readonly [string, string]>> = {
  pharmacy: ['A', "Pharmaciens titulaires d'officine"], hospital: ['H', 'Pharmaciens des établissements de santé'],
  laboratory: ['G', 'Pharmaciens biologistes'], company: ['B', "Pharmaciens de l'industrie"],
};
const CIVILITE = { M: 'Monsieur', MME: 'Madame' } as const;

const win1252Cache = new Map<string, string>();
/**
 * A name in upper case, as the extracts write them, within Windows-1252 (so that a person's name
 * is the same in a file written in either encoding): letters outside it lose their diacritics.
 */
function extractName(name: string): string {
  let v = win1252Cache.get(name);
  if (v === undefined) {
    v = [...name.toUpperCase()]
      .map((c) => (iconv.decode(iconv.encode(c, 'win1252'), 'win1252') === c ? c : c.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace('Ł', 'L')))
      .join('');
    if (win1252Cache.size < 100_000) win1252Cache.set(name, v);
  }
  return v;
}

type Person = {
  i: number;
  profession: number;
  identity: Pick<FieldsOf<'savoirFaire'>, 'typeIdentifiant' | 'identifiantPP' | 'idnps' | 'nomExercice' | 'prenomExercice'>;
  civility: Pick<FieldsOf<'activity'>, 'codeCiviliteExercice' | 'libelleCiviliteExercice' | 'codeCivilite' | 'libelleCivilite'>;
  exercice: Pick<FieldsOf<'savoirFaire'>, 'codeProfession' | 'libelleProfession' | 'codeCategorie' | 'libelleCategorie'>;
  savoirFaire: Pick<FieldsOf<'savoirFaire'>, 'codeTypeSavoirFaire' | 'libelleTypeSavoirFaire' | 'codeSavoirFaire' | 'libelleSavoirFaire'>;
  activities: number;
  diploma: string | null;
  authorization: boolean;
  authority: string;
};

export interface DaySummary {
  /** persons present on the day, and how many of them go by their ADELI number. */
  persons: number;
  adeli: number;
  /** activity lines (distinct, before any file-level quirk), and those without a structure. */
  activities: number;
  withoutStructure: number;
}

/** The day's snapshot of the synthetic directory, as the lines of the three extracts. */
export class OpenDataModel {
  readonly seed: number;
  readonly day: number;
  readonly rate: number;
  readonly basePersons: number;
  /** persons that arrived by `day` (indexes basePersons and above). */
  readonly arrivals: number;
  readonly structureCount: number;
  private readonly noStructureShare: number;
  private readonly adeliShare: number;
  private readonly kinds: Uint8Array;
  private readonly pools: Record<StructureKind, Int32Array>;

  constructor(options: ModelOptions) {
    const { scale } = options;
    if (!(scale > 0) || scale > MAX_OPEN_DATA_SCALE) throw new RangeError(`scale must be > 0 and <= ${MAX_OPEN_DATA_SCALE}`);
    this.seed = options.seed >>> 0;
    this.day = options.day ?? 0;
    this.rate = options.changeRate ?? DEFAULT_CHANGE_RATE;
    if (!Number.isInteger(this.day) || this.day < 0) throw new RangeError('day must be an integer >= 0');
    if (!(this.rate >= 0 && this.rate <= 1)) throw new RangeError('changeRate must be between 0 and 1');
    this.noStructureShare = options.noStructureShare ?? DEFAULT_NO_STRUCTURE_SHARE;
    this.adeliShare = options.adeliShare ?? DEFAULT_ADELI_SHARE;
    this.basePersons = Math.max(1, Math.round(OPEN_DATA_NATIONAL.persons * scale));
    this.arrivals = Math.round(this.basePersons * this.rate * SHARE_OF_RATE.arrivals) * this.day;
    this.structureCount = Math.max(STRUCTURE_KINDS.length, Math.round(OPEN_DATA_NATIONAL.structures * scale));
    this.kinds = new Uint8Array(this.structureCount);
    const members: number[][] = STRUCTURE_KINDS.map(() => []);
    for (let j = 0; j < this.structureCount; j++) {
      // The first structures cover every kind, so that tiny scales have a place for every profession.
      const k = j < STRUCTURE_KINDS.length ? j : KIND_DIST.index(new Rng(this.seed, STREAM.kind, j));
      this.kinds[j] = k;
      members[k].push(j);
    }
    this.pools = Object.fromEntries(STRUCTURE_KINDS.map((k, i) => [k, Int32Array.from(members[i])])) as Record<StructureKind, Int32Array>;
  }

  /** Structure j on the model's day. */
  structureOn(j: number): StructureOfDay {
    const { seed, day } = this;
    const kind = STRUCTURE_KINDS[this.kinds[j]];
    const p = this.rate * SHARE_OF_RATE.structure;
    const s = structure(seed, j, kind, version(seed, CHANGE.structure, j, day, p));
    let lastChange = day;
    while (lastChange > 0 && !drawn(seed, CHANGE.structure, j, lastChange, p)) lastChange--;
    return { j, kind, city: s.city, fields: s.fields, lastChange };
  }

  /** Whether structure j's columns carry a FINESS site number (hospitals, clinics, EHPAD, laboratories, pharmacies). */
  isFiness(j: number): boolean {
    return FINESS_KINDS.has(STRUCTURE_KINDS[this.kinds[j]]);
  }

  private present(i: number): boolean {
    const { seed, day, rate } = this;
    if (i >= this.basePersons) return true;
    if (day > 0 && drawn(seed, CHANGE.absent, i, day, rate * SHARE_OF_RATE.absent)) return false;
    return version(seed, CHANGE.left, i, day, rate * SHARE_OF_RATE.left) === 0;
  }

  /** Every person of the day, present or not, in index order (ADELI numbers are counted along). */
  private *everyone(): Generator<{ person: Person; present: boolean }> {
    const adeliSerials = new Map<string, number>();
    for (let i = 0; i < this.basePersons + this.arrivals; i++) {
      const rng = new Rng(this.seed, STREAM.person, i);
      const p = PROFESSION_DIST.index(rng);
      const prof = PROFESSIONS[p];
      const female = rng.chance(prof.femaleShare);
      const given = extractName((female ? FEMALE_DIST : MALE_DIST).sample(rng));
      let family = extractName(familyName(rng));
      if (rng.chance(0.5)) family = family.replace(/'/g, '’');
      const military = rng.chance(MILITARY_SHARE);
      const student = !military && rng.chance(prof.studentShare);
      const category = military ? 'M' : student ? 'E' : rng.chance(CIVIL_SERVANT_SHARE) ? 'F' : 'C';
      const x = rng.next();
      const title = student ? '' : x < prof.prShare ? 'PR' : x < prof.prShare + prof.drShare ? 'DR' : '';
      const specialty = drawSpecialty(rng, p, student);
      const adeli = prof.authority === null && rng.chance(this.adeliShare);
      let idPP = rppsNumber(i);
      if (adeli) {
        const prefix = CITY_DIST.sample(rng).dept.slice(0, 2) + prof.code.padStart(2, '0').slice(0, 2);
        const serial = adeliSerials.get(prefix) ?? 0;
        if (serial > 99_999) throw new RangeError(`ADELI numbers ${prefix}xxxxx exhausted: lower the scale or the ADELI share`);
        adeliSerials.set(prefix, serial + 1);
        idPP = prefix + String(serial).padStart(5, '0');
      }
      const person: Person = {
        i,
        profession: p,
        identity: { typeIdentifiant: adeli ? '0' : '8', identifiantPP: idPP, idnps: `${adeli ? '0' : '8'}${idPP}`, nomExercice: family, prenomExercice: given },
        civility: {
          codeCiviliteExercice: title, libelleCiviliteExercice: title === 'DR' ? 'Docteur' : title === 'PR' ? 'Professeur' : '',
          codeCivilite: female ? 'MME' : 'M', libelleCivilite: CIVILITE[female ? 'MME' : 'M'],
        },
        exercice: {
          codeProfession: prof.code, libelleProfession: displayOf('TRE_G15-ProfessionSante', prof.code),
          codeCategorie: category, libelleCategorie: displayOf('TRE_R09-CategorieProfessionnelle', category),
        },
        savoirFaire: specialty
          ? { codeTypeSavoirFaire: 'S', libelleTypeSavoirFaire: 'Spécialité ordinale', codeSavoirFaire: specialty, libelleSavoirFaire: displayOf('TRE_R38-SpecialiteOrdinale', specialty) }
          : { codeTypeSavoirFaire: '', libelleTypeSavoirFaire: '', codeSavoirFaire: '', libelleSavoirFaire: '' },
        activities: ACTIVITY_COUNT.sample(rng),
        diploma: prof.degree && rng.chance(prof.degreeShare) ? prof.degree : null,
        authorization: rng.chance(0.01),
        authority: military ? 'SSA' : adeli ? 'ARS' : (prof.authority ?? 'ARS'),
      };
      // What changes in a person: the family name (a marriage).
      if (version(this.seed, CHANGE.name, i, this.day, this.rate * SHARE_OF_RATE.name) > 0) {
        person.identity.nomExercice = `${family}-${extractName(familyName(new Rng(this.seed, STREAM.marriage, i)))}`;
      }
      yield { person, present: this.present(i) };
    }
  }

  private *people(): Generator<Person> {
    for (const { person, present } of this.everyone()) if (present) yield person;
  }

  /** The Personne_activite lines: one per activity of each present person (a person's are distinct). */
  *activityLines(): Generator<FieldsOf<'activity'>> {
    const { seed, day, rate } = this;
    for (const person of this.people()) {
      const seen: string[] = [];
      for (let a = 0; a < person.activities; a++) {
        const rng = new Rng(seed, STREAM.activity, person.i * 4 + a);
        const replacement = rng.chance(this.noStructureShare);
        const pool = this.pools[WORKPLACE[groupOf(person.profession)].sample(rng)];
        const j = pool[skewedIndex(rng, pool.length, 1.3)];
        const s = replacement ? undefined : structure(seed, j, STRUCTURE_KINDS[this.kinds[j]], version(seed, CHANGE.structure, j, day, rate * SHARE_OF_RATE.structure));
        const mode = s ? MODE[s.kind].sample(rng) : 'L';
        const fonctions: readonly string[] = !s ? FONCTION.replacement
          : s.kind === 'pharmacy' && person.profession === PHARMACIST ? (mode === 'L' ? FONCTION.pharmacyL : FONCTION.pharmacyS) : FONCTION[mode];
        // What changes in an activity: its fonction (invisible in the 52-column form, which has none).
        const v = version(seed, CHANGE.activity, person.i * 4 + a, day, rate * SHARE_OF_RATE.activity);
        const fonction = fonctions[(rng.int(fonctions.length) + v) % fonctions.length];
        const genre = s ? (rng.chance(0.95) ? 'GENR01' : 'GENR04') : 'GENR02';
        const key = `${s?.fields.structureId}|${mode}|${fonction}|${genre}`;
        if (seen.includes(key)) continue;
        seen.push(key);
        const section = person.profession === PHARMACIST && s ? SECTIONS[s.kind] : undefined;
        // Object.assign, not spreads: V8 builds a many-property literal from spreads very slowly.
        yield Object.assign({}, person.identity, person.civility, person.exercice, person.savoirFaire, s?.fields ?? EMPTY_STRUCTURE, {
          codeModeExercice: mode, libelleModeExercice: displayOf('TRE_R23-ModeExercice', mode),
          autoriteEnregistrement: `${person.authority}/${person.authority === 'ARS' ? 'CPAM' : person.authority}/${s?.authority ?? 'Variable'}`,
          codeSectionPharmacien: section?.[0] ?? '', libelleSectionPharmacien: section?.[1] ?? '',
          codeFonction: fonction, libelleFonction: displayOf('TRE_R21-Fonction', fonction),
          codeGenreActivite: genre, libelleGenreActivite: displayOf('TRE_R22-GenreActivite', genre),
        });
      }
    }
  }

  /** The SavoirFaire lines: one per savoir-faire of each present person. */
  *savoirFaireLines(): Generator<FieldsOf<'savoirFaire'>> {
    for (const person of this.people()) {
      if (person.savoirFaire.codeSavoirFaire) yield Object.assign({}, person.identity, person.exercice, person.savoirFaire);
    }
  }

  /** The Dipl_AutExerc lines: the state diploma, and an authorisation for a few. */
  *diplomaLines(): Generator<FieldsOf<'diploma'>> {
    const none = { codeTypeDiplome: '', libelleTypeDiplome: '', codeDiplome: '', libelleDiplome: '' };
    const noAuthorization = { codeTypeAutorisation: '', libelleTypeAutorisation: '', codeDisciplineAutorisation: '', libelleDisciplineAutorisation: '' };
    for (const person of this.people()) {
      if (person.diploma) {
        yield Object.assign({}, person.identity, noAuthorization, {
          codeTypeDiplome: 'DE', libelleTypeDiplome: "Diplôme d'Etat français",
          codeDiplome: person.diploma, libelleDiplome: displayOf('TRE_R48-DiplomeEtatFrancais', person.diploma),
        });
      }
      if (person.authorization) {
        yield Object.assign({}, person.identity, none, noAuthorization, { codeTypeAutorisation: 'AM01', libelleTypeAutorisation: 'Autorisation de plein exercice' });
      }
    }
  }

  /** What the day holds, counted without writing it. */
  summary(): DaySummary {
    const out: DaySummary = { persons: 0, adeli: 0, activities: 0, withoutStructure: 0 };
    for (const p of this.people()) {
      out.persons++;
      if (p.identity.typeIdentifiant === '0') out.adeli++;
    }
    for (const line of this.activityLines()) {
      out.activities++;
      if (!line.structureId) out.withoutStructure++;
    }
    return out;
  }
}
