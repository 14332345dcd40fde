/**
 * Practitioner search on the hand-checked dataset of fixtures/directory (see fixtures/README.md):
 * every parameter of seed §4.4 in every value form, every modifier, OR/AND, escapes and the
 * `_lastUpdated` prefixes at every precision. Expected ids are written out by hand from the
 * fixtures, never computed through the server.
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { PRACTITIONERS } from './helpers/directory-ids.ts';
import { API_KEY, searchHelpers, type Bundle } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const loaded = await load(db, [path.join(FIXTURES, 'directory')]);
const { get, matchIds, expectIds, table, expect400 } = searchHelpers(app, { key: API_KEY });

// The 30 practitioners, and the same ids ordered by meta.lastUpdated in UTC (hand-converted; see README).
const ALL: string[] = [...PRACTITIONERS];
const except = (...ids: string[]) => ALL.filter((id) => !ids.includes(id));
const BY_DATE = [
  /* 0 */ 'pra-klaus-muller', //        2023-01-01T00:30:00Z   (stored 2022-12-31T23:30:00-01:00)
  /* 1 */ 'pra-chantal-perrin', //      2023-03-03T03:03:03Z
  /* 2 */ 'pra-claire-gallet', //       2023-06-01T08:00:00Z   (stored 10:00+02:00)
  /* 3 */ 'pra-marie-le-gall', //       2023-11-20T14:15:00Z
  /* 4 */ 'pra-anne-legall', //         2024-01-10T07:00:00Z   (stored 08:00+01:00)
  /* 5 */ 'pra-eve-muller', //          2024-02-29T12:00:00Z
  /* 6 */ 'pra-theo-blanc', //          2024-03-01T12:00:00Z
  /* 7 */ 'pra-aurelie-francois', //    2024-03-02T08:00:00Z
  /* 8 */ 'pra-paul-martin', //         2024-03-14T22:30:00Z   (stored 2024-03-15T00:30:00+02:00)
  /* 9 */ 'pra-helene-dupont', //       2024-03-14T23:59:59.999Z
  /* 10 */ 'pra-helene-lefevre', //     2024-03-15T09:30:00.123Z (stored 10:30:00.123+01:00)
  /* 11 */ 'pra-louis-martineau', //    2024-03-15T09:30:00.500Z (stored 11:30:00.5+02:00)
  /* 12 */ 'pra-sophie-martinez', //    2024-03-15T09:30:59Z
  /* 13 */ 'pra-yann-le-gall', //       2024-03-15T12:00:00Z
  /* 14 */ 'pra-jean-lefevre', //       2024-03-16T00:00:00.000Z
  /* 15 */ 'pra-helene-martin', //      2024-03-16T04:30:00Z   (stored 2024-03-15T23:30:00-05:00)
  /* 16 */ 'pra-lukasz-nowak', //       2024-03-31T22:00:00Z   (stored 2024-04-01T00:00:00+02:00)
  /* 17 */ 'pra-agnes-coeur', //        2024-05-05T05:05:05Z
  /* 18 */ 'pra-jose-carreno', //       2024-06-30T23:59:59Z   (stored +00:00)
  /* 19 */ 'pra-francois-saint-martin', // 2024-07-14T12:07:14Z (stored 14:07:14+02:00)
  /* 20 */ 'pra-eve-durand', //         2024-08-01T12:00:00Z
  /* 21 */ 'pra-evelyne-petit', //      2024-09-10T10:00:00Z
  /* 22 */ 'pra-severine-roux', //      2024-10-01T00:00:00Z
  /* 23 */ 'pra-anne-marie-dubois', //  2024-11-11T11:11:11.111Z
  /* 24 */ 'pra-bernard-martin', //     2024-12-31T23:00:00Z   (stored 2025-01-01T00:00:00+01:00)
  /* 25 */ 'pra-ines-obrien', //        2024-12-31T23:59:59Z
  /* 26 */ 'pra-closed-10100000025', // 2025-02-01T08:00:00Z   (stored 09:00:00.000+01:00)
  /* 27 */ 'pra-closed-10100000024', // 2025-02-01T09:00:00Z
  /* 28 */ 'pra-emma-nguyen', //        2025-03-10T10:00:00Z
  /* 29 */ 'pra-olivier-rousseau', //   2025-03-20T10:00:00Z
];
const range = (from: number, to?: number) => BY_DATE.slice(from, to);

t.test('fixtures/directory loads without a reject', async (t) => {
  t.same(loaded.rejects, [], 'no rejects');
  t.equal(loaded.inserted, 114, '30 Practitioner + 25 Organization + 40 PractitionerRole + 13 Location + 3 Device + 3 HealthcareService');
  t.equal(new Set(BY_DATE).size, 30);
  t.same([...BY_DATE].sort(), [...ALL].sort(), 'BY_DATE is a permutation of ALL');
});

t.test('all practitioners; Bundle shape', async (t) => {
  await expectIds(t, '/fhir/v2/Practitioner', ALL);
  const b = (await get('/fhir/v2/Practitioner?_id=pra-helene-lefevre')).json() as Bundle;
  t.equal(b.resourceType, 'Bundle');
  t.equal(b.type, 'searchset');
  t.same(b.link.find((l) => l.relation === 'self')?.url, 'http://fhir.test/fhir/v2/Practitioner?_id=pra-helene-lefevre');
  t.same(b.entry?.map((e) => [e.fullUrl, e.search.mode]), [['http://fhir.test/fhir/v2/Practitioner/pra-helene-lefevre', 'match']]);
  const res = await get('/fhir/v2/Practitioner/pra-helene-lefevre');
  t.equal(res.statusCode, 200, 'read');
  t.match(res.headers['content-type'], /^application\/fhir\+json/);
  t.has(res.json(), { resourceType: 'Practitioner', id: 'pra-helene-lefevre', name: [{ family: 'Lefèvre', given: ['Hélène'] }] });
});

t.test('family: starts-with after folding, no word-by-word match', (t) =>
  table(t, [
    ['Practitioner?family=martin', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin']],
    ['Practitioner?family=MARTIN', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin']],
    ['Practitioner?family=martine', ['pra-sophie-martinez', 'pra-louis-martineau']],
    ['Practitioner?family=martinez', ['pra-sophie-martinez']],
    ['Practitioner?family=le', ['pra-helene-lefevre', 'pra-jean-lefevre', 'pra-yann-le-gall', 'pra-anne-legall', 'pra-marie-le-gall']],
    ['Practitioner?family=le gall', ['pra-yann-le-gall', 'pra-marie-le-gall']],
    ['Practitioner?family=le%20gall', ['pra-yann-le-gall', 'pra-marie-le-gall']],
    ['Practitioner?family=Le+Gall', ['pra-yann-le-gall', 'pra-marie-le-gall']],
    ['Practitioner?family=le-gall', ['pra-yann-le-gall', 'pra-marie-le-gall']],
    ['Practitioner?family=legall', ['pra-anne-legall']],
    ['Practitioner?family=gall', ['pra-claire-gallet']],
    ['Practitioner?family=lefevre', ['pra-helene-lefevre', 'pra-jean-lefevre']],
    ['Practitioner?family=Lefèvre', ['pra-helene-lefevre', 'pra-jean-lefevre']],
    ['Practitioner?family=LEFÈVRE', ['pra-helene-lefevre', 'pra-jean-lefevre']],
    ['Practitioner?family=lefe%CC%80vre', ['pra-helene-lefevre', 'pra-jean-lefevre']], // NFD: e + U+0300
    ['Practitioner?family=muller', ['pra-klaus-muller', 'pra-eve-muller']],
    ['Practitioner?family=müller', ['pra-klaus-muller', 'pra-eve-muller']],
    ['Practitioner?family=MÜLL', ['pra-klaus-muller', 'pra-eve-muller']],
    ['Practitioner?family=ller', []],
    ['Practitioner?family=coeur', ['pra-agnes-coeur']],
    ['Practitioner?family=cœur', ['pra-agnes-coeur']],
    ['Practitioner?family=CŒUR', ['pra-agnes-coeur']],
    ['Practitioner?family=carreno', ['pra-jose-carreno']],
    ['Practitioner?family=carreño quiñones', ['pra-jose-carreno']],
    ['Practitioner?family=quinones', []],
    ['Practitioner?family=saint', ['pra-francois-saint-martin']],
    ['Practitioner?family=saint-martin', ['pra-francois-saint-martin']],
    ['Practitioner?family=saint martin', ['pra-francois-saint-martin']],
    ['Practitioner?family=st', []],
    ["Practitioner?family=o'brien", ['pra-ines-obrien']],
    ['Practitioner?family=o brien', ['pra-ines-obrien']],
    ['Practitioner?family=O’Brien', ['pra-ines-obrien']],
    ['Practitioner?family=obrien', []],
    ['Practitioner?family=francois', ['pra-aurelie-francois']],
    ['Practitioner?family=  le   gall  ', ['pra-yann-le-gall', 'pra-marie-le-gall']],
  ]));

t.test('family:exact and family:contains', (t) =>
  table(t, [
    ['Practitioner?family:exact=Martin', ['pra-paul-martin', 'pra-bernard-martin']],
    ['Practitioner?family:exact=MARTIN', ['pra-helene-martin']],
    ['Practitioner?family:exact=martin', []],
    ['Practitioner?family:exact=Mart', []],
    ['Practitioner?family:exact=Lefèvre', ['pra-helene-lefevre']],
    ['Practitioner?family:exact=Lefevre', ['pra-jean-lefevre']],
    ['Practitioner?family:exact=lefèvre', []],
    ['Practitioner?family:exact=Müller', ['pra-klaus-muller']],
    ['Practitioner?family:exact=Muller', ['pra-eve-muller']],
    ['Practitioner?family:exact=Cœur', ['pra-agnes-coeur']],
    ['Practitioner?family:exact=Coeur', []],
    ['Practitioner?family:exact=Le Gall', ['pra-yann-le-gall']],
    ['Practitioner?family:exact=Le-Gall', ['pra-marie-le-gall']],
    ['Practitioner?family:exact=Le Gall,Legall', ['pra-yann-le-gall', 'pra-anne-legall']],
    ['Practitioner?family%3Aexact=Martin', ['pra-paul-martin', 'pra-bernard-martin']],
    ['Practitioner?family:contains=martin', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-francois-saint-martin', 'pra-bernard-martin']],
    ['Practitioner?family:contains=gall', ['pra-yann-le-gall', 'pra-anne-legall', 'pra-marie-le-gall', 'pra-claire-gallet']],
    ['Practitioner?family:contains=ller', ['pra-klaus-muller', 'pra-eve-muller']],
    ['Practitioner?family:contains=QUIÑONES', ['pra-jose-carreno']],
    ['Practitioner?family:contains=EVR', ['pra-helene-lefevre', 'pra-jean-lefevre']],
  ]));

t.test('given', (t) =>
  table(t, [
    ['Practitioner?given=helene', ['pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont']],
    ['Practitioner?given=HÉLÈNE', ['pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont']],
    ['Practitioner?given:exact=Hélène', ['pra-helene-lefevre']],
    ['Practitioner?given:exact=HÉLÈNE', ['pra-helene-martin']],
    ['Practitioner?given:exact=Helene', ['pra-helene-dupont']],
    ['Practitioner?given=eve', ['pra-eve-muller', 'pra-eve-durand', 'pra-evelyne-petit']],
    ['Practitioner?given:contains=eve', ['pra-eve-muller', 'pra-eve-durand', 'pra-evelyne-petit', 'pra-severine-roux']],
    ['Practitioner?given:exact=Ève', ['pra-eve-muller', 'pra-eve-durand']],
    ['Practitioner?given:exact=eve', []],
    ['Practitioner?given=lukasz', ['pra-lukasz-nowak']],
    ['Practitioner?given=Łukasz', ['pra-lukasz-nowak']],
    ['Practitioner?given=LUKASZ', ['pra-lukasz-nowak']],
    ['Practitioner?given:exact=Lukasz', []],
    ['Practitioner?given=anne', ['pra-anne-legall', 'pra-anne-marie-dubois']],
    ['Practitioner?given=anne-marie', ['pra-anne-marie-dubois']],
    ['Practitioner?given=anne marie', ['pra-anne-marie-dubois']],
    ['Practitioner?given=annemarie', []],
    ['Practitioner?given=marie', ['pra-marie-le-gall']],
    ['Practitioner?given:contains=marie', ['pra-marie-le-gall', 'pra-anne-marie-dubois']],
    ['Practitioner?given=francois', ['pra-francois-saint-martin']],
    ['Practitioner?given=françois', ['pra-francois-saint-martin']],
    ['Practitioner?given=ines', ['pra-ines-obrien']],
    ['Practitioner?given=theo', ['pra-theo-blanc']],
  ]));

t.test('name: every part (family, given, prefix, suffix, text), name:family / name:given', (t) =>
  table(t, [
    ['Practitioner?name=martin', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin']],
    ['Practitioner?name=francois', ['pra-francois-saint-martin', 'pra-aurelie-francois']],
    ['Practitioner?name=helene', ['pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont']],
    // civility suffix (civilité d'exercice)
    ['Practitioner?name=dr', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-yann-le-gall', 'pra-marie-le-gall',
      'pra-klaus-muller', 'pra-lukasz-nowak', 'pra-jose-carreno', 'pra-francois-saint-martin', 'pra-evelyne-petit',
      'pra-anne-marie-dubois', 'pra-bernard-martin']],
    ['Practitioner?name=pr', ['pra-louis-martineau']],
    ['Practitioner?name:exact=PR', ['pra-louis-martineau']],
    // civility prefix
    ['Practitioner?name=mme', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont', 'pra-sophie-martinez', 'pra-anne-legall', 'pra-marie-le-gall',
      'pra-claire-gallet', 'pra-eve-muller', 'pra-agnes-coeur', 'pra-eve-durand', 'pra-evelyne-petit', 'pra-severine-roux',
      'pra-anne-marie-dubois', 'pra-ines-obrien', 'pra-chantal-perrin', 'pra-aurelie-francois', 'pra-emma-nguyen']],
    ['Practitioner?name:exact=M', [
      'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-yann-le-gall', 'pra-klaus-muller', 'pra-lukasz-nowak',
      'pra-jose-carreno', 'pra-francois-saint-martin', 'pra-bernard-martin', 'pra-theo-blanc', 'pra-olivier-rousseau']],
    // text ("Le Gall Yann") is covered; use is not
    ['Practitioner?name=le gall yann', ['pra-yann-le-gall']],
    ['Practitioner?name=usual', []],
    ['Practitioner?name:contains=gall', ['pra-yann-le-gall', 'pra-anne-legall', 'pra-marie-le-gall', 'pra-claire-gallet']],
    ['Practitioner?name:family=martin&name:given=paul', ['pra-paul-martin']],
    ['Practitioner?name:family=martin&name:given=helene', ['pra-helene-martin']],
    ['Practitioner?name%3Afamily=martin&name%3Agiven=paul', ['pra-paul-martin']],
    ['Practitioner?name:given=helene', ['pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont']],
    ['Practitioner?name:family=francois', ['pra-aurelie-francois']],
    ['Practitioner?name:given=francois', ['pra-francois-saint-martin']],
    ['Practitioner?name:family=dr', []],
    ['Practitioner?name:missing=true', ['pra-closed-10100000024', 'pra-closed-10100000025']],
    ['Practitioner?name:missing=false', except('pra-closed-10100000024', 'pra-closed-10100000025')],
    ['Practitioner?family:missing=true', ['pra-closed-10100000024', 'pra-closed-10100000025']],
  ]));

t.test('string OR (comma), AND (repeat), %2C', (t) =>
  table(t, [
    ['Practitioner?family=martin,legall', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin', 'pra-anne-legall']],
    ['Practitioner?family=martin%2Clegall', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin', 'pra-anne-legall']],
    ['Practitioner?family=martin&family=martineau', ['pra-louis-martineau']],
    ['Practitioner?family=martin&given=paul', ['pra-paul-martin']],
    ['Practitioner?given=eve,severine', ['pra-eve-muller', 'pra-eve-durand', 'pra-evelyne-petit', 'pra-severine-roux']],
    ['Practitioner?given=eve&given=evelyne', ['pra-evelyne-petit']],
    ['Practitioner?family=martin,muller&given=paul,klaus', ['pra-paul-martin', 'pra-klaus-muller']],
    ['Practitioner?family=martin&active=true', ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau']],
    ['Practitioner?given=helene&qualification-code=60', ['pra-helene-dupont']],
  ]));

t.test('identifier and identifier-type (token)', (t) =>
  table(t, [
    ['Practitioner?identifier=10100000001', ['pra-helene-lefevre']],
    ['Practitioner?identifier=810100000001', ['pra-helene-lefevre']],
    ['Practitioner?identifier=https://rpps.esante.gouv.fr|10100000001', ['pra-helene-lefevre']],
    ['Practitioner?identifier=https%3A%2F%2Frpps.esante.gouv.fr%7C10100000001', ['pra-helene-lefevre']],
    ['Practitioner?identifier=urn:oid:1.2.250.1.71.4.2.1|10100000001', []],
    ['Practitioner?identifier=urn:oid:1.2.250.1.71.4.2.1|810100000005', ['pra-paul-martin']],
    ['Practitioner?identifier=10100000001,10100000005', ['pra-helene-lefevre', 'pra-paul-martin']],
    ['Practitioner?identifier=10100000001%2C10100000005', ['pra-helene-lefevre', 'pra-paul-martin']],
    ['Practitioner?identifier=10100000001\\,10100000005', []],
    ['Practitioner?identifier=1010000000', []],
    ['Practitioner?identifier=692012345', ['pra-chantal-perrin']],
    ['Practitioner?identifier=|692012345', ['pra-chantal-perrin']],
    ['Practitioner?identifier=|10100000001', []],
    ['Practitioner?identifier=https://rpps.esante.gouv.fr|', except('pra-chantal-perrin')],
    ['Practitioner?identifier=urn:oid:1.2.250.1.71.4.2.1|', ALL],
    ['Practitioner?identifier=http://unknown.example|', []],
    ['Practitioner?identifier=HTTPS://RPPS.ESANTE.GOUV.FR|10100000001', []], // system URIs compare exactly
    ['Practitioner?identifier=https://rpps.esante.gouv.fr|10100000001,urn:oid:1.2.250.1.71.4.2.1|810100000005', ['pra-helene-lefevre', 'pra-paul-martin']],
    ['Practitioner?identifier=10100000024', ['pra-closed-10100000024']],
    ['Practitioner?identifier:not=10100000001', except('pra-helene-lefevre')],
    ['Practitioner?identifier:missing=false', ALL],
    ['Practitioner?identifier:missing=true', []],
    ['Practitioner?identifier=urn:x\\|y|v', []],
    ['Practitioner?identifier=x\\\\y', []],
    ['Practitioner?identifier-type=RPPS', except('pra-chantal-perrin')],
    ['Practitioner?identifier-type=IDNPS', ALL],
    ['Practitioner?identifier-type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203|RPPS', except('pra-chantal-perrin')],
    ['Practitioner?identifier-type:not=RPPS', ['pra-chantal-perrin']],
    ['Practitioner?identifier-type=rpps', []],
  ]));

t.test('active and _id', (t) =>
  table(t, [
    ['Practitioner?active=true', except('pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025')],
    ['Practitioner?active=false', ['pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025']],
    ['Practitioner?active:not=true', ['pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025']],
    ['Practitioner?active:not=false', except('pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025')],
    ['Practitioner?active=true,false', ALL],
    ['Practitioner?active:missing=true', []],
    ['Practitioner?_id=pra-helene-lefevre', ['pra-helene-lefevre']],
    ['Practitioner?_id=pra-helene-lefevre,pra-paul-martin', ['pra-helene-lefevre', 'pra-paul-martin']],
    ['Practitioner?_id=PRA-HELENE-LEFEVRE', []],
    ['Practitioner?_id=pra-helene', []],
    ['Practitioner?_id=nope', []],
    ['Practitioner?_id:not=pra-helene-lefevre', except('pra-helene-lefevre')],
  ]));

t.test('qualification-code: profession, category, know-how, diploma', (t) =>
  table(t, [
    ['Practitioner?qualification-code=10', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-marie-le-gall',
      'pra-klaus-muller', 'pra-lukasz-nowak', 'pra-jose-carreno', 'pra-francois-saint-martin', 'pra-evelyne-petit',
      'pra-anne-marie-dubois', 'pra-bernard-martin', 'pra-theo-blanc']],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_G15-ProfessionSante/FHIR/TRE-G15-ProfessionSante|10', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-marie-le-gall',
      'pra-klaus-muller', 'pra-lukasz-nowak', 'pra-jose-carreno', 'pra-francois-saint-martin', 'pra-evelyne-petit',
      'pra-anne-marie-dubois', 'pra-bernard-martin', 'pra-theo-blanc']],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_R09-CategorieProfessionnelle/FHIR/TRE-R09-CategorieProfessionnelle|10', []],
    ['Practitioner?qualification-code=21', ['pra-claire-gallet', 'pra-agnes-coeur', 'pra-emma-nguyen']],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_G15-ProfessionSante/FHIR/TRE-G15-ProfessionSante|60', ['pra-helene-dupont', 'pra-eve-muller', 'pra-severine-roux', 'pra-chantal-perrin']],
    ['Practitioner?qualification-code=SM04', ['pra-helene-martin', 'pra-louis-martineau', 'pra-klaus-muller', 'pra-jose-carreno', 'pra-anne-marie-dubois']],
    ['Practitioner?qualification-code=sm04', []],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_R38-SpecialiteOrdinale/FHIR/TRE-R38-SpecialiteOrdinale|SM54', [
      'pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-marie-le-gall', 'pra-lukasz-nowak', 'pra-francois-saint-martin',
      'pra-evelyne-petit', 'pra-bernard-martin']],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_R38-SpecialiteOrdinale/FHIR/TRE-R38-SpecialiteOrdinale|', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-marie-le-gall',
      'pra-klaus-muller', 'pra-lukasz-nowak', 'pra-jose-carreno', 'pra-francois-saint-martin', 'pra-evelyne-petit',
      'pra-anne-marie-dubois', 'pra-bernard-martin']],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_R09-CategorieProfessionnelle/FHIR/TRE-R09-CategorieProfessionnelle|M', ['pra-francois-saint-martin']],
    ['Practitioner?qualification-code=E', ['pra-theo-blanc']],
    ['Practitioner?qualification-code=F', ['pra-emma-nguyen']],
    ['Practitioner?qualification-code=40,50', ['pra-yann-le-gall', 'pra-anne-legall', 'pra-eve-durand', 'pra-aurelie-francois', 'pra-olivier-rousseau']],
    ['Practitioner?qualification-code=10&qualification-code=SM04', ['pra-helene-martin', 'pra-louis-martineau', 'pra-klaus-muller', 'pra-jose-carreno', 'pra-anne-marie-dubois']],
    ['Practitioner?qualification-code=DE01', ['pra-claire-gallet', 'pra-agnes-coeur', 'pra-emma-nguyen']],
    ['Practitioner?qualification-code=https://mos.esante.gouv.fr/NOS/TRE_R14-TypeDiplome/FHIR/TRE-R14-TypeDiplome|DE', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-claire-gallet',
      'pra-agnes-coeur', 'pra-emma-nguyen']],
    ['Practitioner?qualification-code:not=10', [
      'pra-helene-dupont', 'pra-sophie-martinez', 'pra-yann-le-gall', 'pra-anne-legall', 'pra-claire-gallet', 'pra-eve-muller',
      'pra-agnes-coeur', 'pra-eve-durand', 'pra-severine-roux', 'pra-ines-obrien', 'pra-closed-10100000024', 'pra-closed-10100000025',
      'pra-chantal-perrin', 'pra-aurelie-francois', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
    ['Practitioner?qualification-code=10&active=false', ['pra-bernard-martin']],
  ]));

t.test('mailbox-mss: only MSSANTE-typed telecoms, never ordinary e-mails', (t) =>
  table(t, [
    ['Practitioner?mailbox-mss=helene', ['pra-helene-lefevre', 'pra-helene-martin']],
    ['Practitioner?mailbox-mss=helene.lefevre@chu-saint-etienne.mssante.fr', ['pra-helene-lefevre']],
    ['Practitioner?mailbox-mss=helene.lefevre', ['pra-helene-lefevre']],
    ['Practitioner?mailbox-mss:exact=helene.lefevre@chu-saint-etienne.mssante.fr', ['pra-helene-lefevre']],
    ['Practitioner?mailbox-mss:exact=HELENE.LEFEVRE@CHU-SAINT-ETIENNE.MSSANTE.FR', []],
    ['Practitioner?mailbox-mss:exact=helene.lefevre', []],
    ['Practitioner?mailbox-mss:contains=medecin.mssante', ['pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin']],
    ['Practitioner?mailbox-mss:contains=pharmacien', ['pra-claire-gallet', 'pra-agnes-coeur']],
    ['Practitioner?mailbox-mss=paul', ['pra-paul-martin']],
    ['Practitioner?mailbox-mss=sophie', []], // sophie.martinez@orange.fr is an ordinary e-mail
    ['Practitioner?mailbox-mss=eve', ['pra-eve-durand']], // eve.muller@laposte.net is not MSS
    ['Practitioner?mailbox-mss:contains=gmail', []],
    ['Practitioner?mailbox-mss:contains=orange', []],
    ['Practitioner?mailbox-mss:missing=false', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-yann-le-gall',
      'pra-claire-gallet', 'pra-agnes-coeur', 'pra-eve-durand']],
    ['Practitioner?mailbox-mss:missing=true', except(
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-yann-le-gall',
      'pra-claire-gallet', 'pra-agnes-coeur', 'pra-eve-durand')],
  ]));

t.test('number-smartcard and type-smartcard', (t) =>
  table(t, [
    ['Practitioner?number-smartcard=3100101001', ['pra-helene-lefevre']],
    ['Practitioner?number-smartcard=310010', ['pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-anne-legall']],
    ['Practitioner?number-smartcard=3100101', ['pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin']],
    ['Practitioner?number-smartcard=3100129129', ['pra-emma-nguyen']],
    ['Practitioner?number-smartcard=3100129029', ['pra-emma-nguyen']],
    ['Practitioner?number-smartcard:exact=3100101001', ['pra-helene-lefevre']],
    ['Practitioner?number-smartcard:exact=310010', []],
    ['Practitioner?number-smartcard:contains=129', ['pra-emma-nguyen']],
    ['Practitioner?number-smartcard=8', ['pra-theo-blanc']],
    ['Practitioner?number-smartcard=3100101001,8000127027', ['pra-helene-lefevre', 'pra-theo-blanc']],
    ['Practitioner?number-smartcard:missing=false', [
      'pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-anne-legall', 'pra-claire-gallet',
      'pra-francois-saint-martin', 'pra-severine-roux', 'pra-theo-blanc', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
    ['Practitioner?number-smartcard:missing=true', except(
      'pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-anne-legall', 'pra-claire-gallet',
      'pra-francois-saint-martin', 'pra-severine-roux', 'pra-theo-blanc', 'pra-emma-nguyen', 'pra-olivier-rousseau')],
    ['Practitioner?type-smartcard=CPF', ['pra-theo-blanc']],
    ['Practitioner?type-smartcard=https://mos.esante.gouv.fr/NOS/TRE_R87-TypeCarte/FHIR/TRE-R87-TypeCarte|CPS', [
      'pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-anne-legall', 'pra-claire-gallet',
      'pra-francois-saint-martin', 'pra-severine-roux', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
  ]));

t.test('data-information-system and data-registration-authority (meta.extension as-ext-data-trace)', (t) =>
  table(t, [
    ['Practitioner?data-information-system=RPPS', except('pra-chantal-perrin', 'pra-theo-blanc', 'pra-emma-nguyen', 'pra-olivier-rousseau')],
    ['Practitioner?data-information-system=CG', ['pra-chantal-perrin', 'pra-theo-blanc', 'pra-emma-nguyen']],
    ['Practitioner?data-information-system=CG,MSS', ['pra-chantal-perrin', 'pra-theo-blanc', 'pra-emma-nguyen']],
    ['Practitioner?data-information-system=MSS', []],
    // a valueCode: its system is the one the element implies, never none
    ['Practitioner?data-information-system=|CG', []],
    ['Practitioner?data-information-system=https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem/as-cs-type-systeme-information|CG', ['pra-chantal-perrin', 'pra-theo-blanc', 'pra-emma-nguyen']],
    ['Practitioner?data-information-system=rpps', []],
    ['Practitioner?data-information-system:missing=true', ['pra-olivier-rousseau']],
    ['Practitioner?data-information-system:not=RPPS', ['pra-chantal-perrin', 'pra-theo-blanc', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
    ['Practitioner?data-registration-authority=CNOM', [
      'pra-helene-lefevre', 'pra-helene-martin', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-louis-martineau', 'pra-marie-le-gall',
      'pra-klaus-muller', 'pra-lukasz-nowak', 'pra-jose-carreno', 'pra-evelyne-petit', 'pra-anne-marie-dubois', 'pra-bernard-martin',
      'pra-closed-10100000024']],
    ['Practitioner?data-registration-authority=https://mos.esante.gouv.fr/NOS/TRE_R60-AutoriteEnregistrement/FHIR/TRE-R60-AutoriteEnregistrement|CNOP', ['pra-claire-gallet', 'pra-agnes-coeur', 'pra-closed-10100000025']],
    ['Practitioner?data-registration-authority=ONI', ['pra-helene-dupont', 'pra-eve-muller', 'pra-severine-roux']],
    ['Practitioner?data-registration-authority=SSA', ['pra-francois-saint-martin']],
    ['Practitioner?data-registration-authority=ONCD,CNOSF', ['pra-yann-le-gall', 'pra-aurelie-francois', 'pra-anne-legall', 'pra-eve-durand']],
  ]));

t.test('_lastUpdated: day precision, every prefix', (t) =>
  table(t, [
    ['Practitioner?_lastUpdated=2024-03-15', range(10, 14)],
    ['Practitioner?_lastUpdated=eq2024-03-15', range(10, 14)],
    ['Practitioner?_lastUpdated=ne2024-03-15', [...range(0, 10), ...range(14)]],
    ['Practitioner?_lastUpdated=gt2024-03-15', range(14)],
    ['Practitioner?_lastUpdated=ge2024-03-15', range(10)],
    ['Practitioner?_lastUpdated=lt2024-03-15', range(0, 10)],
    ['Practitioner?_lastUpdated=le2024-03-15', range(0, 14)],
    ['Practitioner?_lastUpdated=sa2024-03-15', range(14)],
    ['Practitioner?_lastUpdated=eb2024-03-15', range(0, 10)],
    ['Practitioner?_lastUpdated=2024-03-14', ['pra-paul-martin', 'pra-helene-dupont']],
    ['Practitioner?_lastUpdated=2024-03-16', ['pra-jean-lefevre', 'pra-helene-martin']],
    ['Practitioner?_lastUpdated=2024-12-31', ['pra-bernard-martin', 'pra-ines-obrien']],
    ['Practitioner?_lastUpdated=2025-01-01', []],
    ['Practitioner?_lastUpdated=2022-12-31', []],
    ['Practitioner?_lastUpdated=2023-01-01', ['pra-klaus-muller']],
    ['Practitioner?_lastUpdated=2024-02-29', ['pra-eve-muller']],
    ['Practitioner?_lastUpdated=ge2024-03-15&_lastUpdated=lt2024-03-16', range(10, 14)],
    ['Practitioner?_lastUpdated=2024-03-14,2024-03-16', ['pra-paul-martin', 'pra-helene-dupont', 'pra-jean-lefevre', 'pra-helene-martin']],
    ['Practitioner?_lastUpdated=ge2024-03-16', range(14)],
    ['Practitioner?_lastUpdated=lt2024-03-16', range(0, 14)],
  ]));

t.test('_lastUpdated at the end of year 9999: the range ends in year 10000, which PostgreSQL takes (was a 500)', (t) =>
  table(t, [
    ['Practitioner?_lastUpdated=9999', []],
    ['Practitioner?_lastUpdated=9999-12-31', []],
    ['Practitioner?_lastUpdated=9999-12-31T23:59:59.999Z', []],
    ['Practitioner?_lastUpdated=lt9999-12-31', ALL],
    ['Practitioner?_lastUpdated=le9999', ALL],
    ['Practitioner?_lastUpdated=ne9999', ALL],
    ['Practitioner?_lastUpdated=gt9999', []],
    ['Practitioner?_lastUpdated=eb9999', ALL],
  ]));

t.test('_lastUpdated: year and month precision', (t) =>
  table(t, [
    ['Practitioner?_lastUpdated=2022', []],
    ['Practitioner?_lastUpdated=2023', range(0, 4)],
    ['Practitioner?_lastUpdated=2024', range(4, 26)],
    ['Practitioner?_lastUpdated=2025', range(26)],
    ['Practitioner?_lastUpdated=ge2025', range(26)],
    ['Practitioner?_lastUpdated=gt2024', range(26)],
    ['Practitioner?_lastUpdated=sa2024', range(26)],
    ['Practitioner?_lastUpdated=lt2023', []],
    ['Practitioner?_lastUpdated=le2023', range(0, 4)],
    ['Practitioner?_lastUpdated=eb2024', range(0, 4)],
    ['Practitioner?_lastUpdated=ne2024', [...range(0, 4), ...range(26)]],
    ['Practitioner?_lastUpdated=2024-03', range(6, 17)],
    ['Practitioner?_lastUpdated=eq2024-03', range(6, 17)],
    ['Practitioner?_lastUpdated=ne2024-03', [...range(0, 6), ...range(17)]],
    ['Practitioner?_lastUpdated=gt2024-03', range(17)],
    ['Practitioner?_lastUpdated=ge2024-03', range(6)],
    ['Practitioner?_lastUpdated=lt2024-03', range(0, 6)],
    ['Practitioner?_lastUpdated=le2024-03', range(0, 17)],
    ['Practitioner?_lastUpdated=sa2024-03', range(17)],
    ['Practitioner?_lastUpdated=eb2024-03', range(0, 6)],
    ['Practitioner?_lastUpdated=2024-04', []],
    ['Practitioner?_lastUpdated=2024-02', ['pra-eve-muller']],
  ]));

t.test('_lastUpdated: minute, second and millisecond precision', (t) =>
  table(t, [
    ['Practitioner?_lastUpdated=2024-03-15T09:30Z', range(10, 13)],
    ['Practitioner?_lastUpdated=eq2024-03-15T09:30Z', range(10, 13)],
    ['Practitioner?_lastUpdated=ne2024-03-15T09:30Z', [...range(0, 10), ...range(13)]],
    ['Practitioner?_lastUpdated=gt2024-03-15T09:30Z', range(13)],
    ['Practitioner?_lastUpdated=ge2024-03-15T09:30Z', range(10)],
    ['Practitioner?_lastUpdated=lt2024-03-15T09:30Z', range(0, 10)],
    ['Practitioner?_lastUpdated=le2024-03-15T09:30Z', range(0, 13)],
    ['Practitioner?_lastUpdated=sa2024-03-15T09:30Z', range(13)],
    ['Practitioner?_lastUpdated=eb2024-03-15T09:30Z', range(0, 10)],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:00Z', range(10, 12)],
    ['Practitioner?_lastUpdated=ne2024-03-15T09:30:00Z', [...range(0, 10), ...range(12)]],
    ['Practitioner?_lastUpdated=gt2024-03-15T09:30:00Z', range(12)],
    ['Practitioner?_lastUpdated=ge2024-03-15T09:30:00Z', range(10)],
    ['Practitioner?_lastUpdated=lt2024-03-15T09:30:00Z', range(0, 10)],
    ['Practitioner?_lastUpdated=le2024-03-15T09:30:00Z', range(0, 12)],
    ['Practitioner?_lastUpdated=sa2024-03-15T09:30:00Z', range(12)],
    ['Practitioner?_lastUpdated=eb2024-03-15T09:30:00Z', range(0, 10)],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:59Z', ['pra-sophie-martinez']],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:00.123Z', ['pra-helene-lefevre']],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:00.5Z', ['pra-louis-martineau']],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:00.500Z', ['pra-louis-martineau']],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:00.12Z', []],
    ['Practitioner?_lastUpdated=gt2024-03-15T09:30:00.123Z', range(11)],
    ['Practitioner?_lastUpdated=ge2024-03-15T09:30:00.123Z', range(10)],
    ['Practitioner?_lastUpdated=lt2024-03-15T09:30:00.500Z', range(0, 11)],
    ['Practitioner?_lastUpdated=le2024-03-15T09:30:00.500Z', range(0, 12)],
    ['Practitioner?_lastUpdated=ne2024-03-15T09:30:00.123Z', except('pra-helene-lefevre')],
    ['Practitioner?_lastUpdated=eq2024-03-15T09:30:00.123Z', ['pra-helene-lefevre']],
    ['Practitioner?_lastUpdated=sa2024-03-15T09:30:00.123Z', range(11)],
    ['Practitioner?_lastUpdated=eb2024-03-15T09:30:00.500Z', range(0, 11)],
    ['Practitioner?_lastUpdated=2024-03-14T23:59:59.999Z', ['pra-helene-dupont']],
    ['Practitioner?_lastUpdated=2024-11-11T11:11:11.111Z', ['pra-anne-marie-dubois']],
    ['Practitioner?_lastUpdated=2024-11-11T11:11:11Z', ['pra-anne-marie-dubois']],
  ]));

t.test('_lastUpdated: time zones, %2B / %3A / raw +, no zone = UTC', (t) =>
  table(t, [
    ['Practitioner?_lastUpdated=2024-03-15T10:30:00.123%2B01:00', ['pra-helene-lefevre']],
    ['Practitioner?_lastUpdated=2024-03-15T10%3A30%3A00%2B01%3A00', range(10, 12)],
    ['Practitioner?_lastUpdated=2024-03-15T10:30:00+01:00', range(10, 12)], // raw '+' arrives as a space
    ['Practitioner?_lastUpdated=ge2024-03-15T10:30%2B01:00', range(10)],
    ['Practitioner?_lastUpdated=ge2024-03-15T10:30:00%2B01:00', range(10)],
    ['Practitioner?_lastUpdated=ge2024-03-15T10:30:00', range(13)], // no zone: 10:30 UTC
    ['Practitioner?_lastUpdated=ge2024-03-15T09:30:00', range(10)],
    ['Practitioner?_lastUpdated=2024-03-15T09:30:00', range(10, 12)],
    ['Practitioner?_lastUpdated=2024-03-15T10:30:00', []],
    ['Practitioner?_lastUpdated=2024-03-15T23:30:00-05:00', ['pra-helene-martin']],
    ['Practitioner?_lastUpdated=2024-03-15T23:30-05:00', ['pra-helene-martin']],
    ['Practitioner?_lastUpdated=2024-03-16T04:30:00Z', ['pra-helene-martin']],
    ['Practitioner?_lastUpdated=2024-03-15T00:30:00%2B02:00', ['pra-paul-martin']],
    ['Practitioner?_lastUpdated=2024-06-30T23:59:59Z', ['pra-jose-carreno']],
    ['Practitioner?_lastUpdated=2024-06-30T23:59:59%2B00:00', ['pra-jose-carreno']],
    ['Practitioner?_lastUpdated=eq2025-02-01T09:00:00Z', ['pra-closed-10100000024']],
    ['Practitioner?_lastUpdated=eq2025-02-01T09:00:00%2B01:00', ['pra-closed-10100000025']],
    ['Practitioner?_lastUpdated=2025-02-01T08:00:00.000Z', ['pra-closed-10100000025']],
    ['Practitioner?_lastUpdated=ge2025-02-01T09:00:00%2B01:00', range(26)],
    ['Practitioner?_lastUpdated=le2023-01-01T00:30:00Z', ['pra-klaus-muller']],
    ['Practitioner?_lastUpdated=lt2023-01-01T00:30:00Z', []],
    ['Practitioner?_lastUpdated=2022-12-31T23:30-01:00', ['pra-klaus-muller']],
    ['Practitioner?_lastUpdated:missing=false', ALL],
  ]));

t.test('_lastUpdated=ap (±10 % of the distance to now) at every precision', async (t) => {
  // The tolerance depends on the clock; the assertions hold for any run date from 2025 to ~2030.
  const cases: [string, string[], string[]][] = [
    ['ap2024', range(4, 26), ['pra-klaus-muller', 'pra-chantal-perrin']],
    ['ap2024-03', range(6, 17), ['pra-klaus-muller', 'pra-chantal-perrin', 'pra-claire-gallet', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
    ['ap2024-03-15', range(8, 16), ['pra-klaus-muller', 'pra-chantal-perrin', 'pra-claire-gallet', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
    ['ap2024-03-15T09:30Z', range(8, 16), ['pra-klaus-muller', 'pra-chantal-perrin', 'pra-claire-gallet', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
    ['ap2024-03-15T10:30:00.123%2B01:00', range(8, 16), ['pra-klaus-muller', 'pra-chantal-perrin', 'pra-claire-gallet', 'pra-emma-nguyen', 'pra-olivier-rousseau']],
  ];
  for (const [q, inside, outside] of cases) {
    const res = await get(`/fhir/v2/Practitioner?_lastUpdated=${q}`);
    t.equal(res.statusCode, 200, q);
    const ids = matchIds(res.json() as Bundle);
    t.same(inside.filter((id) => !ids.includes(id)), [], `${q} includes ${inside.length} ids around the value`);
    t.same(outside.filter((id) => ids.includes(id)), [], `${q} excludes the far ones`);
  }
});

t.test('unknown parameters are ignored and left out of self; strict handling refuses them', async (t) => {
  const res = await get('/fhir/v2/Practitioner?foo=bar&family=martin&_elements=name');
  t.equal(res.statusCode, 200);
  const b = res.json() as Bundle;
  t.same(matchIds(b), ['pra-bernard-martin', 'pra-helene-martin', 'pra-louis-martineau', 'pra-paul-martin', 'pra-sophie-martinez']);
  const self = new URL(b.link.find((l) => l.relation === 'self')!.url);
  t.same([...self.searchParams], [['family', 'martin'], ['_elements', 'name']], 'self lists only the applied parameters');
  t.equal(self.origin + self.pathname, 'http://fhir.test/fhir/v2/Practitioner');
  await expect400(t, '/fhir/v2/Practitioner?foo=bar&family=martin', 'foo', { Prefer: 'handling=strict' });
  const lenient = await get('/fhir/v2/Practitioner?foo=bar', { Prefer: 'handling=lenient' });
  t.same(matchIds(lenient.json() as Bundle), [...ALL].sort(), 'Prefer: handling=lenient ignores it');
  // empty values are ignored too
  const empty = (await get('/fhir/v2/Practitioner?family=&given=paul')).json() as Bundle;
  t.same(matchIds(empty), ['pra-paul-martin']);
  t.same([...new URL(empty.link[0].url).searchParams], [['given', 'paul']]);
});

t.test('400 OperationOutcome naming the parameter', async (t) => {
  await expect400(t, '/fhir/v2/Practitioner?name:foo=x', 'name:foo');
  await expect400(t, '/fhir/v2/Practitioner?family:text=x', 'family:text');
  await expect400(t, '/fhir/v2/Practitioner?name:family:exact=Martin', 'name:family:exact');
  await expect400(t, '/fhir/v2/Practitioner?family:missing=maybe', 'family:missing');
  await expect400(t, '/fhir/v2/Practitioner?active=yes', 'active');
  await expect400(t, '/fhir/v2/Practitioner?active=TRUE', 'active');
  await expect400(t, '/fhir/v2/Practitioner?active:exact=true', 'active:exact');
  await expect400(t, '/fhir/v2/Practitioner?identifier=x\\y', 'identifier');
  await expect400(t, '/fhir/v2/Practitioner?identifier=a|b|c', 'identifier');
  await expect400(t, '/fhir/v2/Practitioner?identifier:contains=101', 'identifier:contains');
  await expect400(t, '/fhir/v2/Practitioner?qualification-code:exact=10', 'qualification-code:exact');
  for (const bad of ['2024-03-15T10', '2024-13-01', '2024-03-32', '2023-02-29', 'xx2024-03-15', '15/03/2024', '2024-03-15T25:00Z', '23 May 2009', 'ge', '2024-03-15T10:30:00+25:00']) {
    await expect400(t, `/fhir/v2/Practitioner?_lastUpdated=${encodeURIComponent(bad)}`, '_lastUpdated');
  }
  await expect400(t, '/fhir/v2/Practitioner?_lastUpdated:exact=2024', '_lastUpdated:exact');
  await expect400(t, '/fhir/v2/Practitioner?_lastUpdated:missing=yes', '_lastUpdated:missing');
});
