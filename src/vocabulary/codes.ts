/**
 * The code tables: every code the directory's data may carry, with its real label or none. The
 * NOS and IG tables shipped with the server are read from terminology/ (the IG's CodeSystem
 * resources and ans-codes.csv), the one copy of them: src/terminology.ts stores the same rows for
 * $lookup and :text. A few systems used only by the generator's Device and HealthcareService are
 * listed below.
 */

import { shippedCodeRows } from '../terminology.ts';
import { CODE_SYSTEMS, type SystemKey } from './systems.ts';

/**
 * Tables not shipped to the server. Codes and labels copied from the published NOS value sets
 * (ansforge/IG-terminologie-de-sante: JDV_J135, JDV_J133, JDV_J132, JDV_J134); only a subset is used.
 */
export const EXTRA_CODE_SYSTEMS = {
  'TRE_R272-EquipementMaterielLourd': [
    ['05602', 'Scanographe à utilisation médicale'],
    ['05701', "Caméra à scintillation sans détecteur d'émission de positons"],
    ['05702', "Caméra à scintillation avec détecteur d'émission de positons"],
    ['05705', 'Tomographe à émissions'],
    ['05706', 'Caméra à positons'],
    ['06201', "Appareil d'IRM à utilisation clinique"],
    ['06301', 'Cyclotron à utilisation médicale'],
    ['44901', 'Caisson hyperbare'],
  ],
  'TRE_R274-ActiviteSanitaireRegulee': [
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
  'TRE_R275-ModaliteActivite': [
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
  'TRE_R276-FormeActivite': [
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
} as const satisfies Partial<Record<SystemKey, readonly (readonly [string, string])[]>>;

/** system key → code → label, each system's codes in table order. */
const TABLES = new Map<SystemKey, Map<string, string>>();

function add(key: SystemKey, code: string, label: string, where: string): void {
  let table = TABLES.get(key);
  if (table === undefined) TABLES.set(key, (table = new Map()));
  if (table.has(code)) throw new Error(`${where}: ${key}|${code} listed twice`);
  table.set(code, label);
}

for (const row of shippedCodeRows()) {
  const key = row.system_key as SystemKey;
  const where = `terminology/ (${row.source})`;
  if (CODE_SYSTEMS[key] !== row.system_url) throw new Error(`${where}: system ${row.system_key} ${row.system_url} is not in src/vocabulary/systems.ts`);
  add(key, row.code, row.display, where);
}
for (const [key, codes] of Object.entries(EXTRA_CODE_SYSTEMS) as [SystemKey, readonly (readonly [string, string])[]][]) {
  for (const [code, label] of codes) add(key, code, label, 'EXTRA_CODE_SYSTEMS');
}

function tableOf(key: SystemKey): Map<string, string> {
  const table = TABLES.get(key);
  if (table === undefined) throw new Error(`No code table for ${key}`);
  return table;
}

/** The label of `key|code`: '' for a code listed without one (none is better than a made-up one). */
export function displayOf(key: SystemKey, code: string): string {
  const d = tableOf(key).get(code);
  if (d === undefined) throw new Error(`Unknown code ${key}|${code}`);
  return d;
}

export type Coding = { readonly system: string; readonly code: string; readonly display?: string };

/**
 * A coding for `key|code`. Throws for a code absent from the tables, so a typo can never reach
 * the output. A code listed without a label gets no display, never an empty one.
 */
export function coding(key: SystemKey, code: string, withDisplay = false): Coding {
  const display = displayOf(key, code);
  return withDisplay && display ? { system: CODE_SYSTEMS[key], code, display } : { system: CODE_SYSTEMS[key], code };
}

/** All codes of a system, in table order. */
export function codesOf(key: SystemKey): string[] {
  return [...tableOf(key).keys()];
}
