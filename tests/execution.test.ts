/**
 * One execution decision (src/store/execution.ts): a search's class, lane, pools, deadline and
 * count budget, decided once from the parsed request; its statements run through the runner on
 * those pools; storage reports typed failures and the HTTP layer alone answers them.
 */
import path from 'node:path';
import t from 'tap';
import { storageFailure } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { connectUrl } from '../src/db.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import { stmt } from '../src/fhir/statement.ts';
import { registry, type ResourceType } from '../src/registry/index.ts';
import { DeadlineExceeded, SearchTimedOut } from '../src/store/errors.ts';
import { decideExecution, executionPolicy, searchPoolOptions, type Execution } from '../src/store/execution.ts';
import { statements } from '../src/store/runner.ts';
import { FIXTURES, testApp } from './helpers/app.ts';
import { API_KEY } from './helpers/search.ts';

const req = (type: ResourceType, q: string) =>
  parseSearch([...new URLSearchParams(q)], {
    version: 'v2', type, registry, strict: false, bases: ['http://fhir.test/fhir/v1', 'http://fhir.test/fhir/v2'],
    now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 50,
  });
const POLICY = executionPolicy({ heavySearches: 8, workers: 2, statementTimeoutMs: 1000, totalBudgetMs: 20 });
const decide = (type: ResourceType, q: string) => decideExecution(req(type, q), POLICY);
/** What differs between searches: class, lane, pools, whether a first page's total is sought beside it. */
const shape = (x: Execution) => [x.class, x.lane, x.pool, x.includePool, x.totalBeside];

t.test('the policy: computed once from the configuration', async (t) => {
  t.same(POLICY, { laneWidth: 4, deadlineMs: 4 * 1000 + 5000, countBudgetMs: 20 }, 'HEAVY_SEARCHES shared by the workers, four statements and a margin, TOTAL_BUDGET_MS');
  t.equal(executionPolicy({ heavySearches: 1, workers: 4, statementTimeoutMs: 0, totalBudgetMs: 0 }).laneWidth, 1, 'a lane is never closed');
  t.equal(executionPolicy({ heavySearches: 1, workers: 1, statementTimeoutMs: 0, totalBudgetMs: 0 }).deadlineMs, 0, 'no statement timeout: no deadline');
  const config = loadConfig({ HEAVY_SEARCHES: '4', WORKERS: '2', TOTAL_BUDGET_MS: '30', DB_POOL_SIZE: '6' });
  t.has(searchPoolOptions(config, 2), { heavyMax: 4, countTimeoutMs: 30, max: 6, genericMax: 6 }, 'pools as wide as the lanes, counts stopped at the budget');
  t.equal(searchPoolOptions(loadConfig({ TOTAL_BUDGET_MS: '0' })).countTimeoutMs, undefined, 'no budget: the pool keeps the statement timeout');
});

t.test('the decision for each class of search', async (t) => {
  t.same(shape(decide('Practitioner', 'identifier=10001010007')), ['lookup', undefined, 'generic', 'sql', false], 'a lookup: no lane, planned once, includes beside on the planned pool, no total beside');
  t.same(shape(decide('PractitionerRole', 'practitioner.identifier=1&_include=PractitionerRole:organization')), ['lookup', undefined, 'generic', 'sql', false], 'through a chain');
  t.same(shape(decide('Practitioner', 'family=martin')), ['page', 'page', 'sql', 'sql', true], 'a page: its lane, planned for its values');
  t.same(shape(decide('Practitioner', '')), ['page', 'page', 'generic', 'sql', true], 'no condition: planned once, but not a lookup');
  t.same(shape(decide('Practitioner', 'identifier=10001010007&_sort=family')), ['page', 'page', 'sql', 'sql', true], 'sorted: planned for its values');
  t.same(shape(decide('Practitioner', 'name:contains=art')), ['heavy', 'heavy', 'heavy', 'heavy', true], ':contains: heavy');
  t.same(shape(decide('Practitioner', 'identifier=1&_count=500')), ['heavy', 'heavy', 'heavy', 'heavy', true], 'a page of more than 100');
  t.same(shape(decide('Practitioner', 'family=martin&_total=accurate')), ['heavy', 'heavy', 'heavy', 'heavy', false], 'an exact count not kept');
  t.same(shape(decide('Practitioner', '_total=accurate')), ['page', 'page', 'generic', 'sql', false], 'an exact count kept by the write path');
  t.equal(decide('Practitioner', 'family=martin&_cursor=x').totalBeside, false, 'a next page carries its total in its cursor');
  t.has(decide('Practitioner', 'family=martin'), { countPool: 'count', replica: true, deadlineMs: POLICY.deadlineMs, countBudgetMs: 20 }, 'the policy carried');
});

const { app, db, deps } = await testApp(t, { env: { API_KEYS: API_KEY }, paths: [path.join(FIXTURES, 'directory')] });

t.test('a statement timeout: a typed failure on the page, the driver\'s elsewhere', async (t) => {
  const slow = connectUrl(db.url, { max: 1, statementTimeoutMs: 50 });
  t.teardown(() => slow.end({ timeout: 1 }));
  const matches = await statements(slow, 'matches')(stmt`select pg_sleep(1)`).catch((e: unknown) => e);
  t.ok(matches instanceof SearchTimedOut, 'the page\'s statement: SearchTimedOut');
  const other = await statements(slow)(stmt`select pg_sleep(1)`).catch((e: { code?: string }) => e.code);
  t.equal(other, '57014', 'another statement: the driver\'s error');
  t.same(await statements(slow, 'matches')(stmt`select 1 as one`), [{ one: 1 }], 'rows pass through');
});

t.test('the HTTP layer alone turns failures into answers, as before', async (t) => {
  const real = deps.router.runner.search.bind(deps.router.runner);
  t.teardown(() => (deps.router.runner.search = real));
  const seen: Execution[] = [];
  const get = async (q: string, failure?: Error) => {
    deps.router.runner.search = async (pools, r, x, state, bases) => {
      seen.push(x);
      if (failure) throw failure;
      return real(pools, r, x, state, bases);
    };
    const res = await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?${q}`, headers: { 'SERVICE-API-KEY': API_KEY } });
    const issue = res.statusCode === 200 ? undefined : (res.json() as { issue: { code: string; diagnostics: string }[] }).issue[0];
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], code: issue?.code, text: issue?.diagnostics };
  };
  t.same(await get('identifier=10100000024'), { status: 200, retryAfter: undefined, code: undefined, text: undefined });
  t.equal(seen.at(-1)?.class, 'lookup', 'the route decides and the runner gets that decision');
  t.same(await get('family=martin', new SearchTimedOut()), {
    status: 503, retryAfter: '1', code: 'timeout', text: 'the search took too long and was cancelled; narrow it down with more selective parameters',
  });
  t.same(await get('family=martin', new DeadlineExceeded(50)), { status: 503, retryAfter: '1', code: 'transient', text: 'the database did not answer in time; try again' });
  t.same(await get('family=martin', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })), {
    status: 503, retryAfter: '1', code: 'timeout', text: 'the request took too long and was cancelled',
  });
  t.same(await get('family=martin', Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' })), {
    status: 503, retryAfter: '1', code: 'transient', text: 'the database is unavailable just now: try again',
  });
  t.equal((await get('family=martin', new Error('a bug'))).status, 500, 'anything else is a bug');
  t.equal(storageFailure(new Error('a bug')), undefined);
});
