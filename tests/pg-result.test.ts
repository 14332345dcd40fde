import { test } from 'tap';
import { spawnSync } from 'node:child_process';

/**
 * postgres.js 3.4.9 gave each query's Result (an Array subclass) its five fields with
 * Object.defineProperties in the constructor. With the class's Symbol.species getter, V8 aborted
 * every optimisation of Result (a stable-map dependency invalidated while it compiled) and retried
 * for ever: in the server under load about 20 aborted compilations a second, and Result stayed
 * unoptimised. patches/postgres+3.4.9.patch (applied by `npm install`) keeps the fields private
 * behind accessors. These tests run the Result that `import 'postgres'` loads.
 */
const resultUrl = new URL('./result.js', import.meta.resolve('postgres'));
type Result = unknown[] & { count: number | null; state: unknown; command: string | null; columns: unknown; statement: unknown };
const { default: Result } = (await import(resultUrl.href)) as { default: new () => Result };

test('a Result reads like the non-enumerable fields it had: null at first, writable, never enumerated', async (t) => {
  const r = new Result();
  t.same([r.count, r.state, r.command, r.columns, r.statement], [null, null, null, null, null]);
  r.push({ a: 1 }, { a: 2 });
  r.count = 2;
  r.command = 'SELECT';
  r.columns = [{ name: 'a' }];
  t.equal(r.count, 2);
  t.equal(r.command, 'SELECT');
  t.same(r.columns, [{ name: 'a' }]);
  t.same(Object.keys(r), ['0', '1'], 'only the rows are enumerable');
  const inLoop: string[] = [];
  for (const k in r) inLoop.push(k);
  t.same(inLoop, ['0', '1']);
  t.equal(JSON.stringify(r), '[{"a":1},{"a":2}]');
  t.ok(Array.isArray(r));
  const mapped = r.map((x) => x);
  t.notOk(mapped instanceof Result, 'map, filter, slice still give plain arrays (Symbol.species)');
  t.equal(Object.getPrototypeOf(r.slice(0)), Array.prototype);
  t.equal(new Result().count, null, 'each Result has its own fields');
});

test('V8 optimises Result once instead of aborting and retrying for ever', async (t) => {
  // The allocation pattern of a query's result: construct, push a row, set the fields.
  const script = `
    const { default: Result } = await import(${JSON.stringify(resultUrl.href)});
    function make(i) {
      const r = new Result();
      r.push([i]);
      r.count = i; r.command = 'SELECT'; r.state = {}; r.statement = {}; r.columns = [];
      return r;
    }
    let sink = 0;
    for (let i = 0; i < 1000000; i++) sink += make(i).length;
    console.log('sink', sink);`;
  const run = spawnSync(process.execPath, ['--trace-opt', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /sink \d+/);
  // The trace must be there: a V8 that worded it otherwise would make the count below meaningless.
  t.match(run.stdout, /compiling method .*JSFunction (Result|make) /, 'V8 traced its compilations');
  const aborted = run.stdout.split('\n').filter((l) => /aborted optimizing .*JSFunction (Result|make) /.test(l));
  // Unpatched: about 20 here (1.8 s; in the server it goes on for as long as queries run); patched: none (0.4 s).
  t.ok(aborted.length <= 3, `${aborted.length} aborted optimisations of Result or of the code that builds it`);
});
