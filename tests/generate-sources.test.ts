// The FINESS feed and the MSSanté extraction written beside the RPPS extracts: their shape (checked
// against the facts about the real files, written out here by hand), their traps, and the day model.

import fs from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { parseCli } from '../src/cli/generate.ts';
import { generateOpenData, type OpenDataFileOptions } from '../src/generate/open-data-files.ts';
import { mssHeaderOf } from '../src/generate/open-data-mssante.ts';
import { tmpDir } from './helpers/open-data.ts';

const SCALE = 0.001; // 1,000 persons, ~170 establishments, ~550 mailboxes
const SEED = 13;
const ALL = ['rpps', 'finess', 'mss'] as const;

/** The 31 columns of the MSSanté extraction, in order (facts page). */
const MSS_HEADER = [
  'Type de BAL', 'Adresse BAL', 'Type Identifiant PP', 'Identifiant PP', 'Identification nationale PP', 'Type identifiant structure',
  'Identification Structure', 'Service de rattachement', "Civilité d'exercice", "Nom d'exercice", "Prénom d'exercice", 'Catégorie profession',
  'Libellé de catégorie profession', 'Code Profession', 'Libellé Profession', 'Code savoir-faire', 'Libellé savoir-faire', 'Dématérialisation',
  'Raison Sociale structure BAL', 'Enseigne commerciale structure BAL', 'L2COMPLEMENTLOCALISATION', 'L3COMPLEMENTDISTRIBUTION', 'L4NUMEROVOIE',
  'L4COMPLEMENTNUMEROVOIE', 'NL4TYPEVOIE', 'L4LIBELLEVOIE', 'L5LIEUDITMENTION', 'L6LIGNEACHEMINEMENT', 'Code postal', 'Département', 'Pays',
];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function generated(t: { teardown(fn: () => void): void }, options: Partial<OpenDataFileOptions> = {}) {
  const outDir = tmpDir(t, 'od-sources');
  const summary = await generateOpenData({ scale: SCALE, seed: SEED, outDir, sources: ALL, ...options });
  const file = (prefix: string) => path.join(outDir, fs.readdirSync(outDir).find((f) => f.startsWith(prefix))!);
  const finessText = () => zlib.gunzipSync(fs.readFileSync(file('finess-structures-journalier-'))).toString('utf8');
  const mssLines = () => fs.readFileSync(file('Extraction_Correspondance_MSSante_'), 'utf8').split('\n').filter((l) => l !== '');
  return { outDir, summary, file, finessText, finess: () => JSON.parse(finessText()) as Json, mssLines };
}

const eges = (f: Json): Json[] => f.pmej.flatMap((p: Json) => p.ege);
const geographic = (e: Json): Json => e.adresse.find((a: Json) => a.usageAdresse === '03');
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The RPPS activity lines as objects by header name. */
function activityLines(file: string): Record<string, string>[] {
  const [header, ...lines] = fs.readFileSync(file, 'utf8').split('\r\n').filter((l) => l !== '');
  const names = header.split('|');
  return lines.map((l) => Object.fromEntries(l.split('|').map((v, i) => [names[i], v])));
}

t.test('the files of the three sources, and the FINESS feed in the real top-level shape', async (t) => {
  const g = await generated(t);
  const names = fs.readdirSync(g.outDir).sort();
  t.same(names, [
    'Extraction_Correspondance_MSSante_202611010000.txt',
    'PS_LibreAcces_Dipl_AutExerc_202611010000.txt',
    'PS_LibreAcces_Personne_activite_202611010000.txt',
    'PS_LibreAcces_SavoirFaire_202611010000.txt',
    'finess-structures-journalier-20261101.json.gz',
  ]);
  const text = g.finessText();
  t.match(text, /^\{\n {2}"schemaVersion" : "v1\.0\.0",\n {2}"generatedAt" : "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z",\n/, 'Jackson layout, nanoseconds');
  const f = JSON.parse(text) as Json;
  t.same(Object.keys(f), ['schemaVersion', 'generatedAt', 'gcc', 'gco', 'pmej'], 'the groupings come first, as in the ANS sample');
  t.ok(f.gcc.length > 0 && f.gco.length > 0, 'groupings an importer must get past');
  for (const p of f.pmej) {
    t.strictSame(Object.keys(p), ['informationsGeneralesPMEJ', 'adresse', 'contact', 'engagement', 'evenement', 'ege', 'etatObjet', 'dateDerniereMaj']);
    t.match(p.informationsGeneralesPMEJ.numFinessPm, /^\d{9}$/);
    t.equal(p.adresse[0].usageAdresse, '02');
  }
  const all = eges(f);
  t.equal(all.length, g.summary.finess!.ege);
  t.equal(new Set(all.map((e) => e.informationsGeneralesEGE.numFinessEge)).size, all.length, 'numFinessEge unique');
  for (const e of all) {
    t.ok('informationsGeneralesEGE' in e && 'modefixationtarifaire' in e && 'roleEge' in e, 'real key spellings');
    t.match(e.informationsGeneralesEGE.numFinessEge, /^\d{9}$/);
    t.ok(['A', 'I'].includes(e.etatObjet));
    t.match(e.dateDerniereMaj, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    t.equal(e.etatObjet === 'I', typeof e.informationsGeneralesEGE.dateFermeture === 'string', 'closed ones have a closing date');
    t.ok(e.informationsGeneralesEGE.espic == null || (Array.isArray(e.informationsGeneralesEGE.espic) && e.informationsGeneralesEGE.espic.length <= 1));
    t.ok(geographic(e), 'a geographic address');
    t.match(geographic(e).cogCommune, /^\d{5}$/);
  }
  t.notMatch(text, /informationsGeneralesPmej|pm_smsseId|categorieEntite|modeFixationTarifaire/);
  const active = all.filter((e) => e.etatObjet === 'A').length / all.length;
  t.ok(active > 0.45 && active < 0.75, `${(active * 100).toFixed(0)} % in service (national ~60 %)`);
  t.ok(f.pmej.length / all.length > 0.45 && f.pmej.length / all.length < 0.7, 'about 98,000 legal entities for 175,000 establishments');
});

t.test('every RPPS FINESS site is an establishment, with the name, address and SIRET of the RPPS lines', async (t) => {
  const g = await generated(t, { sources: ['rpps', 'finess'] });
  const byFiness = new Map(eges(g.finess()).map((e) => [e.informationsGeneralesEGE.numFinessEge, e]));
  const lines = activityLines(g.file('PS_LibreAcces_Personne_activite_')).filter((l) => l['Numéro FINESS site']);
  t.ok(lines.length > 50);
  let bad = 0;
  for (const l of lines) {
    const e = byFiness.get(l['Numéro FINESS site']);
    if (!e) { bad++; continue; }
    const i = e.informationsGeneralesEGE;
    if (i.nomEgeLong.trimEnd() !== l['Raison sociale site'] || geographic(e).cogCommune !== l['Code commune (coord. structure)']) bad++;
    if (l['Numéro SIRET site'] && i.siret !== l['Numéro SIRET site']) bad++;
    if (e.etatObjet !== 'A') bad++;
  }
  t.equal(bad, 0, 'both sources describe the same places');
});

t.test('the traps of the real FINESS file, counted in the file', async (t) => {
  const g = await generated(t, { sources: ['finess'] });
  const text = g.finessText();
  const all = eges(g.finess());
  const count = (p: (e: Json) => boolean) => all.filter(p).length;
  const geo = (e: Json) => geographic(e).coordonneesGeographique;
  const deg = (v: string) => Math.abs(Number(v)) <= 180;
  const c: Record<string, number> = {
    geographicNotFirst: count((e) => e.adresse[0].usageAdresse !== '03'),
    wgs84InXY: count((e) => geo(e) && deg(geo(e).coordonneeX) && !deg(geo(e).directionLongitude)),
    lambertInXY: count((e) => geo(e) && !e.adresse[0].cogCommune.startsWith('97') && Number(geo(e).coordonneeX) < 1.3e6 && Number(geo(e).coordonneeY) > 6e6 && deg(geo(e).directionLatitude)),
    swappedXY: count((e) => geo(e) && Number(geo(e).coordonneeX) > 6e6 && Number(geo(e).coordonneeY) < 1.3e6 && deg(geo(e).directionLatitude)),
    overseasUtm: count((e) => geo(e) && /^97[1-6]/.test(geographic(e).cogCommune)
      && [geo(e).coordonneeX, geo(e).directionLongitude].some((x) => Number(x) > 100_000 && Number(x) < 900_000)),
    banHouse: count((e) => geo(e) && /^\d{5}_\d{4}_\d{5}$/.test(geo(e).cleInInteropBAN)),
    banStreet: count((e) => geo(e) && /^\d{5}_\d{4}$/.test(geo(e).cleInInteropBAN)),
    banCommune: count((e) => geo(e) && /^\d{5}$/.test(geo(e).cleInInteropBAN)),
    explicitNull: count((e) => e.informationsGeneralesEGE.siret === null || geographic(e).ligneUne === null),
    absentSiret: count((e) => !('siret' in e.informationsGeneralesEGE)),
    doublePhone: count((e) => e.contact.some((x: Json) => /^\d{10}\/\d{10}$/.test(x.telecom.telephone))),
    noCategory: count((e) => e.categorieentiteGeographiqueExercice == null),
    padded: (text.match(/[A-Z] +",/g) ?? []).length,
  };
  for (const [trap, n] of Object.entries(c)) t.ok(n > 0, `${trap}: ${n}`);
  // Every coordinate pair holds degrees on one side and metres on the other, the degrees where France is.
  for (const e of all.filter(geo)) {
    const p = geo(e);
    const [lon, lat] = deg(p.coordonneeX) ? [p.coordonneeX, p.coordonneeY] : [p.directionLongitude, p.directionLatitude];
    const overseas = geographic(e).cogCommune.startsWith('97');
    t.ok(overseas ? Math.abs(lat) < 22 : lat > 41 && lat < 51.5 && lon > -5.5 && lon < 10, `${lat}, ${lon}`);
    t.ok(Object.values(p).every((v) => typeof v === 'string'), 'six strings');
  }
  const active = all.filter((e) => e.etatObjet === 'A');
  const unlocated = active.filter((e) => !geo(e)).length / active.length;
  t.ok(unlocated > 0.12 && unlocated < 0.4, `${(unlocated * 100).toFixed(0)} % of those in service without coordinates (~25 %)`);
  const noSiret = count((e) => e.informationsGeneralesEGE.siret == null) / all.length;
  t.ok(noSiret > 0.1 && noSiret < 0.35, `${(noSiret * 100).toFixed(0)} % without SIRET (~20 %)`);
  const pmej = g.finess().pmej as Json[];
  const bare = pmej.filter((p) => !p.informationsGeneralesPMEJ.siren && !p.informationsGeneralesPMEJ.codeApe).length / pmej.length;
  t.ok(bare > 0.05 && bare < 0.35, `${(bare * 100).toFixed(0)} % of legal entities without SIREN and APE (~17 %)`);
  t.same(Object.keys(g.summary.finess!.traps).filter((k) => g.summary.finess!.traps[k as 'padded'] === 0), [], 'the summary counts every trap');
});

t.test('same seed and day, same bytes; day 1 differs from day 0 by about the change rate', async (t) => {
  const rate = 0.05;
  const scale = 0.01; // ~1,700 establishments: enough for a share
  const [a, b, d1] = [
    await generated(t, { scale, changeRate: rate, sources: ['finess'] }),
    await generated(t, { scale, changeRate: rate, sources: ['finess'] }),
    await generated(t, { scale, changeRate: rate, day: 1, sources: ['finess'] }),
  ];
  t.equal(sha(a.file('finess-')), sha(b.file('finess-')), 'byte-identical');
  t.not(a.summary.finess!.name, d1.summary.finess!.name, 'the date of the day in the name');
  const day0 = new Map(eges(a.finess()).map((e) => [e.informationsGeneralesEGE.numFinessEge, JSON.stringify(e)]));
  const day1 = new Map(eges(d1.finess()).map((e) => [e.informationsGeneralesEGE.numFinessEge, JSON.stringify(e)]));
  const inService = [...day0].filter(([, e]) => JSON.parse(e).etatObjet === 'A');
  const changed = inService.filter(([k, e]) => day1.get(k) !== e).length / inService.length;
  const opened = [...day1.keys()].filter((k) => !day0.has(k)).length;
  const closed = [...day1].filter(([k, e]) => JSON.parse(e).etatObjet === 'I' && JSON.parse(day0.get(k) ?? '{}').etatObjet === 'A').length;
  t.ok(changed > rate * 0.3 && changed < rate * 2, `${(changed * 100).toFixed(1)} % of the establishments in service changed (rate ${rate * 100} %)`);
  t.ok(opened > 0, `${opened} opened`);
  t.ok(closed > 0, `${closed} closed`);
  t.equal([...day0.keys()].filter((k) => !day1.has(k)).length, 0, 'a closed establishment stays in the file');
});

t.test('the MSSanté extraction: header, mailboxes, identifiers and traps', async (t) => {
  const g = await generated(t, { mssHeaderVariant: 'plain' });
  const [header, ...lines] = g.mssLines();
  t.same(header.split('|'), MSS_HEADER, '31 columns in the order of the facts page');
  const rows = lines.map((l) => l.split('|'));
  const good = rows.filter((r) => r.length === 31);
  t.ok(rows.length - good.length > 0, `${rows.length - good.length} lines with a wrong field count`);
  t.equal(rows.length - good.length, g.summary.mss!.traps.bad);
  t.same([...new Set(good.map((r) => r[0]))].sort(), ['ORG', 'PER']);
  t.ok(good.every((r) => r[17] === 'True' || r[17] === 'False'), 'Dématérialisation True/False');

  const activities = activityLines(g.file('PS_LibreAcces_Personne_activite_'));
  const persons = new Set(activities.map((l) => l['Identification nationale PP']));
  const per = good.filter((r) => r[0] === 'PER');
  const unknownPersons = per.filter((r) => !persons.has(r[4]));
  t.ok(unknownPersons.length >= 1, 'a mailbox of a person unknown to the RPPS extract');
  t.ok(unknownPersons.length <= g.summary.mss!.traps.unknownPerson * 2, 'and only the planted ones (they may be duplicated)');
  const share = new Set(per.map((r) => r[4])).size / persons.size;
  t.ok(share > 0.35 && share < 0.55, `${(share * 100).toFixed(0)} % of the persons have a mailbox (~45 %)`);
  t.ok(per.every((r) => r[4] === r[2] + r[3]), 'Identification nationale PP = type + Identifiant PP');

  // Structure identifiers: the national form (type + value), or the FINESS number alone; matched by value.
  const rppsIds = new Set(activities.flatMap((l) => [l['Ancien identifiant de la structure'], l['Numéro FINESS site']].filter(Boolean)));
  const finess = new Set(eges((await generated(t, { sources: ['finess'] })).finess()).map((e) => e.informationsGeneralesEGE.numFinessEge));
  const known = (id: string) => rppsIds.has(id) || finess.has(id) || (id[0] === '1' && finess.has(id.slice(1)));
  const withStructure = good.filter((r) => r[6]);
  const forms = { national: 0, raw: 0 };
  for (const r of withStructure) {
    t.ok(['1', '3', '4'].includes(r[5]), `type ${r[5]}`);
    if (r[6].startsWith(r[5]) && r[6].length > 9) forms.national++;
    else forms.raw++;
  }
  t.ok(forms.national > forms.raw * 3 && forms.raw > 0, `national ids ${forms.national}, raw FINESS ${forms.raw}`);
  const unknownStructures = withStructure.filter((r) => !known(r[6]));
  t.ok(unknownStructures.length >= 1 && unknownStructures.every((r) => r[0] === 'ORG'), 'a mailbox whose structure no source names');
  const org = good.filter((r) => r[0] === 'ORG');
  t.ok(org.filter((r) => finess.has(r[6]) || finess.has(r[6].slice(1))).length > org.length * 0.9, 'ORG mailboxes of FINESS establishments');

  // Duplicates: the same line twice, and the same address on lines that differ otherwise.
  const byAddress = new Map<string, Set<string>>();
  for (const l of lines) {
    const address = l.split('|')[1];
    byAddress.set(address, (byAddress.get(address) ?? new Set()).add(l));
  }
  t.ok(lines.length - new Set(lines).size >= 1, 'exact duplicate lines');
  t.ok([...byAddress.values()].some((s) => [...s].filter((l) => l.split('|').length === 31).length > 1), 'one address on two different lines');
});

t.test('MSSanté: both header forms, the day model, the ZIP', async (t) => {
  const g = await generated(t, { mssHeaderVariant: 'suffixed', sources: ['mss'] });
  const header = g.mssLines()[0].split('|');
  t.equal(header.length, 31);
  t.same(header.slice(0, 20), MSS_HEADER.slice(0, 20));
  t.same(header.slice(20), MSS_HEADER.slice(20).map((c) => `${c} structure BAL`), 'the address columns with the suffix');
  const forms = new Set(Array.from({ length: 20 }, (_, day) => mssHeaderOf(SEED, day)));
  t.same([...forms].sort(), ['plain', 'suffixed'], 'without the option, both forms occur over the days');

  const rate = 0.05;
  const [a, b, d1] = [
    await generated(t, { changeRate: rate, sources: ['mss'] }),
    await generated(t, { changeRate: rate, sources: ['mss'] }),
    await generated(t, { changeRate: rate, day: 1, sources: ['mss'] }),
  ];
  t.equal(sha(a.file('Extraction_')), sha(b.file('Extraction_')), 'byte-identical');
  const addresses = (x: typeof a) => new Set(x.mssLines().slice(1).map((l) => l.split('|')[1]));
  const [s0, s1] = [addresses(a), addresses(d1)];
  const gone = [...s0].filter((x) => !s1.has(x)).length;
  const added = [...s1].filter((x) => !s0.has(x)).length;
  t.ok(gone > 0 && added > 0, `${gone} mailboxes gone, ${added} new`);
  t.ok(gone + added < s0.size * rate * 3, 'about the change rate');

  const z = await generated(t, { zip: true });
  t.same(fs.readdirSync(z.outDir).sort(), ['Extraction_Correspondance_MSSante.zip', 'PS_LibreAcces_202611010000.zip', 'finess-structures-journalier-20261101.json.gz']);
  const zip = fs.readFileSync(path.join(z.outDir, 'Extraction_Correspondance_MSSante.zip'));
  t.equal(zip.toString('latin1').split('PK\x01\x02').length - 1, 1, 'one entry');
  t.ok(zip.includes('Extraction_Correspondance_MSSante_202611010000.txt'));
});

t.test('CLI: --sources and --mss-header-variant', async (t) => {
  const base = ['--format', 'open-data', '--scale', '0.01', '--out', 'x'];
  t.notOk('sources' in (parseCli(base) as object), 'absent: all three sources');
  t.has(parseCli([...base, '--sources', 'finess,mss', '--mss-header-variant', 'suffixed']), { sources: ['finess', 'mss'], mssHeaderVariant: 'suffixed' });
  for (const bad of [[...base, '--sources', 'rpps,adeli'], [...base, '--sources', ''], [...base, '--mss-header-variant', 'x'], ['--scale', '1', '--out', 'x', '--sources', 'mss']]) {
    t.throws(() => parseCli(bad), { name: 'UsageError' }, bad.join(' '));
  }
});
