import fs from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';
import t from 'tap';
import { foldHeader, recognise, whyUnrecognised } from '../src/vocabulary/formats/rpps.ts';
import { decodeLine } from '../src/opendata/lines.ts';
import { OpenDataError, readOpenData, recordsOf, type OpenDataRecord } from '../src/opendata/read.ts';
import {
  collect, HEADER_52, HEADER_56, HEADER_DIPLOMA, HEADER_SAVOIR_FAIRE, LINE_ADELI_OPTICIAN, LINE_ADELI_PARIS, LINE_RPPS_ABROAD,
  LINE_RPPS_HOSPITAL, tmpDir, to56, writeZip,
} from './helpers/open-data.ts';

const fields = (header: string) => header.split('|').slice(0, -1);
const valuesOf = (r: OpenDataRecord) => r.fields as Record<string, string>;
const SF_LINE = '8|10001045367|810001045367|GUIGNARD|ERIC|10|Médecin|C|Civil|S|Spécialité ordinale|SM49|Santé publique et médecine sociale|';
const DIPLOMA_LINE = '8|10001045367|810001045367|GUIGNARD|ERIC|DE|Diplôme d\'Etat français|DE05|DE Docteur en médecine|||||';

t.test('header texts fold to their meaning', async (t) => {
  t.equal(foldHeader("Nom d'exercice"), foldHeader('NOM D’EXERCICE'));
  t.equal(foldHeader('Libellé  catégorie professionnelle'), foldHeader('libelle categorie professionnelle'));
  t.equal(foldHeader('Code postal (coord. structure)'), foldHeader('Code postal'));
  t.equal(foldHeader('Indice répétition voie (coord. Structure)'), foldHeader('Indice repetition voie'));
  t.equal(foldHeader('Code Département (structure)'), foldHeader('Code département (coord. structure)'));
  t.equal(foldHeader('Code type savoir-faire'), foldHeader('Code type savoir faire'));
  t.not(foldHeader('Code profession'), foldHeader('Code fonction'));
});

t.test('recognising headers', async (t) => {
  const a56 = recognise(fields(HEADER_56));
  t.equal(a56?.kind, 'activity');
  t.equal(a56?.width, 56);
  t.match(a56?.index, { typeIdentifiant: 0, libelleCiviliteExercice: 4, structureId: 23, codeDepartement: 44, codeFonction: 52, libelleGenreActivite: 55 });

  const a52 = recognise(fields(HEADER_52));
  t.equal(a52?.kind, 'activity', 'the older form without fonction and genre');
  t.equal(a52?.width, 52);
  t.equal((a52?.index as Record<string, number>).codeFonction, undefined);
  t.equal((a52?.index as Record<string, number>).codeSectionPharmacien, 50);

  t.equal(recognise(fields(HEADER_SAVOIR_FAIRE))?.kind, 'savoirFaire');
  t.equal(recognise(fields(HEADER_DIPLOMA))?.kind, 'diploma');

  const shuffled = fields(HEADER_SAVOIR_FAIRE).reverse();
  shuffled.splice(3, 0, 'Date de mise à jour');
  const sf = recognise(shuffled);
  t.equal(sf?.kind, 'savoirFaire', 'order free, unknown columns ignored');
  t.equal(sf?.width, 14);
  t.equal((sf?.index as Record<string, number>).codeSavoirFaire, 1);
  t.equal((sf?.index as Record<string, number>).idnps, 11);

  const variant = fields(HEADER_56).map((h) => h.toUpperCase().replace(/'/g, '’').replace(' (coord. structure)', '').replace(/ /g, '  '));
  t.equal(recognise(variant)?.kind, 'activity', 'case, apostrophes, spacing and the suffix folded');
  t.equal(recognise(fields(HEADER_56).map((h) => h.normalize('NFD').replace(/[\u0300-\u036f]/g, '')))?.kind, 'activity', 'accents folded');
  t.equal(recognise([...fields(HEADER_56).slice(0, 52), 'Code rôle', 'Libellé rôle', 'Code genre activité', 'Libellé genre activité'])?.index.codeFonction, 52);

  const noPostalCode = fields(HEADER_56).filter((h) => h !== 'Code postal (coord. structure)');
  t.equal(recognise(noPostalCode), undefined, 'a required column missing: not taken for a SavoirFaire header either');
  t.equal(whyUnrecognised(noPostalCode), 'a Personne_activite header without "Code postal (coord. structure)"');
  const twice = [...fields(HEADER_DIPLOMA), 'Code diplôme obtenu'];
  t.equal(recognise(twice), undefined, 'a column named twice');
  t.equal(whyUnrecognised(twice), 'a Dipl_AutExerc header with "Code diplôme obtenu" twice');
  t.equal(recognise([...fields(HEADER_SAVOIR_FAIRE), 'Code type autorisation']), undefined, 'a column of another kind');
  t.equal(recognise(['nofinesset', 'nofinessej', 'rs', 'rslongue']), undefined);
});

t.test('Windows-1252 bytes are decoded with its 0x80–0x9F characters', async (t) => {
  t.equal(decodeLine(Buffer.from([0x43, 0x9c, 0x75, 0x72])), 'Cœur');
  t.equal(decodeLine(Buffer.from([0x4c, 0x92, 0x48, 0xd4, 0x54, 0x45])), 'L’HÔTE');
  t.equal(decodeLine(Buffer.from('Cœur L’Hôte', 'utf8')), 'Cœur L’Hôte');
});

t.test('UTF-8 with a BOM and CRLF', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'activite.txt');
  fs.writeFileSync(file, `\uFEFF${HEADER_52}\r\n${LINE_RPPS_HOSPITAL}\r\n\r\n${LINE_ADELI_PARIS}\r\n`);
  const { records, rejects, skips } = await collect([file]);
  t.same(rejects, []);
  t.same(skips, []);
  t.same(records.map((r) => r.where), [`${file}:2`, `${file}:4`], 'empty lines skipped, lines numbered as in the file');
  const [hospital, paris] = records;
  t.equal(hospital.kind, 'activity');
  t.match(hospital.fields, {
    typeIdentifiant: '8', identifiantPP: '10100271385', idnps: '810100271385', nomExercice: 'LEGER', codeSavoirFaire: 'SM53',
    structureId: 'F250000700', mentionDistribution: 'CS 10329', libelleCommune: 'Pontarlier', email: 'contact@chi-hautecomte.fr',
    ancienIdentifiantStructure: '1250000700', autoriteEnregistrement: 'CNOM/CNOM/ARS', libelleSecteurActivite: 'Etablissement Public de santé',
    codeFonction: '', codeGenreActivite: '',
  });
  t.equal(valuesOf(paris).numeroVoie, 'P');
  t.equal(valuesOf(paris).bureauCedex, '75015 PARIS');
});

t.test('Windows-1252 files, and a file mixing both encodings line by line', async (t) => {
  const dir = tmpDir(t);
  const sf = `8|10000000001|810000000001|CŒUR|ANNE-SOPHIE|10|Médecin|C|Civil|S|Spécialité ordinale|SM54|Médecine générale|`;
  const apostrophe = `8|10000000002|810000000002|L’HÔTE|JOËL|10|Médecin|C|Civil|S|Spécialité ordinale|SM04|Cardiologie et maladies vasculaires|`;
  const win = path.join(dir, 'win.txt');
  fs.writeFileSync(win, iconv.encode(`${HEADER_SAVOIR_FAIRE}\n${sf}\n${apostrophe}\n`, 'win1252'));
  const mixed = path.join(dir, 'mixed.txt');
  fs.writeFileSync(mixed, Buffer.concat([Buffer.from(`${HEADER_SAVOIR_FAIRE}\n${sf}\n`, 'utf8'), iconv.encode(`${apostrophe}\n`, 'win1252')]));
  for (const file of [win, mixed]) {
    const { records, rejects } = await collect([file]);
    t.same(rejects, []);
    t.same(records.map((r) => [r.fields.nomExercice, r.fields.prenomExercice, valuesOf(r).libelleProfession]), [
      ['CŒUR', 'ANNE-SOPHIE', 'Médecin'],
      ['L’HÔTE', 'JOËL', 'Médecin'],
    ], path.basename(file));
  }
});

t.test('bad lines are reported as file:line: reason and skipped', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'sf.txt');
  const short = SF_LINE.split('|').slice(0, 12).join('|') + '|';
  const long = `${SF_LINE}extra|`;
  fs.writeFileSync(file, [HEADER_SAVOIR_FAIRE, SF_LINE, short, '', long, `  ${SF_LINE.replace('GUIGNARD', ' GUIGNARD ')}`].join('\n'));
  const { records, rejects } = await collect([file]);
  t.same(rejects, [`${file}:3: 12 fields, expected 13`, `${file}:5: 14 fields, expected 13`]);
  t.same(records.map((r) => r.where), [`${file}:2`, `${file}:6`]);
  t.equal(records[1].fields.typeIdentifiant, '8', 'values are trimmed');
  t.equal(records[1].fields.nomExercice, 'GUIGNARD');
});

t.test('the 52- and 56-column forms give the same keys', async (t) => {
  const dir = tmpDir(t);
  const f52 = path.join(dir, '52.txt');
  const f56 = path.join(dir, '56.txt');
  fs.writeFileSync(f52, `${HEADER_52}\n${LINE_ADELI_OPTICIAN}\n`);
  fs.writeFileSync(f56, `${HEADER_56}\n${to56(LINE_ADELI_OPTICIAN, ['FON-AU', 'Autre fonction'], ['GENR01', 'Activité de soin et de pharmacie'])}\n`);
  const { records, rejects } = await collect([f52, f56]);
  t.same(rejects, []);
  t.equal(records.length, 2);
  t.same(Object.keys(records[0].fields).sort(), Object.keys(records[1].fields).sort());
  t.match(records[0].fields, { codeFonction: '', libelleFonction: '', codeGenreActivite: '', codeModeExercice: 'S', siret: '49940088500020' });
  t.match(records[1].fields, { codeFonction: 'FON-AU', libelleFonction: 'Autre fonction', codeGenreActivite: 'GENR01', siret: '49940088500020' });
});

t.test('an unrecognised file is reported once; folders are read recursively, in order', async (t) => {
  const dir = tmpDir(t);
  fs.mkdirSync(path.join(dir, 'b'));
  fs.writeFileSync(path.join(dir, 'a-notes.txt'), 'nofinesset;nofinessej;rs\n' + 'x;y;z\n'.repeat(1000));
  fs.writeFileSync(path.join(dir, 'b', 'dipl.txt'), `${HEADER_DIPLOMA}\n${DIPLOMA_LINE}\n`);
  fs.writeFileSync(path.join(dir, 'c-empty.txt'), '\n\n');
  fs.writeFileSync(path.join(dir, 'sf.txt'), `${HEADER_SAVOIR_FAIRE}\n${SF_LINE}\n`);
  const { records, rejects, skips } = await collect([dir]);
  t.same(rejects, []);
  t.equal(skips.length, 2);
  t.equal(skips[0], `${path.join(dir, 'a-notes.txt')}: not a PS_LibreAcces extract (no column of Personne_activite, SavoirFaire or Dipl_AutExerc)`);
  t.equal(skips[1], `${path.join(dir, 'c-empty.txt')}: not a PS_LibreAcces extract (no header line)`);
  t.same(records.map((r) => [r.kind, r.where]), [
    ['diploma', `${path.join(dir, 'b', 'dipl.txt')}:2`],
    ['savoirFaire', `${path.join(dir, 'sf.txt')}:2`],
  ]);
  t.match(records[0].fields, { codeTypeDiplome: 'DE', codeDiplome: 'DE05', libelleDiplome: 'DE Docteur en médecine', codeTypeAutorisation: '' });
});

t.test('records are pulled as they are read, not after the file', async (t) => {
  let pulled = 0;
  async function* chunks() {
    yield Buffer.from(`${HEADER_SAVOIR_FAIRE}\n`);
    for (let i = 0; i < 10_000; i++) {
      pulled++;
      yield Buffer.from(`${SF_LINE}\n`.repeat(100));
    }
  }
  const events = { reject: () => t.fail('no reject'), skip: () => t.fail('no skip') };
  let seen = 0;
  for await (const r of recordsOf('big.txt', chunks(), events)) {
    t.equal(r.kind, 'savoirFaire');
    if (++seen === 150) break;
  }
  t.equal(pulled, 2, 'two chunks were read to give 150 records');
});

t.test('ZIP archives: entries are read by their header, reported as archive!entry:line', async (t) => {
  const dir = tmpDir(t);
  const zip = path.join(dir, 'PS_LibreAcces.zip');
  await writeZip(zip, {
    'PS_LibreAcces_Personne_activite_202611270000.txt': `${HEADER_52}\r\n${LINE_RPPS_ABROAD}\r\n${LINE_ADELI_OPTICIAN.slice(0, -1)}\r\n`,
    'PS_LibreAcces_SavoirFaire_202611270000.txt': iconv.encode(`${HEADER_SAVOIR_FAIRE}\n${SF_LINE.replace('GUIGNARD', 'CŒUR')}\n`, 'win1252'),
    'LISEZMOI.txt': 'Fichiers extraits\n',
    'docs/': '',
  });
  const { records, rejects, skips } = await collect([zip]);
  t.same(rejects, [`${zip}!PS_LibreAcces_Personne_activite_202611270000.txt:3: 51 fields, expected 52`]);
  t.same(skips, [`${zip}!LISEZMOI.txt: not a PS_LibreAcces extract (no column of Personne_activite, SavoirFaire or Dipl_AutExerc)`], 'directories are no entries');
  t.same(records.map((r) => r.where), [
    `${zip}!PS_LibreAcces_Personne_activite_202611270000.txt:2`,
    `${zip}!PS_LibreAcces_SavoirFaire_202611270000.txt:2`,
  ]);
  t.equal(records[1].fields.nomExercice, 'CŒUR');
  t.equal(valuesOf(records[0]).libellePays, 'Royaume-uni');
});

/** Records obtained before the read fails, and the failure. */
async function until(paths: string[]): Promise<{ before: number; error: unknown }> {
  let before = 0;
  try {
    for await (const _ of readOpenData(paths, { reject: () => {}, skip: () => {} })) before++;
  } catch (error) {
    return { before, error };
  }
  return { before, error: undefined };
}

t.test('a truncated or damaged ZIP fails with one clear message, before any record', async (t) => {
  const dir = tmpDir(t);
  const plain = path.join(dir, 'sf.txt');
  fs.writeFileSync(plain, `${HEADER_SAVOIR_FAIRE}\n${SF_LINE}\n`);
  let content = HEADER_SAVOIR_FAIRE + '\n';
  for (let i = 0; i < 3000; i++) content += `8|1000000${String(i).padStart(4, '0')}|81000000${String(i).padStart(4, '0')}|NOM${i}|PRENOM|10|Médecin|C|Civil|S|Spécialité ordinale|SM54|Médecine générale|\n`;
  const whole = await writeZip(path.join(dir, 'whole.zip'), { 'sf.txt': content });

  const truncated = path.join(dir, 'truncated.zip');
  fs.writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length * 0.7)));
  let r = await until([plain, truncated]);
  t.ok(r.error instanceof OpenDataError);
  t.equal((r.error as Error).message, `${truncated}: not a complete ZIP archive (truncated download?)`);
  t.equal(r.before, 0, 'nothing read, not even the plain file named first');

  const inflated = path.join(dir, 'inflate.zip');
  const damaged = Buffer.from(whole);
  for (let i = 0; i < 16; i++) damaged[200 + i] ^= 0x5a;
  fs.writeFileSync(inflated, damaged);
  r = await until([plain, inflated]);
  t.ok(r.error instanceof OpenDataError);
  t.match((r.error as Error).message, `${inflated}!sf.txt: corrupt ZIP entry (`);
  t.equal(r.before, 0);

  const stored = await writeZip(path.join(dir, 'stored.zip'), { 'sf.txt': content }, true);
  const crc = path.join(dir, 'crc.zip');
  const flipped = Buffer.from(stored);
  flipped[stored.indexOf('NOM1500')] = 'X'.charCodeAt(0);
  fs.writeFileSync(crc, flipped);
  r = await until([plain, crc]);
  t.ok(r.error instanceof OpenDataError);
  t.equal((r.error as Error).message, `${crc}!sf.txt: corrupt ZIP entry (CRC-32 mismatch)`);
  t.equal(r.before, 0);

  r = await until([path.join(dir, 'stored.zip')]);
  t.equal(r.error, undefined, 'the undamaged archive reads');
  t.equal(r.before, 3000);
});
