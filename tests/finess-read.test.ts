import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { EXT } from '../src/vocabulary/extensions.ts';
import { establishmentId, isFiness, legalEntityId } from '../src/vocabulary/formats/finess.ts';
import {
  banPrecision, finessKind, readFiness, sniffFiness, wgs84Of, type EstablishmentRecord, type FinessRecord, type LegalEntityRecord,
} from '../src/opendata/finess-read.ts';
import { establishmentOf, legalEntityOf } from '../src/opendata/finess-map.ts';
import { finessDigest } from '../src/opendata/stage-finess.ts';
import { OpenDataError } from '../src/opendata/zip.ts';
import { tmpDir } from './helpers/open-data.ts';

const SAMPLE = path.join(import.meta.dirname, 'fixtures', 'finess', 'daily.json');
const SAMPLE_TEXT = fs.readFileSync(SAMPLE, 'utf8');
const TODAY = '2026-03-09';

interface Read {
  records: FinessRecord[];
  rejects: string[];
  bytes: number;
}

async function read(file: string): Promise<Read> {
  const out: Read = { records: [], rejects: [], bytes: 0 };
  const events = { reject: (where: string, reason: string) => out.rejects.push(`${where}: ${reason}`), bytes: (n: number) => (out.bytes += n) };
  for await (const r of readFiness(file, events)) out.records.push(r);
  return out;
}

const byFiness = (records: FinessRecord[], finess: string) => records.find((r) => r.finess === finess)!;
const establishment = (records: FinessRecord[], finess: string) => byFiness(records, finess) as EstablishmentRecord;
const legal = (records: FinessRecord[], finess: string) => byFiness(records, finess) as LegalEntityRecord;

function write(dir: string, name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

async function failure(file: string): Promise<Error> {
  try {
    await read(file);
  } catch (err) {
    return err as Error;
  }
  throw new Error(`${file} was read without error`);
}

t.test('FINESS numbers and ids', async (t) => {
  t.ok(isFiness('010780195'));
  t.ok(isFiness(' 010780195  '), 'after trimming');
  t.ok(isFiness('2A0000123'), 'Corsica');
  t.ok(isFiness('980600019'), 'overseas collectivity');
  t.notOk(isFiness('2C0000123'));
  t.notOk(isFiness('01078019'), '8 characters');
  t.notOk(isFiness('0107801950'), '10 characters');
  t.notOk(isFiness('ABC'));
  t.equal(establishmentId('010780195'), 'F010780195');
  t.equal(legalEntityId('010000156'), 'J010000156');
});

t.test('the sample feed: records in file order, rejects with their place', async (t) => {
  const { records, rejects, bytes } = await read(SAMPLE);
  t.same(
    records.map((r) => [r.kind, r.where.slice(SAMPLE.length), r.finess, r.kind === 'establishment' ? r.legal : '']),
    [
      ['legal', ':pmej[0]', '010000156', ''],
      ['establishment', ':pmej[0].ege[0]', '010780195', '010000156'],
      ['establishment', ':pmej[0].ege[1]', '010008407', '010000156'],
      ['establishment', ':pmej[0].ege[2]', '010787190', '010000156'],
      ['legal', ':pmej[1]', '750000010', ''],
      ['establishment', ':pmej[1].ege[0]', '750000028', '750000010'],
      ['legal', ':pmej[3]', '970421038', ''],
      ['establishment', ':pmej[3].ege[0]', '970408589', '970421038'],
      ['establishment', ':pmej[3].ege[1]', '2A0000123', '970421038'],
    ],
  );
  t.same(rejects, [
    `${SAMPLE}:pmej[0].ege[3]: FINESS number "01078019" is not a department and 7 digits (informationsGeneralesEGE.numFinessEge)`,
    `${SAMPLE}:pmej[2]: FINESS number "ABC" is not a department and 7 digits (informationsGeneralesPMEJ.numFinessPm)`,
    `${SAMPLE}:pmej[2].ege[0]: its legal entity pmej[2] has no valid FINESS number`,
  ]);
  t.equal(bytes, fs.statSync(SAMPLE).size, 'every byte read is counted');
});

t.test('the traps of the real file', async (t) => {
  const { records } = await read(SAMPLE);

  const swapped = establishment(records, '010780195').data.address!;
  t.same(swapped.point, { latitude: 46.211257, longitude: 5.254203, precision: 'housenumber' }, 'Lambert-93 swapped in coordonneeX/Y, degrees in direction*');

  const secondFirst = establishment(records, '010008407').data.address!;
  t.equal(secondFirst.usage, '03', 'the geographic address, not adresse[0] (a 06)');
  t.equal(secondFirst.commune, '01053');
  t.same(secondFirst.point, { latitude: 46.191013, longitude: 5.237126, precision: 'street' }, 'degrees in coordonneeX/Y, metres in direction*');

  const pharmacy = establishment(records, '750000028').data;
  t.same(pharmacy.address!.point, { latitude: 48.8417, longitude: 2.292, precision: 'commune' }, 'a commune-only BAN key: the commune centre');
  t.same(pharmacy.telecom, { phones: ['0690291988', '0590895757'], faxes: ['0145454545'], emails: ['contact@pharmacie-gare.fr'] }, 'a/b is two phones, repeats dropped');

  const closed = establishment(records, '010787190').data;
  t.equal(closed.address!.point, undefined, 'coordonneesGeographique null: no point');
  t.equal(establishment(records, '2A0000123').data.address!.point, undefined, 'zero and empty coordinates: no point');

  t.equal(legal(records, '010000156').data.name, 'CLINIQUE CONVERT SAS', 'padded names trimmed');
  t.equal(legal(records, '010000156').data.shortName, 'CLINIQUE CONVERT');
  t.equal(closed.shortName, 'SMUR POLYCLINIQUE AMBERIEU');
  t.equal(closed.address!.streetType, 'R', 'padded codes trimmed');
  t.equal(closed.address!.street, 'AIME VINGTRINIER');

  t.same([closed.name, closed.siret, closed.espic, closed.tariffMode, closed.externalRef], ['', '', '', '', ''], 'explicit nulls are empty');
  t.same(closed.telecom, { phones: [], faxes: [], emails: [] }, 'contact: null');
  t.equal(establishment(records, '970408589').data.address!.point?.latitude, -20.896, 'Réunion: degrees in direction*, UTM metres in coordonneeX/Y');
});

t.test('an absent key and an explicit null read the same', async (t) => {
  const dir = tmpDir(t, 'finess');
  const feed = (ege: object) => JSON.stringify({ schemaVersion: 'v1.0.0', pmej: [{ informationsGeneralesPMEJ: { numFinessPm: '010000156' }, ege: [ege] }] });
  const absent = await read(write(dir, 'absent.json', feed({ informationsGeneralesEGE: { numFinessEge: '010780195' } })));
  const nulls = await read(write(dir, 'nulls.json', feed({
    informationsGeneralesEGE: { numFinessEge: '010780195', nomEgeLong: null, nomEgeCourt: null, siret: null, espic: null, dateFermeture: null },
    categorieentiteGeographiqueExercice: null, modefixationtarifaire: null, adresse: null, contact: null, etatObjet: null,
  })));
  t.same(nulls.records[1].data, absent.records[1].data);
  t.same(absent.rejects, []);
});

t.test('gco and gcc anywhere, pmej of any length', async (t) => {
  const dir = tmpDir(t, 'finess');
  const file = write(dir, 'after.json', JSON.stringify({
    generatedAt: '2026-03-09T15:49:37.615611300Z',
    pmej: [],
    gco: [{ pmSmsseId: '403', pmejDuGco: [], egeDuGco: [[1, 2], { a: null }] }],
    gcc: [{ gccId: '1', pmejDuGcc: [{ pmSmsseId: '2' }] }],
  }));
  t.same(await read(file), { records: [], rejects: [], bytes: fs.statSync(file).size });
});

t.test('gzipped and plain read alike; bytes are the disk bytes', async (t) => {
  const dir = tmpDir(t, 'finess');
  const gz = write(dir, 'finess-structures-journalier-20260309.json.gz', gzipSync(SAMPLE_TEXT));
  const plain = await read(SAMPLE);
  const gzipped = await read(gz);
  t.same(gzipped.records.map((r) => r.data), plain.records.map((r) => r.data));
  t.equal(gzipped.rejects.length, 3);
  t.equal(gzipped.bytes, fs.statSync(gz).size);
  const unnamed = write(dir, 'download', gzipSync(SAMPLE_TEXT));
  t.equal((await read(unnamed)).records.length, plain.records.length, 'recognised by content, not by name');
});

t.test('files that are not the feed, or not whole', async (t) => {
  const dir = tmpDir(t, 'finess');
  const zipped = gzipSync(SAMPLE_TEXT);
  const cases: [string, string | Buffer, RegExp][] = [
    ['cut.json.gz', zipped.subarray(0, Math.floor(zipped.length / 2)), /cut\.json\.gz: the file is cut \(a truncated download\?\)/],
    ['cut.json', SAMPLE_TEXT.slice(0, 3000), /cut\.json: the JSON ends inside pmej\[0\]: the file is cut/],
    ['page.html', '\n  <!DOCTYPE html><html><body>503 Service Unavailable</body></html>', /page\.html: an HTML page/],
    ['page.json.gz', gzipSync('<html><head><title>Erreur</title></head></html>'), /an HTML page/],
    ['other.json', JSON.stringify({ data: [{ id: 1 }], total: 1 }), /other\.json: JSON of another shape \(no pmej array\)/],
    ['object-pmej.json', JSON.stringify({ schemaVersion: 'v1.0.0', pmej: { a: 1 } }), /pmej is not an array/],
    ['array.json', '[{"pmej": []}]', /an array at the top/],
    ['text.txt', "Type d'identifiant PP|Identifiant PP|\n", /not JSON/],
    ['empty.json', '', /an empty file/],
  ];
  for (const [name, content, message] of cases) {
    const err = await failure(write(dir, name, content));
    t.type(err, OpenDataError, name);
    t.match(err.message, message, name);
  }
});

t.test('invalid JSON mid-file says from which legal entity on', async (t) => {
  const dir = tmpDir(t, 'finess');
  const broken = SAMPLE_TEXT.replace('"pmSmsseId" : "40001"', '"pmSmsseId" : 40001x');
  t.not(broken, SAMPLE_TEXT);
  const file = write(dir, 'broken.json', broken);
  const seen: string[] = [];
  const err = await (async () => {
    try {
      for await (const r of readFiness(file, { reject: () => {} })) seen.push(r.finess);
    } catch (e) {
      return e as Error;
    }
  })();
  t.type(err, OpenDataError);
  t.match(err?.message, /broken\.json: invalid JSON from pmej\[0\] on \(in the JSON's characters 4096–8192\): Parser cannot parse input/);
  t.same(seen, [], 'nothing of the piece read before the fault is given');
});

t.test('recognising a file by its first bytes', async (t) => {
  t.equal(finessKind(Buffer.from([0x1f, 0x8b, 8, 0])), 'gzip');
  t.equal(finessKind(Buffer.from('\ufeff\n  {"schemaVersion" : "v1.0.0", "generatedAt": "x"')), 'finess', 'BOM and white space, cut mid-object');
  t.equal(finessKind(Buffer.from('{"pmej":[{"informationsGeneralesPMEJ"')), 'finess');
  t.equal(finessKind(Buffer.from('{"gcc": [], "schemaVersion": "v1"}')), 'finess', 'among the first keys');
  t.equal(finessKind(Buffer.from('{"results": [{"schemaVersion": 1}]}')), 'json', 'a nested key does not count');
  t.equal(finessKind(Buffer.from('[1, 2]')), 'json');
  t.equal(finessKind(Buffer.from('  <!doctype html><html>')), 'html');
  t.equal(finessKind(Buffer.from('<HTML>\n<head>')), 'html');
  t.equal(finessKind(Buffer.from("Type d'identifiant PP|Identifiant PP|")), undefined);
  t.equal(finessKind(Buffer.alloc(0)), undefined);

  const dir = tmpDir(t, 'finess');
  t.equal(await sniffFiness(SAMPLE), 'finess');
  t.equal(await sniffFiness(write(dir, 'a.gz', gzipSync(SAMPLE_TEXT))), 'finess');
  t.equal(await sniffFiness(write(dir, 'big.gz', gzipSync(SAMPLE_TEXT.replace('"gcc" : [', `"gcc" : [${'{"x": 1},'.repeat(20000)}`)))), 'finess', 'only the head is decompressed');
  t.match(await sniffFiness(write(dir, 'b.html', '<!DOCTYPE html>')), { notFeed: /HTML page/ });
  t.match(await sniffFiness(write(dir, 'c.gz', gzipSync('<html></html>'))), { notFeed: /gzip file holding an HTML page/ });
  t.match(await sniffFiness(write(dir, 'd.gz', gzipSync('PS_LibreAcces|x|\n'))), { notFeed: /gzip file holding neither JSON nor a web page/ });
  t.match(await sniffFiness(write(dir, 'e.json', '{"data": []}')), { notFeed: /JSON of another shape/ });
  t.match(await sniffFiness(write(dir, 'f.gz', Buffer.from([0x1f, 0x8b, 0, 0, 0, 0]))), { notFeed: /does not decompress/ });
  t.equal(await sniffFiness(write(dir, 'g.txt', "Type d'identifiant PP|Identifiant PP|\n8|1|\n")), undefined);
  t.equal(await sniffFiness(write(dir, 'h.txt', '')), undefined);
});

t.test('coordinates by range, precision by the BAN key', async (t) => {
  t.same(wgs84Of({ coordonneeX: '16.2412', coordonneeY: '-61.5331' }), { latitude: 16.2412, longitude: -61.5331 }, 'degrees swapped in X/Y, told by range');
  t.same(wgs84Of({ coordonneeX: '-52.33', coordonneeY: '4.93', cleInInteropBAN: '97302_0001_00012_bis' }), { latitude: 4.93, longitude: -52.33, precision: 'housenumber' });
  t.equal(wgs84Of({ coordonneeX: '652000.5', coordonneeY: '6862000.2', directionLatitude: '6862000.2', directionLongitude: '652000.5' }), undefined, 'metres only');
  t.equal(wgs84Of(null), undefined);
  t.equal(wgs84Of({ directionLatitude: '46,5', directionLongitude: 'abc' }), undefined, 'half a pair');
  t.same(wgs84Of({ directionLatitude: '46,5', directionLongitude: '4,25' }), { latitude: 46.5, longitude: 4.25 }, 'a decimal comma');
  t.equal(banPrecision('01053_1950_00062'), 'housenumber');
  t.equal(banPrecision('2A004_b012'), 'street');
  t.equal(banPrecision('01053'), 'commune');
  t.equal(banPrecision(''), undefined);
  t.equal(banPrecision('0.97'), undefined);
});

t.test('an establishment as an Organization', async (t) => {
  const { records } = await read(SAMPLE);
  const org = establishmentOf(establishment(records, '010780195'), TODAY);
  t.same(org, {
    resourceType: 'Organization',
    id: 'F010780195',
    meta: {
      source: 'https://annuaire.sante.fr',
      profile: ['https://hl7.fr/ig/fhir/core/StructureDefinition/fr-core-organization', 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-dp-organization'],
      extension: [{ url: EXT.dataTrace, extension: [{ url: 'systeme-information', valueCode: 'FINESS' }] }],
    },
    language: 'fr',
    extension: [{ url: EXT.organizationPeriod, valuePeriod: { start: '1956-11-16' } }],
    identifier: [
      { use: 'official', type: { coding: [{ system: 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203', code: 'IDNST' }] }, system: 'urn:oid:1.2.250.1.71.4.2.2', value: '1010780195' },
      { use: 'official', type: { coding: [{ system: 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203', code: 'FINEG' }] }, system: 'https://finess.esante.gouv.fr', value: '010780195' },
      { use: 'official', type: { coding: [{ system: 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203', code: 'SIRET' }] }, system: 'https://sirene.fr', value: '77220148900022' },
    ],
    active: true,
    type: [
      { extension: [{ url: EXT.organizationTypes, valueCode: 'organizationType' }], coding: [{ system: 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307', code: 'GEOGRAPHICAL-ENTITY', display: 'Entité géographique' }] },
      { coding: [{ system: 'https://mos.esante.gouv.fr/NOS/TRE_R66-CategorieEtablissement/FHIR/TRE-R66-CategorieEtablissement', code: '365', display: 'Etablissement de Soins Pluridisciplinaire' }] },
      { extension: [{ url: EXT.organizationTypes, valueCode: 'sphParticipation' }], coding: [{ system: 'https://mos.esante.gouv.fr/NOS/TRE_R73-ESPIC/FHIR/TRE-R73-ESPIC', code: '0', display: 'Non concerné' }] },
    ],
    name: 'CLINIQUE DOCTEUR CONVERT',
    alias: ['CLINIQUE CONVERT'],
    telecom: [{ system: 'phone', value: '0428631234', rank: 1 }, { system: 'fax', value: '0428631299' }],
    address: [{
      extension: [
        { url: EXT.inseeCode, valueCoding: { system: 'https://mos.esante.gouv.fr/NOS/TRE_R13-Commune/FHIR/TRE-R13-Commune', code: '01053' } },
        { url: 'http://hl7.org/fhir/StructureDefinition/geolocation', extension: [{ url: 'latitude', valueDecimal: 46.211257 }, { url: 'longitude', valueDecimal: 5.254203 }] },
      ],
      line: ['62 AVENUE DE JASSERON', 'BP 132'],
      _line: [{ extension: [{ url: EXT.houseNumber, valueString: '62' }, { url: EXT.streetNameType, valueString: 'AV' }, { url: EXT.streetNameBase, valueString: 'DE JASSERON' }] }, null],
      city: 'BOURG EN BRESSE',
      postalCode: '01000',
    }],
    partOf: { reference: 'Organization/J010000156' },
  });

  const chr = establishmentOf(establishment(records, '010008407'), TODAY);
  t.match(chr.type, [{}, { coding: [{ code: '101', display: 'Centre Hospitalier Régional (C.H.R.)' }] }, { coding: [{ code: '1', display: 'Etablissement public de santé' }] }], 'labels from the code tables');
  t.match(chr.address, [{ line: ['BATIMENT A', '12 B BD DE L\'HIPPODROME'], city: 'BOURG EN BRESSE', postalCode: '01000' }], 'street from its parts; town and postal code from ligneAcheminement');
  t.equal(chr.alias, undefined, 'no alias when the short name is the name');

  const closed = establishmentOf(establishment(records, '010787190'), TODAY);
  t.equal(closed.active, false, 'etatObjet I');
  t.same(closed.extension, [{ url: EXT.organizationPeriod, valuePeriod: { start: '1982-03-04', end: '1993-01-01' } }]);
  t.equal(closed.name, 'SMUR POLYCLINIQUE AMBERIEU', 'the short name when there is no long one');

  const later = establishment(records, '2A0000123');
  t.equal(establishmentOf(later, TODAY).active, true, 'a closing date to come');
  t.equal(establishmentOf(later, '2999-12-31').active, false, 'the closing date reached, even while etatObjet is A');
  // The staged digest (what a daily import compares, mapping only the entities it sees changed).
  t.equal(finessDigest(later, TODAY), finessDigest(structuredClone(later), TODAY), 'the same record, the same digest');
  t.not(finessDigest(later, TODAY), finessDigest(later, '2999-12-31'), 'another digest once its closing date is reached: the feed unchanged, its resources change');
  const renamed = structuredClone(later);
  renamed.data.name += ' BIS';
  t.not(finessDigest(renamed, TODAY), finessDigest(later, TODAY), 'another digest when what it is made of changes');

  const pharmacy = establishmentOf(establishment(records, '750000028'), TODAY);
  t.match(pharmacy.extension, [{ url: EXT.organizationPeriod }, { url: EXT.pharmacyLicence, valueString: '75#001234' }]);
  t.match(pharmacy.telecom, [{ system: 'phone', value: '0690291988', rank: 1 }, { system: 'phone', value: '0590895757', rank: 2 }, { system: 'fax' }, { system: 'email', value: 'contact@pharmacie-gare.fr' }]);
  const noLicence = structuredClone(establishment(records, '750000028'));
  noLicence.data.externalRef = 'AUTRE REF 12';
  t.same((establishmentOf(noLicence, TODAY).extension as { url: string }[]).map((e) => e.url), [EXT.organizationPeriod], 'no licence that does not read as one');
  t.equal(establishmentOf(establishment(records, '970408589'), TODAY).telecom, undefined);
});

t.test('a legal entity as an Organization', async (t) => {
  const { records } = await read(SAMPLE);
  const org = legalEntityOf(legal(records, '010000156'), TODAY);
  t.match(org, {
    resourceType: 'Organization',
    id: 'J010000156',
    language: 'fr',
    identifier: [{ value: '1010000156' }, { type: { coding: [{ code: 'FINEJ' }] }, value: '010000156' }, { type: { coding: [{ code: 'SIREN' }] }, system: 'https://sirene.fr', value: '772201489' }],
    active: true,
    type: [
      { coding: [{ code: 'LEGAL-ENTITY', display: 'Entité légale' }] },
      { extension: [{ valueCode: 'statutJuridiqueINSEE' }], coding: [{ code: '73', display: 'Société Anonyme (S.A.)' }] },
      { extension: [{ valueCode: 'activiteINSEE' }], coding: [{ code: '86.10Z', display: 'Activités hospitalières' }] },
    ],
    name: 'CLINIQUE CONVERT SAS',
    alias: ['CLINIQUE CONVERT'],
    address: [{ line: ['62 AVENUE DE JASSERON'], city: 'BOURG EN BRESSE', postalCode: '01000' }],
  });
  t.equal(org.partOf, undefined);
  t.notOk('versionId' in (org.meta as object) || 'lastUpdated' in (org.meta as object), 'the write path adds them');

  const old = structuredClone(legal(records, '010000156'));
  old.data.ape = '85.1A';
  old.data.legalStatus = '09';
  const codes = (legalEntityOf(old, TODAY).type as { coding: { code: string; display?: string }[] }[]).map((c) => c.coding[0]);
  t.same(codes.slice(1).map((c) => [c.code, 'display' in c]), [['09', false], ['85.1A', false]], 'codes not in the tables are kept, without display');

  const reunion = legalEntityOf(legal(records, '970421038'), TODAY);
  t.equal(reunion.name, 'CHU DE LA REUNION');
  t.equal(reunion.alias, undefined);
  t.equal((reunion.identifier as unknown[]).length, 2, 'no SIREN');
});

/** A feed of `count` legal entities with two establishments each, written as a stream. */
async function writeLargeFeed(file: string, count: number): Promise<void> {
  const out = fs.createWriteStream(file);
  const put = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await put('{"schemaVersion":"v1.0.0","generatedAt":"2026-03-09T15:49:37Z","gco":[],"pmej":[');
  const legalOne = JSON.parse(SAMPLE_TEXT).pmej[0];
  for (let i = 0; i < count; i++) {
    const finess = String(10000000 + i).padStart(9, '0');
    legalOne.informationsGeneralesPMEJ.numFinessPm = finess;
    legalOne.ege[0].informationsGeneralesEGE.numFinessEge = `02${String(i).padStart(7, '0')}`;
    legalOne.ege[1].informationsGeneralesEGE.numFinessEge = `03${String(i).padStart(7, '0')}`;
    await put((i ? ',' : '') + JSON.stringify(legalOne));
  }
  await put(']}');
  out.end();
  await once(out, 'finish');
}

t.test('a large feed is read with bounded memory', async (t) => {
  const dir = tmpDir(t, 'finess');
  const file = path.join(dir, 'large.json');
  const count = 30_000;
  await writeLargeFeed(file, count);
  const size = fs.statSync(file).size;
  const MB = 1024 * 1024;
  t.ok(size > 100 * MB, `the file (${Math.round(size / MB)} MB) is larger than the growth allowed`);
  // What stays reachable, garbage collected (a reader holding the file would keep over 100 MB).
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  let records = 0;
  let rejects = 0;
  gc();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  for await (const _ of readFiness(file, { reject: () => rejects++ })) {
    if (++records % 4000 === 0) {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
  }
  t.equal(records, count * 4, 'each legal entity and three establishments');
  t.equal(rejects, count, 'and its invalid one');
  t.ok(peak - before < 64 * MB, `heap grew by ${Math.round((peak - before) / MB)} MB at the most`);
  t.ok(peak < 150 * MB, `heap stayed at ${Math.round(peak / MB)} MB`);
});
