import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { readOpenData, type OpenDataRecord } from '../../src/opendata/read.ts';

/**
 * Header lines and data lines of the RPPS extracts as third-party readers of the real files show
 * them (copied by hand, not produced by the code under test).
 */

/** The 56-column Personne_activite header of a reader's test (note "Libellé civilité exercice", "coord. Structure"). */
export const HEADER_56 =
  "Type d'identifiant PP|Identifiant PP|Identification nationale PP|Code civilité d'exercice|Libellé civilité exercice|" +
  "Code civilité|Libellé civilité|Nom d'exercice|Prénom d'exercice|Code profession|Libellé profession|" +
  'Code catégorie professionnelle|Libellé catégorie professionnelle|Code type savoir-faire|Libellé type savoir-faire|' +
  'Code savoir-faire|Libellé savoir-faire|Code mode exercice|Libellé mode exercice|Numéro SIRET site|Numéro SIREN site|' +
  'Numéro FINESS site|Numéro FINESS établissement juridique|Identifiant technique de la structure|Raison sociale site|' +
  'Enseigne commerciale site|Complément destinataire (coord. structure)|Complément point géographique (coord. structure)|' +
  'Numéro Voie (coord. structure)|Indice répétition voie (coord. Structure)|Code type de voie (coord. structure)|' +
  'Libellé type de voie (coord. structure)|Libellé Voie (coord. structure)|Mention distribution (coord. structure)|' +
  'Bureau cedex (coord. structure)|Code postal (coord. structure)|Code commune (coord. structure)|' +
  'Libellé commune (coord. structure)|Code pays (coord. structure)|Libellé pays (coord. structure)|' +
  'Téléphone (coord. structure)|Téléphone 2 (coord. structure)|Télécopie (coord. structure)|' +
  'Adresse e-mail (coord. structure)|Code département (coord. structure)|Libellé département (coord. structure)|' +
  "Ancien identifiant de la structure|Autorité d'enregistrement|Code secteur d'activité|Libellé secteur d'activité|" +
  "Code section tableau pharmaciens|Libellé section tableau pharmaciens|Code fonction|Libellé fonction|Code genre d'activité|" +
  "Libellé genre d'activité|";

/** The 52-column form of another reader ("Libellé civilité d'exercice", "Code Département (structure)"). */
export const HEADER_52 =
  "Type d'identifiant PP|Identifiant PP|Identification nationale PP|Code civilité d'exercice|Libellé civilité d'exercice|" +
  "Code civilité|Libellé civilité|Nom d'exercice|Prénom d'exercice|Code profession|Libellé profession|" +
  'Code catégorie professionnelle|Libellé catégorie professionnelle|Code type savoir-faire|Libellé type savoir-faire|' +
  'Code savoir-faire|Libellé savoir-faire|Code mode exercice|Libellé mode exercice|Numéro SIRET site|Numéro SIREN site|' +
  'Numéro FINESS site|Numéro FINESS établissement juridique|Identifiant technique de la structure|Raison sociale site|' +
  'Enseigne commerciale site|Complément destinataire (coord. structure)|Complément point géographique (coord. structure)|' +
  'Numéro Voie (coord. structure)|Indice répétition voie (coord. structure)|Code type de voie (coord. structure)|' +
  'Libellé type de voie (coord. structure)|Libellé Voie (coord. structure)|Mention distribution (coord. structure)|' +
  'Bureau cedex (coord. structure)|Code postal (coord. structure)|Code commune (coord. structure)|' +
  'Libellé commune (coord. structure)|Code pays (coord. structure)|Libellé pays (coord. structure)|' +
  'Téléphone (coord. structure)|Téléphone 2 (coord. structure)|Télécopie (coord. structure)|' +
  'Adresse e-mail (coord. structure)|Code Département (structure)|Libellé Département (structure)|' +
  "Ancien identifiant de la structure|Autorité d'enregistrement|Code secteur d'activité|Libellé secteur d'activité|" +
  'Code section tableau pharmaciens|Libellé section tableau pharmaciens|';

export const HEADER_SAVOIR_FAIRE =
  "Type d'identifiant PP|Identifiant PP|Identification nationale PP|Nom d'exercice|Prénom d'exercice|Code profession|" +
  'Libellé profession|Code catégorie professionnelle|Libellé catégorie professionnelle|Code type savoir-faire|' +
  'Libellé type savoir-faire|Code savoir-faire|Libellé savoir-faire|';

export const HEADER_DIPLOMA =
  "Type d'identifiant PP|Identifiant PP|Identification nationale PP|Nom d'exercice|Prénom d'exercice|" +
  'Code type diplôme obtenu|Libellé type diplôme obtenu|Code diplôme obtenu|Libellé diplôme obtenu|Code type autorisation|' +
  'Libellé type autorisation|Code discipline autorisation|Libellé discipline autorisation|';

/** 52-column lines seen in readers' tests. */
export const LINE_ADELI_OPTICIAN =
  '0|012600631|0012600631|||M|Monsieur|PETITGUYOT|ALEXANDRE|26|Audioprothésiste|C|Civil|||||S|Salarié|49940088500020||||' +
  'C49940088500020|DOUBS OPTIC||DOUBS OPTIC||9||RTE|Route|DE BESANCON||25300 DOUBS|25300|||||||||||349940088500020|' +
  'ARS/Variable/Variable|SA42|Appareillage médical|||';
export const LINE_ADELI_PARIS = [
  '0', '759124159', '0759124159', '', '', 'MME', 'Madame', 'DE RUIJTER', 'ISABELLE', '91', 'Orthophoniste', 'C', 'Civil', '', '',
  '', '', 'L', 'Libéral', '', '', '', '', 'C75912415900', 'CABINET MME DE RUIJTER', '', 'CABINET MME DE RUIJTER', '', 'P', '',
  'PL', 'Place', 'VIOLET', 'CDS ANSELME PAYEN EPHPAD', '75015 PARIS', '75015', '', '', '', '', '0148237096', '', '', '', '', '',
  '075912415900', 'ARS/CPAM/CPAM', 'SA07', 'Cabinet individuel', '', '',
].join('|') + '|';
export const LINE_RPPS_ABROAD = [
  '8', '10001045367', '810001045367', 'DR', 'Docteur', 'M', 'Monsieur', 'GUIGNARD', 'ERIC', '10', 'Médecin', 'C', 'Civil', 'S',
  'Spécialité ordinale', 'SM49', 'Santé publique et médecine sociale', 'S', 'Salarié', '85131528300016', '', '', '',
  'R10100000328372', 'AIMMUNE THERAPEUTICS UK LIMITED', 'AIMMUNE THERAPEUTICS', 'AIMMUNE THERAPEUTICS UK LIMITED', '', '', '',
  '', '', 'CARRICK HOUSE LYPIATT ROAD', '', 'GL 5O 2QJ CHELTENHAM', 'GL', '', '', '99132', 'Royaume-uni', '', '', '', '', '', '',
  '385131528300016', 'CNOM/CNOM/CNOM', 'SA32', 'Fab. Exploit. Import. Méd. DM', '', '',
].join('|') + '|';
export const LINE_RPPS_HOSPITAL =
  '8|10100271385|810100271385|DR|Docteur|M|Monsieur|LEGER|ROMAIN|10|Médecin|C|Civil|S|Spécialité ordinale|SM53|' +
  'Spécialiste en Médecine Générale|S|Salarié|26250462400012||250000700|250000452|F250000700|' +
  'CHI HC SITE RIVES DU DOUBS PONTARLIER||||2||FG|Faubourg|SAINT ETIENNE|CS 10329|25304 PONTARLIER CEDEX|25304|25462|' +
  'Pontarlier|||0381385454||0381385480|contact@chi-hautecomte.fr|||1250000700|CNOM/CNOM/ARS|SA01|' +
  'Etablissement Public de santé|||';

/** A 52-column line made a 56-column one by adding fonction and genre d'activité. */
export const to56 = (line52: string, fonction: [string, string], genre: [string, string]) =>
  `${line52}${fonction.join('|')}|${genre.join('|')}|`;

export function tmpDir(t: { teardown(fn: () => void): void }, label = 'opendata'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Collected {
  records: OpenDataRecord[];
  rejects: string[];
  skips: string[];
}

/** Everything the reader gives for these paths, rejects and skips as `where: reason`. */
export async function collect(paths: string[]): Promise<Collected> {
  const out: Collected = { records: [], rejects: [], skips: [] };
  const events = { reject: (w: string, r: string) => out.rejects.push(`${w}: ${r}`), skip: (f: string, r: string) => out.skips.push(`${f}: ${r}`) };
  for await (const r of readOpenData(paths, events)) out.records.push(r);
  return out;
}

/** A ZIP archive of these entries, written with yazl (deflated unless `store`). */
export async function writeZip(file: string, entries: Record<string, string | Buffer>, store = false): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith('/')) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(content), name, { compress: !store });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  const bytes = Buffer.concat(chunks);
  fs.writeFileSync(file, bytes);
  return bytes;
}
