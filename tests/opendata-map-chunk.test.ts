/**
 * An import stages its lines and a first import maps them a chunk at a time, by worker threads when
 * the input is large or `--workers` says so (src/opendata/pool.ts): chunks of staged rows never split
 * a person's lines, and the threads' directory is the one thread's, resource for resource.
 */
import t from 'tap';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { lastGroupStart, rowChunks } from '../src/opendata/map-chunk.ts';
import { testDatabase } from './helpers/db.ts';
import { canonical, importCli, storedResources, withoutVersion } from './helpers/import.ts';
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

t.test('npm run import -- --workers 2 stores what --workers 0 stores: two threads staging and mapping, or none', async (t) => {
  const dir = tmpDir(t, 'map-chunk');
  await generateOpenData({ scale: 0.002, seed: 11, day: 0, outDir: dir, badShare: 0 });
  const stored = [];
  for (const workers of ['0', '2']) {
    const db = await testDatabase(t);
    const r = await importCli(db, ['--workers', workers, dir]);
    t.equal(r.code, 0, `--workers ${workers}`, { stderr: r.stderr });
    t.match(r.stdout, /first import \(bulk load\)/, `--workers ${workers}: a first import`);
    // Each run dates what it writes: lastUpdated aside, every resource and its version alike.
    stored.push([...(await storedResources(db))].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, x]) => [key, x.version, canonical(withoutVersion(x.content))]));
  }
  t.ok(stored[0].length > 4000, `${stored[0].length} resources`);
  t.same(stored[1], stored[0], 'the same resources, versions and contents');
});

t.test('--workers takes 0 to 16', async (t) => {
  const db = await testDatabase(t);
  for (const bad of ['-1', '17', 'two']) {
    const r = await importCli(db, [`--workers=${bad}`, 'nowhere']);
    t.equal(r.code, 1, `--workers ${bad}: exit code 1`);
    t.equal(r.stderr.trim(), `--workers must be an integer between 0 and 16, got "${bad}"`);
  }
});
