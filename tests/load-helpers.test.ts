import { test } from 'tap';
import { ordered } from '../src/load/ordered.ts';
import { MessageChannel } from 'node:worker_threads';
import { transferList } from '../src/load/transfer.ts';
import { BoundedWriter } from '../src/load/writer.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('ordered: results in input order although the runs end out of order, at most `ahead` at once', async (t) => {
  let running = 0;
  let most = 0;
  const delays = [30, 5, 20, 1, 15, 0, 25, 2, 10, 8];
  const ended: number[] = [];
  const run = async (i: number) => {
    running++;
    most = Math.max(most, running);
    await sleep(delays[i]);
    running--;
    ended.push(i);
    return i * 10;
  };
  const out: number[] = [];
  for await (const r of ordered(delays.keys(), run, 3)) out.push(r);
  t.same(out, delays.map((_, i) => i * 10));
  t.notSame(ended, [...delays.keys()], 'the runs did end out of order');
  t.equal(most, 3);
});

test('ordered: a failed run is thrown at its turn, after the results before it', async (t) => {
  const out: number[] = [];
  const run = async (i: number) => {
    await sleep(i === 2 ? 0 : 10);
    if (i === 2) throw new Error('run 2 failed');
    return i;
  };
  await t.rejects(async () => {
    for await (const r of ordered([0, 1, 2, 3, 4], run, 4)) out.push(r);
  }, /run 2 failed/);
  t.same(out, [0, 1]);
});

test('ordered: with ahead 1 and a synchronous run, each item waits for the previous result to be taken', async (t) => {
  const log: string[] = [];
  for await (const r of ordered(['a', 'b'], (x) => (log.push(`run ${x}`), x), 1)) log.push(`took ${r}`);
  t.same(log, ['run a', 'took a', 'run b', 'took b']);
});

test('BoundedWriter: at most `width` jobs at once; a job waits for one in flight that shares a key', async (t) => {
  const w = new BoundedWriter(2);
  let running = 0;
  let most = 0;
  const log: string[] = [];
  const job = (name: string, ms: number) => async () => {
    running++;
    most = Math.max(most, running);
    await sleep(ms);
    log.push(name);
    running--;
  };
  await w.submit(job('a', 30), new Set(['x']));
  await w.submit(job('b', 1), new Set(['y']));
  await w.submit(job('c', 1), new Set(['x'])); // waits for a
  await w.submit(job('d', 1));
  await w.drain();
  t.equal(most, 2);
  t.ok(log.indexOf('a') < log.indexOf('c'), 'the later write of key x ends after the earlier one');
});

test('BoundedWriter: the first failure is thrown by the next submit or by drain', async (t) => {
  const w = new BoundedWriter(1);
  await w.submit(async () => {
    throw new Error('batch failed');
  });
  await t.rejects(w.submit(async () => {}), /batch failed/);
  await t.rejects(w.drain(), /batch failed/);
});

test('transferList: memory a view owns is moved, shared memory (Node\'s pool of small Buffers, a slice) is copied; posting never throws', async (t) => {
  const owned = new Uint8Array(64 * 1024);
  const pooled = Buffer.from('a small chunk');
  const slice = new Uint8Array(owned.buffer, 10, 20);
  t.same(transferList(owned), [owned.buffer], 'a view of all its memory');
  t.same(transferList(pooled), [], 'a small Buffer of the pool (Node 22 and later refuse to transfer it)');
  t.same(transferList(slice), [], 'a slice of larger memory');
  const { port1, port2 } = new MessageChannel();
  const got = new Promise<Buffer[]>((resolve) => port2.once('message', (m: Buffer[]) => resolve(m)));
  t.doesNotThrow(() => port1.postMessage([pooled, owned], transferList(pooled, owned)));
  const [a, b] = await got;
  t.equal(Buffer.from(a).toString(), 'a small chunk', 'the pooled bytes arrive, copied');
  t.equal(b.byteLength, 64 * 1024, 'the owned bytes arrive');
  t.equal(owned.byteLength, 0, 'moved: no longer usable here');
  t.equal(pooled.toString(), 'a small chunk', 'still usable here');
  port1.close();
  port2.close();
});
