/**
 * PractitionerRole search (seed §4.6), references and chains, `_has` on Practitioner, and the
 * include / revinclude values of seed §4.3 for Practitioner and PractitionerRole, on the
 * hand-checked dataset of fixtures/directory (see fixtures/README.md).
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { ROLES } from './helpers/directory-ids.ts';
import { API_KEY, searchHelpers, type Bundle } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
await load(db, [path.join(FIXTURES, 'directory')]);
// every include search here is on v2: expectEntries also checks each fullUrl is the entry's own v2 URL
const { get, matchIds, includeIds, table, expect400, expectEntries } = searchHelpers(app, { key: API_KEY, fullUrlBase: 'http://fhir.test/fhir/v2' });

const ALL: string[] = [...ROLES];
const except = (...ids: string[]) => ALL.filter((id) => !ids.includes(id));
const INACTIVE = ['role-paul-martin-remplacant', 'role-claire-gallet-faubourg', 'role-agnes-coeur-centrale', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl'];
const LIBERAL = [
  'role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-sophie-martinez-cabinet', 'role-yann-le-gall-cabinet',
  'role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-klaus-muller-clinique', 'role-agnes-coeur-faubourg',
  'role-agnes-coeur-centrale', 'role-jose-carreno-clinique', 'role-ines-obrien-cabinet-martinez', 'role-bernard-martin-cabinet',
  'role-closed-25-lefevre', 'role-aurelie-francois-cabinet', 'role-emma-nguyen-lefevre', 'role-olivier-rousseau-cabinet',
  'role-helene-dupont-remplacement',
];
const MSS = [
  'role-helene-lefevre-nord', 'role-helene-martin-herriot', 'role-jean-lefevre-cds-louvre', 'role-paul-martin-cabinet',
  'role-louis-martineau-herriot', 'role-yann-le-gall-cabinet', 'role-claire-gallet-lefevre', 'role-agnes-coeur-faubourg',
  'role-eve-durand-timone', 'role-emma-nguyen-lefevre',
];
const R21 = 'https://mos.esante.gouv.fr/NOS/TRE_R21-Fonction/FHIR/TRE-R21-Fonction';
const R22 = 'https://mos.esante.gouv.fr/NOS/TRE_R22-GenreActivite/FHIR/TRE-R22-GenreActivite';
const R23 = 'https://mos.esante.gouv.fr/NOS/TRE_R23-ModeExercice/FHIR/TRE-R23-ModeExercice';

t.test('all roles, active, identifier, _id', async (t) => {
  t.equal(ALL.length, 40);
  await table(t, [
    ['PractitionerRole', ALL],
    ['PractitionerRole?active=false', INACTIVE],
    ['PractitionerRole?active=true', except(...INACTIVE)],
    ['PractitionerRole?active:not=true', INACTIVE],
    ['PractitionerRole?identifier=1000000006', ['role-paul-martin-cabinet']],
    ['PractitionerRole?identifier=https://rpps.esante.gouv.fr|1000000006', ['role-paul-martin-cabinet']],
    ['PractitionerRole?identifier=https://finess.esante.gouv.fr|1000000006', []],
    ['PractitionerRole?identifier=1000000006,1000000036', ['role-paul-martin-cabinet', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?identifier=100000000', []],
    ['PractitionerRole?identifier=1000000030', ['role-closed-1000000030']],
    ['PractitionerRole?_id=role-paul-martin-cabinet,role-closed-24-hcl', ['role-paul-martin-cabinet', 'role-closed-24-hcl']],
  ]);
});

t.test('role: function, activity kind, exercise mode', (t) =>
  table(t, [
    ['PractitionerRole?role=FON-01', ['role-paul-martin-cabinet', 'role-sophie-martinez-cabinet', 'role-yann-le-gall-cabinet', 'role-bernard-martin-cabinet']],
    [`PractitionerRole?role=${R21}|FON-03`, ['role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale', 'role-emma-nguyen-lefevre']],
    [`PractitionerRole?role=${R21}%7CFON-05`, ['role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-closed-25-lefevre']],
    ['PractitionerRole?role=FON-01,FON-03', ['role-paul-martin-cabinet', 'role-sophie-martinez-cabinet', 'role-yann-le-gall-cabinet', 'role-bernard-martin-cabinet', 'role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?role=FON-35', ['role-helene-lefevre-nord', 'role-helene-martin-herriot', 'role-louis-martineau-herriot', 'role-anne-marie-dubois-nord']],
    ['PractitionerRole?role=L', LIBERAL],
    [`PractitionerRole?role=${R23}|B`, ['role-bernard-martin-cds-oeuvre']],
    [`PractitionerRole?role=${R21}|S`, []],
    ['PractitionerRole?role=GENR02', ['role-paul-martin-remplacant']],
    ['PractitionerRole?role=GENR03', ['role-helene-dupont-remplacement']],
    ['PractitionerRole?role=GENR04', ['role-bernard-martin-cds-oeuvre', 'role-evelyne-petit-conseil']],
    ['PractitionerRole?role:not=GENR01', ['role-paul-martin-remplacant', 'role-bernard-martin-cds-oeuvre', 'role-closed-1000000030', 'role-helene-dupont-remplacement', 'role-evelyne-petit-conseil']],
    [`PractitionerRole?role=${R22}|`, except('role-closed-1000000030')],
    ['PractitionerRole?role:missing=true', ['role-closed-1000000030']],
    ['PractitionerRole?role=FON-01&role=L', ['role-paul-martin-cabinet', 'role-sophie-martinez-cabinet', 'role-yann-le-gall-cabinet', 'role-bernard-martin-cabinet']],
    ['PractitionerRole?role=FON-33&active=true', ['role-helene-lefevre-bellevue', 'role-helene-dupont-cds-oeuvre', 'role-jean-lefevre-cds-louvre', 'role-anne-legall-timone', 'role-francois-saint-martin-diaconesses', 'role-eve-durand-timone', 'role-evelyne-petit-cds-louvre', 'role-severine-roux-bellevue']],
    ['PractitionerRole?role=fon-01', []],
  ]));

t.test('practitioner and organization references', (t) =>
  table(t, [
    ['PractitionerRole?practitioner=pra-helene-lefevre', ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue']],
    ['PractitionerRole?practitioner=Practitioner/pra-paul-martin', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']],
    ['PractitionerRole?practitioner=http://fhir.test/fhir/v2/Practitioner/pra-paul-martin', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']],
    ['PractitionerRole?practitioner=http%3A%2F%2Ffhir.test%2Ffhir%2Fv2%2FPractitioner%2Fpra-paul-martin', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']],
    ['PractitionerRole?practitioner=http://elsewhere.example/fhir/v2/Practitioner/pra-paul-martin', []],
    ['PractitionerRole?practitioner:Practitioner=pra-paul-martin', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']],
    ['PractitionerRole?practitioner=pra-paul-martin,pra-bernard-martin', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre']],
    ['PractitionerRole?practitioner=pra-bernard-martin', ['role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre']], // an inactive practitioner
    ['PractitionerRole?practitioner=pra-closed-10100000024', ['role-closed-24-hcl']], // a tombstone
    ['PractitionerRole?practitioner=Organization/org-hcl', []],
    ['PractitionerRole?practitioner=nope', []],
    ['PractitionerRole?practitioner:missing=true', ['role-closed-1000000030']],
    ['PractitionerRole?practitioner:missing=false', except('role-closed-1000000030')],
    ['PractitionerRole?organization=org-pharmacie-lefevre', ['role-claire-gallet-lefevre', 'role-closed-25-lefevre', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?organization=Organization/org-hopital-timone', ['role-anne-legall-timone', 'role-lukasz-nowak-timone', 'role-eve-durand-timone']],
    ['PractitionerRole?organization:Organization=org-cds-louvre', ['role-jean-lefevre-cds-louvre', 'role-paul-martin-remplacant', 'role-evelyne-petit-cds-louvre', 'role-helene-dupont-remplacement']],
    ['PractitionerRole?organization=http://fhir.test/fhir/v2/Organization/org-hcl', ['role-closed-24-hcl']],
    ['PractitionerRole?organization:missing=true', ['role-closed-1000000030', 'role-evelyne-petit-conseil']],
    ['PractitionerRole?organization=org-pharmacie-lefevre&practitioner=pra-emma-nguyen', ['role-emma-nguyen-lefevre']],
  ]));

t.test('chains: practitioner.…, organization.…, organization.partof.…', (t) =>
  table(t, [
    ['PractitionerRole?practitioner.identifier=10100000001', ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue']],
    ['PractitionerRole?practitioner.identifier=https://rpps.esante.gouv.fr|10100000005', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']],
    ['PractitionerRole?practitioner.identifier=10100000001,10100000005', ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-paul-martin-cabinet', 'role-paul-martin-remplacant']],
    ['PractitionerRole?practitioner.family=martin', ['role-helene-martin-herriot', 'role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-sophie-martinez-cabinet', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre']],
    ['PractitionerRole?practitioner:Practitioner.family=martin', ['role-helene-martin-herriot', 'role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-sophie-martinez-cabinet', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre']],
    ['PractitionerRole?practitioner.active=false', ['role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre', 'role-closed-24-hcl', 'role-closed-25-lefevre']],
    ['PractitionerRole?practitioner.name=mme&role=FON-03', ['role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?organization.identifier=690783154', ['role-helene-martin-herriot', 'role-louis-martineau-herriot', 'role-theo-blanc-herriot']],
    ['PractitionerRole?organization.identifier=690781810', ['role-closed-24-hcl']],
    ['PractitionerRole?organization.partof=org-hcl', ['role-helene-martin-herriot', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-theo-blanc-herriot']],
    ['PractitionerRole?organization.partof.identifier=690781810', ['role-helene-martin-herriot', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-theo-blanc-herriot']],
    ['PractitionerRole?organization.partof.identifier=https://finess.esante.gouv.fr|420784878', ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-severine-roux-bellevue', 'role-anne-marie-dubois-nord']],
    ['PractitionerRole?organization.name=pharmacie', ['role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale', 'role-closed-25-lefevre', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?organization.type=SA33&active=true', ['role-claire-gallet-lefevre', 'role-agnes-coeur-faubourg', 'role-closed-25-lefevre', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?practitioner.family=martin&organization.name=cabinet', ['role-paul-martin-cabinet', 'role-sophie-martinez-cabinet', 'role-bernard-martin-cabinet']],
    ['PractitionerRole?organization.address-city=lyon', ['role-helene-martin-herriot', 'role-sophie-martinez-cabinet', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-claire-gallet-lefevre', 'role-ines-obrien-cabinet-martinez', 'role-closed-24-hcl', 'role-closed-25-lefevre', 'role-theo-blanc-herriot', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?organization.identifier=999999999', []],
    ['PractitionerRole?organization.partof:missing=true', [
      'role-claire-gallet-faubourg', 'role-agnes-coeur-faubourg', 'role-claire-gallet-lefevre', 'role-closed-25-lefevre', 'role-emma-nguyen-lefevre',
      'role-jean-lefevre-cds-louvre', 'role-paul-martin-remplacant', 'role-evelyne-petit-cds-louvre', 'role-helene-dupont-remplacement',
      'role-paul-martin-cabinet', 'role-bernard-martin-cabinet', 'role-sophie-martinez-cabinet', 'role-ines-obrien-cabinet-martinez',
      'role-yann-le-gall-cabinet', 'role-aurelie-francois-cabinet', 'role-olivier-rousseau-cabinet', 'role-emma-nguyen-labo', 'role-closed-24-hcl',
      'role-klaus-muller-clinique', 'role-agnes-coeur-centrale', 'role-eve-muller-ehpad', 'role-chantal-perrin-ehpad']], // roles whose organization has no parent
    ['PractitionerRole?practitioner.foo=1', ALL], // unknown chained parameter: ignored (lenient)
  ]));

t.test('mailbox-mss on roles (seed shape mailbox-mss:contains=<fragment>)', (t) =>
  table(t, [
    ['PractitionerRole?mailbox-mss:contains=chu-lyon', ['role-helene-martin-herriot', 'role-louis-martineau-herriot']],
    ['PractitionerRole?mailbox-mss:contains=lefevre', ['role-helene-lefevre-nord', 'role-jean-lefevre-cds-louvre', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?mailbox-mss:contains=LEFÈVRE', ['role-helene-lefevre-nord', 'role-jean-lefevre-cds-louvre', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?mailbox-mss:contains=pharmacien.mssante.fr', ['role-claire-gallet-lefevre', 'role-agnes-coeur-faubourg', 'role-emma-nguyen-lefevre']],
    ['PractitionerRole?mailbox-mss:contains=mssante', MSS],
    ['PractitionerRole?mailbox-mss:contains=orange', []], // sophie.martinez@orange.fr is a plain e-mail
    ['PractitionerRole?mailbox-mss:contains=martin', ['role-paul-martin-cabinet', 'role-louis-martineau-herriot', 'role-agnes-coeur-faubourg']],
    ['PractitionerRole?mailbox-mss=cabinet', ['role-paul-martin-cabinet']],
    ['PractitionerRole?mailbox-mss:exact=cabinet.martin@medecin.mssante.fr', ['role-paul-martin-cabinet']],
    ['PractitionerRole?mailbox-mss:missing=true', except(...MSS)],
  ]));

t.test('data-information-system, data-registration-authority, _lastUpdated on roles', (t) =>
  table(t, [
    ['PractitionerRole?data-information-system=MSS', ['role-helene-martin-herriot']],
    ['PractitionerRole?data-information-system=CG', ['role-chantal-perrin-ehpad', 'role-theo-blanc-herriot', 'role-emma-nguyen-lefevre', 'role-emma-nguyen-labo']],
    ['PractitionerRole?data-information-system=FINESS', ['role-closed-24-hcl']],
    ['PractitionerRole?data-information-system=CG,MSS', ['role-helene-martin-herriot', 'role-chantal-perrin-ehpad', 'role-theo-blanc-herriot', 'role-emma-nguyen-lefevre', 'role-emma-nguyen-labo']],
    ['PractitionerRole?data-information-system:missing=true', ['role-olivier-rousseau-cabinet']],
    ['PractitionerRole?data-information-system=RPPS', except('role-helene-martin-herriot', 'role-chantal-perrin-ehpad', 'role-theo-blanc-herriot', 'role-emma-nguyen-lefevre', 'role-emma-nguyen-labo', 'role-closed-24-hcl', 'role-olivier-rousseau-cabinet')],
    ['PractitionerRole?data-registration-authority=CNOP', ['role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale', 'role-closed-25-lefevre']],
    ['PractitionerRole?data-registration-authority=ARS-84', ['role-closed-24-hcl']],
    ['PractitionerRole?data-registration-authority=https://mos.esante.gouv.fr/NOS/TRE_R60-AutoriteEnregistrement/FHIR/TRE-R60-AutoriteEnregistrement|CNOMK', ['role-sophie-martinez-cabinet', 'role-ines-obrien-cabinet-martinez']],
    ['PractitionerRole?data-registration-authority=ONI', ['role-helene-dupont-cds-oeuvre', 'role-eve-muller-ehpad', 'role-severine-roux-bellevue', 'role-helene-dupont-remplacement']],
    ['PractitionerRole?data-registration-authority=CNOM', [
      'role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-jean-lefevre-cds-louvre',
      'role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse',
      'role-marie-le-gall-diaconesses', 'role-klaus-muller-clinique', 'role-lukasz-nowak-timone', 'role-jose-carreno-clinique',
      'role-evelyne-petit-cds-louvre', 'role-anne-marie-dubois-nord', 'role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre',
      'role-closed-1000000030', 'role-evelyne-petit-conseil']],
    ['PractitionerRole?_lastUpdated=2024-03-15', ['role-helene-lefevre-nord']],
    ['PractitionerRole?_lastUpdated=2024-03-16', ['role-helene-lefevre-bellevue', 'role-helene-martin-herriot']],
    ['PractitionerRole?_lastUpdated=2024-03', ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-helene-dupont-cds-oeuvre']],
    ['PractitionerRole?_lastUpdated=lt2024-06-01', ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-helene-dupont-cds-oeuvre']],
    ['PractitionerRole?_lastUpdated=ge2025', ['role-paul-martin-remplacant', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl']],
    ['PractitionerRole?_lastUpdated=2025-01-15', ['role-paul-martin-remplacant', 'role-bernard-martin-cabinet']],
    ['PractitionerRole?_lastUpdated=eq2025-01-15T12:00:00Z', ['role-bernard-martin-cabinet']],
    ['PractitionerRole?_lastUpdated=eq2025-01-15T12:00:00%2B01:00', ['role-paul-martin-remplacant']],
    ['PractitionerRole?_lastUpdated=2024-06-01', except('role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-helene-dupont-cds-oeuvre', 'role-paul-martin-remplacant', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl')],
    ['PractitionerRole?_lastUpdated=2024-06-01T08:00%2B02:00', except('role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-helene-dupont-cds-oeuvre', 'role-paul-martin-remplacant', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl')],
    ['PractitionerRole?_lastUpdated=2024-06-01T08:00Z', []],
  ]));

t.test('_has on Practitioner', (t) =>
  table(t, [
    ['Practitioner?_has:PractitionerRole:practitioner:role=FON-03', ['pra-agnes-coeur', 'pra-emma-nguyen']],
    ['Practitioner?_has:PractitionerRole:practitioner:organization=org-pharmacie-lefevre', ['pra-claire-gallet', 'pra-closed-10100000025', 'pra-emma-nguyen']],
    ['Practitioner?_has:PractitionerRole:practitioner:active=false', ['pra-paul-martin', 'pra-claire-gallet', 'pra-agnes-coeur', 'pra-bernard-martin', 'pra-closed-10100000024']],
    ['Practitioner?_has:PractitionerRole:practitioner:organization.partof=org-hcl', ['pra-helene-martin', 'pra-louis-martineau', 'pra-theo-blanc']],
    ['Practitioner?_has:PractitionerRole:practitioner:role=FON-35&family=martin', ['pra-helene-martin', 'pra-louis-martineau']],
    ['Practitioner?_has:PractitionerRole:practitioner:role=FON-01,FON-03', ['pra-paul-martin', 'pra-sophie-martinez', 'pra-yann-le-gall', 'pra-bernard-martin', 'pra-agnes-coeur', 'pra-emma-nguyen']],
    // each _has is evaluated on its own: Paul Martin has a FON-01 role (active) and another, inactive, role
    ['Practitioner?_has:PractitionerRole:practitioner:role=FON-01&_has:PractitionerRole:practitioner:active=false', ['pra-paul-martin', 'pra-bernard-martin']],
    ['Practitioner?_has:PractitionerRole:practitioner:role=GENR04', ['pra-bernard-martin', 'pra-evelyne-petit']],
    ['Practitioner?_has:PractitionerRole:practitioner:identifier=1000000040', ['pra-evelyne-petit']],
  ]));

t.test('_include on PractitionerRole', async (t) => {
  const r = '/fhir/v2/PractitionerRole?_id=role-paul-martin-cabinet';
  await expectEntries(t, `${r}&_include=PractitionerRole:practitioner`, ['role-paul-martin-cabinet'], ['Practitioner/pra-paul-martin']);
  await expectEntries(t, `${r}&_include=PractitionerRole:organization`, ['role-paul-martin-cabinet'], ['Organization/org-cabinet-paul-martin']);
  await expectEntries(t, `${r}&_include=PractitionerRole:practitioner&_include=PractitionerRole:organization`, ['role-paul-martin-cabinet'], ['Practitioner/pra-paul-martin', 'Organization/org-cabinet-paul-martin']);
  await expectEntries(t, `${r}&_include=*`, ['role-paul-martin-cabinet'], ['Practitioner/pra-paul-martin', 'Organization/org-cabinet-paul-martin']);
  await expectEntries(t, `${r}&_include=PractitionerRole:*`, ['role-paul-martin-cabinet'], ['Practitioner/pra-paul-martin', 'Organization/org-cabinet-paul-martin']);
  await expectEntries(t, `${r}&_include=PractitionerRole:organization:Organization`, ['role-paul-martin-cabinet'], ['Organization/org-cabinet-paul-martin']);
  await expectEntries(t, `${r}&_include=PractitionerRole%3Apractitioner`, ['role-paul-martin-cabinet'], ['Practitioner/pra-paul-martin']);
  // deduplicated: one practitioner for two matches
  await expectEntries(t, '/fhir/v2/PractitionerRole?practitioner=pra-paul-martin&_include=PractitionerRole:practitioner', ['role-paul-martin-cabinet', 'role-paul-martin-remplacant'], ['Practitioner/pra-paul-martin']);
  await expectEntries(t, '/fhir/v2/PractitionerRole?organization=org-pharmacie-lefevre&_include=*', ['role-claire-gallet-lefevre', 'role-closed-25-lefevre', 'role-emma-nguyen-lefevre'], [
    'Practitioner/pra-claire-gallet', 'Practitioner/pra-closed-10100000025', 'Practitioner/pra-emma-nguyen', 'Organization/org-pharmacie-lefevre']);
  // nothing to include: a tombstone role, a role without organization
  await expectEntries(t, '/fhir/v2/PractitionerRole?_id=role-closed-1000000030&_include=*', ['role-closed-1000000030'], []);
  await expectEntries(t, '/fhir/v2/PractitionerRole?_id=role-evelyne-petit-conseil&_include=*', ['role-evelyne-petit-conseil'], ['Practitioner/pra-evelyne-petit']);
  // includes of an inactive practitioner and of an inactive organization
  await expectEntries(t, '/fhir/v2/PractitionerRole?_id=role-agnes-coeur-centrale,role-bernard-martin-cds-oeuvre&_include=*', ['role-agnes-coeur-centrale', 'role-bernard-martin-cds-oeuvre'], [
    'Practitioner/pra-agnes-coeur', 'Organization/org-pharmacie-centrale', 'Practitioner/pra-bernard-martin', 'Organization/org-cds-oeuvre']);
  const b = (await get(`${r}&_include=*`)).json() as Bundle;
  t.equal(b.entry?.[0].search.mode, 'match', 'the match comes first');
  t.same(b.entry?.slice(1).map((e) => e.search.mode), ['include', 'include']);
});

t.test('_revinclude on Practitioner', async (t) => {
  await expectEntries(t, '/fhir/v2/Practitioner?_id=pra-paul-martin&_revinclude=PractitionerRole:practitioner', ['pra-paul-martin'], ['PractitionerRole/role-paul-martin-cabinet', 'PractitionerRole/role-paul-martin-remplacant']);
  await expectEntries(t, '/fhir/v2/Practitioner?_id=pra-bernard-martin&_revinclude=PractitionerRole:practitioner', ['pra-bernard-martin'], ['PractitionerRole/role-bernard-martin-cabinet', 'PractitionerRole/role-bernard-martin-cds-oeuvre']);
  await expectEntries(t, '/fhir/v2/Practitioner?family=lefevre&_revinclude=PractitionerRole:practitioner', ['pra-helene-lefevre', 'pra-jean-lefevre'], [
    'PractitionerRole/role-helene-lefevre-nord', 'PractitionerRole/role-helene-lefevre-bellevue', 'PractitionerRole/role-jean-lefevre-cds-louvre']);
  await expectEntries(t, '/fhir/v2/Practitioner?_id=pra-closed-10100000024&_revinclude=*', ['pra-closed-10100000024'], ['PractitionerRole/role-closed-24-hcl']);
  // _count limits matches, not includes; total counts matches only
  const res = await get('/fhir/v2/Practitioner?_id=pra-paul-martin,pra-helene-lefevre&_revinclude=PractitionerRole:practitioner&_count=1');
  const b = res.json() as Bundle;
  t.equal(b.total, 2, 'total counts matches only');
  t.equal(matchIds(b).length, 1, 'one match on the page');
  const page1 = matchIds(b)[0];
  const expected = page1 === 'pra-paul-martin'
    ? ['PractitionerRole/role-paul-martin-cabinet', 'PractitionerRole/role-paul-martin-remplacant']
    : ['PractitionerRole/role-helene-lefevre-bellevue', 'PractitionerRole/role-helene-lefevre-nord'];
  t.same(includeIds(b), expected, 'the page carries the includes of its own match');
});

t.test('bad include values and references → 400', async (t) => {
  await expect400(t, '/fhir/v2/PractitionerRole?_include=PractitionerRole:foo', '_include');
  await expect400(t, '/fhir/v2/PractitionerRole?_include=Organization:partof', '_include');
  await expect400(t, '/fhir/v2/PractitionerRole?_include=PractitionerRole:practitioner:Organization', '_include');
  await expect400(t, '/fhir/v2/PractitionerRole?_include=nonsense', '_include');
  await expect400(t, '/fhir/v2/PractitionerRole?_revinclude=PractitionerRole:practitioner', '_revinclude');
  await expect400(t, '/fhir/v2/Practitioner?_include=PractitionerRole:practitioner', '_include');
  await expect400(t, '/fhir/v2/Practitioner?_revinclude=Device:organization', '_revinclude');
  await expect400(t, '/fhir/v2/PractitionerRole?practitioner:Organization=x', 'practitioner:Organization');
  await expect400(t, '/fhir/v2/PractitionerRole?practitioner=a/b/c', 'practitioner');
  await expect400(t, '/fhir/v2/PractitionerRole?practitioner=Practitioner/bad%20id', 'practitioner');
  await expect400(t, '/fhir/v2/PractitionerRole?practitioner:identifier.name=x', 'practitioner:identifier.name');
  await expect400(t, '/fhir/v2/PractitionerRole?role.name=x', 'role.name');
  await expect400(t, '/fhir/v2/PractitionerRole?practitioner.foo=1', 'practitioner.foo', { Prefer: 'handling=strict' });
  await expect400(t, '/fhir/v2/Practitioner?_has:PractitionerRole:active=true', '_has:PractitionerRole:active');
  await expect400(t, '/fhir/v2/Practitioner?_has:PractitionerRole:organization:role=FON-01', '_has:PractitionerRole:organization:role');
  await expect400(t, '/fhir/v2/Practitioner?_has:PractitionerRole:practitioner:foo=1', '_has:PractitionerRole:practitioner:foo', { Prefer: 'handling=strict' });
  await expect400(t, '/fhir/v2/Practitioner?_has:Patient:general-practitioner:name=x', '_has:Patient', { Prefer: 'handling=strict' });
});
