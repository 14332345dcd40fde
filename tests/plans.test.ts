import t from 'tap';
import { parseSearch } from '../src/fhir/parse.ts';
import { registry, type ResourceType } from '../src/registry/index.ts';
import type { Entries } from '../src/fhir/entries.ts';
import type { SearchRequest } from '../src/fhir/search-request.ts';
import { planOnce } from '../src/store/classify.ts';
import { decideExecution, executionPolicy } from '../src/store/execution.ts';
import { SearchRouter } from '../src/store/router.ts';
import { FIXTURES, testApp } from './helpers/app.ts';

/**
 * Which searches are planned once (the generic pool of src/db.ts) and which for their values at
 * every execution: only equalities on selective parameters (identifiers, ids, references) may share
 * a plan; a code, a boolean, a string, a date, :not, :missing or `system|` must not.
 */
const req = (type: ResourceType, q: string) =>
  parseSearch([...new URLSearchParams(q)], {
    version: 'v2', type, registry, strict: false, bases: ['http://fhir.test/fhir/v1', 'http://fhir.test/fhir/v2'],
    now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 50,
  });
const BASE = { base: 'http://fhir.test/fhir/v2' };
/** A search on `router`, run as the route runs it: its execution decided under the router's policy. */
const search = (router: SearchRouter, r: SearchRequest) => router.search(r, decideExecution(r, router.policy), BASE);
/** The resource ids of rendered entries, in order. */
const ids = (e: Entries) => (JSON.parse(`[${e.json.toString('utf8')}]`) as { resource: { id: string } }[]).map((x) => x.resource.id);

t.test('value-independent searches: equalities on selective parameters, or no condition', async (t) => {
  const yes: [ResourceType, string][] = [
    ['Practitioner', 'identifier=10001010007'],
    ['Practitioner', 'identifier=https://rpps.esante.gouv.fr|10001010007,|810001010007'],
    ['Practitioner', '_id=a,b&_count=1000'],
    ['Practitioner', 'identifier=10001010007&_id=a'],
    ['PractitionerRole', 'practitioner=Practitioner/003-1&_include=PractitionerRole:organization'],
    ['PractitionerRole', 'organization=001-01-1'],
    ['Organization', 'partof=001-01-1'],
    ['PractitionerRole', 'practitioner.identifier=10001010007'],
    ['PractitionerRole', 'organization.partof.identifier=123'],
    ['PractitionerRole', 'location=Location/loc-cds-louvre'],
    ['Location', 'organization=org-cds-louvre'],
    ['Practitioner', '_count=1000'],
    ['Practitioner', ''],
  ];
  for (const [type, q] of yes) t.equal(planOnce(req(type, q)), true, `${type}?${q}`);
  const no: [ResourceType, string][] = [
    ['Practitioner', 'identifier=https://rpps.esante.gouv.fr|'],
    ['Practitioner', 'identifier:not=10001010007'],
    ['Practitioner', 'identifier:missing=true'],
    ['Practitioner', 'identifier=10001010007&active=true'],
    ['Practitioner', 'active=false'],
    ['Practitioner', 'qualification-code=SM54'],
    ['Practitioner', 'name=mar'],
    ['Practitioner', 'name:contains=art'],
    ['Practitioner', 'family:exact=Martin'],
    ['Practitioner', '_lastUpdated=ge2024-01-01'],
    ['Practitioner', '_id:not=a'],
    ['Organization', 'type=SA05'],
    ['PractitionerRole', 'role=FON-01'],
    ['PractitionerRole', 'practitioner.name=martin'],
    ['PractitionerRole', 'organization:missing=true'],
    ['Organization', '_has:PractitionerRole:organization:practitioner=003-1'],
    ['Location', 'near=48.85|2.35|5'],
    ['Location', 'near=48.85|2.35&identifier=750051234'],
    ['PractitionerRole', 'location.near=48.85|2.35'],
  ];
  for (const [type, q] of no) t.equal(planOnce(req(type, q)), false, `${type}?${q}`);
});

t.test('the two pools: generic plans for value-independent searches, custom plans for the others', async (t) => {
  const { db, deps } = await testApp(t, { paths: [FIXTURES] });
  const [{ plan_cache_mode: generic }] = await db.generic`show plan_cache_mode`;
  const [{ plan_cache_mode: custom }] = await db.sql`show plan_cache_mode`;
  t.equal(generic, 'force_generic_plan');
  t.equal(custom, 'force_custom_plan');
  const poolOf = (q: string) => deps.router.pools[decideExecution(req('Practitioner', q), deps.router.policy).pool];
  t.equal(poolOf('identifier=10001010007'), db.generic);
  t.equal(poolOf('name=martin'), db.sql);

  // The same lookups, many times over (a generic plan is reused after the first executions), answer
  // exactly what a custom plan answers.
  const [{ id, ident }] = await db.sql<{ id: string; ident: string }[]>`
    select id, content->'identifier'->0->>'value' as ident from resource where type = 'Practitioner' order by rid limit 1`;
  const customOnly = new SearchRouter({ pools: { ...deps.router.pools, generic: db.sql }, cursorSecret: 'test-secret-0123456789', includeCap: 1000, policy: executionPolicy({ heavySearches: 2, workers: 1, statementTimeoutMs: 0, totalBudgetMs: 5000 }) });
  const expected = ids((await search(customOnly, req('Practitioner', `identifier=${ident}`))).matches);
  t.ok(expected.includes(id), 'the custom plan finds the resource');
  for (let i = 0; i < 8; i++) {
    const byIdent = await search(deps.router, req('Practitioner', `identifier=${ident}`));
    t.same(ids(byIdent.matches), expected, `identifier lookup, run ${i + 1}`);
    const none = await search(deps.router, req('Practitioner', `identifier=no-such-${i}`));
    t.equal(none.matches.count, 0, `unknown identifier, run ${i + 1}`);
  }
  const custom1 = await search(customOnly, req('PractitionerRole', `practitioner.identifier=${ident}&_include=PractitionerRole:organization`));
  const generic1 = await search(deps.router, req('PractitionerRole', `practitioner.identifier=${ident}&_include=PractitionerRole:organization`));
  t.same(ids(generic1.matches), ids(custom1.matches), 'chain: same matches on both pools');
  t.ok(generic1.includes.count > 0, 'the chain finds roles with organizations');
  t.same(ids(generic1.includes), ids(custom1.includes), 'includes: same resources on both pools');
});

t.test('the lanes: every search but a lookup waits its turn, a lookup never does', async (t) => {
  const { deps } = await testApp(t, { paths: [FIXTURES] });
  const { router } = deps;
  // Hold every place of the lane of ordinary searches.
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  const holders = Array.from({ length: router.lanes.page.width }, () => router.lanes.page.admit(() => held));
  const settledWithin = async <T,>(p: Promise<T>, ms: number) =>
    Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  const lookup = search(router, req('Practitioner', 'identifier=10100000024'));
  t.equal(await settledWithin(lookup, 2000), true, 'a lookup answers while the lane is full');
  const byName = search(router, req('Practitioner', 'family=martin'));
  t.equal(await settledWithin(byName, 300), false, 'a search by name waits for its turn');
  release();
  await Promise.all(holders);
  t.equal(await settledWithin(byName, 5000), true, 'and answers once a place is free');
  t.same((await byName).matches.count, 5);
});
