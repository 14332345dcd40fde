import { test } from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * postgres.js 3.4.9 keeps a pool's idle connections in a Queue whose array only empties when every
 * connection is taken at once. A pool of two or more connections at low concurrency never gets
 * there: each query took one slot from the front and gave one back at the end, so the array grew
 * by a slot per query for as long as the process lived, and `remove` (run on every query) scanned
 * all of it (300 k queries on a pool of 2: 136 → 260 µs per query). patches/postgres+3.4.9.patch
 * (applied by `npm install`, postinstall) drops the taken slots once they are half of the array.
 * These tests run the Queue that `import 'postgres'` loads.
 */
type Queue<T> = { length: number; push(x: T): T; shift(): T | undefined; remove(x: T): T | null };
const queueUrl = new URL('./queue.js', import.meta.resolve('postgres'));
const { default: Queue } = (await import(queueUrl.href)) as { default: <T>(initial?: T[]) => Queue<T> };

test('the patched Queue behaves as a FIFO with removal (random operations against a model)', async (t) => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const q = Queue<number>([1, 2, 3]);
  const model = [1, 2, 3];
  let next = 4;
  let mismatches = 0;
  for (let i = 0; i < 200_000; i++) {
    const r = rnd();
    if (r < 0.45) {
      q.push(next);
      model.push(next++);
    } else if (r < 0.85) {
      if (model.length === 0) continue; // postgres.js checks length before shifting
      if (q.shift() !== model.shift()) mismatches++;
    } else {
      const x = model.length && rnd() < 0.7 ? model[Math.floor(rnd() * model.length)] : -1;
      const at = model.indexOf(x);
      if (at >= 0) model.splice(at, 1);
      if (q.remove(x) !== (at >= 0 ? x : null)) mismatches++;
    }
    if (q.length !== model.length) mismatches++;
  }
  t.equal(mismatches, 0, 'same answers and lengths as an array');
  const rest: number[] = [];
  while (q.length) rest.push(q.shift()!);
  t.same(rest, model, 'same order at the end');
});

test('a queue that is never empty does not grow (a pool of idle connections, one taken at a time)', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const a = { id: 'a' };
  const b = { id: 'b' };
  const q = Queue([a, b]);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 2_000_000; i++) {
    // handler: open.shift(), then move(c, busy) runs open.remove(c), a scan of the whole array
    // (left out here: unpatched, 2 M of them would take hours), then onopen: open.push(c)
    q.push(q.shift()!);
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // unpatched: an array of 2 M slots stays reachable (16 MB)
  t.ok(grown < 4 * 1024 * 1024, `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MB after 2 M cycles`);
  t.equal(q.length, 2);
  t.equal(q.remove(a), a, 'remove still finds a queued element');
  t.equal(q.shift(), b);
});
