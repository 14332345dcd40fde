import t from 'tap';
import { parseSearch } from '../src/fhir/parse.ts';
import { registry, type ResourceType } from '../src/registry/index.ts';
import { classify } from '../src/store/classify.ts';
import { decideExecution } from '../src/store/execution.ts';
import { Lane } from '../src/store/lane.ts';

/** A lane: bounded width, first come first served; and which searches are heavy. */
const tick = () => new Promise((r) => setImmediate(r));

t.test('at most `width` tasks run at once, the others start in arrival order', async (t) => {
  const lane = new Lane(2);
  const started: number[] = [];
  const gates: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const task = (i: number) =>
    lane.admit(async () => {
      started.push(i);
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => gates.push(r));
      running--;
      return i;
    });
  const all = [0, 1, 2, 3, 4].map(task);
  await tick();
  t.same(started, [0, 1], 'two start at once');
  t.same(lane.load, { active: 2, waiting: 3 });
  gates.shift()!();
  await tick();
  await tick();
  t.same(started, [0, 1, 2], 'the first waiting one takes the freed slot');
  while (gates.length || started.length < 5) {
    gates.shift()?.();
    await tick();
  }
  t.same(await Promise.all(all), [0, 1, 2, 3, 4]);
  t.equal(most, 2, 'never more than the width');
  t.same(started, [0, 1, 2, 3, 4], 'in arrival order');
  t.same(lane.load, { active: 0, waiting: 0 });
});

t.test('a failing task frees its slot and its error reaches its caller', async (t) => {
  const lane = new Lane(1);
  const failed = lane.admit(async () => {
    throw new Error('boom');
  });
  const next = lane.admit(async () => 'next');
  await t.rejects(failed, /boom/);
  t.equal(await next, 'next');
  t.same(lane.load, { active: 0, waiting: 0 });
});

const req = (type: ResourceType, q: string) =>
  parseSearch([...new URLSearchParams(q)], {
    version: 'v2', type, registry, strict: false, bases: [], now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 50,
  });

t.test('heavy: pages of more than 100, :contains, exact totals that must be counted', async (t) => {
  const counted = ['active=true&name=mar&_total=accurate', 'family=martin&_summary=count', 'name=mar&active=true&_count=0', '_lastUpdated=ge2020-01-01T10:00:00Z&_total=accurate'];
  for (const q of ['_count=1000', '_count=101&name=mar', 'name:contains=art', 'family:contains=ar', ...counted]) {
    t.equal(classify(req('Practitioner', q)), 'heavy', q);
  }
  t.equal(classify(req('PractitionerRole', 'practitioner.name:contains=art')), 'heavy', 'a :contains in a chain');
  // Totals the write path keeps are read: one counted value, or a type.
  const kept = ['active=true&_total=accurate', 'active=true&_summary=count', 'name=mar&_count=0', '_lastUpdated=ge2020-01-01&_total=accurate', '_summary=count'];
  for (const q of ['identifier=10001010007', 'name=mar', '_count=100', 'qualification-code=SM54&_count=50', '_total=estimate', ...kept]) {
    t.not(classify(req('Practitioner', q)), 'heavy', q);
  }
});

t.test('nearby: near alone, within 20 km, nearest first; anything else near is a page', async (t) => {
  for (const q of ['near=48.8566|2.3522|2|km', 'near=48.8566|2.3522', 'near=48.8566|2.3522|20', 'near=48.8566|2.3522|12|mi', 'near=48.8566|2.3522|2&_include=Location:organization']) {
    t.equal(classify(req('Location', q)), 'nearby', q);
  }
  for (const q of ['near=48.8566|2.3522|21', 'near=48.8566|2.3522|2&status=active', 'near=48.8566|2.3522|2&_sort=name', 'near=48.8566|2.3522|2&organization.type=620', 'near=48.8566|2.3522|2&near=48.86|2.35|1']) {
    t.equal(classify(req('Location', q)), 'page', q);
  }
  t.equal(classify(req('Location', 'near=48.8566|2.3522|2&_total=accurate')), 'heavy', 'an exact total asked for');
  t.equal(classify(req('PractitionerRole', 'location.near=48.8566|2.3522|2')), 'page', 'through a chain: it selects, no order by distance');
  const policy = { laneWidth: 2, deadlineMs: 0, countBudgetMs: 500 };
  const nearby = decideExecution(req('Location', 'near=48.8566|2.3522|2'), policy);
  t.same({ lane: nearby.lane, totalBeside: nearby.totalBeside }, { lane: undefined, totalBeside: true }, 'nearby: no lane, its first page counted like a page');
  t.equal(decideExecution(req('Location', 'near=48.8566|2.3522|50'), policy).lane, 'page', 'a wider circle waits in the page lane');
});
