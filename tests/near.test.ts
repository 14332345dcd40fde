import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { countQuery, measuredPageQuery } from '../src/fhir/compile.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import type { SearchRequest } from '../src/fhir/search-request.ts';
import { stmt, type Statement } from '../src/fhir/statement.ts';
import { bandRanges, BANDS_PER_DEGREE, near } from '../src/fhir/types/near.ts';
import { registry } from '../src/registry/index.ts';
import { runOn } from '../src/store/query.ts';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { API_KEY, searchHelpers, type Bundle, type Entry } from './helpers/search.ts';

/**
 * `near` through HTTP as clients send it: the matches of fixtures/directory/Location.json (README:
 * "Location") against a great-circle distance written here from the formula, nearest first, each
 * with its distance; units, the default distance, paging by `next` links, chains, `_has`,
 * includes, counts, bad values; the write paths (a rewrite moves a Location, a deletion removes it,
 * the bulk load fills the index); and the plan: a circle is read from its index ranges, never by
 * scanning every Location.
 */

type Point = [number, number];
/** Haversine on a sphere of 6371.0088 km (the server's radius), in km. */
function distance([lat1, lon1]: Point, [lat2, lon2]: Point): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

interface Place { id: string; at: Point; status: string; organization: string }
const PLACES: Place[] = (JSON.parse(readFileSync(path.join(FIXTURES, 'directory', 'Location.json'), 'utf8')) as { entry: { resource: Record<string, any> }[] }).entry.map(
  ({ resource: r }) => ({ id: r.id, at: [r.position.latitude, r.position.longitude], status: r.status, organization: r.managingOrganization.reference }),
);
/** Point zéro, in front of Notre-Dame de Paris: the README's distances are from here. */
const PZ: Point = [48.853402, 2.348785];
const BELLECOUR: Point = [45.7578, 4.832];
const VIEUX_PORT: Point = [43.2951, 5.374];
const SAINT_DENIS_REUNION: Point = [-20.8823, 55.4504];
const SAINT_ETIENNE: Point = [45.4397, 4.3872];
const q = ([lat, lon]: Point, ...rest: (string | number)[]) => [lat, lon, ...rest].join('|');

/** The fixture places within `km` of `from`, nearest first. */
const within = (from: Point, km: number) =>
  PLACES.map((p) => ({ id: p.id, km: distance(from, p.at) })).filter((p) => p.km <= km).sort((a, b) => a.km - b.km);

type DistanceEntry = Entry & { search: { mode: string; extension?: { url: string; valueDistance: { value: number; unit: string; system: string; code: string } }[] } };

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY }, paths: [path.join(FIXTURES, 'directory')] });
const { get, expect400 } = searchHelpers(app);

/** Every page of a search, following `next` links: the pages' bundles. */
async function walk(url: string): Promise<Bundle[]> {
  const pages: Bundle[] = [];
  for (let next: string | undefined = url; next; ) {
    const res = await get(next);
    if (res.statusCode !== 200) throw new Error(`${next} → ${res.statusCode} ${res.body.slice(0, 300)}`);
    const b = res.json() as Bundle;
    pages.push(b);
    next = b.link.find((l) => l.relation === 'next')?.url.replace('http://fhir.test', '');
    if (pages.length > 100) throw new Error(`${url}: more than 100 pages`);
  }
  return pages;
}
const matches = (pages: Bundle[]) => pages.flatMap((b) => (b.entry ?? []).filter((e) => e.search.mode === 'match') as DistanceEntry[]);
/** The entry's distance, or undefined without the extension. */
const km = (e: DistanceEntry) => e.search.extension?.find((x) => x.url === 'http://hl7.org/fhir/StructureDefinition/location-distance')?.valueDistance.value;

/** One assertion: the matches of `url` (every page) are `expected`, in order, each with its distance to the metre. */
async function nearest(tt: Pick<typeof t, 'same'>, url: string, expected: { id: string; km: number }[]) {
  const got = matches(await walk(url));
  const close = got.length === expected.length && got.every((e, i) => Math.abs(km(e)! - expected[i].km) <= 0.0005 + 1e-9 && Number.isInteger(Math.round(km(e)! * 1000)));
  tt.same({ ids: got.map((e) => e.resource.id), distances: close }, { ids: expected.map((e) => e.id), distances: true }, url);
}

t.test('the matches are the places within the distance, nearest first, each with its distance in km', async (t) => {
  for (const [from, name] of [[PZ, 'point zéro'], [BELLECOUR, 'Bellecour'], [VIEUX_PORT, 'Vieux-Port'], [SAINT_ETIENNE, 'Saint-Étienne'], [SAINT_DENIS_REUNION, 'Saint-Denis (La Réunion)']] as const) {
    for (const r of [0.5, 1, 2, 3, 5, 10, 50, 200]) await nearest(t, `/fhir/v2/Location?near=${q(from, r, 'km')}`, within(from, r));
    t.ok(within(from, 200).length > 0, `${name}: some place within 200 km`);
  }
  const b = (await get(`/fhir/v2/Location?near=${q(PZ, 3)}`)).json() as Bundle;
  t.same(b.entry![0].search, {
    mode: 'match',
    extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/location-distance', valueDistance: { value: 1.005, unit: 'km', system: 'http://unitsofmeasure.org', code: 'km' } }],
  }, 'the extension: km, rounded to the metre');
  t.equal(b.total, 3);
});

t.test('a radius between the pair: 2 m inside and 2 m outside 3 km, in every unit', async (t) => {
  // loc-hopital-diaconesses is 2.99798 km from point zéro, loc-cds-oeuvre 3.00199 km.
  t.ok(Math.abs(distance(PZ, PLACES.find((p) => p.id === 'loc-hopital-diaconesses')!.at) - 2.99798) < 1e-5);
  t.ok(Math.abs(distance(PZ, PLACES.find((p) => p.id === 'loc-cds-oeuvre')!.at) - 3.00199) < 1e-5);
  const ids = async (value: string) => matches(await walk(`/fhir/v2/Location?near=${value}`)).map((e) => e.resource.id);
  const inside = ['loc-cds-louvre', 'loc-pharmacie-faubourg-saint-martin', 'loc-hopital-diaconesses'];
  t.same(await ids(q(PZ, 3)), inside, 'km is the default unit');
  t.same(await ids(q(PZ, 3, 'km')), inside);
  t.same(await ids(q(PZ, 3000, 'm')), inside);
  t.same(await ids(q(PZ, 2998, 'm')), inside, '2,998 m: the diaconesses still in');
  t.same(await ids(q(PZ, 2997, 'm')), inside.slice(0, 2), '2,997 m: the diaconesses out');
  t.same(await ids(q(PZ, 3.0019, 'km')), inside, '3.0019 km: the centre of the Œuvre still out');
  t.same(await ids(q(PZ, 3.002, 'km')), [...inside, 'loc-cds-oeuvre'], '3.002 km: in');
  t.same(await ids(q(PZ, 1.8641, 'mi')), inside, '1.8641 mi = 2.99997 km');
  t.same(await ids(q(PZ, 1.8654, '[mi_i]')), [...inside, 'loc-cds-oeuvre'], '1.8654 international miles = 3.00207 km');
  for (const [d, unit, factor] of [[2.5, 'mi', 1.609344], [2.5, '[mi_i]', 1.609344], [1500, 'm', 0.001], [7, 'km', 1]] as const) {
    await nearest(t, `/fhir/v2/Location?near=${q(PZ, d, unit)}`, within(PZ, d * factor));
  }
});

t.test('without a distance: 5 km', async (t) => {
  const five = within(PZ, 5);
  t.same(five.map((p) => p.id), ['loc-cds-louvre', 'loc-pharmacie-faubourg-saint-martin', 'loc-hopital-diaconesses', 'loc-cds-oeuvre', 'loc-labo-bio-etoile'], 'Les Lilas (5.8 km) is out');
  await nearest(t, `/fhir/v2/Location?near=${q(PZ)}`, five);
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, '', 'm')}`, five);
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, 6)}`, within(PZ, 6));
});

t.test('paging: every match once, in order, whatever the page size', async (t) => {
  const all = within(PZ, 10);
  t.equal(all.length, 6);
  for (const count of [1, 2, 4, 6]) {
    const pages = await walk(`/fhir/v2/Location?near=${q(PZ, 10)}&_count=${count}`);
    t.same(pages.map((p) => (p.entry ?? []).length), Array.from({ length: Math.ceil(6 / count) }, (_, i) => Math.min(count, 6 - i * count)), `_count=${count}: the page sizes`);
    t.same(pages.map((p) => p.total), pages.map(() => 6), `_count=${count}: the total on every page`);
    await nearest(t, `/fhir/v2/Location?near=${q(PZ, 10)}&_count=${count}`, all);
  }
  // The next link is signed with its search: another point is another search.
  const first = (await get(`/fhir/v2/Location?near=${q(PZ, 10)}&_count=2`)).json() as Bundle;
  const next = first.link.find((l) => l.relation === 'next')!.url.replace('http://fhir.test', '');
  t.equal((await get(next.replace(encodeURIComponent(String(PZ[0])), '48.9').replace(String(PZ[0]), '48.9'))).statusCode, 400, 'a cursor under another point');
});

t.test('with other conditions, includes and counts', async (t) => {
  const paris = within(PZ, 10);
  const active = paris.filter((p) => PLACES.find((x) => x.id === p.id)!.status === 'active');
  t.equal(active.length, 5, 'Les Lilas is inactive');
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, 10)}&status=active`, active);
  const b = (await get(`/fhir/v2/Location?near=${q(PZ, 10)}&status=active&_include=Location:organization`)).json() as Bundle;
  const included = (b.entry ?? []).filter((e) => e.search.mode === 'include') as DistanceEntry[];
  t.same(included.map((e) => `${e.resource.resourceType}/${e.resource.id}`).sort(), active.map((p) => PLACES.find((x) => x.id === p.id)!.organization).sort(), 'their organizations');
  t.ok(included.every((e) => e.search.extension === undefined), 'an included resource has no distance');
  t.same(matches([b]).map((e) => e.resource.id), active.map((p) => p.id), 'the matches nearest first');
  // A chained condition on the place's organization (SA33: pharmacies).
  await nearest(t, `/fhir/v2/Location?near=${q(BELLECOUR, 10)}&organization.type=SA33`, within(BELLECOUR, 10).filter((p) => p.id === 'loc-pharmacie-lefevre'));
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, 10)}&organization.type=SA33`, [within(PZ, 10).find((p) => p.id === 'loc-pharmacie-faubourg-saint-martin')!]);
  // Two circles: the places in both, ordered and measured by the first.
  const ORLEANS: Point = [47.903, 1.9093];
  t.ok(distance(PZ, ORLEANS) > 110 && distance(PZ, ORLEANS) < 112, 'Orléans, 111 km from point zéro');
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, 10)}&near=${q(ORLEANS, 200)}`, paris);
  await nearest(t, `/fhir/v2/Location?near=${q(ORLEANS, 200)}&near=${q(PZ, 2)}`, within(ORLEANS, 200).filter((p) => within(PZ, 2).some((x) => x.id === p.id)));
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, 10)}&near=${q(BELLECOUR, 200)}`, []);
  for (const extra of ['_total=accurate', '_summary=count', '_count=0', '_total=accurate&_count=2']) {
    const c = (await get(`/fhir/v2/Location?near=${q(PZ, 10)}&${extra}`)).json() as Bundle;
    t.equal(c.total, 6, `${extra}: total`);
  }
  // _elements: the resources cut down, the distances kept.
  const cut = matches(await walk(`/fhir/v2/Location?near=${q(PZ, 10)}&_elements=name&_count=4`));
  t.same(cut.map((e) => [e.resource.id, Object.keys(e.resource).includes('position'), km(e) !== undefined]), paris.map((p) => [p.id, false, true]), '_elements: nearest first, with distances');
  // _sort wins: the order is the name's; each entry still says its distance.
  const byName = matches(await walk(`/fhir/v2/Location?near=${q(PZ, 10)}&_sort=name&_count=4`));
  const names = byName.map((e) => String(e.resource.name));
  t.same(names, [...names].sort((a, b) => a.localeCompare(b, 'fr', { sensitivity: 'base' })), '_sort=name: by name');
  t.same(byName.map((e) => e.resource.id).sort(), paris.map((p) => p.id).sort());
  t.ok(byName.every((e) => Math.abs(km(e)! - paris.find((p) => p.id === e.resource.id)!.km) <= 0.0005), '_sort=name: each with its distance');
});

t.test('through a chain or _has a near selects: the normal order, no distance', async (t) => {
  const roles = async (query: string) => {
    const found = matches(await walk(`/fhir/v2/PractitionerRole?${query}`));
    t.ok(found.every((e) => e.search.extension === undefined), `${query}: no distance`);
    return found.map((e) => e.resource.id).sort();
  };
  t.same(await roles(`location.near=${q(PZ, 3)}&role=FON-33`), ['role-evelyne-petit-cds-louvre', 'role-francois-saint-martin-diaconesses']);
  t.same(await roles(`location.near=${q(PZ, 3)}`), ['role-evelyne-petit-cds-louvre', 'role-francois-saint-martin-diaconesses', 'role-marie-le-gall-diaconesses']);
  t.same(await roles(`location.near=${q(PZ, 2997, 'm')}`), ['role-evelyne-petit-cds-louvre']);
  t.same(await roles(`location.near=${q(VIEUX_PORT, 5)}&role=FON-33`), ['role-anne-legall-timone', 'role-eve-durand-timone']);
  const orgs = async (query: string) => matches(await walk(`/fhir/v2/Organization?${query}`)).map((e) => e.resource.id).sort();
  t.same(await orgs(`_has:Location:organization:near=${q(PZ, 3)}`), ['org-cds-louvre', 'org-hopital-diaconesses', 'org-pharmacie-faubourg-saint-martin']);
  t.same(await orgs(`_has:Location:organization:near=${q(SAINT_DENIS_REUNION, 5)}`), ['org-labo-bio-etoile'], 'a place overseas');
  t.same(await orgs(`_has:Location:organization:near=${q(PZ, 10)}&_has:Location:organization:status=inactive`), ['org-maternite-des-lilas']);
});

t.test('an overseas place: found from its island, not from Paris', async (t) => {
  const reunion = within(SAINT_DENIS_REUNION, 5);
  t.same(reunion.map((p) => p.id), ['loc-labo-bio-etoile-saint-denis']);
  await nearest(t, `/fhir/v2/Location?near=${q(SAINT_DENIS_REUNION, 5)}`, reunion);
  t.notOk(within(PZ, 200).some((p) => p.id === 'loc-labo-bio-etoile-saint-denis'));
  await nearest(t, `/fhir/v2/Location?near=${q(PZ, 200)}`, within(PZ, 200));
});

t.test('bad values: 400 naming near, showing the form', async (t) => {
  for (const value of [
    '48.85', '48.85|', '|2.35', 'abc|2.35', '48.85|east', '48.85|2.35|x', '48.85|2.35|2|km|x', '0x10|2', 'NaN|2', 'Infinity|2',
    '90.0001|2', '-91|2', '48.85|180.5', '48.85|-181', '48.85|2.35|0', '48.85|2.35|-1', '48.85|2.35|1e400', '48.85|2.35|200.001',
    '48.85|2.35|200001|m', '48.85|2.35|125|mi', '48.85|2.35|2|ft', '48.85|2.35|2|KM', '48.85|2.35,45.75|4.83', '48.85|2.35|5e-324', '48.85|2.35|0.0009|m',
  ]) {
    await expect400(t, `/fhir/v2/Location?near=${encodeURIComponent(value)}`, 'near');
  }
  await expect400(t, '/fhir/v2/Location?near:exact=48.85|2.35', 'near');
  await expect400(t, '/fhir/v2/PractitionerRole?location.near=91|0', 'near');
  await expect400(t, '/fhir/v2/Organization?_has:Location:organization:near=48.85|2.35|0', 'near');
  const res = await get(`/fhir/v2/Location?near=${encodeURIComponent('48.85|2.35|300')}`);
  const [issue] = (res.json() as { issue: { diagnostics: string }[] }).issue;
  t.match(issue.diagnostics, 'near=[latitude]|[longitude]|[distance]|[units]', 'the form is shown');
  t.match(issue.diagnostics, 'is above the maximum, 200 km', 'and the maximum');
  t.same(matches(await walk(`/fhir/v2/Location?near=${q(PZ, 200)}`)).length, within(PZ, 200).length, 'the maximum itself is taken');
});

t.test('the write paths: a rewrite moves a place, a deletion removes it, positions across ±180° and near a pole', async (t) => {
  const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
  const { get } = searchHelpers(app);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'near-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  let n = 0;
  const write = async (...resources: unknown[]) => {
    const file = path.join(dir, `${++n}.ndjson`);
    await writeFile(file, resources.map((r) => JSON.stringify(r)).join('\n') + '\n');
    t.same((await load(db, [file])).rejects, [], `load ${n}`);
  };
  const place = (id: string, position?: { latitude: unknown; longitude: unknown }) => ({ resourceType: 'Location', id, status: 'active', name: id, ...(position ? { position } : {}) });
  const ids = async (query: string) => {
    const res = await get(`/fhir/v2/Location?${query}`);
    if (res.statusCode !== 200) return [`${res.statusCode}`];
    return ((res.json() as Bundle).entry ?? []).map((e) => e.resource.id);
  };
  const rows = async (id: string) => (await db.sql<{ n: number }[]>`select count(*)::int as n from geo_idx g join resource r on r.rid = g.rid where r.type = 'Location' and r.id = ${id}`)[0].n;
  await write(
    place('loc-moving', { latitude: 48.86, longitude: 2.35 }),
    place('loc-tie-b', { latitude: 45, longitude: 5 }),
    place('loc-tie-a', { latitude: 45, longitude: 5 }),
    place('loc-east', { latitude: -16.8, longitude: 179.95 }),
    place('loc-west', { latitude: -16.8, longitude: -179.95 }),
    place('loc-pole', { latitude: 89.95, longitude: 10 }),
    place('loc-nowhere'),
    place('loc-null-island', { latitude: 1e-200, longitude: -5e-324 }),
  );
  t.same(await ids('near=-5e-324|1e-300|0.001'), ['loc-null-island'], 'coordinates within 1e-9° of 0 are 0 (PostgreSQL refuses arithmetic that underflows)');
  t.same(await ids('near=48.86|2.35|1'), ['loc-moving']);
  await write(place('loc-moving', { latitude: 45.75, longitude: 4.85 }));
  t.same(await ids('near=48.86|2.35|1'), [], 'moved: no longer in Paris');
  t.same(await ids('near=45.75|4.85|1'), ['loc-moving'], '… but in Lyon');
  t.equal(await rows('loc-moving'), 1, 'its one row, rewritten');
  await write(place('loc-moving'));
  t.same(await ids('near=45.75|4.85|1'), [], 'without a position: nowhere');
  t.equal(await rows('loc-moving'), 0);
  t.same((await ids('near:missing=true')).sort(), ['loc-moving', 'loc-nowhere']);
  // Equal distances: by key, in order over pages (loc-tie-b was written first).
  const pages: string[] = [];
  for (let next: string | undefined = '/fhir/v2/Location?near=45|5|1&_count=1'; next; ) {
    const b = (await get(next)).json() as Bundle;
    pages.push(...(b.entry ?? []).map((e) => e.resource.id));
    next = b.link.find((l) => l.relation === 'next')?.url.replace('http://fhir.test', '');
  }
  t.same(pages, ['loc-tie-b', 'loc-tie-a'], 'a tie: each once, by key');
  t.same(await ids('near=-16.8|-179.99|20'), ['loc-west', 'loc-east'], 'across the antimeridian: 4.3 km and 6.4 km');
  t.same(await ids('near=-16.8|179.99|20'), ['loc-east', 'loc-west']);
  t.same(await ids('near=89.99|-170|20'), ['loc-pole'], 'over the pole: 6.7 km');
  t.same(await ids('near=90|0|10'), ['loc-pole'], 'from the pole itself');
  const bundle = path.join(dir, 'delete.json');
  await writeFile(bundle, JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [{ request: { method: 'DELETE', url: 'Location/loc-pole' } }] }));
  t.same((await load(db, [bundle])).rejects, []);
  t.same(await ids('near=90|0|10'), [], 'deleted');
  t.equal(await rows('loc-pole'), 0, 'its row deleted');
  // A position the registry cannot read: the loader refuses the resource and says why.
  const bad = path.join(dir, 'bad.ndjson');
  await writeFile(bad, `${JSON.stringify(place('loc-bad', { latitude: 91, longitude: 2 }))}\n${JSON.stringify(place('loc-bad-2', { latitude: '48.8', longitude: 2 }))}\n`);
  const rejects = (await load(db, [bad])).rejects;
  t.match(rejects, [/position\.latitude: must be a number from -90 to 90, found 91/, /position\.latitude: must be a number from -90 to 90, found a string/]);
});

t.test('the bulk load fills the index as the incremental load does', async (t) => {
  const bulk = await testDatabase(t);
  t.same((await load(bulk, [path.join(FIXTURES, 'directory')], { bulk: true })).rejects, []);
  const rows = (d: typeof db) => d.sql<{ id: string; band: number; lat: number; lon: number }[]>`
    select r.id, g.band, g.lat, g.lon from geo_idx g join resource r on r.rid = g.rid order by r.id`;
  const incremental = await rows(db);
  t.equal(incremental.length, PLACES.length, 'a row per place');
  t.same(await rows(bulk), incremental);
  t.ok(incremental.every((r) => r.band === Math.floor(r.lat * BANDS_PER_DEGREE)), 'band = floor(lat × 16)');
  const [{ n }] = await bulk.sql<{ n: number }[]>`select count(*)::int as n from pg_indexes where tablename = 'geo_idx'`;
  t.equal(n, 2, 'its indexes built again');
});

/** A Location search as the parser reads it, for the compiler's statements. */
const parse = (query: string): SearchRequest =>
  parseSearch([...new URLSearchParams(query)], {
    version: 'v2', type: 'Location', registry, strict: true, bases: [], now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 10, maxParams: 20,
  });
const hints = { systemId: () => undefined };

/** `n` Locations, rids 1 to n, in a scratch database, placed by `points` (SQL giving i, lat, lon), and analyzed. */
async function placed(sql: Awaited<ReturnType<typeof testDatabase>>['sql'], n: number, points: string): Promise<void> {
  const param = registry.byCode('Location', 'near')!.id;
  await sql`
    insert into resource (rid, type, id, version_id, last_updated, content)
    select i, 'Location', 'l' || i, 1, now(), '{}' from generate_series(1, ${n}) i`;
  await sql.unsafe(`
    insert into geo_idx (rid, param, band, lat, lon, x, y, z)
    select i, ${param}, floor(lat * 16)::int, lat, lon, cos(radians(lat)) * cos(radians(lon)), cos(radians(lat)) * sin(radians(lon)), sin(radians(lat))
    from (${points}) x`);
  await sql`analyze resource`;
  await sql`analyze geo_idx`;
}

t.test('the index ranges hold every point of the circle', async (t) => {
  // Points on and just inside circles of every size and place (poles, ±180°), against the ranges.
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const destination = ([lat, lon]: Point, bearing: number, km: number): Point => {
    const rad = Math.PI / 180;
    const d = km / 6371.0088;
    const p1 = lat * rad;
    const p2 = Math.asin(Math.sin(p1) * Math.cos(d) + Math.cos(p1) * Math.sin(d) * Math.cos(bearing));
    const l2 = lon * rad + Math.atan2(Math.sin(bearing) * Math.sin(d) * Math.cos(p1), Math.cos(d) - Math.sin(p1) * Math.sin(p2));
    return [p2 / rad, ((((l2 / rad) + 540) % 360) - 180)];
  };
  let missed = 0;
  let checked = 0;
  for (let i = 0; i < 400; i++) {
    const centre: Point = i % 10 === 0 ? [89.9 - random(), 360 * random() - 180] : i % 10 === 1 ? [90 * random() - 45, 180 - random() / 10] : [180 * random() - 90, 360 * random() - 180];
    const km = [0.01, 1, 5, 50, 200][i % 5];
    const ranges = bandRanges(centre[0], centre[1], km);
    for (let j = 0; j < 50; j++) {
      const p = destination(centre, 2 * Math.PI * random(), km * (j < 10 ? 1 - 1e-9 : random()));
      if (distance(centre, p) > km) continue;
      checked++;
      const band = Math.floor(p[0] * BANDS_PER_DEGREE);
      if (!ranges.some((r) => r.band === band && p[1] >= r.lo && p[1] <= r.hi)) missed++;
    }
  }
  t.ok(checked > 15_000, `${checked} points checked`);
  t.equal(missed, 0, 'none outside the ranges');
  const paris = bandRanges(48.8534, 2.3488, 5);
  t.ok(paris.length <= 3 && paris.every((r) => r.hi - r.lo < 0.14), '5 km in Paris: at most 3 bands, each 0.14° of longitude at most');
  t.same(bandRanges(89.99, 0, 5).map((r) => [r.lo, r.hi]), bandRanges(89.99, 0, 5).map(() => [-180, 180]), 'a circle over a pole: whole bands');
});

t.test('plans: a near search reads its circle from the index, never every Location', async (t) => {
  const pg = await testDatabase(t);
  const param = registry.byCode('Location', 'near')!.id;
  // 60,000 places, most in metropolitan France, a few anywhere else: enough rows that a scan of
  // geo_idx would be chosen if the index ranges did not read less.
  await placed(pg.sql, 60000, `
    select i, case when i % 20 = 0 then random() * 180 - 90 else 42 + random() * 9 end as lat,
              case when i % 20 = 0 then random() * 360 - 180 else -5 + random() * 13 end as lon
    from generate_series(1, 60000) i`);
  const run = runOn(pg.sql);
  const plan = async (s: Statement) => JSON.stringify((await run<{ 'QUERY PLAN': unknown }[]>(stmt`explain (format json) ${s}`))[0]['QUERY PLAN']);
  for (const value of ['48.8534|2.3488|5', '48.8534|2.3488|50', '45.75|4.85|200', '-17.5|179.99|100', '89.9|0|100']) {
    const req = parse(`near=${value}`);
    for (const [what, s] of [['page', measuredPageQuery(hints, req, undefined, 51)], ['count', countQuery(hints, req)]] as const) {
      const p = await plan(s);
      t.notMatch(p, /"Node Type":"Seq Scan"/, `near=${value}, ${what}: no sequential scan`);
      t.match(p, /"Index Name":"geo_idx_band"/, `near=${value}, ${what}: the band index`);
    }
    // The rows the index ranges find are those every row checked would give.
    const c = req.conditions[0] as Parameters<typeof near.rows>[0];
    const found = await run<{ rid: string }[]>(stmt`select rid from (${near.rows(c, hints, 'Location')}) x order by 1`);
    const all = await run<{ rid: string }[]>(stmt`select g.rid from geo_idx g where g.param = ${param} and ${near.match(c, hints)!} order by 1`);
    t.same(found.map((r) => r.rid), all.map((r) => r.rid), `near=${value}: the same ${all.length} rows as a check of every row`);
  }
});

t.test('a page of a wide circle is read from a narrower one first: the pages, cursor after cursor, are those of the whole circle', async (t) => {
  const pg = await testDatabase(t);
  // 3,000 places within 10 km of Bordeaux, 300 within 150 km: a dense centre, sparse around.
  await placed(pg.sql, 3300, `
    select i, 44.84 + s * sqrt(random()) * cos(a) / 111.2 as lat, -0.58 + s * sqrt(random()) * sin(a) / 78.9 as lon
    from (select i, 2 * pi() * random() as a, case when i <= 3000 then 10 else 150 end as s from generate_series(1, 3300) i) r`);
  const run = runOn(pg.sql);
  type PageRow = { rid: string; key: string };
  for (const value of ['44.84|-0.58|20', '44.84|-0.58|150', '44.9|-0.5|3', '45.5|0.2|60', '44.84|-0.58']) {
    const req = parse(`near=${value}`);
    const c = req.conditions[0] as Parameters<typeof near.rows>[0];
    const whole = await run<{ rid: string }[]>(stmt`select rid from (${near.measure!.rows(c, hints, 'Location')}) x order by m, rid`);
    const got: string[] = [];
    for (let cursor: { measure: string; rid: string } | undefined, pages = 0; pages < 200; pages++) {
      const rows = await run<PageRow[]>(measuredPageQuery(hints, req, cursor, 51));
      got.push(...rows.slice(0, 50).map((r) => r.rid));
      if (rows.length <= 50) break;
      const [measure, rid] = JSON.parse(rows[49].key) as [string, string];
      cursor = { measure, rid };
    }
    t.same(got, whole.map((r) => r.rid), `near=${value}: the ${whole.length} matches in order, every page`);
  }
  // 20 km around Bordeaux holds 3,000 places; its first page reads the index rows of 2.5 km, and the whole circle's scan never runs.
  const [{ 'QUERY PLAN': plan }] = await run<{ 'QUERY PLAN': unknown }[]>(stmt`explain (analyze, format json) ${measuredPageQuery(hints, parse('near=44.84|-0.58|20'), undefined, 51)}`);
  const scans: { read: number; loops: number }[] = [];
  const walkPlan = (n: Record<string, any>) => {
    if (n['Index Name'] === 'geo_idx_band') scans.push({ read: (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], loops: n['Actual Loops'] });
    for (const child of n.Plans ?? []) walkPlan(child);
  };
  walkPlan((plan as Record<string, any>[])[0].Plan);
  const [narrow, whole] = scans.sort((a, b) => b.loops - a.loops);
  t.equal(scans.length, 2, 'two circles in the plan');
  t.ok(narrow.read > 51 && narrow.read < 600, `the narrow circle: ${narrow.read} index rows read`);
  t.equal(whole.loops, 0, 'the whole circle: never read');
});

t.test("the README's near lines, as curl sends them (raw |, no _count, every next link)", async (t) => {
  const readme = readFileSync(path.join(FIXTURES, '..', 'README.md'), 'utf8');
  const lines = [...readme.matchAll(/curl -H "\$H" "\$B(\/(?:Location|PractitionerRole)\?[^"]*near=[^"]*)"/g)].map((m) => `/fhir/v2${m[1]}`);
  t.equal(lines.length, 2, 'Location?near=… and PractitionerRole?location.near=…');
  const [places, roles] = lines;
  const [lat, lon, radius] = /near=([^|&]+)\|([^|&]+)\|([^|&]+)/.exec(places)!.slice(1).map(Number);
  const pages = await walk(places);
  await nearest(t, places, within([lat, lon], radius));
  t.ok(matches(pages).length > 0, 'it finds places');
  const included = new Set(pages.flatMap((b) => (b.entry ?? []).filter((e) => e.search.mode === 'include').map((e) => `${e.resource.resourceType}/${e.resource.id}`)));
  t.same([...included].sort(), [...new Set(within([lat, lon], radius).map((p) => PLACES.find((x) => x.id === p.id)!.organization))].sort(), 'with their establishments');
  const [rlat, rlon, rkm] = /near=([^|&]+)\|([^|&]+)\|([^|&]+)/.exec(roles)!.slice(1).map(Number);
  const role = new URLSearchParams(roles.split('?')[1]).get('role')!;
  const located = new Set(within([rlat, rlon], rkm).map((p) => `Location/${p.id}`));
  const roleFixtures = (JSON.parse(readFileSync(path.join(FIXTURES, 'directory', 'PractitionerRole.json'), 'utf8')) as { entry: { resource: Record<string, any> }[] }).entry.map((e) => e.resource);
  const expected = roleFixtures
    .filter((r) => (r.location ?? []).some((l: { reference: string }) => located.has(l.reference)) && (r.code ?? []).some((c: { coding?: { code: string }[] }) => c.coding?.some((x) => x.code === role)))
    .map((r) => r.id as string).sort();
  t.ok(expected.length > 0, `the fixtures hold roles ${role} near ${rlat}|${rlon}`);
  t.same(matches(await walk(roles)).map((e) => e.resource.id).sort(), expected, 'practitioners by where they practise');
});
