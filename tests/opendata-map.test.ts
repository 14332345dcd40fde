import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { registry, type ResourceType } from '../src/registry/index.ts';
import { prepareResource } from '../src/fhir/resource.ts';
import {
  assertMappable, labelsOf, MapError, organizationId, organizationOf as mapOrganization, practitionerId, practitionerOf as mapPractitioner,
  roleId, roleOf as mapRole, type Person,
} from '../src/opendata/map.ts';
import type { ActivityRecord, DiplomaRecord, OpenDataRecord, SavoirFaireRecord } from '../src/opendata/read.ts';
import {
  collect, HEADER_52, HEADER_56, HEADER_DIPLOMA, HEADER_SAVOIR_FAIRE, LINE_ADELI_OPTICIAN, LINE_ADELI_PARIS, LINE_RPPS_ABROAD,
  LINE_RPPS_HOSPITAL, tmpDir, to56,
} from './helpers/open-data.ts';

type Json = Record<string, any>;
const practitionerOf = (person: Person): Json => mapPractitioner(person);
const organizationOf = (a: ActivityRecord): Json | undefined => mapOrganization(a);
const roleOf = (a: ActivityRecord): Json => mapRole(a);

const NOS = (key: string) => `https://mos.esante.gouv.fr/NOS/${key}/FHIR/${key.replace(/_/g, '-')}`;
const G15 = NOS('TRE_G15-ProfessionSante');
const R38 = NOS('TRE_R38-SpecialiteOrdinale');
const R21 = NOS('TRE_R21-Fonction');
const R22 = NOS('TRE_R22-GenreActivite');
const R23 = NOS('TRE_R23-ModeExercice');
const R60 = NOS('TRE_R60-AutoriteEnregistrement');

/** The hospital doctor's line, moved to no structure (a replacement) in the 56-column form. */
const noStructure = (() => {
  const f = LINE_RPPS_HOSPITAL.split('|');
  for (let i = 19; i <= 46; i++) f[i] = '';
  return to56(f.join('|'), ['FON-22', 'Remplaçant'], ['GENR02', 'Activité de soins ou de pharmacien en tant que remplaçant']);
})();

/** The records of these files, written in a temporary folder (none may be rejected). */
async function records(t: { teardown(fn: () => void): void }, files: Record<string, string[]>): Promise<OpenDataRecord[]> {
  const dir = tmpDir(t);
  for (const [name, lines] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), lines.join('\n'));
  const out = await collect([dir]);
  if (out.rejects.length || out.skips.length) throw new Error(`unexpected: ${[...out.rejects, ...out.skips].join('; ')}`);
  return out.records;
}
const activities = (rs: OpenDataRecord[]) => rs.filter((r): r is ActivityRecord => r.kind === 'activity');
const trace = (resource: Json) => resource.meta.extension.find((e: Json) => e.url.endsWith('/as-ext-data-trace')).extension as Json[];
const authority = (resource: Json) => trace(resource).find((e) => e.url === 'autorite-enregistrement')?.valueCodeableConcept.coding[0];
const identifierValues = (resource: Json) => (resource.identifier as Json[]).map((i) => `${i.type.coding[0].code}|${i.system}|${i.value}`);

/** The token and string index rows the registry extracts for one search parameter. */
function rowsOf(resource: Json, code: string) {
  const { rows, type } = prepareResource(registry, resource);
  const id = registry.byCode(type as ResourceType, code)!.id;
  return {
    tokens: rows.token.filter((r) => r.param === id).map((r) => `${r.system ?? ''}|${r.code}`),
    strings: rows.string.filter((r) => r.param === id).map((r) => r.exact),
  };
}

t.test('an ADELI person, a structure known by its SIRET, an address with an empty commune', async (t) => {
  const [a] = activities(await records(t, { 'a.txt': [HEADER_52, LINE_ADELI_OPTICIAN] }));
  t.equal(practitionerId(a), '0012600631');
  const p = practitionerOf({ activities: [a], savoirFaire: [], diplomas: [] });
  t.equal(p.resourceType, 'Practitioner');
  t.equal(p.id, '0012600631');
  t.same(identifierValues(p), [
    'IDNPS|urn:oid:1.2.250.1.71.4.2.1|0012600631',
    'ADELI|https://adeli.esante.gouv.fr|012600631',
  ]);
  t.match(p.name, [{ family: 'PETITGUYOT', given: ['ALEXANDRE'], prefix: ['M'] }]);
  t.notOk(p.name[0].suffix, 'no civilité d\'exercice in the line');
  t.same(p.qualification, [{ code: { coding: [
    { system: G15, code: '26', display: 'Audioprothésiste' },
    { system: NOS('TRE_R09-CategorieProfessionnelle'), code: 'C', display: 'Civil' },
  ] } }]);
  t.same(trace(p)[0], { url: 'systeme-information', valueCode: 'RPPS' });
  t.same(authority(p), { system: R60, code: 'ARS' }, 'the first of ARS/Variable/Variable');
  t.equal(p.active, true);
  t.notOk(p.meta.lastUpdated ?? p.meta.versionId, 'the write path sets them');

  const o = organizationOf(a)!;
  t.equal(o.id, 'C49940088500020');
  t.same(identifierValues(o), [
    'RPPSRG|https://rppsrang.esante.gouv.fr|C49940088500020',
    'IDNST|urn:oid:1.2.250.1.71.4.2.2|349940088500020',
    'SIRET|https://sirene.fr|49940088500020',
  ]);
  t.equal(o.name, 'DOUBS OPTIC');
  t.match(o.type, [{ coding: [{ code: 'GEOGRAPHICAL-ENTITY' }] }, { coding: [{ system: NOS('TRE_R02-SecteurActivite'), code: 'SA42', display: 'Appareillage médical' }] }]);
  t.match(o.address, [{ line: ['DOUBS OPTIC', '9 Route DE BESANCON'], city: 'DOUBS', postalCode: '25300' }]);
  t.equal(authority(o), undefined, '"Variable" is no authority');

  const r = roleOf(a);
  t.match(r, { practitioner: { reference: 'Practitioner/0012600631' }, organization: { reference: 'Organization/C49940088500020' } });
  t.same(r.code, [
    { coding: [{ system: G15, code: '26', display: 'Audioprothésiste' }] },
    { coding: [{ system: R23, code: 'S', display: 'Salarié' }] },
  ]);
});

t.test('a Paris cabinet: Numéro Voie "P", the city from Bureau cedex, three authorities', async (t) => {
  const [a] = activities(await records(t, { 'a.txt': [HEADER_52, LINE_ADELI_PARIS] }));
  const o = organizationOf(a)!;
  t.match(o.address, [{ line: ['CABINET MME DE RUIJTER', 'Place VIOLET', 'CDS ANSELME PAYEN EPHPAD'], city: 'PARIS', postalCode: '75015' }]);
  t.notOk(JSON.stringify(o.address).includes('houseNumber'), 'no house number from "P"');
  t.same(o.telecom, [{ system: 'phone', value: '0148237096', rank: 1 }]);
  t.same(authority(practitionerOf({ activities: [a], savoirFaire: [], diplomas: [] })), { system: R60, code: 'ARS' });
  t.same(authority(roleOf(a)), { system: R60, code: 'CPAM' });
  t.equal(authority(o), undefined, 'no authority on an Organization: it is per activity');
  t.same(rowsOf(o, 'address-city').strings, ['PARIS']);
  t.same(rowsOf(o, 'address-postalcode').strings, ['75015']);
});

t.test('an RPPS doctor abroad, and a hospital doctor', async (t) => {
  const [abroad, hospital] = activities(await records(t, { 'a.txt': [HEADER_52, LINE_RPPS_ABROAD, LINE_RPPS_HOSPITAL] }));
  const p = practitionerOf({ activities: [abroad], savoirFaire: [], diplomas: [] });
  t.equal(p.id, '810001045367');
  t.same(identifierValues(p), ['IDNPS|urn:oid:1.2.250.1.71.4.2.1|810001045367', 'RPPS|https://rpps.esante.gouv.fr|10001045367']);
  t.match(p.name, [{ family: 'GUIGNARD', given: ['ERIC'], prefix: ['M'], suffix: ['DR'] }]);
  t.same(p.qualification[1], { code: { coding: [
    { system: R38, code: 'SM49', display: 'Santé publique et médecine sociale' },
    { system: NOS('TRE_R04-TypeSavoirFaire'), code: 'S', display: 'Spécialité ordinale' },
  ] } });

  const o = organizationOf(abroad)!;
  t.equal(o.id, 'R10100000328372');
  t.same(o.alias, ['AIMMUNE THERAPEUTICS']);
  const [address] = o.address;
  t.equal(address.country, 'Royaume-uni');
  t.equal(address.postalCode, 'GL');
  t.equal(address.city, undefined, 'no commune abroad');
  t.ok(address.line.includes('GL 5O 2QJ CHELTENHAM'), 'the foreign town kept as a line');

  const h = organizationOf(hospital)!;
  t.equal(h.id, 'F250000700');
  t.ok(identifierValues(h).includes('FINEG|https://finess.esante.gouv.fr|250000700'));
  t.ok(identifierValues(h).includes('SIRET|https://sirene.fr|26250462400012'));
  t.match(h.address, [{ city: 'Pontarlier', postalCode: '25304', line: ['2 Faubourg SAINT ETIENNE', 'CS 10329'] }]);
  t.equal(h.address[0].extension[0].valueCoding.code, '25462', 'the INSEE code of the commune');
  t.same(h.telecom.map((x: Json) => `${x.system}:${x.value}`), ['phone:0381385454', 'fax:0381385480', 'email:contact@chi-hautecomte.fr']);
  t.equal(authority(h), undefined, 'the third of CNOM/CNOM/ARS is not the structure\'s');
});

t.test('a line without structure gives a role without organization', async (t) => {
  const [a] = activities(await records(t, { 'a.txt': [HEADER_56, noStructure] }));
  t.equal(organizationId(a), undefined);
  t.equal(organizationOf(a), undefined);
  const r = roleOf(a);
  t.notOk('organization' in r);
  t.same(r.code.map((c: Json) => `${c.coding[0].system}|${c.coding[0].code}|${c.coding[0].display}`), [
    `${G15}|10|Médecin`,
    `${R23}|S|Salarié`,
    `${R21}|FON-22|Remplaçant`,
    `${R22}|GENR02|Activité de soins ou de pharmacien en tant que remplaçant`,
  ]);
  t.same(rowsOf(r, 'role').tokens.sort(), [`${G15}|10`, `${R21}|FON-22`, `${R22}|GENR02`, `${R23}|S`].sort());
  t.same(rowsOf(r, 'practitioner').tokens, [], 'a reference, not a token');
});

t.test('role ids: the same activity, the same id; a different activity, another', async (t) => {
  const phoneChanged = LINE_RPPS_HOSPITAL.replace('0381385454', '0381000000');
  const relabelled = LINE_RPPS_HOSPITAL.replace('|Salarié|', '|Salarié hospitalier|');
  const otherMode = LINE_RPPS_HOSPITAL.replace('|S|Salarié|', '|L|Libéral|');
  const [base, again, phone, label, mode] = activities(await records(t, {
    'a.txt': [HEADER_52, LINE_RPPS_HOSPITAL, LINE_RPPS_HOSPITAL, phoneChanged, relabelled, otherMode],
  }));
  const id = roleId(base);
  t.match(id, /^810100271385-[0-9a-f]{16}$/);
  t.equal(roleId(again), id, 'a duplicate line is the same role');
  t.equal(roleId(phone), id, 'the structure\'s telecoms are the Organization\'s');
  t.equal(roleId(label), id, 'labels do not make another activity');
  t.not(roleId(mode), id);
  t.equal(roleOf(base).id, id);
});

t.test('lines that cannot be mapped are MapErrors with the reason', async (t) => {
  const lines = [
    LINE_RPPS_HOSPITAL.replace(/^8\|/, '3|').replace('|810100271385|', '|310100271385|'),
    LINE_RPPS_HOSPITAL.replace('|810100271385|', '|810100271386|'),
    LINE_RPPS_HOSPITAL.replace('|810100271385|', '||'),
    LINE_RPPS_HOSPITAL.replace('|F250000700|', '|F250 000700|'),
  ];
  const rs = await records(t, { 'a.txt': [HEADER_52, ...lines] });
  const reasons = rs.map((r) => {
    try {
      assertMappable(r);
      return 'ok';
    } catch (e) {
      t.ok(e instanceof MapError);
      return (e as Error).message;
    }
  });
  t.same(reasons, [
    'Type d\'identifiant PP "3" is neither 0 (ADELI) nor 8 (RPPS)',
    'Identification nationale PP "810100271386" is not Type d\'identifiant PP + Identifiant PP ("8" + "10100271385")',
    'no Identification nationale PP',
    'Identifiant technique de la structure "F250 000700" is not 1–64 letters, digits, "-" or "."',
  ]);
  t.throws(() => roleOf(activities(rs)[3]), MapError);
  t.doesNotThrow(() => practitionerOf({ activities: [activities(rs)[3]], savoirFaire: [], diplomas: [] }), 'the person is fine');
});

t.test('a person from the three files: qualifications without repeats', async (t) => {
  const sf = [
    '8|10001045367|810001045367|GUIGNARD|ERIC|10|Médecin|C|Civil|S|Spécialité ordinale|SM49|Santé publique et médecine sociale|',
    '8|10001045367|810001045367|GUIGNARD|ERIC|10|Médecin|C|Civil|CAPA|Capacité|CAPA12|Médecine de catastrophe|',
    '8|10001045367|810001045367|GUIGNARD|ERIC|10|Médecin|C|Civil|XX|Type inconnu|XX01|Savoir-faire inconnu|',
  ];
  const dipl = [
    "8|10001045367|810001045367|GUIGNARD|ERIC|DE|Diplôme d'Etat français|DE05|DE Docteur en médecine|||||",
    '8|10001045367|810001045367|GUIGNARD|ERIC|DES|Diplôme d\'études spécialisées|DES12|DES Santé publique|||||',
    '8|10001045367|810001045367|GUIGNARD|ERIC|||||AM01|Autorisation de plein exercice|||',
  ];
  const rs = await records(t, { 'a.txt': [HEADER_52, LINE_RPPS_ABROAD], 'b.txt': [HEADER_SAVOIR_FAIRE, ...sf], 'c.txt': [HEADER_DIPLOMA, ...dipl] });
  const person = {
    activities: activities(rs),
    savoirFaire: rs.filter((r): r is SavoirFaireRecord => r.kind === 'savoirFaire'),
    diplomas: rs.filter((r): r is DiplomaRecord => r.kind === 'diploma'),
  };
  t.same(new Set(rs.map(practitionerId)), new Set(['810001045367']));
  const p = practitionerOf(person);
  const codings = (p.qualification as Json[]).map((q) => q.code.coding.map((c: Json) => `${c.system ?? '-'}|${c.code}`).join(' + '));
  t.same(codings, [
    `${G15}|10 + ${NOS('TRE_R09-CategorieProfessionnelle')}|C`,
    `${R38}|SM49 + ${NOS('TRE_R04-TypeSavoirFaire')}|S`,
    `${NOS('TRE_R43-CapaciteSavoirFaire')}|CAPA12 + ${NOS('TRE_R04-TypeSavoirFaire')}|CAPA`,
    `-|XX01 + ${NOS('TRE_R04-TypeSavoirFaire')}|XX`,
    `${NOS('TRE_R48-DiplomeEtatFrancais')}|DE05 + ${NOS('TRE_R14-TypeDiplome')}|DE`,
    `-|DES12 + ${NOS('TRE_R14-TypeDiplome')}|DES`,
    `${NOS('TRE_R17-TypeAutorisation')}|AM01`,
  ], 'SM49 once although in both files; a diploma or savoir-faire of unknown terminology has no system');
  const codes = rowsOf(p, 'qualification-code').tokens;
  for (const code of [`${G15}|10`, `${R38}|SM49`, '|XX01', `${NOS('TRE_R48-DiplomeEtatFrancais')}|DE05`]) t.ok(codes.includes(code), code);

  const fromFilesOnly = practitionerOf({ activities: [], savoirFaire: person.savoirFaire, diplomas: [] });
  t.match(fromFilesOnly, { id: '810001045367', name: [{ family: 'GUIGNARD', given: ['ERIC'] }] });
  t.equal(authority(fromFilesOnly), undefined, 'the authority is only in Personne_activite');

  t.same(labelsOf(person.diplomas[0]), [
    { system: NOS('TRE_R14-TypeDiplome'), code: 'DE', label: "Diplôme d'Etat français" },
    { system: NOS('TRE_R48-DiplomeEtatFrancais'), code: 'DE05', label: 'DE Docteur en médecine' },
  ]);
  t.same(labelsOf(person.savoirFaire[2]).at(-1), { system: null, code: 'XX01', label: 'Savoir-faire inconnu' });
});

t.test('labels of an activity line', async (t) => {
  const [a] = activities(await records(t, { 'a.txt': [HEADER_56, to56(LINE_RPPS_HOSPITAL, ['FON-05', 'Pharmacien adjoint'], ['GENR01', 'Activité de soin et de pharmacie'])] }));
  t.same(labelsOf(a).map((l) => `${l.system?.split('/')[4]}|${l.code}|${l.label}`), [
    'TRE_G15-ProfessionSante|10|Médecin',
    'TRE_R09-CategorieProfessionnelle|C|Civil',
    'TRE_R04-TypeSavoirFaire|S|Spécialité ordinale',
    'TRE_R38-SpecialiteOrdinale|SM53|Spécialiste en Médecine Générale',
    'TRE_R23-ModeExercice|S|Salarié',
    'TRE_R21-Fonction|FON-05|Pharmacien adjoint',
    'TRE_R22-GenreActivite|GENR01|Activité de soin et de pharmacie',
    'TRE_R02-SecteurActivite|SA01|Etablissement Public de santé',
  ]);
});

t.test('every resource passes the write path and is found by the registry\'s parameters', async (t) => {
  const rs = await records(t, {
    'a.txt': [HEADER_52, LINE_ADELI_OPTICIAN, LINE_ADELI_PARIS, LINE_RPPS_ABROAD, LINE_RPPS_HOSPITAL],
    'b.txt': [HEADER_56, noStructure],
  });
  const resources = activities(rs).flatMap((a) => [practitionerOf({ activities: [a], savoirFaire: [], diplomas: [] }), organizationOf(a), roleOf(a)]);
  for (const r of resources) {
    if (r === undefined) continue;
    const prepared = prepareResource(registry, r, new Date('2026-11-27T00:00:00Z'));
    t.equal(prepared.id, r.id);
    t.ok(rowsOf(r, 'data-information-system').tokens.includes('|RPPS'), `${r.resourceType}/${r.id} systeme-information`);
  }
  const byId = new Map(resources.filter(Boolean).map((r) => [`${r!.resourceType}/${r!.id}`, r!]));

  const rpps = rowsOf(byId.get('Practitioner/810001045367')!, 'identifier').tokens;
  t.ok(rpps.includes('https://rpps.esante.gouv.fr|10001045367'));
  t.ok(rpps.includes('urn:oid:1.2.250.1.71.4.2.1|810001045367'));
  t.ok(rowsOf(byId.get('Practitioner/0012600631')!, 'identifier').tokens.includes('https://adeli.esante.gouv.fr|012600631'));
  t.ok(rowsOf(byId.get('Practitioner/810001045367')!, 'qualification-code').tokens.includes(`${R38}|SM49`));
  t.same(rowsOf(byId.get('Practitioner/810100271385')!, 'data-registration-authority').tokens, [`${R60}|CNOM`]);

  const hospital = byId.get('Organization/F250000700')!;
  t.ok(rowsOf(hospital, 'identifier').tokens.includes('https://rppsrang.esante.gouv.fr|F250000700'));
  t.same(rowsOf(hospital, 'address-postalcode').strings, ['25304']);
  t.same(rowsOf(hospital, 'address-city').strings, ['Pontarlier']);
  t.same(rowsOf(byId.get('Organization/C49940088500020')!, 'address-city').strings, ['DOUBS']);
  t.same(rowsOf(byId.get('Organization/R10100000328372')!, 'address-city').strings, []);
  t.ok(rowsOf(byId.get('Organization/R10100000328372')!, 'address').strings.includes('GL 5O 2QJ CHELTENHAM'));
});
