/**
 * An import stages its lines and a first import maps them a chunk at a time, by worker threads when
 * the input is large (src/opendata/pool.ts): chunks of staged rows never split a person's lines, and
 * the threads' directory is the one thread's, resource for resource.
 */
import t from 'tap';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { lastGroupStart, rowChunks } from '../src/opendata/map-chunk.ts';
import { importOpenData } from '../src/opendata/import.ts';
import { testDatabase } from './helpers/db.ts';
import { storedResources } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';

const bytes = (s: string) => Buffer.from(s);
const text = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString();

t.test('lastGroupStart: the first row of the last complete row\'s value', async (t) => {
  t.equal(lastGroupStart(bytes('a\t1\nb\t1\nb\t2\n')), 4, 'b starts at its first row');
  t.equal(lastGroupStart(bytes('a\t1\nb\t1\nb\t2\nb\t3')), 4, 'an incomplete last row goes with the rest');
  t.equal(lastGroupStart(bytes('a\t1\nab\t1\n')), 4, 'a value that is a prefix of another is another value');
  t.equal(lastGroupStart(bytes('b\t1\nb\t2\n')), 0, 'one value only: nothing to cut after');
  t.equal(lastGroupStart(bytes('b\t1')), 0, 'no complete row');
  t.equal(lastGroupStart(bytes('\nb\t1\n')), 1, 'an empty first row');
});

t.test('rowChunks: every value\'s rows in one chunk, nothing lost or repeated', async (t) => {
  // Values with 1 to 40 rows of varied lengths, read in pieces of 1 to 97 bytes, cut at 256 bytes.
  let rows = '';
  for (let v = 0; v < 300; v++) {
    for (let r = 0; r < 1 + ((v * 7) % 40); r++) rows += `P${String(v).padStart(5, '0')}\t${'x'.repeat((v * 13 + r * 5) % 60)}\t${r}\n`;
  }
  const input = bytes(rows);
  const pieces = async function* () {
    for (let at = 0, n = 1; at < input.length; at += n, n = 1 + ((n * 31) % 97)) yield input.subarray(at, at + n);
  };
  const chunks: string[] = [];
  for await (const c of rowChunks(pieces(), 256)) chunks.push(text(c));
  t.equal(chunks.join(''), rows, 'the chunks are the rows, in order');
  t.ok(chunks.length > 50, `cut into ${chunks.length} chunks`);
  const chunkOf = new Map<string, number>();
  const split: string[] = [];
  chunks.forEach((c, i) => {
    for (const row of c.split('\n').filter(Boolean)) {
      const v = row.slice(0, row.indexOf('\t'));
      if (chunkOf.has(v) && chunkOf.get(v) !== i) split.push(v);
      chunkOf.set(v, i);
    }
  });
  t.same(split, [], 'no value split across chunks');
  t.equal(chunkOf.size, 300, 'every value');
});

t.test('a first import staged and mapped by two worker threads stores what one thread stores', async (t) => {
  const dir = tmpDir(t, 'map-chunk');
  await generateOpenData({ scale: 0.002, seed: 11, day: 0, outDir: dir, badShare: 0 });
  const now = new Date('2026-11-01T00:00:00Z');
  const stored = [];
  for (const workers of [0, 2]) {
    const db = await testDatabase(t);
    const summary = await importOpenData(db.sql, [dir], { workers, now, onReject: () => {}, onSkip: () => {} });
    t.equal(summary.path, 'bulk', `workers ${workers}: a first import`);
    stored.push(await storedResources(db));
  }
  t.ok(stored[0].size > 4000, `${stored[0].size} resources`);
  t.same(stored[1], stored[0], 'the same resources, versions and contents');
});
