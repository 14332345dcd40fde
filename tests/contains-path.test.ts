import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { countQuery, pageQuery } from '../src/fhir/compile.ts';
import { containsNeedle } from '../src/fhir/types/string.ts';
import { flatten } from '../src/fhir/statement.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import { registry } from '../src/registry/index.ts';
import { Planner } from '../src/store/planner.ts';
import { runOn } from '../src/store/query.ts';
import { load, testApp } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { API_KEY, searchHelpers, type Bundle } from './helpers/search.ts';

/**
 * How a :contains value picks its path (trigram index for a rare needle, key-order walk for a common
 * one), and a prefix value (its whole range for a rare prefix, the planner's choice otherwise).
 */

t.test('needles for the trigram index need three letters or digits in a row, after folding', async (t) => {
  t.equal(containsNeedle('Bvr'), 'bvr');
  t.equal(containsNeedle('Hél'), 'hel', 'accents fold');
  t.equal(containsNeedle('ab'), undefined, 'two letters: no trigram');
  t.equal(containsNeedle('e-l o'), undefined, 'punctuation splits: no run of three');
  t.equal(containsNeedle('de la'), undefined, 'two words of two letters: no run of three');
  t.equal(containsNeedle('de lan'), 'de lan', 'one run of three is enough');
});

t.test('a needle is common when its estimated rows exceed √(page × rows of the parameter / 6)', async (t) => {
  const db = await testDatabase(t);
  const param = registry.forType('Practitioner').find((p) => p.code === 'family')!.id;
  // 20,000 family rows: 6,000 contain "zqk", 30 contain "wvx", the rest neither.
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select i, ${param}, case when i <= 6000 then 'azqkb' || i when i <= 6030 then 'cwvxd' || i else 'filler' || i end, 'x'
    from generate_series(1, 20000) i`;
  await db.sql`analyze string_idx`;
  const common = async (needle: string, count: number, lookup = new Planner()) => {
    const req = parseSearch([['family:contains', needle], ['_count', String(count)]], {
      version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(),
      defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
    });
    const ctx = await lookup.plan(runOn(db.sql), req);
    return ctx.commonNeedles!.has(`${param}/${needle}`);
  };
  // √(51 × 20,000 / 6) ≈ 412 rows: "zqk" (6,000) walks, "wvx" (30) takes the trigram index.
  t.equal(await common('zqk', 50), true, 'common needle: key-order walk');
  t.equal(await common('wvx', 50), false, 'rare needle: trigram index');
  // A page of 1000 moves the crossover to √(1001 × 20,000 / 6) ≈ 1,827: 6,000 rows still walk…
  const kept = new Planner();
  t.equal(await common('zqk', 1000, kept), true);
  // …but with 600 rows the larger page makes the trigram path the cheaper one.
  await db.sql`update string_idx set norm = 'filler' || rid where rid > 600 and rid <= 6000`;
  await db.sql`analyze string_idx`;
  t.equal(await common('zqk', 50), true, '600 rows, page of 50: walk');
  t.equal(await common('zqk', 1000), false, '600 rows, page of 1000: trigram index');
  // A lookup decides once a minute: the one that saw 6,000 rows still walks (time, never results).
  t.equal(await common('zqk', 1000, kept), true, 'decision kept for a minute');
});

t.test('a prefix whose range holds fewer rows than √(page × rows of the parameter / 8) reads its whole range first', async (t) => {
  const db = await testDatabase(t);
  const family = registry.forType('Practitioner').find((p) => p.code === 'family')!.id;
  const address = registry.forType('Organization').find((p) => p.code === 'address')!.id;
  // 20,000 family rows: 6,000 start with "mar", 200 with "pha". 40,000 address rows start with "pha":
  // the statistics of norm, shared by every parameter, make "pha" look common in family names too.
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select i, ${family}, case when i <= 6000 then 'mar' || i when i <= 6200 then 'pha' || i else 'zed' || i end, 'x'
    from generate_series(1, 20000) i`;
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select 100000 + i, ${address}, 'pharmacie ' || i, 'x' from generate_series(1, 40000) i`;
  await db.sql`analyze string_idx`;
  const lookup = new Planner();
  const rare = async (prefix: string, count: number) => {
    const req = parseSearch([['family', prefix], ['_count', String(count)]], {
      version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(),
      defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
    });
    const ctx = await lookup.plan(runOn(db.sql), req);
    return { rare: ctx.rarePrefixes!.has(`${family}/${prefix.toLowerCase()}`), sql: flatten(pageQuery(ctx, req, undefined, count + 1)).text };
  };
  // √(51 × 20,000 / 8) ≈ 357 rows: "mar" (6,000) is left to the planner, "pha" (200) reads its range.
  t.equal((await rare('Mar', 50)).rare, false, 'common prefix');
  const pha = await rare('Pha', 50);
  t.equal(pha.rare, true, 'rare prefix, counted: 200 rows');
  t.match(pha.sql, /offset 0/, 'its range is read whole, whatever the planner estimates');
  const [plan] = await db.sql`explain (format json) select 1 from string_idx s where s.param = ${family} and s.norm >= 'pha' and s.norm < 'phb'`;
  const estimate = (plan['QUERY PLAN'] as { Plan: { 'Plan Rows': number } }[])[0].Plan['Plan Rows'];
  t.ok(estimate > 357, `and the planner's estimate (${estimate} rows) would have called it common`);
  // A page of 1000: crossover √(1001 × 20,000 / 8) ≈ 1,582; 6,000 rows are still common, 200 still rare.
  t.equal((await rare('Mar', 1000)).rare, false);
  t.equal((await rare('Pha', 1000)).rare, true);
});

t.test('beside a rare prefix, another prefix is read once, hashed, when its range is smaller than 50 probes a driver row', async (t) => {
  const db = await testDatabase(t);
  const [family, name] = ['family', 'name'].map((code) => registry.forType('Practitioner').find((p) => p.code === code)!.id);
  // 20,000 practitioners: 20 families start with "pha" (rare: under √(51 × 20,000 / 8) ≈ 357 rows),
  // those of the multiples of 1,000; 502 names with "jea" (1–500, 1,000 and 2,000), 4,498 with
  // "mar" of which 400 "marie…" (4,601–5,000), the rest "zed". None is rare beside "pha", whose 20
  // rows cost 50 × 20 = 1,000 range rows in probes.
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select i, ${family}, case when i % 1000 = 0 then 'pha' || i else 'zed' || i end, 'x' from generate_series(1, 20000) i`;
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select i, ${name}, case when i <= 500 or i in (1000, 2000) then 'jea' || i when i <= 4600 then 'mar' || i when i <= 5000 then 'marie' || i else 'zed' || i end, 'x'
    from generate_series(1, 20000) i`;
  // The resources of the "pha" rows, which the page reads.
  await db.sql`
    insert into resource (rid, type, id, version_id, last_updated, content)
    select i, 'Practitioner', 'p' || i, 1, now(), jsonb_build_object('resourceType', 'Practitioner', 'id', 'p' || i)
    from generate_series(1000, 20000, 1000) i`;
  await db.sql`analyze string_idx`;
  const search = async (first: string) => {
    const req = parseSearch([['family', 'pha'], ['name', first]], {
      version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(),
      defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
    });
    const hints = await new Planner().plan(runOn(db.sql), req);
    const page = flatten(pageQuery(hints, req, undefined, 51));
    const counted = flatten(countQuery(hints, req));
    const [{ count }] = await db.sql.unsafe(counted.text, counted.params as never[]);
    const rows = await db.sql.unsafe(`select rid from (${page.text}) p`, page.params as never[]);
    const [{ 'QUERY PLAN': [{ Plan: plan }] }] = await db.sql.unsafe(`explain (format json) ${page.text}`, page.params as never[]);
    return { hints, probed: /exists \(\s*select 1\s+from "string_idx"/.test(page.text), hashed: JSON.stringify(plan).includes('hashed SubPlan'), count: Number(count), rids: rows.map((r) => Number(r.rid)) };
  };
  const jea = await search('Jea');
  t.same([...jea.hints.rarePrefixes!], [[`${family}/pha`, 20]], 'the rare prefix with its counted rows');
  t.same([...jea.hints.prefixBounds!], [[`${name}/jea`, 502]], "the other's bound: its first three characters counted");
  t.ok(jea.hashed && !jea.probed, '502 rows < 1,000: read once, hashed');
  const mar = await search('mar');
  t.ok(mar.probed && !mar.hashed, '4,498 rows > 1,000: probed for each of the 20 rows');
  const marie = await search('marie');
  t.same([...marie.hints.prefixBounds!], [[`${name}/marie`, 4498]], 'a longer prefix is bounded by its first three characters');
  t.ok(marie.probed && !marie.hashed, 'so "marie" (400 rows) is probed, as before');
  // The "pha" rows are the multiples of 1,000: 1,000 and 2,000 under "jea", 3,000 to 5,000 under "mar", 5,000 under "marie".
  t.same([jea.rids, mar.rids, marie.rids], [[1000, 2000], [3000, 4000, 5000], [5000]], 'the page: the matches in key order');
  t.same([jea.count, mar.count, marie.count], [2, 3, 1], 'the matches, counted');
});

t.test(':contains finds what the incremental path writes and rewrites, and its total is counted through string_value', async (t) => {
  const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
  const { get } = searchHelpers(app, { key: API_KEY });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'contains-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const pra = (id: string, family: string) => ({ resourceType: 'Practitioner', id, name: [{ family }] });
  const loadNdjson = async (name: string, rows: unknown[]) => {
    const file = path.join(dir, name);
    await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    t.same((await load(db, [file])).rejects, []);
  };
  const ids = async (query: string) => {
    const b = (await get(`/fhir/v2/Practitioner?${query}&_total=accurate`)).json() as Bundle;
    return { ids: (b.entry ?? []).map((e) => e.resource.id).sort(), total: b.total };
  };
  await loadNdjson('a.ndjson', [pra('c1', 'Quiberon'), pra('c2', 'Quiberonne'), pra('c3', 'Dupont')]);
  t.same(await ids('family:contains=iber'), { ids: ['c1', 'c2'], total: 2 }, 'new values are found');
  // c1 rewritten: its old value stays in string_value, and matches no row.
  await loadNdjson('b.ndjson', [pra('c1', 'Zanzibar')]);
  t.same(await ids('family:contains=iber'), { ids: ['c2'], total: 1 }, 'a rewritten value no longer matches');
  t.same(await ids('family:contains=nzib'), { ids: ['c1'], total: 1 }, 'and its new one does');
  const family = registry.forType('Practitioner').find((p) => p.code === 'family')!.id;
  t.same((await db.sql`select norm from string_value where param = ${family} order by norm`).map((r) => r.norm), ['dupont', 'quiberon', 'quiberonne', 'zanzibar']);
});

t.test("a needle's count reads its own values' rows by lookups, however common it is in another parameter", async (t) => {
  const db = await testDatabase(t);
  const family = registry.forType('Practitioner').find((p) => p.code === 'family')!.id;
  const address = registry.forType('Organization').find((p) => p.code === 'address')!.id;
  // 20,000 distinct family names, 30 of them with "ant"; 40,000 addresses all with it ("santé"):
  // norm's statistics, shared by every parameter, make "%ant%" look like most family names.
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select i, ${family}, case when i <= 30 then 'dantec' || i else 'zed' || i end, 'x' from generate_series(1, 20000) i`;
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select 100000 + i, ${address}, 'centre de sante ' || i, 'x' from generate_series(1, 40000) i`;
  await db.sql`analyze string_idx`;
  await db.sql`analyze string_value`;
  const req = parseSearch([['family:contains', 'ant']], {
    version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(),
    defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
  });
  const { text, params } = flatten(countQuery(await new Planner().plan(runOn(db.sql), req), req));
  t.same(await db.sql.unsafe(text, params as never[]), [{ count: '30' }]);
  const [{ 'QUERY PLAN': [{ Plan: plan }] }] = await db.sql.unsafe(`explain (format json) ${text}`, params as never[]);
  const nodes: { 'Node Type': string; 'Index Name'?: string; 'Index Cond'?: string }[] = [];
  const walk = (n: { Plans?: unknown[] }) => { nodes.push(n as never); (n.Plans ?? []).forEach((c) => walk(c as never)); };
  walk(plan);
  t.notOk(nodes.some((n) => n['Node Type'].startsWith('Hash')), 'no hash of the parameter\'s rows');
  t.ok(nodes.some((n) => n['Index Name'] === 'string_idx_norm' && /norm = v\.norm/.test(n['Index Cond'] ?? '')), 'a lookup of string_idx_norm per value');
});
