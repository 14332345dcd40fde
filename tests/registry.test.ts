import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { compileExtractor } from '../src/fhir/extract.ts';

const extract = (resource: Record<string, unknown>, params: Parameters<typeof compileExtractor>[0]) => compileExtractor(params)(resource);
import { normalize, prefixUpperBound } from '../src/fhir/normalize.ts';
import { soundOf } from '../src/fhir/phonetic.ts';
import { buildRegistry, PARAMS, paramId, registry, type ResourceType } from '../src/registry/index.ts';
import { FIXTURES } from './helpers/app.ts';

/**
 * Every registry entry extracts its expected values from a real example (fixtures/ans-ig-examples,
 * copies of the IG's) or a fixture (fixtures/extraction). Expected values are read off the files by
 * hand, not computed by the implementation.
 */
const ex = (f: string) => JSON.parse(readFileSync(path.join(FIXTURES, 'ans-ig-examples', f), 'utf8'));
const shapes = JSON.parse(readFileSync(path.join(FIXTURES, 'extraction', 'shapes.json'), 'utf8')).entry.map((e: { resource: unknown }) => e.resource);
const shape = (id: string) => shapes.find((r: { id: string }) => r.id === id);
const locations = JSON.parse(readFileSync(path.join(FIXTURES, 'directory', 'Location.json'), 'utf8')).entry.map((e: { resource: unknown }) => e.resource);
const location = (id: string) => locations.find((r: { id: string }) => r.id === id);

function values(type: ResourceType, code: string, resource: Record<string, unknown>): string[] {
  const p = registry.byCode(type, code);
  if (!p) throw new Error(`no ${type}.${code}`);
  // A pair's rows come from its parts' (extracted with it), shown alone.
  if (p.special === 'pair') return extract(resource, [...p.pair!.map((c) => registry.byCode(type, c)!), p]).pair.map((r) => `${r.a}|${r.b}`).sort();
  const rows = extract(resource, [p]);
  return [
    ...rows.token.map((r) => (r.system === null ? r.code : `${r.system}|${r.code}`)),
    ...rows.string.map((r) => `${r.norm}/${r.exact}`),
    ...rows.date.map((r) => `${new Date(r.low).toISOString()}..${new Date(r.high).toISOString()}`),
    ...rows.reference.map((r) => `${r.targetType}/${r.targetId}`),
    // The sound is the phonetic module's own (tests/phonetic.test.ts): here, that each word gets it.
    ...rows.phonetic.map((r) => `${r.word}~${r.sound === soundOf(r.word) ? 'its sound' : r.sound}`),
    ...rows.near.map((r) => `${r.lat},${r.lon}`),
  ].sort();
}

const PRA = ex('Practitioner-pdsm-practitioner-example.json');
const ORG_API = ex('Organization-pdsm-org-example.json');
const ROLE = ex('PractitionerRole-pdsm-practitionerrole-example.json');
const ORG_EG = ex('Organization-158480DP.json');
const ORG_CAB = ex('Organization-548812DP.json');
const ORG_NANCY = ex('Organization-example-organization-nancy.json');
const ORG_FICTIVE = ex('Organization-example-organization-fictive.json');
const R60 = 'https://mos.esante.gouv.fr/NOS/TRE_R60-AutoriteEnregistrement/FHIR/TRE-R60-AutoriteEnregistrement';
const V20203 = 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203';

const cases: [ResourceType, string, Record<string, unknown>, string[]][] = [
  ['Practitioner', '_lastUpdated', PRA, ['2025-04-28T16:19:26.335Z..2025-04-28T16:19:26.336Z']],
  ['Practitioner', 'active', PRA, ['true']],
  ['Practitioner', 'identifier', PRA, ['https://rpps.esante.gouv.fr|10101201234', 'urn:oid:1.2.250.1.71.4.2.1|810101201234']],
  ['Practitioner', 'identifier-type', PRA, [`${V20203}|IDNPS`, `${V20203}|RPPS`]],
  ['Practitioner', 'family', PRA, ['leclerc/Leclerc']],
  ['Practitioner', 'given', PRA, ['sophie/Sophie']],
  ['Practitioner', 'family+given', PRA, ['leclerc|sophie']],
  // Every family of any name with every given name of any name, each folded pair once.
  ['Practitioner', 'family+given', shape('xt-pra-names'), ['durand lefevre|anne', 'durand lefevre|marie', 'durand|anne', 'durand|marie']],
  ['Practitioner', 'name', PRA, ['dr/DR', 'leclerc sophie/Leclerc Sophie', 'leclerc/Leclerc', 'mme/MME', 'sophie/Sophie']],
  ['Practitioner', 'phonetic', PRA, ['leclerc~its sound', 'sophie~its sound']],
  ['Organization', 'phonetic', ORG_CAB, ['cabinet~its sound', 'cabinetdegroupe~its sound', 'cabinetsaintantoine~its sound', 'de~its sound', 'groupe~its sound', 'saint~its sound', 'antoine~its sound'].sort()],
  ['Practitioner', 'mailbox-mss', PRA, ['sophie leclerc mssante fr/sophie.leclerc@mssante.fr']],
  ['Practitioner', 'number-smartcard', PRA, ['3100345668/3100345668']],
  ['Practitioner', 'type-smartcard', PRA, ['https://mos.esante.gouv.fr/NOS/TRE_R87-TypeCarte/FHIR/TRE-R87-TypeCarte|CPS']],
  ['Practitioner', 'qualification-code', PRA, [
    'https://mos.esante.gouv.fr/NOS/TRE_G15-ProfessionSante/FHIR/TRE-G15-ProfessionSante|70',
    'https://mos.esante.gouv.fr/NOS/TRE_R09-CategorieProfessionnelle/FHIR/TRE-R09-CategorieProfessionnelle|C',
    'https://mos.esante.gouv.fr/NOS/TRE_R14-TypeDiplome/FHIR/TRE-R14-TypeDiplome|DE',
    'https://mos.esante.gouv.fr/NOS/TRE_R48-DiplomeEtatFrancais/FHIR/TRE-R48-DiplomeEtatFrancais|DE11',
  ]],
  ['Practitioner', 'data-information-system', PRA, []],
  ['Organization', 'data-information-system', ORG_API, ['CG']],
  ['Organization', 'data-information-system', shape('xt-org-parent'), ['FINESS']],
  ['Organization', 'data-registration-authority', shape('xt-org-parent'), [`${R60}|ARS-11`]],
  ['Practitioner', 'data-registration-authority', shape('xt-pra'), [`${R60}|CNOM`]],
  ['Practitioner', 'data-information-system', shape('xt-pra'), ['RPPS']],
  ['PractitionerRole', 'data-information-system', shape('xt-role-contained'), ['MSS']],
  ['PractitionerRole', 'data-registration-authority', shape('xt-role-contained'), [`${R60}|ONI`]],
  ['Organization', 'identifier', ORG_EG, ['https://finess.esante.gouv.fr|754567860', 'https://rppsrang.esante.gouv.fr|F754567860', 'urn:oid:1.2.250.1.71.4.2.2|1754567860']],
  ['Organization', 'identifier-type', ORG_EG, [`${V20203}|FINEG`, `${V20203}|IDNST`, `${V20203}|RPPSRG`]],
  ['Organization', 'type', ORG_EG, [
    'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307|GEOGRAPHICAL-ENTITY',
    'https://mos.esante.gouv.fr/NOS/TRE_R02-SecteurActivite/FHIR/TRE-R02-SecteurActivite|SA01',
  ]],
  ['Organization', 'name', ORG_CAB, ['cabinet de groupe/CABINET DE GROUPE', 'cabinet saint antoine/CABINET SAINT ANTOINE']],
  ['Organization', 'name', shape('xt-org-parent'), ["pharmacie de l oeuvre/Pharmacie de l'Œuvre"]],
  ['Organization', 'address-city', ORG_EG, ['paris/PARIS']],
  ['Organization', 'address-postalcode', ORG_EG, ['75014/75014']],
  ['Organization', 'address-city+address-postalcode', ORG_EG, ['paris|75014']],
  ['Organization', 'address', ORG_FICTIVE, ['18/18', '18000/18000', 'bourges/BOURGES', 'r de la liberte 18000 bourges/R DE LA LIBERTE, 18000 BOURGES']],
  ['Organization', 'address-line', ORG_FICTIVE, ['r de la liberte 18000 bourges/R DE LA LIBERTE, 18000 BOURGES']],
  ['Organization', 'address-line', ORG_EG, []],
  ['Organization', 'address-country', shape('xt-org-parent'), ['fra/FRA']],
  ['Organization', 'address-state', shape('xt-org-parent'), ['auvergne rhone alpes/Auvergne-Rhône-Alpes']],
  ['Organization', 'address-use', shape('xt-org-parent'), ['work']],
  ['Organization', 'mailbox-mss', ORG_NANCY, ['exemple address address mssante fr/exemple.address@address.mssante.fr']],
  ['Organization', 'pharmacy-licence', shape('xt-org-parent'), ['75 000123/75#000123']],
  ['Organization', 'partof', shape('xt-org-child'), ['Organization/xt-org-parent']],
  ['Organization', 'endpoint', shape('xt-org-parent'), ['Endpoint/ep-1']],
  ['Organization', 'active', ORG_EG, ['true']],
  ['PractitionerRole', 'identifier', ROLE, ['https://rpps.esante.gouv.fr|1011848351']],
  ['PractitionerRole', 'active', ROLE, ['true']],
  ['PractitionerRole', 'practitioner', ROLE, ['Practitioner/practitioner-example']],
  ['PractitionerRole', 'organization', ROLE, ['Organization/org-example']],
  ['PractitionerRole', 'practitioner', shape('xt-role-contained'), []],
  ['PractitionerRole', 'organization', shape('xt-role-contained'), ['Organization/xt-org-child']],
  ['PractitionerRole', 'role', ROLE, [
    'https://mos.esante.gouv.fr/NOS/TRE_R21-Fonction/FHIR/TRE-R21-Fonction|FON-05',
    'https://mos.esante.gouv.fr/NOS/TRE_R22-GenreActivite/FHIR/TRE-R22-GenreActivite|GENR01',
    'https://mos.esante.gouv.fr/NOS/TRE_R23-ModeExercice/FHIR/TRE-R23-ModeExercice|L',
  ]],
  ['PractitionerRole', 'mailbox-mss', ROLE, []],
  ['PractitionerRole', '_lastUpdated', ROLE, ['2025-04-28T16:19:34.908Z..2025-04-28T16:19:34.909Z']],
  ['Organization', '_lastUpdated', ORG_EG, ['2019-09-01T00:00:00.000Z..2019-09-01T00:00:00.001Z']],
  ['Location', '_lastUpdated', location('loc-hopital-timone'), ['2023-10-10T10:10:10.000Z..2023-10-10T10:10:11.000Z']],
  ['Location', 'identifier', location('loc-hopital-timone'), ['https://finess.esante.gouv.fr|130783293', 'urn:oid:1.2.250.1.71.4.2.2|1130783293']],
  ['Location', 'data-information-system', location('loc-hopital-timone'), ['FINESS']],
  ['Location', 'name', location('loc-hopital-timone'), ['hopital de la timone/HÔPITAL DE LA TIMONE']],
  ['Location', 'status', location('loc-maternite-des-lilas'), ['inactive']],
  ['Location', 'organization', location('loc-labo-bio-etoile-saint-denis'), ['Organization/org-labo-bio-etoile']],
  ['Location', 'address', location('loc-hopital-timone'), ['13005/13005', '264 rue saint pierre/264 RUE SAINT-PIERRE', 'france/FRANCE', 'marseille/MARSEILLE']],
  ['Location', 'address-city', location('loc-ehpad-les-tilleuls'), ['st etienne/ST-ÉTIENNE']],
  ['Location', 'address-city+address-postalcode', location('loc-hopital-timone'), ['marseille|13005']],
  ['Location', 'address-postalcode', location('loc-labo-bio-etoile-saint-denis'), ['97400/97400']],
  ['Location', 'near', location('loc-hopital-timone'), ['43.289932,5.402571']],
  ['Location', 'near', location('loc-labo-bio-etoile-saint-denis'), ['-20.878916,55.448094']],
  ['PractitionerRole', 'location', ROLE, []],
  ['Device', 'organization', shape('xt-device'), ['Organization/xt-org-parent']],
  ['HealthcareService', 'organization', shape('xt-service'), ['Organization/xt-org-parent']],
];

t.test('every registry entry extracts its values from a real example or fixture', async (t) => {
  const covered = new Set<string>();
  for (const [type, code, resource, expected] of cases) {
    t.same(values(type, code, resource), [...expected].sort(), `${type}.${code} of ${resource.id}`);
    covered.add(`${type}.${code}`);
  }
  const missing = registry.all.filter((p) => !p.column && !covered.has(`${p.resourceType}.${p.code}`)).map((p) => `${p.resourceType}.${p.code}`);
  t.same(missing, [], 'no registry entry without an extraction case');
});

t.test('_id is served by the resource id column, not an index table', async (t) => {
  t.equal(registry.byCode('Practitioner', '_id')?.column, 'id');
  t.same(extract(PRA, [registry.byCode('Practitioner', '_id')!]).token, []);
});

t.test('parameter identity is a stable hash of type and code', async (t) => {
  t.equal(paramId('Practitioner', 'identifier'), -2026893178, 'pinned: stored rows depend on it');
  const shuffled = buildRegistry([...PARAMS].reverse().concat({ code: 'new-one', type: 'string', base: ['Practitioner'], versions: ['v2'], description: 'x', paths: [['x']] }));
  for (const p of registry.all) t.equal(shuffled.byCode(p.resourceType, p.code)?.id, p.id, `${p.resourceType}.${p.code}`);
  t.throws(() => buildRegistry([...PARAMS, { ...PARAMS[0] }]), /collides/);
});

t.test('names per version: v1 aliases, v2 canonical codes', async (t) => {
  t.equal(registry.lookup('v1', 'Organization', 'as-sp-data-information-system')?.param.code, 'data-information-system');
  t.equal(registry.lookup('v1', 'Organization', 'data-information-system'), undefined);
  t.equal(registry.lookup('v2', 'Organization', 'as-sp-data-information-system'), undefined);
  t.equal(registry.lookup('v1', 'Organization', '_since')?.prefix, 'ge');
  t.ok(registry.lookup('v1', 'Organization', 'address-use'));
  t.equal(registry.lookup('v2', 'Organization', 'address-use'), undefined);
  t.ok(registry.lookup('v2', 'Organization', 'address-line'));
  t.equal(registry.lookup('v2', 'Device', 'organization'), undefined, 'Device is include-only');
});

t.test('a wrong JSON type where the registry reads is an error naming the element', async (t) => {
  const bad = (r: Record<string, unknown>, re: RegExp) => t.throws(() => extract(r, registry.forType('Practitioner')), re);
  bad({ ...PRA, identifier: 'x' }, /^identifier: must be an array/);
  bad({ ...PRA, identifier: ['x'] }, /^identifier\[0\]: must be/);
  bad({ ...PRA, name: [{ family: ['a'] }] }, /^name\[0\]\.family: must be a single value/);
  bad({ ...PRA, name: [{ given: 'a' }] }, /^name\[0\]\.given: must be an array/);
  bad({ ...PRA, active: 'yes' }, /^active: must be a boolean/);
  t.throws(() => extract({ resourceType: 'PractitionerRole', id: 'x', practitioner: 'Practitioner/1' }, registry.forType('PractitionerRole')), /practitioner: must be a Reference object/);
  const place = (position: unknown) => () => extract({ resourceType: 'Location', id: 'x', position }, registry.forType('Location'));
  t.throws(place([{ latitude: 1, longitude: 2 }]), /^position: must be a single value/);
  t.throws(place('48.85,2.35'), /^position: must be an object with a latitude and a longitude, found a string/);
  t.throws(place({ latitude: '48.85', longitude: 2.35 }), /^position\.latitude: must be a number from -90 to 90, found a string/);
  t.throws(place({ latitude: 48.85 }), /^position\.longitude: is missing \(a number from -180 to 180\)/);
  t.throws(place({ latitude: 90.5, longitude: 2.35 }), /^position\.latitude: must be a number from -90 to 90, found 90\.5/);
  t.throws(place({ latitude: 48.85, longitude: -180.01 }), /^position\.longitude: must be a number from -180 to 180, found -180\.01/);
  t.same(extract({ resourceType: 'Location', id: 'x', position: { latitude: -90, longitude: 180, altitude: 3 } }, registry.forType('Location')).near, [{ param: registry.byCode('Location', 'near')!.id, lat: -90, lon: 180 }], 'the bounds are in range; altitude is not read');
});

t.test('normalisation: case, diacritics, unaccent letters, punctuation, whitespace', async (t) => {
  const v: [string, string][] = [
    ['Hélène', 'helene'], ['LEFÈVRE', 'lefevre'], ['Müller', 'muller'], ['Carreño Quiñones', 'carreno quinones'],
    ['Œuvre', 'oeuvre'], ['Æsop', 'aesop'], ['Søren', 'soren'], ['Łukasz', 'lukasz'], ['Straße', 'strasse'], ['Đorđe', 'dorde'],
    ["l'Église", 'l eglise'], ['Saint-Martin', 'saint martin'], ['  Da   Silva ', 'da silva'], ["N'Diaye", 'n diaye'],
    ['sophie.leclerc@mssante.fr', 'sophie leclerc mssante fr'], ['86.23Z', '86 23z'], ['', ''],
  ];
  for (const [a, b] of v) t.equal(normalize(a), b, a);
  t.equal(prefixUpperBound('mar'), 'mas');
  t.equal(prefixUpperBound('a\u{10FFFF}'), 'b');
  t.ok('martin' >= 'mar' && 'martin' < prefixUpperBound('mar')!);
});
