import type { FastifyInstance } from 'fastify';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t, { type TAP } from 'tap';
import type { Database } from '../src/db.ts';
import { pageQuery } from '../src/fhir/compile.ts';
import { normalize } from '../src/fhir/normalize.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import { flatten } from '../src/fhir/statement.ts';
import { registry } from '../src/registry/index.ts';
import { Planner } from '../src/store/planner.ts';
import { runOn } from '../src/store/query.ts';
import { load, testApp } from './helpers/app.ts';
import { API_KEY, everyPage } from './helpers/search.ts';

/**
 * Two string parameters indexed together (src/fhir/types/pair.ts), family and given names, a city
 * and its postal code: a search with a prefix on each reads one range of their pairs, and finds
 * what the two conditions find apart.
 */

const FAMILIES = ['Martin', 'Martinez', 'Marchand', 'Durand', 'Lefèvre', 'Dubois-Martin', 'Ćosić'];
const GIVENS = ['Jean', 'Jeanne', 'Jérôme', 'Marie', 'Anne-Marie', 'Zoé', 'Chloé'];

/** 400 practitioners, each with one to three names of zero to two given names, some without a family. */
function practitioners() {
  let seed = 7;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  return Array.from({ length: 400 }, (_, i) => {
    const names = Array.from({ length: 1 + next(3) }, () => {
      const name: { family?: string; given?: string[] } = {};
      if (next(6) > 0) name.family = FAMILIES[next(FAMILIES.length)];
      const given = Array.from({ length: next(3) }, () => GIVENS[next(GIVENS.length)]);
      if (given.length) name.given = given;
      return name;
    });
    return { resourceType: 'Practitioner', id: `pp${String(i).padStart(3, '0')}`, active: i % 5 !== 0, name: names };
  });
}

type Pra = ReturnType<typeof practitioners>[number];
const starts = (values: (string | undefined)[], prefixes: string[]) =>
  values.some((v) => v !== undefined && prefixes.some((p) => normalize(v).startsWith(normalize(p))));
const families = (p: Pra) => p.name.map((n) => n.family);
const givens = (p: Pra) => p.name.flatMap((n) => n.given ?? []);

/** The ids of every page of a search (each `next` followed, `_count` left to its default) and its first page's total. */
async function everyId(app: FastifyInstance, url: string): Promise<{ ids: string[]; total: number | undefined }> {
  const { entries, total } = await everyPage(app, url);
  return { ids: entries.map((e) => e.resource.id), total };
}

/** `rows` loaded as one NDJSON file by the loader, as `npm run load` reads it: no line rejected. */
async function loadRows(t: Pick<TAP, 'teardown' | 'same'>, db: Database, rows: object[]): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pair-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'rows.ndjson');
  await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  t.same((await load(db, [file])).rejects, []);
}

t.test('a prefix on family and given finds what the two find apart, on every page, through every next link', async (t) => {
  const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
  const rows = practitioners();
  await loadRows(t, db, rows);

  const all = (query: string) => everyId(app, `/fhir/v2/Practitioner?${query}`);
  const cases: [string, (p: Pra) => boolean][] = [
    ['family=Mar&given=Jea', (p) => starts(families(p), ['Mar']) && starts(givens(p), ['Jea'])],
    ['name:family=martin&name:given=j', (p) => starts(families(p), ['martin']) && starts(givens(p), ['j'])],
    ['family=Lefevre&given=Jerome', (p) => starts(families(p), ['Lefèvre']) && starts(givens(p), ['Jérôme'])],
    ['family=Dubois-Mar&given=Anne-M', (p) => starts(families(p), ['Dubois-Mar']) && starts(givens(p), ['Anne-M'])],
    ['family=Mar,Dur&given=Zo,Chl', (p) => starts(families(p), ['Mar', 'Dur']) && starts(givens(p), ['Zo', 'Chl'])],
    ['family=Martin&given=Jean&active=true', (p) => starts(families(p), ['Martin']) && starts(givens(p), ['Jean']) && p.active],
    ['family=Ćos&given=M&family=Ć', (p) => starts(families(p), ['Ćos']) && starts(givens(p), ['M'])],
    ['family=Mar&given=Jea&_sort=-family', (p) => starts(families(p), ['Mar']) && starts(givens(p), ['Jea'])],
    ['family=Zzz&given=Jea', () => false],
  ];
  for (const [query, matches] of cases) {
    const expected = rows.filter(matches).map((r) => r.id);
    const got = await all(query);
    const sorted = query.includes('_sort');
    t.same(sorted ? [...got.ids].sort() : got.ids, expected, `${query}: ${expected.length} matches${sorted ? '' : ', in key order'}`);
    t.equal(got.total, expected.length, `${query}: total`);
  }
  t.ok(rows.filter(cases[0][1]).length > 50, 'the first search has more than a page');

  // A rewrite: its pairs are the new names', its old ones match no more.
  const pp = rows.find((r) => starts(families(r), ['Martin']) && starts(givens(r), ['Jean']))!;
  const rewritten = { ...pp, name: [{ family: 'Quenouille', given: ['Ysaline'] }] };
  await loadRows(t, db, [rewritten]);
  t.notOk((await all('family=Martin&given=Jean')).ids.includes(pp.id), 'its old names no longer find it');
  t.same((await all('family=Quen&given=Ysa')).ids, [pp.id], 'its new ones do');
  const pairs = await db.sql<{ a: string; b: string }[]>`
    select p.a, p.b from pair_idx p join resource r on r.rid = p.rid where r.id = ${pp.id} order by 1, 2`;
  t.same([...pairs], [{ a: 'quenouille', b: 'ysaline' }], 'its pairs, rewritten');
});

t.test('the pairs a search reads are one range of pair_idx_ab, and the migration fills them as the extractor writes them', async (t) => {
  const { db } = await testApp(t, { env: { API_KEYS: API_KEY } });
  await loadRows(t, db, practitioners());

  const req = parseSearch([['family', 'Mar'], ['given', 'Jea'], ['active', 'true']], {
    version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(),
    defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
  });
  t.same(req.conditions.map((c) => c.kind), ['pair', 'token'], 'the two prefixes are one condition');
  const { text, params } = flatten(pageQuery(await new Planner().plan(runOn(db.sql), req), req, undefined, 51));
  await db.sql`set enable_seqscan = off`;
  const plan = JSON.stringify(await db.sql.unsafe(`explain (format json) ${text}`, params as never[]));
  t.match(plan, /"Index Name":"pair_idx_(ab|rid)"/, `read from the pairs index: ${plan}`);
  t.notMatch(plan, /string_idx/, 'not from the two string ranges');

  const written = async () => (await db.sql<{ rid: string; a: string; b: string }[]>`select rid, a, b from pair_idx order by rid, a, b`).map((r) => `${r.rid} ${r.a} ${r.b}`);
  const before = await written();
  t.ok(before.length > 400, `${before.length} pairs written by the loader`);
  const migration = await readFile(path.join(import.meta.dirname, '..', 'sql', '020_pair_idx.sql'), 'utf8');
  await db.sql`truncate pair_idx`;
  await db.sql.unsafe(migration.slice(migration.indexOf('insert into pair_idx')));
  t.same(await written(), before, 'the migration fills the pairs of the stored Practitioners as the extractor writes them');
});

const PLACES: [string, string][] = [['Paris', '75014'], ['Paris', '75001'], ['Paris', '75116'], ['Parisot', '81310'], ['Lyon', '69003'], ['Saint-Étienne', '42000'], ['Marseille', '13005']];

/** 300 Organizations with zero to two addresses, some without a city or a postal code, and 60 Locations of one. */
function places() {
  let seed = 11;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor(seed / 65536) % n);
  const address = () => {
    const [city, postalCode] = PLACES[next(PLACES.length)];
    const kept = next(8);
    return { ...(kept !== 0 ? { city } : {}), ...(kept !== 1 ? { postalCode } : {}) };
  };
  const orgs = Array.from({ length: 300 }, (_, i) => ({
    resourceType: 'Organization', id: `po${String(i).padStart(3, '0')}`, address: Array.from({ length: next(3) }, address),
  }));
  const locs = Array.from({ length: 60 }, (_, i) => ({ resourceType: 'Location', id: `pl${String(i).padStart(3, '0')}`, address: address() }));
  return { orgs, locs };
}

t.test('a prefix on city and postal code finds what the two find apart (Organization, Location), and the migration fills their pairs as the extractor writes them', async (t) => {
  const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
  const { orgs, locs } = places();
  await loadRows(t, db, [...orgs, ...locs]);

  for (const type of ['Organization', 'Location'] as const) {
    const req = parseSearch([['address-postalcode', '75'], ['address-city', 'Paris']], {
      version: 'v2', type, registry, strict: false, bases: [], now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
    });
    t.same(req.conditions.map((c) => c.kind), ['pair'], `${type}: the two prefixes are one condition`);
  }

  type Place = { id: string; address: { city?: string; postalCode?: string }[] };
  const all = (type: string, query: string) => everyId(app, `/fhir/v2/${type}?${query}`);
  const cases: [string, string[], string[]][] = [
    ['address-postalcode=75&address-city=Paris', ['Paris'], ['75']],
    ['address-city=par&address-postalcode=8', ['par'], ['8']],
    ['address-city=Saint-Etienne&address-postalcode=42000', ['Saint-Étienne'], ['42000']],
    ['address-city=Lyon,Marseille&address-postalcode=13,69', ['Lyon', 'Marseille'], ['13', '69']],
    ['address-city=Lyon&address-postalcode=75', ['Lyon'], ['75']],
  ];
  for (const [type, rows] of [['Organization', orgs], ['Location', locs.map((l) => ({ ...l, address: [l.address] }))]] as [string, Place[]][]) {
    for (const [query, cities, postalCodes] of cases) {
      const expected = rows.filter((r) => starts(r.address.map((a) => a.city), cities) && starts(r.address.map((a) => a.postalCode), postalCodes)).map((r) => r.id);
      const got = await all(type, query);
      t.same(got.ids, expected, `${type}?${query}: ${expected.length} matches, in key order`);
      t.equal(got.total, expected.length, `${type}?${query}: total`);
    }
  }
  t.ok(orgs.filter((o) => starts(o.address.map((a) => a.city), ['Paris']) && starts(o.address.map((a) => a.postalCode), ['75'])).length > 50, 'Paris has more than a page');
  t.ok(orgs.some((o) => starts(o.address.map((a) => a.city), ['Lyon']) && starts(o.address.map((a) => a.postalCode), ['75'])), 'a city and a postal code of two addresses match together');

  const written = async () => (await db.sql<{ rid: string; param: number; a: string; b: string }[]>`select rid, param, a, b from pair_idx order by rid, param, a, b`).map((r) => `${r.rid} ${r.param} ${r.a} ${r.b}`);
  const before = await written();
  t.equal(new Set(before.map((r) => r.split(' ')[1])).size, 2, 'pairs of both types written by the loader');
  const migration = await readFile(path.join(import.meta.dirname, '..', 'sql', '021_address_pair.sql'), 'utf8');
  await db.sql`truncate pair_idx`;
  await db.sql.unsafe(migration.slice(migration.indexOf('insert into pair_idx')));
  t.same(await written(), before, 'the migration fills the pairs of the stored Organizations and Locations as the extractor writes them');
});
