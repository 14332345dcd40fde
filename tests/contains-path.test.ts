import t from 'tap';
import { containsNeedle } from '../src/fhir/compile.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import { registry } from '../src/registry/index.ts';
import { SystemLookup } from '../src/store/search.ts';
import { testDatabase } from './helpers/db.ts';

/** How a :contains value picks its path: trigram index (rare needle) or key-order walk (common). */

t.test('needles for the trigram index need three letters or digits in a row, after folding', async (t) => {
  t.equal(containsNeedle('Bvr'), 'bvr');
  t.equal(containsNeedle('Hél'), 'hel', 'accents fold');
  t.equal(containsNeedle('ab'), undefined, 'two letters: no trigram');
  t.equal(containsNeedle('e-l o'), undefined, 'punctuation splits: no run of three');
  t.equal(containsNeedle('de la'), undefined, 'two words of two letters: no run of three');
  t.equal(containsNeedle('de lan'), 'de lan', 'one run of three is enough');
});

t.test('a needle is common when its estimated rows exceed √(page × rows of the parameter)', async (t) => {
  const db = await testDatabase(t);
  const param = registry.forType('Practitioner').find((p) => p.code === 'family')!.id;
  // 20,000 family rows: 6,000 contain "zqk", 30 contain "wvx", the rest neither.
  await db.sql`
    insert into string_idx (rid, param, norm, exact)
    select i, ${param}, case when i <= 6000 then 'azqkb' || i when i <= 6030 then 'cwvxd' || i else 'filler' || i end, 'x'
    from generate_series(1, 20000) i`;
  await db.sql`analyze string_idx`;
  const common = async (needle: string, count: number) => {
    const req = parseSearch([['family:contains', needle], ['_count', String(count)]], {
      version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(),
      defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 100,
    });
    const ctx = await new SystemLookup().prepare(db.sql, req);
    return ctx.commonNeedles!.has(`${param}/${needle}`);
  };
  // √(51 × 20,000) ≈ 1,010 rows: "zqk" (6,000) walks, "wvx" (30) takes the trigram index.
  t.equal(await common('zqk', 50), true, 'common needle: key-order walk');
  t.equal(await common('wvx', 50), false, 'rare needle: trigram index');
  // A page of 1000 moves the crossover to √(1001 × 20,000) ≈ 4,470: 6,000 rows still walk…
  t.equal(await common('zqk', 1000), true);
  // …but with 3,000 rows the larger page makes the trigram path the cheaper one.
  await db.sql`update string_idx set norm = 'filler' || rid where rid > 3000 and rid <= 6000`;
  await db.sql`analyze string_idx`;
  t.equal(await common('zqk', 50), true, '3,000 rows, page of 50: walk');
  t.equal(await common('zqk', 1000), false, '3,000 rows, page of 1000: trigram index');
});
