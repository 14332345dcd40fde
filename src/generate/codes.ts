// Terminology used by the generator: the embedded ANS CSV (csv-codes.ts) plus a handful of
// systems the CSV does not cover (heavy equipment, regulated activities, communes).
// Every coding is built through `coding()`, which refuses a code that is not in these tables.

import { CSV_CODE_SYSTEMS, type CsvSystemKey } from './csv-codes.ts';

export { CSV_CODE_SYSTEMS, CSV_ROW_COUNT, type CsvSystemKey } from './csv-codes.ts';

/**
 * Systems outside the CSV. Codes and displays copied from the published NOS value sets
 * (ansforge/IG-terminologie-de-sante: JDV_J135, JDV_J133, JDV_J132, JDV_J134); only a subset is used.
 */
export const EXTRA_CODE_SYSTEMS = {
  'TRE_R272-EquipementMaterielLourd': {
    url: 'https://mos.esante.gouv.fr/NOS/TRE_R272-EquipementMaterielLourd/FHIR/TRE-R272-EquipementMaterielLourd',
    codes: [
      ['05602', 'Scanographe à utilisation médicale'],
      ['05701', "Caméra à scintillation sans détecteur d'émission de positons"],
      ['05702', "Caméra à scintillation avec détecteur d'émission de positons"],
      ['05705', 'Tomographe à émissions'],
      ['05706', 'Caméra à positons'],
      ['06201', "Appareil d'IRM à utilisation clinique"],
      ['06301', 'Cyclotron à utilisation médicale'],
      ['44901', 'Caisson hyperbare'],
    ],
  },
  'TRE_R274-ActiviteSanitaireRegulee': {
    url: 'https://mos.esante.gouv.fr/NOS/TRE_R274-ActiviteSanitaireRegulee/FHIR/TRE-R274-ActiviteSanitaireRegulee',
    codes: [
      ['01', 'Médecine'],
      ['02', 'Chirurgie'],
      ['03', 'Gynécologie, obstétrique, néonatologie, réanimation néonatale'],
      ['04', 'Psychiatrie'],
      ['07', 'Soins de longue durée'],
      ['14', "Médecine d'urgence"],
      ['15', 'Réanimation'],
      ['16', "Traitement de l'insuffisance rénale chronique par épuration extrarénale"],
      ['18', 'Traitement du cancer'],
      ['50', 'Soins de suite et de réadaptation non spécialisés'],
      ['R4', 'Soins palliatifs'],
    ],
  },
  'TRE_R275-ModaliteActivite': {
    url: 'https://mos.esante.gouv.fr/NOS/TRE_R275-ModaliteActivite/FHIR/TRE-R275-ModaliteActivite',
    codes: [
      ['00', 'Pas de modalité'],
      ['01', 'Gynécologie obstétrique'],
      ['02', 'Néonatologie sans soins intensifs'],
      ['03', 'Néonatologie avec soins intensifs'],
      ['06', 'Générale'],
      ['07', 'Infanto-juvénile'],
      ['09', 'Adulte (age >=18 ans)'],
      ['10', 'Pédiatrique'],
      ['22', "SAMU Service d'aide médicale urgente"],
      ['23', 'SU Structure des urgences'],
      ['26', "SMUR Structure mobile d'urgence et de réanimation"],
      ['40', 'Hémodialyse en centre pour adultes'],
      ['42', 'Hémodialyse en unité médicalisée'],
      ['43', "Hémodialyse en unité d'auto dialyse simple"],
      ['46', 'Dialyse péritonéale à domicile'],
      ['67', 'Chimiothérapie ou autres traitements médicaux spécifiques du cancer'],
      ['68', 'Radiothérapie externe'],
      ['76', 'Adulte et pédiatrique'],
      ['N1', 'Unité de soins palliatifs'],
      ['N4', 'Equipe mobile'],
    ],
  },
  'TRE_R276-FormeActivite': {
    url: 'https://mos.esante.gouv.fr/NOS/TRE_R276-FormeActivite/FHIR/TRE-R276-FormeActivite',
    codes: [
      ['00', 'Pas de forme'],
      ['01', 'Hospitalisation complète (24 heures consécutives ou plus)'],
      ['02', 'Hospitalisation à temps partiel de jour ou de nuit'],
      ['03', 'Hospitalisation à temps partiel de jour'],
      ['05', 'Hospitalisation à domicile (au domicile du patient)'],
      ['07', 'Chirurgie ambulatoire'],
      ['14', 'Non saisonnier'],
      ['15', 'Forme non précisée'],
      ['28', 'Equipe mobile'],
    ],
  },
} as const;

export type ExtraSystemKey = keyof typeof EXTRA_CODE_SYSTEMS;
export type SystemKey = CsvSystemKey | ExtraSystemKey;

/** INSEE commune codes (TRE_R13) come from the place table in places.ts, not from a code list. */
export const COMMUNE_SYSTEM = 'https://mos.esante.gouv.fr/NOS/TRE_R13-Commune/FHIR/TRE-R13-Commune';

export type Coding = { readonly system: string; readonly code: string; readonly display?: string };

const ALL: Record<string, { url: string; codes: readonly (readonly [string, string])[] }> = {
  ...CSV_CODE_SYSTEMS,
  ...EXTRA_CODE_SYSTEMS,
};

const index = new Map<string, Map<string, string>>();
for (const [key, sys] of Object.entries(ALL)) {
  index.set(key, new Map(sys.codes.map(([c, d]) => [c, d])));
}

/** The URL of a NOS terminology from its key: `https://mos.esante.gouv.fr/NOS/<key>/FHIR/<key with - for _>`. */
export function nosUrl(key: string): string {
  return `https://mos.esante.gouv.fr/NOS/${key}/FHIR/${key.replace(/_/g, '-')}`;
}

export function systemUrl(key: SystemKey): string {
  return ALL[key].url;
}

export function hasCode(key: SystemKey, code: string): boolean {
  return index.get(key)?.has(code) ?? false;
}

export function displayOf(key: SystemKey, code: string): string {
  const d = index.get(key)?.get(code);
  if (d === undefined) throw new Error(`Unknown code ${key}|${code}`);
  return d;
}

/**
 * A coding for `key|code`. Throws at table-building time for a code absent from the tables,
 * so a typo can never reach the output. Returned objects are shared and must not be mutated.
 */
export function coding(key: SystemKey, code: string, withDisplay = false): Coding {
  const display = displayOf(key, code);
  return withDisplay ? { system: ALL[key].url, code, display } : { system: ALL[key].url, code };
}

/** All codes of a system, in table order. */
export function codesOf(key: SystemKey): string[] {
  return ALL[key].codes.map(([c]) => c);
}

/** Frequently used system URLs (plain constants for builders). */
export const URL = {
  idType: systemUrl('fr-core-cs-v2-0203'),
  orgType: systemUrl('fr-core-cs-v2-3307'),
  g15: systemUrl('TRE_G15-ProfessionSante'),
  r09: systemUrl('TRE_R09-CategorieProfessionnelle'),
  r14: systemUrl('TRE_R14-TypeDiplome'),
  r48: systemUrl('TRE_R48-DiplomeEtatFrancais'),
  r38: systemUrl('TRE_R38-SpecialiteOrdinale'),
  r21: systemUrl('TRE_R21-Fonction'),
  r22: systemUrl('TRE_R22-GenreActivite'),
  r23: systemUrl('TRE_R23-ModeExercice'),
  r60: systemUrl('TRE_R60-AutoriteEnregistrement'),
  r87: systemUrl('TRE_R87-TypeCarte'),
  r256: systemUrl('TRE_R256-TypeMessagerie'),
  r257: systemUrl('TRE_R257-TypeBAL'),
} as const;

// ---- Pre-serialised JSON fragments (the builders emit JSON text directly, for speed) ------------

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
