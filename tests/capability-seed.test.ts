/**
 * The CapabilityStatement of each version against the seed's own tables (fixtures/seed/api-seed.md,
 * a copy of shared/spec/api-seed.md): the search parameter names of §4.4–4.7 and the _include /
 * _revinclude values of §4.3, per version and resource type. A seed row the server does not declare
 * fails, and so does a declaration the seed does not have, unless it is one of the extras listed
 * below with the reason the server serves it.
 */
import t from 'tap';
import { API_KEY } from './helpers/search.ts';
import { seedTable, unquote } from './helpers/seed.ts';
import { testApp } from './helpers/app.ts';

type Version = 'v1' | 'v2';
type Kind = 'searchParam' | 'searchInclude' | 'searchRevInclude';
/** What one version declares for one resource type, by kind: the names or values. */
type Declared = Record<Kind, string[]>;
const key = (version: Version, type: string) => `${version} ${type}`;

/** The parameter tables of the seed, by version and type. */
const PARAMETER_TABLES: [heading: string, version: Version, type: string][] = [
  ['### 4.4', 'v2', 'Practitioner'],
  ['### 4.5', 'v2', 'Organization'],
  ['### 4.6', 'v2', 'PractitionerRole'],
  ['### 4.7', 'v1', 'Organization'],
];

/**
 * What the server declares beyond the seed, each with its reason. Anything else the server declares
 * that the seed does not list fails, and so does an extra listed here that the server no longer
 * declares or that the seed now lists.
 */
const EXTRAS: Record<string, Partial<Record<Kind, Record<string, string>>>> = {
  'v2 Practitioner': {
    searchParam: {
      'data-registration-authority': 'IG SearchParameter as-sp-data-registration-authority, on the data trace every resource carries; the seed lists it for PractitionerRole only',
      'type-smartcard': 'IG SearchParameter as-sp-type-smartcard (TRE_R87 card type), beside number-smartcard',
      phonetic: 'FHIR R4 Practitioner phonetic: family or given name by sound and spelling (users ask for approximate name search)',
      _has: 'FHIR reverse chaining, on every type; the seed lists it in the v1 table only',
      _total: 'result parameter of every search; the seed lists it in the v1 table only',
      _sort: 'result parameter of every search (FHIR R4 _sort), with the keys of the type in its documentation',
    },
  },
  'v2 Organization': {
    searchParam: {
      'address-line': 'IG SearchParameter as-sp-address-line (street line)',
      phonetic: 'FHIR R4 Organization phonetic: the name by sound and spelling',
      'data-registration-authority': 'IG SearchParameter as-sp-data-registration-authority; v1 has it as as-sp-data-registration-authority (§4.7, §9)',
      _has: 'FHIR reverse chaining, on every type; the seed lists it in the v1 table only',
      _total: 'result parameter of every search; the seed lists it in the v1 table only',
      _sort: 'result parameter of every search (FHIR R4 _sort), with the keys of the type in its documentation',
    },
    searchRevInclude: {
      'Organization:partof': 'partof is a reference to Organization: a legal entity brings its geographical entities (the reverse of §4.3 _include=Organization:partof)',
      'Location:organization': 'the places (Location, FINESS geolocation) of an establishment',
    },
  },
  'v2 PractitionerRole': {
    searchInclude: {
      'PractitionerRole:location': 'the Location of the activity\'s establishment',
    },
    searchParam: {
      location: 'FHIR R4 PractitionerRole location: the Location of the establishment, so location.near=… finds practitioners by where they practise',
      _has: 'FHIR reverse chaining, on every type; the seed lists it in the v1 table only',
      _total: 'result parameter of every search; the seed lists it in the v1 table only',
      _sort: 'result parameter of every search (FHIR R4 _sort), with the keys of the type in its documentation',
    },
  },
  'v1 Organization': {
    searchParam: {
      phonetic: 'FHIR R4 Organization phonetic: the name by sound and spelling',
      _sort: 'result parameter of every search (FHIR R4 _sort), with the keys of the type in its documentation',
    },
    searchInclude: {
      '*': 'v1 Organization takes _include (§4.2) and serves what v2 serves; §4.3 marks only Organization:partof as (v1, v2)',
    },
    searchRevInclude: {
      'Organization:partof': 'the reverse of _include=Organization:partof, as in v2',
      'PractitionerRole:organization': 'v1 Organization takes _revinclude (§4.2, values not shown); §4.3 lists it for Organization without a version',
      'Device:organization': 'v1 Organization takes _revinclude (§4.2, values not shown); §4.3 lists it for Organization without a version',
      'HealthcareService:organization': 'v1 Organization takes _revinclude (§4.2, values not shown); §4.3 lists it for Organization without a version',
      'Location:organization': 'the places (Location, FINESS geolocation) of an establishment, as in v2',
    },
  },
};

/** Types searched beyond the seed's tables, with the reason (their parameters are the registry's, tests/registry.test.ts). */
const EXTRA_TYPES: Record<Version, Record<string, string>> = {
  v1: {},
  v2: { Location: 'FHIR Location of each establishment FINESS geolocates, searched with near (nearest first)' },
};

/** The seed's declarations, by `version type`: §4.4–4.7 names, §4.3 include rows. */
function seedDeclarations(): Map<string, Declared> {
  const out = new Map<string, Declared>();
  const at = (version: Version, type: string) => {
    const k = key(version, type);
    if (!out.has(k)) out.set(k, { searchParam: [], searchInclude: [], searchRevInclude: [] });
    return out.get(k)!;
  };
  for (const [heading, version, type] of PARAMETER_TABLES) at(version, type).searchParam.push(...seedTable(heading).map(([name]) => unquote(name)));
  // §4.3: "Organization (v1, v2)" is both versions; an endpoint without a version is v2's
  for (const [endpoint, value] of seedTable('### 4.3')) {
    const m = /^(\w+)(?: \((.*)\))?$/.exec(endpoint);
    const inc = /^(_include|_revinclude)=(.+)$/.exec(unquote(value));
    if (!m || !inc) throw new Error(`§4.3 row not understood: ${endpoint} | ${value}`);
    const versions = (m[2]?.split(',').map((v) => v.trim()) ?? ['v2']) as Version[];
    for (const version of versions) at(version, m[1])[inc[1] === '_include' ? 'searchInclude' : 'searchRevInclude'].push(inc[2]);
  }
  return out;
}

interface CapabilityResource { type: string; interaction: { code: string }[]; searchParam?: { name: string; documentation?: string }[]; searchInclude?: string[]; searchRevInclude?: string[] }
interface CapabilityStatement { resourceType: string; rest: { resource: CapabilityResource[] }[] }

const { app } = await testApp(t, { env: { API_KEYS: API_KEY } });
/** GET [base]/metadata, without a key (metadata is open). */
async function metadata(version: Version): Promise<CapabilityStatement> {
  const res = await app.inject({ method: 'GET', url: `/fhir/${version}/metadata` });
  if (res.statusCode !== 200) throw new Error(`/fhir/${version}/metadata → ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json() as CapabilityStatement;
}
const declaredBy = (r: CapabilityResource): Declared => ({
  searchParam: (r.searchParam ?? []).map((p) => p.name),
  searchInclude: r.searchInclude ?? [],
  searchRevInclude: r.searchRevInclude ?? [],
});

const seed = seedDeclarations();

t.test('the seed tables are read whole', async (t) => {
  const counts = Object.fromEntries([...seed].map(([k, d]) => [k, { searchParam: d.searchParam.length, searchInclude: d.searchInclude.length, searchRevInclude: d.searchRevInclude.length }]));
  t.same(counts, {
    'v2 Practitioner': { searchParam: 12, searchInclude: 0, searchRevInclude: 1 },
    'v2 Organization': { searchParam: 14, searchInclude: 2, searchRevInclude: 3 },
    'v2 PractitionerRole': { searchParam: 10, searchInclude: 3, searchRevInclude: 0 },
    'v1 Organization': { searchParam: 22, searchInclude: 1, searchRevInclude: 0 },
  }, 'rows per version, type and kind (§4.3: 9 rows, one of them for both versions)');
});

for (const version of ['v1', 'v2'] as const) {
  t.test(`${version} CapabilityStatement against the seed`, async (t) => {
    const cs = await metadata(version);
    t.equal(cs.resourceType, 'CapabilityStatement');
    // The types searched; Device and HealthcareService are only read (tests/full-urls.test.ts).
    const resources = cs.rest[0].resource.filter((r) => r.interaction.some((i) => i.code === 'search-type'));
    const types = [...seed.keys()].filter((k) => k.startsWith(`${version} `)).map((k) => k.slice(version.length + 1));
    t.same(resources.map((r) => r.type).sort(), [...types, ...Object.keys(EXTRA_TYPES[version])].sort(), `${version} serves the types the seed has tables for, and the listed extra types`);
    for (const type of types) {
      const server = resources.find((r) => r.type === type);
      if (!server) continue;
      const declared = declaredBy(server);
      const expected = seed.get(key(version, type))!;
      const extras = EXTRAS[key(version, type)] ?? {};
      for (const kind of ['searchParam', 'searchInclude', 'searchRevInclude'] as const) {
        const listed = Object.keys(extras[kind] ?? {});
        const beyondSeed = declared[kind].filter((v) => !expected[kind].includes(v));
        t.same(
          {
            'in the seed, not declared': expected[kind].filter((v) => !declared[kind].includes(v)),
            'declared, neither in the seed nor a listed extra': beyondSeed.filter((v) => !listed.includes(v)),
            'listed extras not declared beyond the seed': listed.filter((v) => !beyondSeed.includes(v)),
            'declared twice': declared[kind].filter((v, i) => declared[kind].indexOf(v) !== i),
          },
          {
            'in the seed, not declared': [],
            'declared, neither in the seed nor a listed extra': [],
            'listed extras not declared beyond the seed': [],
            'declared twice': [],
          },
          `${version} ${type} ${kind}`,
        );
      }
    }
  });
}

t.test('_total is declared with what it does', async (t) => {
  for (const version of ['v1', 'v2'] as const) {
    for (const r of (await metadata(version)).rest[0].resource.filter((x) => x.searchParam)) {
      const doc = r.searchParam?.find((p) => p.name === '_total')?.documentation ?? '';
      t.match(doc, /\bnone\b.*\bestimate\b.*\baccurate\b/s, `${version} ${r.type}: _total says none | estimate | accurate (${doc})`);
    }
  }
});
