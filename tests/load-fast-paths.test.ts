import t from 'tap';
import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { compileExtractor, ExtractError } from '../src/fhir/extract.ts';
import { parseFhirDate, type DateRange } from '../src/fhir/date.ts';
import { normalize, normalizeFull } from '../src/fhir/normalize.ts';
import { generate, RESOURCE_TYPES as GENERATED_TYPES, fileName } from '../src/generate/index.ts';
import { KeySet, keyHashes } from '../src/load/key-set.ts';
import { byteLines, expandPaths, ndjsonByteChunks, readEntries } from '../src/load/sources.ts';
import { registry, RESOURCE_TYPES, type ResourceType } from '../src/registry/index.ts';
import { FIXTURES } from './helpers/app.ts';

/**
 * The loader's fast paths against the reference they replace: the compiled extractors against the
 * interpreted `extract`, folding without Unicode tables against `normalizeFull`, the date parser
 * against its previous version (kept below as written), the key set against a Set of strings, and
 * the byte chunks of NDJSON against the file's lines.
 */
const dir = await mkdtemp(path.join(os.tmpdir(), 'fast-paths-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const resourcesOf = async (paths: string[]) => {
  const out: Record<string, unknown>[] = [];
  for (const f of await expandPaths(paths)) {
    for await (const e of readEntries(f)) if (e.kind === 'resource') out.push(e.value as Record<string, unknown>);
  }
  return out;
};

const extractors = new Map(RESOURCE_TYPES.map((type) => [type, compileExtractor(registry.forType(type))]));
const extractOf = (r: Record<string, unknown>) => extractors.get(r.resourceType as ResourceType)!(r);

/** The value at an ExtractError's element path (`a.b[2].c`), or `missing` when the path leads nowhere. */
function at(r: unknown, element: string): unknown {
  let v = r;
  for (const part of element.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (part.startsWith('[')) {
      if (!Array.isArray(v)) return 'missing';
      v = v[Number(part.slice(1, -1))];
    } else {
      if (typeof v !== 'object' || v === null || Array.isArray(v) || !(part in v)) return 'missing';
      v = (v as Record<string, unknown>)[part];
    }
  }
  return v;
}

t.test('the extractor on every fixture and on generated data: rows, each once per parameter', async (t) => {
  const gen = path.join(dir, 'gen');
  await generate({ scale: 0.001, seed: 7, outDir: gen });
  const all = [
    ...(await resourcesOf([FIXTURES])),
    ...(await resourcesOf(GENERATED_TYPES.map((type) => path.join(gen, fileName(type, false))))),
  ].filter((r) => (RESOURCE_TYPES as readonly string[]).includes(r.resourceType as string));
  t.ok(all.length > 4000, `${all.length} resources`);
  let rows = 0;
  let repeated = 0;
  for (const r of all) {
    const out = extractOf(r);
    for (const table of Object.values(out) as unknown[][]) {
      rows += table.length;
      repeated += table.length - new Set(table.map((x) => JSON.stringify(x))).size;
    }
  }
  t.ok(rows > 40000, `${rows} index rows`);
  t.equal(repeated, 0, 'no row twice');
});

t.test('values of the wrong shape where the registry reads: an ExtractError naming that element, nothing else', async (t) => {
  const base = (await resourcesOf([path.join(FIXTURES, 'ans-ig-examples')])).filter((r) => r.resourceType !== 'Person');
  // Every registry path's element, anywhere in a real resource, replaced by values of every JSON type.
  const junk = fc.oneof(
    fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 6 }), fc.constant(''), fc.constant('   '),
    fc.constant([]), fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null), fc.object({ maxDepth: 1 })), { maxLength: 3 }),
    fc.object({ maxDepth: 2 }), fc.constant({ coding: 'x' }), fc.constant({ coding: [{ system: 5, code: 'c' }] }), fc.constant({ reference: 7 }),
    fc.constant({ url: 'u', valueCode: 3 }), fc.constant('2024-13-01'), fc.constant('2024-02-29T10:00:00Z'),
  );
  const mutate = (v: unknown, path: string[], value: unknown): unknown => {
    if (path.length === 0) return value;
    if (Array.isArray(v)) return v.map((x) => mutate(x, path, value));
    if (typeof v !== 'object' || v === null) return v;
    const [head, ...rest] = path;
    return { ...v, [head]: mutate((v as Record<string, unknown>)[head], rest, value) };
  };
  const steps = [...new Set(registry.all.flatMap((p) => p.paths.flatMap((path) => path.filter((s): s is string => typeof s === 'string').map((s) => s.replace('[]', '')))))];
  let failures = 0;
  fc.assert(
    fc.property(fc.constantFrom(...base), fc.array(fc.constantFrom(...steps, 'extension', 'url', 'valueCode', 'coding', 'meta'), { minLength: 1, maxLength: 3 }), junk, (r, path, value) => {
      const m = mutate(r, path, value) as Record<string, unknown>;
      try {
        extractOf(m);
        return true;
      } catch (err) {
        if (!(err instanceof ExtractError)) return false;
        failures++;
        // The element it names is in the resource (a bad part of a value may be named below it).
        return err.element !== '' && at(m, err.element) !== 'missing';
      }
    }),
    { numRuns: 3000, seed: 42 },
  );
  t.ok(failures > 100, `${failures} of the mutations are errors, each naming an element of the resource`);
  t.throws(() => extractOf({ resourceType: 'Practitioner', id: 'x', name: [{ family: 5 }] }), /^name\[0\]\.family: must be a string, found a number$/);
  t.throws(() => extractOf({ resourceType: 'Organization', id: 'x', type: [{ coding: [{ system: 5, code: 'c' }] }] }), /^type\[0\]\.coding\[0\]\.system: must be a string, found a number$/);
});

t.test('folding without Unicode tables gives the reference folding', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }), (s) => normalize(s) === normalizeFull(s)), { numRuns: 5000, seed: 1 });
  const latin = fc.string({ unit: fc.constantFrom(...'aAéÉèçÇ œŒßæ-\'.,;  \t\nÀÿıĳ0123456789@/𝔘😀\u0301'), maxLength: 30 });
  // Twice: the second time from the memo of non-ASCII values.
  fc.assert(fc.property(latin, (s) => normalize(s) === normalizeFull(s) && normalize(s) === normalizeFull(s)), { numRuns: 5000, seed: 2 });
  fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (s) => normalize(s) === normalizeFull(s)), { numRuns: 2000, seed: 3 });
});

/** parseFhirDate as it was written before it was made cheaper (commit a253ffe): the reference. */
const DATE_RE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;
function parseFhirDateBefore(text: string): DateRange | undefined {
  const m = DATE_RE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = mo ? Number(mo) : 1;
  const day = d ? Number(d) : 1;
  if (month < 1 || month > 12) return undefined;
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  if (h !== undefined) {
    if (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59)) return undefined;
  }
  if (zone && zone !== 'Z') {
    const [zh, zm] = zone.slice(1).split(':').map(Number);
    if (zh > 14 || zm > 59) return undefined;
  }
  const offsetMs = !zone || zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60000;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  const low = Date.UTC(year, month - 1, day, h ? Number(h) : 0, mi ? Number(mi) : 0, s ? Number(s) : 0, ms) - offsetMs;
  let high: number;
  if (frac) high = low + 1;
  else if (s !== undefined) high = low + 1000;
  else if (mi !== undefined) high = low + 60000;
  else if (d) high = Date.UTC(year, month - 1, day + 1) - offsetMs;
  else if (mo) high = Date.UTC(year, month, 1);
  else high = Date.UTC(year + 1, 0, 1);
  if (year < 100) return undefined;
  return { low, high };
}

t.test('the date parser gives what it gave before on every shape of date', async (t) => {
  const n = (lo: number, hi: number, w: number) => fc.integer({ min: lo, max: hi }).map((x) => String(x).padStart(w, '0'));
  const date = fc.tuple(n(0, 2999, 4), n(0, 13, 2), n(0, 32, 2), n(0, 25, 2), n(0, 61, 2), n(0, 61, 2), fc.stringMatching(/^\d{1,9}$/),
    fc.constantFrom('Z', '+01:00', '-05:30', '+14:00', '+15:00', '-00:60', ''), fc.integer({ min: 0, max: 7 }))
    .map(([y, mo, d, h, mi, s, frac, zone, cut]) => [y, `-${mo}`, `-${d}`, `T${h}:${mi}`, `:${s}`, `.${frac}`, zone].slice(0, cut).join(''));
  fc.assert(fc.property(date, (text) => JSON.stringify(parseFhirDate(text)) === JSON.stringify(parseFhirDateBefore(text))), { numRuns: 20000, seed: 4 });
  for (const x of ['2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '0099', '2024-04-31', '2024-06-30T23:59:59.999999999+14:00']) {
    t.same(parseFhirDate(x), parseFhirDateBefore(x), x);
  }
});

t.test('the key set holds what a Set of the keys holds, across growth', async (t) => {
  const keys = new KeySet();
  const reference = new Set<string>();
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('Practitioner', 'Organization'), fc.integer({ min: 0, max: 3000 })), { maxLength: 200 }), (adds) => {
      for (const [type, n] of adds) {
        const key = `${type}/${n}`;
        const [h1, h2] = keyHashes(key);
        if (keys.add(h1, h2) !== !reference.has(key)) return false;
        reference.add(key);
      }
      return true;
    }),
    { numRuns: 200, seed: 5 },
  );
  t.ok(reference.size > 500, `${reference.size} keys`);
  const many = new KeySet();
  let fresh = 0;
  for (let i = 0; i < 200_000; i++) if (many.add(...keyHashes(`PractitionerRole/003-${i}`))) fresh++;
  t.equal(fresh, 200_000, 'two hundred thousand ids: each new once');
  let again = 0;
  for (let i = 0; i < 200_000; i++) if (!many.add(...keyHashes(`PractitionerRole/003-${i}`))) again++;
  t.equal(again, 200_000, 'and each known the second time');
  t.same(keyHashes('Practitioner/1'), keyHashes('Practitioner/1'));
  t.not(keyHashes('Practitioner/1').join(), keyHashes('Practitioner/2').join());
});

t.test('NDJSON byte chunks and the lines the workers cut from them (byteLines): whole lines, numbered, plain or gzip, with or without a last newline', async (t) => {
  const lines = Array.from({ length: 2500 }, (_, i) => (i % 7 === 3 ? '' : JSON.stringify({ n: i, s: 'é'.repeat(i % 13), crlf: i % 5 === 0 })) + (i % 5 === 0 ? '\r' : ''));
  for (const [name, last] of [['a.ndjson', '\n'], ['b.ndjson', ''], ['c.ndjson.gz', '\n']] as const) {
    const text = lines.join('\n') + last;
    const f = path.join(dir, name);
    await writeFile(f, name.endsWith('.gz') ? gzipSync(text) : text);
    const seen: string[] = [];
    let next = 1;
    let chunks = 0;
    let bytes = 0;
    for await (const c of ndjsonByteChunks(f, (n) => (bytes += n), 4096)) {
      t.equal(c.first, next, `${name}: chunk ${chunks} starts at line ${next}`);
      // Cut as the workers cut them (byteLines), numbered from the chunk's first line.
      const cut = [...byteLines(c.bytes, c.first, c.lines)];
      const numbers = cut.map((l) => l.n);
      const expected = Array.from({ length: c.lines }, (_, i) => next + i);
      if (numbers.join() !== expected.join()) t.same(numbers, expected, `${name}: line numbers of chunk ${chunks}`);
      const body = c.bytes.toString('utf8');
      if ((body.endsWith('\n') ? body.slice(0, -1) : body).split('\n').length !== c.lines) t.fail(`${name}: line count of chunk ${chunks}`);
      seen.push(...cut.map((l) => l.line));
      next += c.lines;
      chunks++;
    }
    t.ok(chunks > 20, `${name}: ${chunks} chunks`);
    t.same(seen, lines, `${name}: every line once, in order`);
    t.ok(bytes > 0);
  }
});

t.test('NDJSON byte chunks of a plain file own their memory: handed over at once, the next chunks are intact', async (t) => {
  // Lines longer than a chunk (the buffer grows), short ones, multi-byte characters across reads.
  const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ n: i, s: (i % 3 === 0 ? 'é€' : 'x').repeat(i % 10 === 0 ? 9000 : i) }));
  for (const [name, last] of [['own-a.ndjson', '\n'], ['own-b.ndjson', '']] as const) {
    const text = lines.join('\n') + last;
    const f = path.join(dir, name);
    await writeFile(f, text);
    const seen: string[] = [];
    let next = 1;
    let bytes = 0;
    for await (const c of ndjsonByteChunks(f, (n) => (bytes += n), 4096)) {
      t.equal(c.owned, true, `${name}: chunk at line ${c.first} owns its bytes`);
      t.equal(c.first, next);
      // What the bulk loader does with an owned chunk: its memory moves to a worker thread (the
      // buffer is detached here); a reader that kept a view into it would fail or corrupt later chunks.
      const moved = structuredClone(c.bytes, { transfer: [c.bytes.buffer as ArrayBuffer] });
      t.equal(c.bytes.byteLength, 0, 'detached after the transfer');
      const body = Buffer.from(moved.buffer, moved.byteOffset, moved.byteLength).toString('utf8');
      const got = body.endsWith('\n') ? body.slice(0, -1).split('\n') : body.split('\n');
      t.equal(got.length, c.lines, `${name}: line count of the chunk at line ${c.first}`);
      seen.push(...got);
      next += c.lines;
    }
    t.same(seen, lines, `${name}: every line once, in order`);
    t.equal(bytes, Buffer.byteLength(text), `${name}: every byte counted once`);
  }
});
