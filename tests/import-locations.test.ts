/**
 * The Locations of the FINESS establishments (`npm run import`), searched as clients search: one
 * per establishment with a WGS84 point, whichever coordinate pair holds it; kept current by every
 * import of the feed (moved, closed, gone, point gained or lost), never touched by the RPPS alone;
 * PractitionerRole.location following them. That the order of the sources changes nothing, Locations
 * included, is checked with the three sources in tests/import-sources.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { EXT } from '../src/vocabulary/extensions.ts';
import { testApp } from './helpers/app.ts';
import { importCli, searchAll, storedResources } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';
import { API_KEY, type Bundle } from './helpers/search.ts';

type Json = Record<string, any>;

const EXPORT_DIR = tmpDir(t, 'import-locations-export');
const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY, EXPORT_DIR } });
const root = tmpDir(t, 'import-locations');
const [day0, rppsDay1, day1] = ['day-0', 'rpps-day-1', 'day-1'].map((d) => path.join(root, d));
await generateOpenData({ scale: 0.002, seed: 12, day: 0, outDir: day0, badShare: 0, sources: ['rpps', 'finess'] });
await generateOpenData({ scale: 0.002, seed: 12, day: 1, changeRate: 0.05, outDir: rppsDay1, badShare: 0, sources: ['rpps'] });
const files = (dir: string, prefix: string) => fs.readdirSync(dir).filter((n) => n.startsWith(prefix)).map((n) => path.join(dir, n));
const feedFile = files(day0, 'finess-structures')[0];
const rppsFiles = files(day0, 'PS_LibreAcces');
const feed = JSON.parse(gunzipSync(fs.readFileSync(feedFile)).toString('utf8'));
const establishments: Json[] = feed.pmej.flatMap((p: Json) => p.ege);
const finessOf = (ege: Json) => ege.informationsGeneralesEGE.numFinessEge.trim() as string;
const geographic = (ege: Json) => ege.adresse.find((a: Json) => a.usageAdresse === '03');
const coordinates = (ege: Json) => geographic(ege)?.coordonneesGeographique as Json | null | undefined;

/** The point a client expects, read by range from whichever pair holds degrees. */
function expectedPoint(c: Json): { longitude: number; latitude: number } {
  const [x, y] = [Number(c.coordonneeX), Number(c.coordonneeY)];
  if (Math.abs(x) <= 180 && Math.abs(y) <= 90) return { longitude: x, latitude: y };
  return { longitude: Number(c.directionLongitude), latitude: Number(c.directionLatitude) };
}

const get = async (url: string): Promise<Bundle> => {
  const res = await app.inject({ method: 'GET', url, headers: { 'SERVICE-API-KEY': API_KEY } });
  if (res.statusCode !== 200) throw new Error(`${url} → ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json() as Bundle;
};
const ids = (entries: { resource: { id: string } }[]) => entries.map((e) => e.resource.id).sort();
const lastRun = async () => (await db.sql<{ at: Date }[]>`select started_at as at from writer_run where kind = 'import' order by id desc limit 1`)[0].at;
/** `Type/id` of everything the last import gave a new version, through `_lastUpdated`. */
async function updatedSince(at: Date): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const type of ['Organization', 'Practitioner', 'PractitionerRole', 'Location']) {
    out[type] = ids(await searchAll(app, `/fhir/v2/${type}?_lastUpdated=ge${at.toISOString()}`));
  }
  return out;
}
/** The active roles at each of these establishments, from the database. */
async function activeRolesAt(orgs: string[]): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    select id from resource where type = 'PractitionerRole' and content->>'active' = 'true'
      and content->'organization'->>'reference' = any(${orgs.map((o) => `Organization/${o}`)}::text[])`;
  return rows.map((r) => r.id).sort();
}

t.test('a first import: a Location per establishment with a point, read from either pair', async (t) => {
  const run = await importCli(db, [day0]);
  t.equal(run.code, 0, 'imported', { stderr: run.stderr });
  t.match(run.stdout, /locations: [1-9][\d,]* new, 0 changed, 0 deactivated/, 'the CLI counts the Locations');

  const located = establishments.filter((e) => coordinates(e));
  const locations = await searchAll(app, '/fhir/v2/Location?_count=100');
  t.same(ids(locations), located.map((e) => `F${finessOf(e)}`).sort(), 'one Location per establishment with coordinates, none without');
  const byId = new Map(locations.map((e) => [e.resource.id, e.resource as Json]));
  const forms = { wgs84InXY: 0, projected: 0, swapped: 0, commune: 0, overseas: 0 };
  let wrong = 0;
  for (const ege of located) {
    const c = coordinates(ege)!;
    const loc = byId.get(`F${finessOf(ege)}`)!;
    const { longitude, latitude } = expectedPoint(c);
    if (loc.position.longitude !== longitude || loc.position.latitude !== latitude) wrong++;
    const [x, y] = [Number(c.coordonneeX), Number(c.coordonneeY)];
    if (Math.abs(x) <= 180) forms.wgs84InXY++;
    else if (x > y) forms.swapped++;
    else forms.projected++;
    const precision = loc.position.extension?.find((e: Json) => e.url === EXT.positionPrecision)?.valueCode;
    if (c.cleInInteropBAN.length === 5) {
      forms.commune++;
      if (precision !== 'commune') wrong++;
    } else if (precision === 'commune') wrong++;
    if (geographic(ege).cogCommune.startsWith('97')) {
      forms.overseas++;
      if (!(latitude < 20 && (longitude < -50 || longitude > 40))) wrong++;
    }
  }
  t.equal(wrong, 0, 'every position is the WGS84 pair; a commune-only BAN key marks it commune, and only it');
  t.ok(Object.values(forms).every((n) => n > 0), `degrees in coordonneeX/Y, projected, projected northing first, commune centres, overseas: ${JSON.stringify(forms)}`);

  const ege = located.find((e) => e.etatObjet === 'A' && !e.informationsGeneralesEGE.dateFermeture)!;
  const id = `F${finessOf(ege)}`;
  const loc = byId.get(id)!;
  const org = (await get(`/fhir/v2/Organization?_id=${id}`)).entry![0].resource as Json;
  t.match(loc, {
    resourceType: 'Location', status: 'active', mode: 'instance', name: org.name,
    meta: { profile: ['https://hl7.fr/ig/fhir/core/StructureDefinition/fr-core-location'] },
    managingOrganization: { reference: `Organization/${id}` },
  });
  t.same(loc.identifier, org.identifier.filter((i: Json) => ['IDNST', 'FINEG'].includes(i.type.coding[0].code)), 'the IDNST and FINESS identifiers of its Organization');
  t.same(loc.address, org.address[0], 'the address of its Organization');
  t.same(loc.meta.extension.map((e: Json) => e.extension[0].valueCode), ['FINESS'], 'data-trace FINESS');
  t.ok(establishments.some((e) => e.etatObjet === 'I' && coordinates(e) && byId.get(`F${finessOf(e)}`)?.status === 'inactive'), 'a closed establishment with a point: an inactive Location');

  t.same(ids(await searchAll(app, `/fhir/v2/Location?organization=${id}`)), [id], 'Location?organization=<id>');
  t.same(ids(await searchAll(app, `/fhir/v2/Location?organization=Organization/${id}`)), [id], 'Location?organization=Organization/<id>');
  t.same(ids(await searchAll(app, `/fhir/v2/Location?_id=${id}`)), [id], 'Location?_id');
  t.same(ids(await searchAll(app, '/fhir/v2/Location?data-information-system=FINESS&_count=100')), ids(locations), 'data-information-system=FINESS');

  // Roles: those at an establishment with an active Location refer to it, the others do not.
  const roles = (await searchAll(app, '/fhir/v2/PractitionerRole?active=true&_count=100')).map((e) => e.resource as Json);
  const active = new Set(locations.filter((e) => (e.resource as Json).status === 'active').map((e) => `Organization/${e.resource.id}`));
  const bad = roles.filter((r) => (r.location?.[0]?.reference ?? null) !== (active.has(r.organization?.reference) ? r.organization.reference.replace('Organization/', 'Location/') : null));
  t.same(bad.map((r) => r.id), [], 'a role has location exactly when its Organization has an active Location');
  const at = roles.filter((r) => r.location).map((r) => r.location[0].reference as string);
  t.ok(at.length > 0, `${at.length} roles have a location`);
  const place = at[0];
  const byLocation = await searchAll(app, `/fhir/v2/PractitionerRole?location=${place}`);
  t.same(ids(byLocation), roles.filter((r) => r.location?.[0]?.reference === place).map((r) => r.id).sort(), 'PractitionerRole?location=');
  const included = await get(`/fhir/v2/PractitionerRole?location=${place}&_include=PractitionerRole:location`);
  t.same(included.entry!.filter((e) => e.search.mode === 'include').map((e) => `${e.resource.resourceType}/${e.resource.id}`), [place], '_include=PractitionerRole:location');
  const rev = await get(`/fhir/v2/Organization?_id=${place.slice('Location/'.length)}&_revinclude=Location:organization`);
  t.same(rev.entry!.filter((e) => e.search.mode === 'include').map((e) => `${e.resource.resourceType}/${e.resource.id}`), [place], '_revinclude=Location:organization');
});

t.test('$export gives the Locations', async (t) => {
  const kick = await app.inject({ method: 'GET', url: '/fhir/v2/$export?_type=Location', headers: { 'SERVICE-API-KEY': API_KEY, prefer: 'respond-async' } });
  t.equal(kick.statusCode, 202, 'kick-off');
  const status = new URL(kick.headers['content-location'] as string).pathname;
  let done;
  for (let i = 0; i < 120; i++) {
    done = await app.inject({ method: 'GET', url: status, headers: { 'SERVICE-API-KEY': API_KEY } });
    if (done.statusCode !== 202) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  t.equal(done!.statusCode, 200, 'the manifest');
  const output = (done!.json() as { output: { type: string; url: string; count: number }[] }).output;
  const [{ count }] = await db.sql<{ count: number }[]>`select count(*)::int as count from resource where type = 'Location'`;
  t.same(output.map((o) => [o.type, o.count]), [['Location', count]], `${count} Locations exported`);
  const file = await app.inject({ method: 'GET', url: new URL(output[0].url).pathname, headers: { 'SERVICE-API-KEY': API_KEY, 'accept-encoding': 'identity' } });
  t.ok(file.body.split('\n').filter(Boolean).every((l) => JSON.parse(l).resourceType === 'Location'), 'of type Location');
});

/** Day 1: the same files but the feed, where five establishments named by RPPS lines changed. */
const changed: Record<'moved' | 'closed' | 'vanished' | 'gains' | 'loses', string> = {} as any;

t.test('the next day: exactly the Locations and roles whose place changed get a version', async (t) => {
  const named = new Set((await db.sql<{ org: string }[]>`
    select distinct substr(content->'organization'->>'reference', 14) as org from resource
    where type = 'PractitionerRole' and content->>'active' = 'true'`).map((r) => r.org));
  const open = establishments.filter((e) => e.etatObjet === 'A' && named.has(`F${finessOf(e)}`));
  const [moved, closed, vanished, loses] = open.filter((e) => coordinates(e) && coordinates(e)!.cleInInteropBAN.length > 5);
  const gains = open.find((e) => !coordinates(e))!;
  t.ok(moved && closed && vanished && loses && gains, 'five establishments with roles: four with a point, one without');
  Object.assign(changed, { moved: `F${finessOf(moved)}`, closed: `F${finessOf(closed)}`, vanished: `F${finessOf(vanished)}`, gains: `F${finessOf(gains)}`, loses: `F${finessOf(loses)}` });

  const c = coordinates(moved)!;
  const degrees = Math.abs(Number(c.coordonneeX)) <= 180;
  const shift = (v: string) => String(Number(v) + 0.01);
  if (degrees) Object.assign(c, { coordonneeX: shift(c.coordonneeX), coordonneeY: shift(c.coordonneeY) });
  else Object.assign(c, { directionLongitude: shift(c.directionLongitude), directionLatitude: shift(c.directionLatitude) });
  geographic(moved).numeroVoie = String(Number(geographic(moved).numeroVoie ?? 1) + 2);
  Object.assign(closed, { etatObjet: 'I' });
  closed.informationsGeneralesEGE.dateFermeture = '2026-10-15';
  for (const p of feed.pmej) p.ege = p.ege.filter((e: Json) => e !== vanished);
  geographic(gains).coordonneesGeographique = { coordonneeX: '2.35', coordonneeY: '48.85', directionLatitude: '6862000.00', directionLongitude: '652000.00', cleInInteropBAN: '75056_1234_00001', scoreBAN: '0.9' };
  geographic(loses).coordonneesGeographique = null;
  fs.mkdirSync(day1);
  for (const f of rppsFiles) fs.copyFileSync(f, path.join(day1, path.basename(f)));
  fs.writeFileSync(path.join(day1, path.basename(feedFile)), gzipSync(JSON.stringify(feed)));

  const rolesBefore = await activeRolesAt([changed.closed, changed.vanished, changed.gains, changed.loses]);
  const movedBefore = (await get(`/fhir/v2/Location?_id=${changed.moved}`)).entry![0].resource as Json;
  const run = await importCli(db, [day1]);
  t.equal(run.code, 0, 'imported', { stderr: run.stderr, stdout: run.stdout });
  // A closure is a change of the Location (its status), as of its Organization (active).
  t.match(run.stdout, /locations: 1 new, 2 changed, 2 deactivated/, 'one gained, one moved, one closed; two lost (gone, point removed)');
  const fed = await updatedSince(await lastRun());
  t.same(fed.Location, Object.values(changed).sort(), 'the five Locations, no other');
  t.same(fed.PractitionerRole, rolesBefore, 'the roles at the four establishments that gained or lost an active Location, no other');
  t.same(fed.Organization, Object.values(changed).sort(), 'their Organizations');
  t.same(fed.Practitioner, [], 'no Practitioner');

  const now = new Map((await searchAll(app, `/fhir/v2/Location?_id=${Object.values(changed).join(',')}`)).map((e) => [e.resource.id, e.resource as Json]));
  t.not(now.get(changed.moved)!.position.latitude, movedBefore.position.latitude, 'moved: a new position');
  t.equal(now.get(changed.moved)!.status, 'active');
  t.equal(now.get(changed.closed)!.status, 'inactive', 'closed: inactive');
  t.equal(now.get(changed.vanished)!.status, 'inactive', 'absent from the feed: inactive');
  t.equal(now.get(changed.loses)!.status, 'inactive', 'point removed: inactive');
  t.match(now.get(changed.gains), { status: 'active', position: { longitude: 2.35, latitude: 48.85 } }, 'point gained: a new active Location');
  t.same(ids(await searchAll(app, `/fhir/v2/PractitionerRole?location=Location/${changed.gains}`)), await activeRolesAt([changed.gains]), 'the roles at the establishment that gained one refer to it');
  for (const lost of [changed.closed, changed.vanished, changed.loses]) {
    t.same(await searchAll(app, `/fhir/v2/PractitionerRole?location=Location/${lost}`), [], `no role refers to ${lost} any more`);
  }
  t.same(ids(await searchAll(app, `/fhir/v2/PractitionerRole?location=Location/${changed.moved}`)), await activeRolesAt([changed.moved]), 'the moved one keeps its roles');

  const again = await importCli(db, [day1]);
  t.equal(again.code, 0);
  t.match(again.stdout, /locations: 0 new, 0 changed, 0 deactivated/);
  t.same(Object.values(await updatedSince(await lastRun())).flat(), [], 'the same files again change nothing');
});

t.test('an import of the RPPS extract alone never touches a Location', async (t) => {
  const before = new Map([...(await storedResources(db))].filter(([k]) => k.startsWith('Location/')));
  const run = await importCli(db, [rppsDay1]);
  t.equal(run.code, 0, 'imported', { stderr: run.stderr });
  const fed = await updatedSince(await lastRun());
  t.ok(fed.PractitionerRole.length > 0, `${fed.PractitionerRole.length} roles changed`);
  t.same(fed.Location, [], 'no Location written');
  t.same(new Map([...(await storedResources(db))].filter(([k]) => k.startsWith('Location/'))), before, 'every Location as it was');
  const written = await searchAll(app, `/fhir/v2/PractitionerRole?_lastUpdated=ge${(await lastRun()).toISOString()}&_count=100`);
  const active = new Set(ids(await searchAll(app, '/fhir/v2/Location?status=active&_count=100')));
  const bad = written.map((e) => e.resource as Json).filter((r) => r.active && (r.location !== undefined) !== active.has(r.organization?.reference?.slice('Organization/'.length)));
  t.same(bad.map((r) => r.id), [], 'the roles it rewrote refer to the active Location of their establishment, as the feed left it');
});
