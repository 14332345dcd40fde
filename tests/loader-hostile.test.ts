import t from 'tap';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../src/db.ts';
import { clipReason, echo, ECHO_MAX } from '../src/load/echo.ts';
import { tooDeepAt } from '../src/load/sources.ts';
import { registry } from '../src/registry/index.ts';
import { MAX_DEPTH, prepareResource, TOO_DEEP } from '../src/fhir/resource.ts';
import { loaderCli } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';

/**
 * Hostile input given to the loader as users run it (the CLI in a child process, on the test
 * database): one bad resource is rejected with its file:line and the load goes on.
 */
const dir = await mkdtemp(path.join(os.tmpdir(), 'loader-hostile-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const pra = (id: string, family: string, extra: Record<string, unknown> = {}) => ({ resourceType: 'Practitioner', id, name: [{ family }], ...extra });
const line = (v: unknown) => `${JSON.stringify(v)}\n`;
const write = async (name: string, content: string | Buffer) => {
  const f = path.join(dir, name);
  await mkdir(path.dirname(f), { recursive: true });
  await writeFile(f, content);
  return f;
};
/** A Practitioner with an element nesting `depth` arrays (its own object is one more level). */
const deepText = (id: string, depth: number) => `{"resourceType":"Practitioner","id":"${id}","deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;

const db = await testDatabase(t);
/** A bulk load needs an empty database: every run starts from one. */
const empty = () => db.sql`truncate resource, token_idx, string_idx, date_idx, reference_idx`;
const stored = async () => (await db.sql<{ id: string; family: string }[]>`select id, content->'name'->0->>'family' as family from resource order by id`).map((r) => `${r.id}:${r.family}`);

// Good lines around a 10,000-deep resource and a line of Latin-1 bytes; a good line with a real
// U+FFFD (valid UTF-8) and one stored as it is (versionId 1 and a lastUpdated: the raw-bytes path).
const mixed = await write(
  'mixed.ndjson',
  Buffer.concat([
    Buffer.from(line(pra('m1', 'Un'))),
    Buffer.from(`${deepText('m-deep', 10000)}\n`),
    Buffer.from(line(pra('m2', 'Deux'))),
    Buffer.from(line(pra('m-latin1', 'Tr\xe8s')), 'latin1'),
    Buffer.from(line(pra('m3', 'Tr\uFFFDis'))),
    Buffer.from(line(pra('m4', 'Quatre', { meta: { versionId: '1', lastUpdated: '2024-05-06T07:08:09Z' } }))),
  ]),
);
// The same faults in .json files (read whole): reported at the line where they are.
const deepJson = await write('deep.json', `{\n"resourceType": "Bundle", "type": "collection",\n"entry": [{"resource": ${deepText('j-deep', 10000)}}]}\n`);
const latin1Json = await write('latin1.json', Buffer.from(`{\n"resourceType": "Practitioner",\n"id": "j-latin1", "name": [{"family": "Tr\xe8s"}]}\n`, 'latin1'));
const goodJson = await write('good.json', JSON.stringify(pra('j1', 'Json')));
const GOOD = ['j1:Json', 'm1:Un', 'm2:Deux', 'm3:Tr\uFFFDis', 'm4:Quatre'];
const REJECTS = [
  /mixed\.ndjson:2: nested deeper than 64\n/,
  /mixed\.ndjson:4: not valid UTF-8\n/,
  /deep\.json:3: nested deeper than 64\n/,
  /latin1\.json:3: not valid UTF-8\n/,
];

for (const mode of [[], ['--workers', '2'], ['--bulk'], ['--bulk', '--workers', '2']]) {
  t.test(`${mode.join(' ') || 'incremental'}: the good lines are loaded, the deep and the non-UTF-8 ones rejected with file:line, exit 2`, async (t) => {
    await empty();
    const r = await loaderCli(db, [...mode, mixed, deepJson, latin1Json, goodJson]);
    t.equal(r.code, 2, r.stderr);
    for (const re of REJECTS) t.match(r.stderr, re);
    t.notMatch(r.stderr, /load failed|call stack/);
    t.match(r.stdout, /4 file\(s\): 5 inserted, .*4 rejected/);
    t.same(await stored(), GOOD, 'every good line stored, nothing of the bad ones');
    const [raw] = await db.sql`select content->'meta'->>'versionId' as v, content->'meta'->>'lastUpdated' as lu from resource where id = 'm4'`;
    t.same(raw, { v: '1', lu: '2024-05-06T07:08:09Z' });
  });
}

t.test('bad option values are refused with one line, before anything is read or written', async (t) => {
  await empty();
  const bad: [string, string, string][] = [
    ['--workers', '17', '--workers must be an integer between 0 and 16, got "17"'],
    ['--workers', 'two', '--workers must be an integer between 0 and 16, got "two"'],
    ['--concurrency', '0', '--concurrency must be an integer between 1 and 16, got "0"'],
    ['--batch-size', '1.5', '--batch-size must be an integer between 1 and 100000, got "1.5"'],
  ];
  for (const [option, value, message] of bad) {
    const r = await loaderCli(db, [`${option}=${value}`, goodJson]);
    t.equal(r.code, 1, `${option} ${value}: exit code 1`);
    t.equal(r.stderr.trim(), message);
  }
  t.same(await stored(), [], 'nothing loaded');
});

t.test('--strict: a file with a deep or a non-UTF-8 line is rejected whole, the others are loaded', async (t) => {
  const good = await write('strict/good.ndjson', line(pra('g1', 'Bon')) + line(pra('g2', 'Bien')));
  const utf8Only = await write('strict/utf8.ndjson', Buffer.concat([Buffer.from(line(pra('u1', 'Un'))), Buffer.from(line(pra('u2', 'Tr\xe8s')), 'latin1')]));
  const deepOnly = await write('strict/deep.ndjson', `${line(pra('d1', 'Un'))}${deepText('d2', 10000)}\n`);
  await empty();
  const r = await loaderCli(db, ['--strict', good, utf8Only, deepOnly]);
  t.equal(r.code, 2, r.stderr);
  t.match(r.stderr, /strict\/utf8\.ndjson:2: not valid UTF-8\n/);
  t.match(r.stderr, /strict\/utf8\.ndjson: file rejected \(--strict\)/);
  t.match(r.stderr, /strict\/deep\.ndjson:2: nested deeper than 64\n/);
  t.match(r.stderr, /strict\/deep\.ndjson: file rejected \(--strict\)/);
  t.same(await stored(), ['g1:Bon', 'g2:Bien'], 'nothing of the rejected files');

  await empty();
  const mixedStrict = await loaderCli(db, ['--strict', good, mixed]);
  t.equal(mixedStrict.code, 2, mixedStrict.stderr);
  t.match(mixedStrict.stderr, /mixed\.ndjson: file rejected \(--strict\)/);
  t.same(await stored(), ['g1:Bon', 'g2:Bien']);

  await empty();
  const bulk = await loaderCli(db, ['--strict', '--bulk', good, utf8Only]);
  t.equal(bulk.code, 2, bulk.stderr);
  t.match(bulk.stderr, /strict\/utf8\.ndjson:2: not valid UTF-8\n/);
  t.same(await stored(), [], '--bulk --strict: nothing of the load');
});

/** Ids made only of dots; ids and other values of 100 KB. */
const long = 'x'.repeat(100_000);
const file = await write(
  'ids.ndjson',
  [pra('.', 'A'), pra('..', 'B'), pra('...', 'C'), pra('a..b', 'Ok'), pra('.5', 'Ok'), pra(long, 'Long'), pra('z', 'Z', { meta: { lastUpdated: long } })].map(line).join(''),
);
const bundle = await write('del.json', JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [{ request: { method: 'DELETE', url: `Practitioner/..` } }, { request: { method: 'DELETE', url: `Practitioner/${long}` } }] }));
for (const mode of [[], ['--bulk']]) {
  t.test(`${mode.join(' ') || 'incremental'}: ids made only of dots are rejected; an id of 100 KB is echoed cut`, async (t) => {
    await empty();
    const r = await loaderCli(db, [...mode, file, bundle]);
    t.equal(r.code, 2, r.stderr);
    t.match(r.stderr, /ids\.ndjson:1: invalid id "\."/);
    t.match(r.stderr, /ids\.ndjson:2: invalid id "\.\."/);
    t.match(r.stderr, /ids\.ndjson:3: invalid id "\.\.\."/);
    t.match(r.stderr, /del\.json#entry\[0\]: DELETE request\.url must be <Type>\/<id> of a stored type, got "Practitioner\/\.\."/);
    t.same(await stored(), ['.5:Ok', 'a..b:Ok'], 'ids with dots and other characters are kept');
    const lines = r.stderr.split('\n');
    const cut = `"${'x'.repeat(ECHO_MAX - 1)}…"`;
    t.ok(lines.find((l) => l.startsWith(`${file}:6: invalid id `))?.includes(cut), 'the id, cut');
    t.ok(lines.find((l) => l.startsWith(`${file}:7: meta.lastUpdated `))?.includes(cut), 'any echoed value, cut');
    t.ok(lines.find((l) => l.startsWith(`${bundle}#entry[1]: DELETE`))?.endsWith(`"Practitioner/${'x'.repeat(ECHO_MAX - 14)}…"`), 'a DELETE url, cut');
    const longest = Math.max(...lines.map((l) => l.length));
    t.ok(longest < 400, `no line of the report is long (longest ${longest})`);
  });
}

t.test('files of other extensions are skipped, said once each; the rest loads', async (t) => {
  const txt = await write('skip/notes.txt', line(pra('t1', 'Texte')));
  const inDir = await write('skip/dir/readme.md', '# not data');
  const data = await write('skip/dir/data.ndjson', line(pra('k1', 'Garde')));
  await empty();
  const r = await loaderCli(db, [txt, path.dirname(data)]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr.split(`${txt}: skipped: not .json, .ndjson, .json.gz or .ndjson.gz\n`).length, 2, 'the .txt named: said once');
  t.equal(r.stderr.split(`${inDir}: skipped: not .json, .ndjson, .json.gz or .ndjson.gz\n`).length, 2, 'a file found in a directory: said once');
  t.match(r.stdout, /1 file\(s\) \(2 skipped\): 1 inserted/);
  t.same(await stored(), ['k1:Garde'], 'the .txt was not read');

  const only = await loaderCli(db, [txt]);
  t.equal(only.code, 1, 'nothing to load is a failure');
  t.match(only.stderr, /notes\.txt: skipped: .*\nno file to load\n/);

  const emptyDir = path.dirname(await write('skip/empty/.keep', ''));
  const none = await loaderCli(db, [emptyDir]);
  t.same({ code: none.code, said: /no file to load/.test(none.stderr) }, { code: 1, said: true }, 'an empty folder: nothing to load, a failure too');
});

t.test('the depth scan: exact at the limit, blind to brackets in strings, equal to the depth of the parsed value', async (t) => {
  const nest = (n: number) => `${'['.repeat(n - 1)}{"a":1}${']'.repeat(n - 1)}`;
  t.equal(tooDeepAt(nest(MAX_DEPTH)), -1, `${MAX_DEPTH} levels pass`);
  t.equal(tooDeepAt(nest(MAX_DEPTH + 1)), MAX_DEPTH, `${MAX_DEPTH + 1} levels: the bracket that goes too deep`);
  const inString = JSON.stringify({ s: '['.repeat(200), t: '\\"{{{{', u: ['"[[[' + '\\'.repeat(3)] });
  t.equal(tooDeepAt(inString), -1, 'brackets, quotes and backslashes inside strings do not count');
  // Random values around the limit, strings full of JSON's specials: the scan agrees with the
  // depth of the value the text stands for.
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const depthOf = (v: unknown): number => (typeof v === 'object' && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
  const leaf = () => ['x', '"[{', '\\', 1, null, '}]\\"', [], {}, ['[', { '{': ']' }]][rnd(9)];
  /** A value of exactly `d` levels: a spine of objects and arrays, each level with a few leaves beside. */
  const gen = (d: number): unknown => {
    if (d === 0) return leaf();
    const kids = [gen(d - 1), ...Array.from({ length: rnd(3) }, leaf)].sort(() => rnd(3) - 1);
    return rnd(2) ? kids : Object.fromEntries(kids.map((k, i) => [`k${i}"[\\`, k]));
  };
  let deep = 0;
  for (let i = 0; i < 300; i++) {
    const v = gen(MAX_DEPTH - 4 + rnd(8));
    const over = depthOf(v) > MAX_DEPTH;
    deep += over ? 1 : 0;
    t.equal(tooDeepAt(JSON.stringify(v)) >= 0, over, `value ${i} (depth ${depthOf(v)})`);
  }
  t.ok(deep > 0 && deep < 300, `both sides of the limit were tried (${deep} too deep)`);
});

t.test('a parsed value given to the write path without its text is checked for depth there', async (t) => {
  const value = JSON.parse(deepText('v1', 10000));
  t.throws(() => prepareResource(registry, value), { message: TOO_DEEP });
  const ok = JSON.parse(deepText('v2', MAX_DEPTH - 1));
  t.equal(prepareResource(registry, ok).id, 'v2', `${MAX_DEPTH} levels with the resource's own object pass`);
});

t.test('echo and clipReason: short values whole, long ones cut with a mark', async (t) => {
  t.equal(echo('abc'), '"abc"');
  t.equal(echo('é'.repeat(200)), `"${'é'.repeat(ECHO_MAX - 1)}…"`);
  t.equal(echo({ a: 1 }), '{"a":1}');
  t.equal(echo(undefined), 'undefined');
  t.equal(echo(`${'x'.repeat(ECHO_MAX - 2)}😀`).length, ECHO_MAX + 1, 'never half a surrogate pair');
  t.equal(clipReason('missing id'), 'missing id');
  const reason = clipReason(`invalid id "${'y'.repeat(5000)}" (1–64 of A-Z a-z 0-9 - .)`);
  t.equal(reason, `invalid id "${'y'.repeat(ECHO_MAX - 1)}…" (1–64 of A-Z a-z 0-9 - .)`);
  t.ok(clipReason(`is not a valid FHIR date: "a"b${'z'.repeat(5000)}"`).length <= 4 * ECHO_MAX + 1, 'unbalanced quotes: the whole reason cut');
});
