/**
 * Conformance suite: a real FHIR client (fhir-kit-client 2.x) against a real listening server on
 * the hand-checked dataset of fixtures/directory (see fixtures/README.md). Every query shape of seed
 * §4.8 and every parameter row of §4.4–4.7 is run at least once, by GET and by POST _search, with
 * its expected ids written out by hand; paging goes through `nextPage` until it returns undefined.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CapabilityTool, Client, type FhirResource, type SearchParams } from 'fhir-kit-client';
import t from 'tap';
import { FIXTURES, load, ROOT as PROJECT, testApp } from '../helpers/app.ts';
import { userNode } from '../helpers/command.ts';
import { LEGAL_ENTITIES, ORGANIZATIONS, PRACTITIONERS, ROLES } from '../helpers/directory-ids.ts';
import { API_KEY, idsOf, refsOf, type A, type Entry } from '../helpers/search.ts';

/** A free loopback port: the public base URL must be known before the app is built. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

const port = await freePort();
const ROOT = `http://127.0.0.1:${port}`;
const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY, PUBLIC_BASE_URL: ROOT } });
const loaded = await load(db, [path.join(FIXTURES, 'directory')]);
/** The statuses the server answered, in order (the README's loop must meet no 429). */
const statuses: number[] = [];
app.addHook('onResponse', async (_req, reply) => void statuses.push(reply.statusCode));
await app.listen({ port, host: '127.0.0.1' });

const client = new Client({ baseUrl: `${ROOT}/fhir/v2`, customHeaders: { 'SERVICE-API-KEY': API_KEY } });
const clientV1 = new Client({ baseUrl: `${ROOT}/fhir/v1`, customHeaders: { 'SERVICE-API-KEY': API_KEY } });

/** A searchset as fhir-kit-client returns it: a FhirResource, so that nextPage and httpFor take it. */
interface Bundle extends FhirResource { type?: string; total?: number; link: { relation: string; url: string }[]; entry?: Entry[] }
interface HttpError { message: string; response?: { status: number; data: { resourceType?: string; issue?: { diagnostics?: string }[] } } }

/** Runs a search and follows `nextPage` until it returns undefined; returns every page. */
async function allPages(c: Client, resourceType: string, searchParams: SearchParams, postSearch = false): Promise<Bundle[]> {
  const pages: Bundle[] = [];
  let page = (await c.search({ resourceType, searchParams, options: postSearch ? { postSearch: true } : {} })) as Bundle | undefined;
  while (page) {
    pages.push(page);
    if (pages.length > 100) throw new Error('more than 100 pages');
    page = (await c.nextPage({ bundle: page })) as Bundle | undefined;
  }
  return pages;
}
const matches = (pages: Bundle[]) => pages.flatMap((p) => idsOf(p, 'match'));
const includes = (pages: Bundle[]) => pages.flatMap((p) => refsOf(p, 'include'));

/** One case by GET and by POST _search: the matches over all pages, each exactly once, and the total. */
async function check(tt: A, c: Client, resourceType: string, searchParams: SearchParams, expected: string[], label: string) {
  for (const post of [false, true]) {
    const what = `${post ? 'POST' : 'GET'} ${label}`;
    try {
      const pages = await allPages(c, resourceType, searchParams, post);
      const ids = matches(pages);
      tt.same(
        { ids: [...ids].sort(), once: new Set(ids).size === ids.length, total: pages[0].total, type: pages[0].type },
        { ids: [...expected].sort(), once: true, total: expected.length, type: 'searchset' },
        what,
      );
    } catch (err) {
      const e = err as HttpError;
      tt.fail(`${what}: ${e.message} ${JSON.stringify(e.response?.data)}`);
    }
  }
}
async function rejectsWith(tt: A, p: Promise<unknown>, status: number, what: string) {
  try {
    await p;
    tt.fail(`${what}: resolved, expected HTTP ${status}`);
  } catch (err) {
    const e = err as HttpError;
    tt.same({ status: e.response?.status, type: e.response?.data?.resourceType }, { status, type: 'OperationOutcome' }, `${what} → rejected with ${status} + OperationOutcome (${e.message})`);
  }
}

const G15 = 'https://mos.esante.gouv.fr/NOS/TRE_G15-ProfessionSante/FHIR/TRE-G15-ProfessionSante';
const R38 = 'https://mos.esante.gouv.fr/NOS/TRE_R38-SpecialiteOrdinale/FHIR/TRE-R38-SpecialiteOrdinale';
const R02 = 'https://mos.esante.gouv.fr/NOS/TRE_R02-SecteurActivite/FHIR/TRE-R02-SecteurActivite';
const R21 = 'https://mos.esante.gouv.fr/NOS/TRE_R21-Fonction/FHIR/TRE-R21-Fonction';
const R60 = 'https://mos.esante.gouv.fr/NOS/TRE_R60-AutoriteEnregistrement/FHIR/TRE-R60-AutoriteEnregistrement';
const FINESS = 'https://finess.esante.gouv.fr';

const ALL_P: string[] = [...PRACTITIONERS];
const ALL_O: string[] = [...ORGANIZATIONS];
const ALL_R: string[] = [...ROLES];
const LEGAL: string[] = [...LEGAL_ENTITIES];
const GEO = ALL_O.filter((id) => !LEGAL.includes(id) && id !== 'org-maternite-des-lilas');

t.test('the dataset is loaded and the server listens on PUBLIC_BASE_URL', async (t) => {
  t.same(loaded.rejects, []);
  const b = (await client.search({ resourceType: 'Practitioner', searchParams: { _id: 'pra-helene-lefevre' } })) as Bundle;
  t.equal(b.entry?.[0].fullUrl, `${ROOT}/fhir/v2/Practitioner/pra-helene-lefevre`);
  const response = Client.httpFor(b).response!;
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^application\/fhir\+json/);
});

t.test('CapabilityStatement v2 (CapabilityTool)', async (t) => {
  const cs = await client.capabilityStatement();
  t.equal(cs.resourceType, 'CapabilityStatement');
  t.equal(cs.fhirVersion, '4.0.1');
  t.equal(cs.kind, 'instance');
  const tool = new CapabilityTool(cs);
  for (const type of ['Practitioner', 'Organization', 'PractitionerRole']) {
    t.ok(tool.resourceCan(type, 'search-type'), `${type}: search-type`);
    t.ok(tool.resourceCan(type, 'read'), `${type}: read`);
  }
  t.notOk(tool.resourceCan('Patient', 'search-type'), 'no Patient');
  t.notOk(tool.resourceCan('Device', 'search-type'), 'Device is include-only');
  const rows: Record<string, string[]> = {
    Practitioner: ['_id', '_lastUpdated', 'active', 'data-information-system', 'family', 'given', 'identifier', 'identifier-type', 'mailbox-mss', 'name', 'number-smartcard', 'qualification-code'],
    Organization: ['_id', '_lastUpdated', 'active', 'address', 'address-city', 'address-postalcode', 'data-information-system', 'identifier', 'identifier-type', 'mailbox-mss', 'name', 'partof', 'pharmacy-licence', 'type'],
    PractitionerRole: ['_id', '_lastUpdated', 'active', 'data-information-system', 'data-registration-authority', 'identifier', 'mailbox-mss', 'organization', 'practitioner', 'role'],
  };
  for (const [type, names] of Object.entries(rows)) for (const n of names) t.ok(tool.resourceSearch(type, n), `v2 ${type} declares ${n}`);
  t.notOk(tool.resourceSearch('Organization', 'as-sp-data-information-system'), 'v2 Organization has no v1 names');
  t.notOk(tool.resourceSearch('Organization', '_since'));
  const inc = (type: string, kind: string) => (tool.capabilityContents({ resourceType: type, capabilityType: kind }) ?? []) as string[];
  t.ok(inc('PractitionerRole', 'searchInclude').includes('PractitionerRole:practitioner'));
  t.ok(inc('PractitionerRole', 'searchInclude').includes('PractitionerRole:organization'));
  t.ok(inc('PractitionerRole', 'searchInclude').some((v) => v === '*' || v === 'PractitionerRole:*'), 'PractitionerRole: _include=*');
  t.ok(inc('Organization', 'searchInclude').includes('Organization:partof'));
  t.ok(inc('Practitioner', 'searchRevInclude').includes('PractitionerRole:practitioner'));
  for (const rev of ['PractitionerRole:organization', 'Device:organization', 'HealthcareService:organization']) {
    t.ok(inc('Organization', 'searchRevInclude').includes(rev), `Organization revinclude ${rev}`);
  }
});

t.test('CapabilityStatement v1 (CapabilityTool)', async (t) => {
  const cs = await clientV1.capabilityStatement();
  t.equal(cs.resourceType, 'CapabilityStatement');
  const tool = new CapabilityTool(cs);
  t.ok(tool.resourceCan('Organization', 'search-type'));
  t.notOk(tool.resourceCan('Practitioner', 'search-type'), 'v1 serves Organization only');
  t.notOk(tool.resourceCan('PractitionerRole', 'search-type'));
  for (const n of ['_has', '_id', '_lastUpdated', '_since', 'active', 'address', 'address-city', 'address-country', 'address-postalcode', 'address-state',
    'address-use', 'as-sp-data-information-system', 'as-sp-data-registration-authority', 'endpoint', 'identifier', 'identifier-type', 'mailbox-mss',
    'name', 'partof', 'pharmacy-licence', 'type']) {
    t.ok(tool.resourceSearch('Organization', n), `v1 Organization declares ${n}`);
  }
  t.ok(tool.resourceSearch('Organization', 'partof'));
  t.ok(((tool.capabilityContents({ resourceType: 'Organization', capabilityType: 'searchInclude' }) ?? []) as string[]).includes('Organization:partof'));
  const response = Client.httpFor(cs).response!;
  t.ok(response.headers.get('deprecation'), 'v1 metadata carries Deprecation');
});

t.test('seed §4.8 query shapes', async (t) => {
  for (const [type, all] of [['Practitioner', ALL_P], ['Organization', ALL_O], ['PractitionerRole', ALL_R]] as const) {
    await check(t, client, type, {}, all, `${type} (all resources)`);
    await check(t, client, type, { _count: 7 }, all, `${type}?_count=7 (nextPage until undefined)`);
  }
  await check(t, client, 'Practitioner', { identifier: '10100000001,10100000005' }, ['pra-helene-lefevre', 'pra-paul-martin'], 'Practitioner?identifier=<id1>,<id2>');
  await check(t, client, 'Practitioner', { _id: 'pra-helene-lefevre' }, ['pra-helene-lefevre'], 'Practitioner?_id');
  await check(t, client, 'Organization', { _id: 'org-hcl' }, ['org-hcl'], 'Organization?_id');
  await check(t, client, 'PractitionerRole', { _id: 'role-paul-martin-cabinet' }, ['role-paul-martin-cabinet'], 'PractitionerRole?_id');
  await check(t, client, 'Practitioner', { _lastUpdated: 'ge2025-01-01' }, ['pra-closed-10100000024', 'pra-closed-10100000025', 'pra-emma-nguyen', 'pra-olivier-rousseau'], 'Practitioner?_lastUpdated=ge<date>');
  await check(t, client, 'Practitioner', { _lastUpdated: 'ge2025-02-01T09:00:00+01:00' }, ['pra-closed-10100000024', 'pra-closed-10100000025', 'pra-emma-nguyen', 'pra-olivier-rousseau'], 'Practitioner?_lastUpdated=ge<datetime+zone> (client sends %2B)');
  await check(t, client, 'Organization', { _lastUpdated: 'ge2025-01-01' }, ['org-cds-louvre', 'org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale'], 'Organization?_lastUpdated=ge<date>');
  await check(t, client, 'PractitionerRole', { _lastUpdated: 'ge2025-01-01T00:00:00' }, ['role-paul-martin-remplacant', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl'], 'PractitionerRole?_lastUpdated=ge<datetime>');
  await check(t, client, 'Practitioner', { active: 'true' }, ALL_P.filter((id) => !['pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025'].includes(id)), 'Practitioner?active=true');
  await check(t, client, 'Organization', { active: true }, ALL_O.filter((id) => !['org-maternite-des-lilas', 'org-pharmacie-centrale'].includes(id)), 'Organization?active=true');
  await check(t, client, 'PractitionerRole', { active: 'true', _count: 10 }, ALL_R.filter((id) => !['role-paul-martin-remplacant', 'role-claire-gallet-faubourg', 'role-agnes-coeur-centrale', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl'].includes(id)), 'PractitionerRole?active=true');
  await check(t, client, 'Organization', { 'address-postalcode': '75014', 'address-city': 'paris' }, ['org-cds-oeuvre', 'org-pharmacie-centrale'], 'Organization?address-postalcode&address-city');
  await check(t, client, 'Organization', { 'data-information-system': 'RPPS' }, ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall'], 'Organization?data-information-system=RPPS');
  await check(t, client, 'Organization', { 'data-information-system': 'FINESS' }, ALL_O.filter((id) => !['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall', 'org-labo-bio-etoile', 'org-clinique-muller'].includes(id)), 'Organization?data-information-system=FINESS');
  await check(t, client, 'PractitionerRole', { identifier: '1000000006' }, ['role-paul-martin-cabinet'], 'PractitionerRole?identifier=<activity_id>');
  await check(t, client, 'PractitionerRole', { 'mailbox-mss:contains': 'chu-lyon' }, ['role-helene-martin-herriot', 'role-louis-martineau-herriot'], 'PractitionerRole?mailbox-mss:contains=<fragment>');
});

t.test('seed §4.4 Practitioner parameters', async (t) => {
  const P = (params: SearchParams, ids: string[], label = JSON.stringify(params)) => check(t, client, 'Practitioner', params, ids, `Practitioner ${label}`);
  await P({ _id: 'pra-helene-lefevre,pra-paul-martin' }, ['pra-helene-lefevre', 'pra-paul-martin']);
  await P({ _lastUpdated: '2024-03-15' }, ['pra-helene-lefevre', 'pra-louis-martineau', 'pra-sophie-martinez', 'pra-yann-le-gall']);
  await P({ _lastUpdated: ['ge2024-03-15T10:30:00.123+01:00', 'lt2024-03-15T09:30:01Z'] }, ['pra-helene-lefevre', 'pra-louis-martineau']);
  await P({ active: 'false' }, ['pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025']);
  await P({ 'data-information-system': 'CG' }, ['pra-chantal-perrin', 'pra-theo-blanc', 'pra-emma-nguyen']);
  await P({ family: 'le gall' }, ['pra-yann-le-gall', 'pra-marie-le-gall']);
  await P({ family: 'Lefèvre' }, ['pra-helene-lefevre', 'pra-jean-lefevre']);
  await P({ 'family:exact': 'Müller' }, ['pra-klaus-muller']);
  await P({ given: 'HÉLÈNE' }, ['pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont']);
  await P({ given: 'łukasz' }, ['pra-lukasz-nowak']);
  await P({ given: ['eve', 'evelyne'] }, ['pra-evelyne-petit'], 'given=eve&given=evelyne (array = AND)');
  await P({ given: 'eve,severine' }, ['pra-eve-muller', 'pra-eve-durand', 'pra-evelyne-petit', 'pra-severine-roux'], 'given=eve,severine (OR)');
  await P({ identifier: 'https://rpps.esante.gouv.fr|10100000005' }, ['pra-paul-martin']);
  await P({ 'identifier-type': 'RPPS', _count: 8 }, ALL_P.filter((id) => id !== 'pra-chantal-perrin'));
  await P({ 'identifier-type:not': 'RPPS' }, ['pra-chantal-perrin']);
  await P({ 'mailbox-mss': 'helene' }, ['pra-helene-lefevre', 'pra-helene-martin']);
  await P({ 'mailbox-mss': 'sophie' }, []);
  await P({ name: 'dr', 'name:family': 'martin' }, ['pra-paul-martin', 'pra-helene-martin', 'pra-bernard-martin']);
  await P({ 'name:family': 'martin', 'name:given': 'paul' }, ['pra-paul-martin']);
  await P({ name: 'francois' }, ['pra-francois-saint-martin', 'pra-aurelie-francois']);
  await P({ 'number-smartcard': '3100101' }, ['pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin']);
  await P({ 'qualification-code': `${G15}|21` }, ['pra-claire-gallet', 'pra-agnes-coeur', 'pra-emma-nguyen']);
  await P({ 'qualification-code': `${R38}|SM04` }, ['pra-helene-martin', 'pra-louis-martineau', 'pra-klaus-muller', 'pra-jose-carreno', 'pra-anne-marie-dubois']);
  await P({ 'qualification-code': 'SM54', active: 'true' }, ['pra-helene-lefevre', 'pra-jean-lefevre', 'pra-paul-martin', 'pra-marie-le-gall', 'pra-lukasz-nowak', 'pra-francois-saint-martin', 'pra-evelyne-petit']);
});

t.test('seed §4.5 Organization parameters', async (t) => {
  const O = (params: SearchParams, ids: string[], label = JSON.stringify(params)) => check(t, client, 'Organization', params, ids, `Organization ${label}`);
  await O({ _id: 'org-hcl,org-ap-hm' }, ['org-hcl', 'org-ap-hm']);
  await O({ _lastUpdated: '2024-03-15' }, ['org-chu-saint-etienne', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse']);
  await O({ active: 'false' }, ['org-maternite-des-lilas', 'org-pharmacie-centrale']);
  await O({ address: 'auvergne' }, ['org-chu-saint-etienne', 'org-hcl', 'org-hopital-edouard-herriot']);
  await O({ 'address-city': 'Saint-Étienne' }, ['org-chu-saint-etienne', 'org-hopital-bellevue']);
  await O({ 'address-postalcode': '7501' }, ['org-pharmacie-faubourg-saint-martin', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-labo-bio-etoile', 'org-pharmacie-centrale']);
  await O({ 'address-postalcode:exact': '75001,69003' }, ['org-cds-louvre', 'org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot']);
  await O({ 'data-information-system': 'CG' }, ['org-labo-bio-etoile']);
  await O({ identifier: `${FINESS}|420784878` }, ['org-chu-saint-etienne']);
  await O({ identifier: '420784878,690781810' }, ['org-chu-saint-etienne', 'org-hcl']);
  await O({ 'identifier-type': 'FINEJ' }, ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm']);
  await O({ 'mailbox-mss': 'accueil' }, ['org-cds-louvre']);
  await O({ name: 'hôpital de la' }, ['org-hopital-croix-rousse', 'org-hopital-timone']);
  await O({ 'name:contains': 'marseille,lyon' }, ['org-hcl', 'org-ap-hm']);
  await O({ 'name:contains': 'œuvre' }, ['org-oeuvre-croix-saint-simon', 'org-cds-oeuvre']);
  await O({ 'name:exact': 'LEFÈVRE\\, GALLET ET ASSOCIÉS' }, ['org-pharmacie-lefevre'], 'name:exact with an escaped comma');
  await O({ partof: 'org-hcl' }, ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse']);
  await O({ partof: `${ROOT}/fhir/v2/Organization/org-chu-saint-etienne` }, ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue'], 'partof=<absolute URL of this server>');
  await O({ 'partof.identifier': `${FINESS}|130786049` }, ['org-hopital-timone']);
  await O({ 'pharmacy-licence': '75#001234' }, ['org-pharmacie-faubourg-saint-martin']);
  await O({ type: 'GEOGRAPHICAL-ENTITY', _count: 5 }, GEO);
  await O({ type: 'LEGAL-ENTITY' }, LEGAL);
  await O({ type: `${R02}|SA33` }, ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale']);
  await O({ '_has:PractitionerRole:organization:role': 'FON-03' }, ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-centrale']);
});

t.test('seed §4.6 PractitionerRole parameters', async (t) => {
  const R = (params: SearchParams, ids: string[], label = JSON.stringify(params)) => check(t, client, 'PractitionerRole', params, ids, `PractitionerRole ${label}`);
  await R({ _id: 'role-closed-1000000030' }, ['role-closed-1000000030']);
  await R({ _lastUpdated: '2024-03' }, ['role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-helene-dupont-cds-oeuvre']);
  await R({ active: 'false' }, ['role-paul-martin-remplacant', 'role-claire-gallet-faubourg', 'role-agnes-coeur-centrale', 'role-bernard-martin-cabinet', 'role-closed-1000000030', 'role-closed-24-hcl']);
  await R({ 'data-information-system': 'CG,MSS' }, ['role-helene-martin-herriot', 'role-chantal-perrin-ehpad', 'role-theo-blanc-herriot', 'role-emma-nguyen-lefevre', 'role-emma-nguyen-labo']);
  await R({ 'data-registration-authority': `${R60}|CNOP` }, ['role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale', 'role-closed-25-lefevre']);
  await R({ identifier: 'https://rpps.esante.gouv.fr|1000000036' }, ['role-emma-nguyen-lefevre']);
  await R({ 'mailbox-mss': 'cabinet' }, ['role-paul-martin-cabinet']);
  await R({ organization: 'org-pharmacie-lefevre' }, ['role-claire-gallet-lefevre', 'role-closed-25-lefevre', 'role-emma-nguyen-lefevre']);
  await R({ organization: 'Organization/org-hopital-timone' }, ['role-anne-legall-timone', 'role-lukasz-nowak-timone', 'role-eve-durand-timone']);
  await R({ practitioner: 'pra-bernard-martin' }, ['role-bernard-martin-cabinet', 'role-bernard-martin-cds-oeuvre']);
  await R({ 'practitioner:Practitioner': 'pra-paul-martin' }, ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']);
  await R({ 'practitioner.identifier': 'https://rpps.esante.gouv.fr|10100000005' }, ['role-paul-martin-cabinet', 'role-paul-martin-remplacant']);
  await R({ 'organization.identifier': '690783154' }, ['role-helene-martin-herriot', 'role-louis-martineau-herriot', 'role-theo-blanc-herriot']);
  await R({ 'organization.partof.identifier': '690781810', _count: 1 }, ['role-helene-martin-herriot', 'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-theo-blanc-herriot'], 'organization.partof.identifier (paged by 1)');
  await R({ role: `${R21}|FON-01` }, ['role-paul-martin-cabinet', 'role-sophie-martinez-cabinet', 'role-yann-le-gall-cabinet', 'role-bernard-martin-cabinet']);
  await R({ role: 'L', _count: 4 }, [
    'role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-sophie-martinez-cabinet', 'role-yann-le-gall-cabinet',
    'role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-klaus-muller-clinique', 'role-agnes-coeur-faubourg',
    'role-agnes-coeur-centrale', 'role-jose-carreno-clinique', 'role-ines-obrien-cabinet-martinez', 'role-bernard-martin-cabinet',
    'role-closed-25-lefevre', 'role-aurelie-francois-cabinet', 'role-emma-nguyen-lefevre', 'role-olivier-rousseau-cabinet',
    'role-helene-dupont-remplacement']);
});

t.test('seed §4.7 Organization v1 parameters', async (t) => {
  const V = (params: SearchParams, ids: string[], label = JSON.stringify(params)) => check(t, clientV1, 'Organization', params, ids, `v1 Organization ${label}`);
  await V({ '_has:PractitionerRole:organization:practitioner.identifier': 'http://rpps.fr|10100000005' }, ['org-cds-louvre', 'org-cabinet-paul-martin']);
  await V({ _id: 'org-hcl' }, ['org-hcl']);
  await V({ _lastUpdated: 'ge2025-01-06T07:45:00Z' }, ['org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']);
  await V({ _since: '2025-01-01' }, ['org-cds-louvre', 'org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']);
  await V({ _total: 'accurate', name: 'pharmacie' }, ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale']);
  await V({ active: 'true', type: 'LEGAL-ENTITY' }, LEGAL);
  await V({ address: 'cs 33569' }, ['org-hcl']);
  await V({ 'address-city': 'marseille' }, ['org-pharmacie-du-parc', 'org-cabinet-dentaire-le-gall', 'org-ap-hm', 'org-hopital-timone']);
  await V({ 'address-country': 'france' }, ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne']);
  await V({ 'address-postalcode:exact': '75001,69003' }, ['org-cds-louvre', 'org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot']);
  await V({ 'address-state': 'auvergne' }, ['org-chu-saint-etienne', 'org-hcl', 'org-hopital-edouard-herriot']);
  await V({ 'address-use': 'billing' }, ['org-hcl']);
  await V({ 'as-sp-data-information-system': 'RPPS' }, ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']);
  await V({ 'as-sp-data-registration-authority': 'ARS-93' }, ['org-pharmacie-du-parc', 'org-ap-hm', 'org-hopital-timone']);
  await V({ endpoint: 'ep-cds-louvre-mss' }, ['org-cds-louvre']);
  await V({ identifier: 'http://finess.sante.gouv.fr|420784878,690781810' }, ['org-chu-saint-etienne', 'org-hcl']);
  await V({ 'identifier-type': 'http://interopsante.org/CodeSystem/v2-0203|FINEJ' }, ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm']);
  await V({ 'mailbox-mss': 'direction' }, ['org-chu-saint-etienne']);
  await V({ 'name:contains': 'oeuvre' }, ['org-oeuvre-croix-saint-simon', 'org-cds-oeuvre']);
  await V({ partof: 'org-chu-saint-etienne' }, ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue']);
  await V({ 'pharmacy-licence': '69#000815' }, ['org-pharmacie-lefevre']);
  await V({ type: 'http://interopsante.org/fhir/CodeSystem/fr-v2-3307|GEOGRAPHICAL-ENTITY', _count: 6 }, GEO);
  const b = (await clientV1.search({ resourceType: 'Organization', searchParams: { name: 'hcl' } })) as Bundle;
  const response = Client.httpFor(b).response!;
  t.ok(response.headers.get('deprecation'), 'Deprecation header');
  t.equal(response.headers.get('link'), `<${ROOT}/fhir/v2/Organization>; rel="successor-version"`);
  t.equal(b.entry?.[0].fullUrl, `${ROOT}/fhir/v1/Organization/org-hcl`);
});

t.test('_include, _revinclude and * through the client', async (t) => {
  const inc = async (c: Client, type: string, params: SearchParams, m: string[], i: string[], label: string) => {
    for (const post of [false, true]) {
      const pages = await allPages(c, type, params, post);
      const all = [...matches(pages), ...includes(pages)];
      t.same({ matches: matches(pages).sort(), includes: includes(pages).sort(), unique: new Set(all).size === all.length },
        { matches: [...m].sort(), includes: [...i].sort(), unique: true }, `${post ? 'POST' : 'GET'} ${label}`);
    }
  };
  await inc(client, 'PractitionerRole', { _id: 'role-paul-martin-cabinet', _include: 'PractitionerRole:practitioner' }, ['role-paul-martin-cabinet'], ['Practitioner/pra-paul-martin'], 'PractitionerRole _include=PractitionerRole:practitioner');
  await inc(client, 'PractitionerRole', { _id: 'role-paul-martin-cabinet', _include: 'PractitionerRole:organization' }, ['role-paul-martin-cabinet'], ['Organization/org-cabinet-paul-martin'], 'PractitionerRole _include=PractitionerRole:organization');
  await inc(client, 'PractitionerRole', { practitioner: 'pra-paul-martin', _include: '*' }, ['role-paul-martin-cabinet', 'role-paul-martin-remplacant'], ['Practitioner/pra-paul-martin', 'Organization/org-cabinet-paul-martin', 'Organization/org-cds-louvre'], 'PractitionerRole _include=*');
  await inc(client, 'Practitioner', { _id: 'pra-paul-martin', _revinclude: 'PractitionerRole:practitioner' }, ['pra-paul-martin'], ['PractitionerRole/role-paul-martin-cabinet', 'PractitionerRole/role-paul-martin-remplacant'], 'Practitioner _revinclude=PractitionerRole:practitioner');
  await inc(client, 'Organization', { _id: 'org-hopital-nord-saint-etienne', _include: 'Organization:partof' }, ['org-hopital-nord-saint-etienne'], ['Organization/org-chu-saint-etienne'], 'Organization _include=Organization:partof');
  await inc(client, 'Organization', { _id: 'org-hopital-edouard-herriot', _revinclude: ['PractitionerRole:organization', 'Device:organization', 'HealthcareService:organization'] }, ['org-hopital-edouard-herriot'], [
    'PractitionerRole/role-helene-martin-herriot', 'PractitionerRole/role-louis-martineau-herriot', 'PractitionerRole/role-theo-blanc-herriot',
    'Device/dev-irm-herriot', 'HealthcareService/hs-dialyse-herriot'], 'Organization _revinclude=PractitionerRole|Device|HealthcareService:organization');
  await inc(client, 'Organization', { _id: 'org-hopital-nord-saint-etienne', _include: '*' }, ['org-hopital-nord-saint-etienne'], [
    'Organization/org-chu-saint-etienne', 'PractitionerRole/role-helene-lefevre-nord', 'PractitionerRole/role-anne-marie-dubois-nord',
    'Device/dev-scanner-nord', 'HealthcareService/hs-urgences-nord'], 'Organization _include=*');
  await inc(clientV1, 'Organization', { partof: 'org-hcl', _include: 'Organization:partof' }, ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse'], ['Organization/org-hcl'], 'v1 Organization _include=Organization:partof');
  // includes ride along each page when paging
  const pages = await allPages(client, 'PractitionerRole', { organization: 'org-pharmacie-lefevre', _include: 'PractitionerRole:organization', _count: 1 });
  t.same(pages.map((p) => includes([p])), [['Organization/org-pharmacie-lefevre'], ['Organization/org-pharmacie-lefevre'], ['Organization/org-pharmacie-lefevre']], 'each page includes the organization of its match');
});

t.test('read, and errors as rejected promises carrying an OperationOutcome', async (t) => {
  const p = await client.read({ resourceType: 'Practitioner', id: 'pra-helene-lefevre' });
  t.has(p, { resourceType: 'Practitioner', id: 'pra-helene-lefevre' });
  const o = await clientV1.read({ resourceType: 'Organization', id: 'org-hcl' });
  t.has(o, { resourceType: 'Organization', id: 'org-hcl' });
  await rejectsWith(t, client.read({ resourceType: 'Practitioner', id: 'nope' }), 404, 'read Practitioner/nope');
  await rejectsWith(t, client.search({ resourceType: 'Patient', searchParams: { name: 'x' } }), 404, 'search an unknown type');
  await rejectsWith(t, clientV1.search({ resourceType: 'Practitioner' }), 404, 'v1 Practitioner');
  await rejectsWith(t, client.search({ resourceType: 'Practitioner', searchParams: { 'name:foo': 'x' } }), 400, 'name:foo=x');
  await rejectsWith(t, client.search({ resourceType: 'Practitioner', searchParams: { 'name:foo': 'x' }, options: { postSearch: true } }), 400, 'POST name:foo=x');
  await rejectsWith(t, client.search({ resourceType: 'Practitioner', searchParams: { _lastUpdated: '2024-13-01' } }), 400, '_lastUpdated=2024-13-01');
  await rejectsWith(t, client.search({ resourceType: 'Practitioner', searchParams: { active: 'yes' } }), 400, 'active=yes');
  await rejectsWith(t, client.search({ resourceType: 'Practitioner', searchParams: { _count: 'abc' } }), 400, '_count=abc');
  await rejectsWith(t, client.search({ resourceType: 'PractitionerRole', searchParams: { _include: 'PractitionerRole:foo' } }), 400, '_include=PractitionerRole:foo');
  await rejectsWith(t, client.search({ resourceType: 'Practitioner', searchParams: { foo: 'bar' }, options: { headers: { Prefer: 'handling=strict' } } }), 400, 'foo=bar with Prefer: handling=strict');
  const lenient = (await client.search({ resourceType: 'Practitioner', searchParams: { foo: 'bar', family: 'gall' } })) as Bundle;
  t.same(matches([lenient]), ['pra-claire-gallet'], 'unknown parameters are ignored');
  t.notMatch(lenient.link.find((l) => l.relation === 'self')?.url ?? '', /foo/, '…and left out of self');
  t.throws(() => client.search({ resourceType: 'Bad:Type' }), 'an invalid resource type throws synchronously in the client');
});

t.test('API key: 401 without or with a wrong key, metadata stays open', async (t) => {
  const anonymous = new Client({ baseUrl: `${ROOT}/fhir/v2` });
  const wrong = new Client({ baseUrl: `${ROOT}/fhir/v2`, customHeaders: { 'SERVICE-API-KEY': 'wrong-key-0000000000000000' } });
  await rejectsWith(t, anonymous.search({ resourceType: 'Practitioner' }), 401, 'search without a key');
  await rejectsWith(t, wrong.search({ resourceType: 'Practitioner' }), 401, 'search with a wrong key');
  await rejectsWith(t, anonymous.read({ resourceType: 'Practitioner', id: 'pra-helene-lefevre' }), 401, 'read without a key');
  await rejectsWith(t, anonymous.search({ resourceType: 'Practitioner', options: { postSearch: true } }), 401, 'POST _search without a key');
  await rejectsWith(t, new Client({ baseUrl: `${ROOT}/fhir/v1` }).search({ resourceType: 'Organization' }), 401, 'v1 search without a key');
  const cs = await anonymous.capabilityStatement();
  t.equal(cs.resourceType, 'CapabilityStatement', 'metadata needs no key');
});

t.test("the README's fhir-kit-client code, as written, pages through every next link with the default limits", async (t) => {
  // More Martins than fit a second's worth of pages of 20, and the five of the dataset.
  const dir = await mkdtemp(path.join(tmpdir(), 'readme-loop-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const extra = Array.from({ length: 1200 }, (_, i) => `readme-martin-${String(i).padStart(4, '0')}`);
  await writeFile(path.join(dir, 'martins.ndjson'), extra.map((id) => JSON.stringify({ resourceType: 'Practitioner', id, active: true, name: [{ family: 'Martin', given: ['Readme'] }] })).join('\n'));
  t.same((await load(db, [dir])).rejects, []);
  const expected = [...extra, 'pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin'].sort();

  // The README's block, run by node as a user would run it: only its base URL is this server's.
  const readme = await readFile(path.join(PROJECT, 'README.md'), 'utf8');
  const code = /```js\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  t.match(code, /client\.nextPage/, 'the README shows a paging loop');
  const run = (root: string) =>
    promisify(execFile)(...userNode(['--input-type=module', '-e', code.replace('http://localhost:8080', root)]), {
      cwd: PROJECT, env: { ...process.env, KEY: API_KEY }, timeout: 120_000, maxBuffer: 1 << 24,
    });

  statuses.length = 0;
  const { stdout } = await run(ROOT);
  const ids = stdout.split('\n').filter(Boolean);
  t.same({ ids: [...ids].sort(), once: new Set(ids).size === ids.length }, { ids: expected, once: true }, 'every match once, through every next link');
  t.ok(statuses.length > 60, `${statuses.length} requests, one page at a time`);
  t.same(statuses.filter((s) => s !== 200), [], 'a client paging one request at a time is never throttled by default');

  // Its retry honours Retry-After: the same code against a key limited to 20 requests a second.
  const limited = await testApp(t, { db, env: { API_KEYS: API_KEY, RATE_LIMIT: '20', PUBLIC_BASE_URL: '' } });
  const throttled: number[] = [];
  limited.app.addHook('onResponse', async (_req, reply) => void throttled.push(reply.statusCode));
  await limited.app.listen({ port: 0, host: '127.0.0.1' });
  const again = await run(`http://127.0.0.1:${(limited.app.server.address() as { port: number }).port}`);
  t.same([...again.stdout.split('\n').filter(Boolean)].sort(), expected, 'the same matches, at 20 requests a second');
  t.ok(throttled.includes(429), 'after 429s waited out');
});
