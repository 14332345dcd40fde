import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { Database } from '../src/db.ts';
import { generate } from '../src/generate/index.ts';
import { UpstreamClient } from '../src/sync/client.ts';
import { load, ROOT, testApp } from './helpers/app.ts';
import { userNode } from './helpers/command.ts';
import { testDatabase } from './helpers/db.ts';

// `npm run sync` as users run it (a child process), against a second instance of this server on
// generated data (the upstream), over HTTP on loopback; a relay in front of it injects faults.

const KEY = 'sync-upstream-key-0123';
const tmp = await mkdtemp(path.join(os.tmpdir(), 'sync-test-'));
t.teardown(() => rm(tmp, { recursive: true, force: true }));
await generate({ scale: 0.0002, seed: 29, outDir: path.join(tmp, 'data'), gzip: false, log: () => {} });

const up = await testApp(t, { paths: [path.join(tmp, 'data')], env: { PUBLIC_BASE_URL: '', API_KEYS: KEY, CURSOR_SECRET: 'sync-test-cursor-secret-01' } });
await up.app.listen({ host: '127.0.0.1', port: 0 });
const upPort = (up.app.server.address() as AddressInfo).port;
const UPSTREAM = `http://127.0.0.1:${upPort}/fhir/v2`;
/** Paths the upstream was asked for, in order. */
const asked: string[] = [];
up.app.server.on('request', (req: http.IncomingMessage) => asked.push(req.url ?? ''));

const mirror = await testDatabase(t);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startSync(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(...userNode([path.join(ROOT, 'dist', 'sync.js'), ...args]), {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: mirror.url, SYNC_API_KEY: KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

/** Requests per second of the runs that are not meant to be slow (a resumed run keeps its pages of 10). */
const FAST = ['--rate', '500'];
const sync = (args: string[], env?: Record<string, string>) => startSync(['--from', UPSTREAM, ...FAST, ...args], env).done;

/** Exit code `code`, with the run's messages shown when it is not. */
const exits = (t: Test, r: Run, code: number | null) => t.equal(r.code, code, `exit code ${code}`, { stdout: r.stdout, stderr: r.stderr });

/** Every resource as (type, id, content without meta.versionId), and the index rows of each table. */
async function snapshot(db: Database) {
  const resources = await db.sql<{ type: string; id: string; content: unknown }[]>`
    select type, id, content #- '{meta,versionId}' as content from resource order by type, id`;
  const [rows] = await db.sql`select (select count(*) from token_idx) as token, (select count(*) from string_idx) as string,
    (select count(*) from date_idx) as date, (select count(*) from reference_idx) as reference`;
  return { resources: resources.map((r) => ({ ...r })), rows: { ...rows } };
}

async function assertMirrored(t: Test, what: string) {
  const [a, b] = await Promise.all([snapshot(up.db), snapshot(mirror)]);
  t.equal(b.resources.length, a.resources.length, `${what}: as many resources as upstream`);
  t.same(b.resources, a.resources, `${what}: the same resources (type, id, content apart from versionId)`);
  t.same(b.rows, a.rows, `${what}: as many index rows`);
}

/** The mirror's last recorded sync run (writer_run, sql/014). */
async function lastRun() {
  const [run] = await mirror.sql<{ outcome: string; finished: boolean; detail: Record<string, unknown> }[]>`
    select outcome, finished_at is not null as finished, detail from writer_run where kind = 'sync' order by id desc limit 1`;
  return run;
}

async function resetMirror() {
  await mirror.sql`truncate resource, token_idx, string_idx, date_idx, reference_idx, sync_state`;
}

const fetchedOf = (out: string, type: string) => Number(new RegExp(`^${type}: ([\\d,]+) fetched`, 'm').exec(out)?.[1].replace(/,/g, '') ?? NaN);

/** Writes resources (or DELETE entries) upstream through its loader, as a directory changes. */
async function changeUpstream(name: string, resources: unknown[], deletes: string[] = []) {
  const file = path.join(tmp, `${name}.json`);
  const entry = [
    ...resources.map((resource) => ({ resource })),
    ...deletes.map((url) => ({ request: { method: 'DELETE', url } })),
  ];
  await writeFile(file, JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry }));
  const r = await load(up.db, [file]);
  if (r.rejects.length) throw new Error(r.rejects.join('\n'));
}

async function upstreamResources(type: string, limit: number, offset = 0) {
  const rows = await up.db.sql<{ content: Record<string, any> }[]>`
    select content from resource where type = ${type} order by id limit ${limit} offset ${offset}`;
  return rows.map((r) => r.content);
}

t.test('an initial sync copies the upstream whole; a second one changes nothing', async (t) => {
  const r = await sync([]);
  exits(t, r, 0);
  t.notMatch(r.stdout + r.stderr, KEY, 'the key is never printed');
  await assertMirrored(t, 'initial sync');
  t.match(r.stdout, /Organization: \d+ fetched/);
  const [{ n }] = await mirror.sql`select count(*)::int as n from resource where type in ('Device', 'HealthcareService')`;
  t.ok(n > 0, 'Device and HealthcareService came through _revinclude on Organization');
  const versions = await mirror.sql`select count(*)::int as n from resource where version_id <> 1`;
  t.equal(versions[0].n, 0, 'the mirror numbers its own versions');
  // What the planner believes each table holds (pg_class.reltuples, set by ANALYZE) against what it holds.
  const believed = await mirror.sql<{ name: string; reltuples: number; rows: number }[]>`
    select c.relname as name, c.reltuples, (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I', c.relname), false, true, '')))[1]::text::int as rows
    from pg_class c where c.relname in ('resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx') and c.relnamespace = current_schema()::regnamespace`;
  t.same(believed.filter((b) => Math.abs(b.reltuples - b.rows) > 0.2 * b.rows).map((b) => `${b.name}: ${b.reltuples} believed, ${b.rows} held`), [],
    'the planner has statistics for what the copy wrote (analyzed as after a load)');

  t.match(await lastRun(), { outcome: 'success', finished: true, detail: { upstream: UPSTREAM, prune: false, rejected: 0 } }, 'the run recorded for the metrics');
  t.ok(((await lastRun()).detail.fetched as number) > 0, 'with what it fetched');

  const again = await sync([]);
  exits(t, again, 0);
  t.match(again.stdout, /0 inserted, 0 updated/);
  t.notMatch(again.stdout, /[1-9][\d,]* (inserted|updated)/, 'nothing written again');
  await assertMirrored(t, 'second sync');
});

t.test('changes and additions upstream are mirrored, and only they are fetched', async (t) => {
  const [state] = await mirror.sql<{ watermark: Date }[]>`select watermark from sync_state where type = 'Practitioner'`;
  t.ok(state.watermark, 'a watermark was committed');
  const now = new Date().toISOString();
  const changed = (await upstreamResources('Practitioner', 4)).map((p, i) => ({
    ...p,
    name: [{ family: `CHANGED${i}`, given: ['Zoé'] }],
    // one at the very instant of the watermark: `ge` must still see it
    meta: { ...p.meta, lastUpdated: i === 0 ? state.watermark.toISOString() : now },
  }));
  const [base] = await upstreamResources('Practitioner', 1, 10);
  const added = [1, 2, 3].map((i) => ({ ...base, id: `sync-added-${i}`, meta: { ...base.meta, lastUpdated: now } }));
  const [org] = await upstreamResources('Organization', 1);
  await changeUpstream('changes', [...changed, ...added, { ...org, name: 'ORGANISATION CHANGÉE', meta: { ...org.meta, lastUpdated: now } }]);

  const [{ expected }] = await up.db.sql`select count(*)::int as expected from resource where type = 'Practitioner' and last_updated >= ${state.watermark}`;
  asked.length = 0;
  const r = await sync(['--overlap', '0']);
  exits(t, r, 0);
  await assertMirrored(t, 'after changes');
  t.equal(fetchedOf(r.stdout, 'Practitioner'), expected, 'Practitioner: only what changed at or after the watermark is fetched');
  t.ok(expected <= changed.length + added.length + 1, `${expected} practitioners fetched for ${changed.length + added.length} changed or added`);
  t.match(r.stdout, /Practitioner: [\d,]+ fetched .*: 3 inserted, 4 updated/);
  t.match(r.stdout, /Organization: [\d,]+ fetched .*1 updated/);
  t.equal(asked[0], '/fhir/v2/metadata');
  t.same(
    asked.slice(1).map((u) => u.split('?')[0]).sort(),
    ['/fhir/v2/Location', '/fhir/v2/Organization', '/fhir/v2/Practitioner', '/fhir/v2/PractitionerRole'],
    'one request for the capabilities, one page per type (Location with them: the upstream searches it)',
  );
  t.ok(asked.slice(1).every((u) => u.includes('_lastUpdated=ge') && u.includes('_sort=_lastUpdated')), 'windows by _lastUpdated, sorted');
});

/** Starts a sync of small slow pages and kills it once it has committed a page of an unfinished run. */
async function killMidway(t: Test) {
  const { child, done } = startSync(['--from', UPSTREAM, '--count', '10', '--rate', '20']);
  for (let i = 0; i < 600; i++) {
    const [row] = await mirror.sql`select count(*)::int as n from sync_state where run_next is not null`;
    if (row.n > 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  const r = await done;
  exits(t, r, null);
  const [row] = await mirror.sql`select count(*)::int as n from resource`;
  const total = (await snapshot(up.db)).resources.length;
  t.ok(row.n > 0 && row.n < total, `a part was committed (${row.n} of ${total})`);
}

t.test('a sync killed mid-way, then run again, converges', async (t) => {
  await resetMirror();
  await killMidway(t);
  t.match(await lastRun(), { outcome: 'running', finished: false }, 'the killed run stays running');
  // the directory changes meanwhile
  const [p] = await upstreamResources('Practitioner', 1, 200);
  await changeUpstream('meanwhile', [{ ...p, gender: p.gender === 'female' ? 'male' : 'female', meta: { ...p.meta, lastUpdated: new Date().toISOString() } }]);
  const r = await sync([]);
  exits(t, r, 0);
  t.match(r.stdout, /resumed from the interrupted run/, 'resumed from the committed next link');
  t.match(await lastRun(), { outcome: 'success', finished: true }, 'the rerun succeeded');
  await assertMirrored(t, 'after the rerun');

});

/** A request answered by the relay itself, forwarded once a promise settles, or forwarded (undefined). */
type Fault = (req: http.IncomingMessage, n: number) => ((res: http.ServerResponse) => void) | Promise<void> | undefined;

/**
 * A relay to the upstream on a port of its own; `fault` may answer a request instead (n counts the
 * searches of Practitioner, a type the others are mirrored beside).
 */
async function relay(t: Test, fault: Fault, rewrite?: (body: string) => string) {
  let n = 0;
  const server = http.createServer(async (req, res) => {
    const own = req.url?.includes('/Practitioner?') ? fault(req, ++n) : undefined;
    if (typeof own === 'function') return own(res);
    await own;
    const fwd = http.request({ host: '127.0.0.1', port: upPort, path: req.url, method: req.method, headers: req.headers }, (r) => {
      if (!rewrite) {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        return;
      }
      let body = '';
      r.setEncoding('utf8').on('data', (d) => (body += d));
      r.on('end', () => {
        const out = rewrite(body);
        res.writeHead(r.statusCode ?? 502, { ...r.headers, 'content-length': Buffer.byteLength(out) });
        res.end(out);
      });
    });
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/fhir/v2`;
}

const syncFrom = (from: string, args: string[] = []) => startSync(['--from', from, ...FAST, ...args]).done;

t.test('429, 503, a dropped connection and changes made during the run are survived', async (t) => {
  await resetMirror();
  // The oldest practitioner (on the first page) and the newest (on the last) change while the run is on the second.
  const [oldest, newest] = await Promise.all(
    ['asc', 'desc'].map(async (dir) => (await up.db.sql.unsafe(`select content from resource where type = 'Practitioner' order by last_updated ${dir}, rid limit 1`))[0].content),
  );
  let changedAt = new Date(0);
  const from = await relay(t, (req, n) => {
    if (n === 2) return (res) => res.socket?.destroy();
    if (n === 3) return (res) => res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/fhir+json' }).end('{"resourceType":"OperationOutcome"}');
    if (n === 4) return (res) => res.writeHead(503, { 'retry-after': '1' }).end('busy');
    if (n === 5) {
      changedAt = new Date();
      const lastUpdated = changedAt.toISOString();
      return changeUpstream('during', [oldest, newest].map((p) => ({ ...p, gender: 'unknown', meta: { ...p.meta, lastUpdated } })));
    }
    return undefined;
  });
  const r = await syncFrom(from, ['--count', '100']);
  exits(t, r, 0);
  t.match(r.stderr, /429 Too Many Requests: retrying in 1\.0 s/);
  t.match(r.stderr, /503 Service Unavailable: retrying in 1\.0 s/);
  t.match(r.stderr, /network error/);
  await assertMirrored(t, 'through the faults and the changes');
  const [state] = await mirror.sql<{ watermark: Date }[]>`select watermark from sync_state where type = 'Practitioner'`;
  t.ok(changedAt.getTime() > 0 && state.watermark <= changedAt, 'the watermark stays before the run began: the next run asks for the changes made during it again');
});

t.test('garbage is refused cleanly, whole pages only are written, and the rerun converges', async (t) => {
  await resetMirror();
  const elsewhere = await relay(t, () => undefined, (body) => body.replace(/"url":"http:\/\/127\.0\.0\.1:\d+\/fhir\/v2\/Practitioner\?([^"]*_cursor)/, '"url":"http://127.0.0.2:9/fhir/v2/Practitioner?$1'));
  const e = await syncFrom(elsewhere, ['--count', '100']);
  exits(t, e, 1);
  t.match(e.stderr, /next link http:\/\/127\.0\.0\.2:9\/fhir\/v2\/Practitioner\?.* is not on its host \(http:\/\/127\.0\.0\.1:\d+\): not followed \(if the upstream names itself otherwise/);
  const [none] = await mirror.sql`select count(*)::int as n from resource where type = 'Practitioner'`;
  t.equal(none.n, 0, 'the page with the foreign link is not written');

  let broken = true;
  const from = await relay(t, (req, n) => {
    if (broken && n === 3) return (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Please log in</body></html>');
    return undefined;
  });
  const r = await syncFrom(from, ['--count', '100']);
  exits(t, r, 1);
  t.match(r.stderr, /sync failed: .*the upstream answered 200 with an HTML page \(an error or login page\?\), not a FHIR searchset Bundle/);
  const [row] = await mirror.sql`select count(*)::int as n from resource where type = 'Practitioner'`;
  t.equal(row.n, 200, 'the two pages before it, whole, and nothing of the refused one');
  t.match(r.stdout, /^PractitionerRole: 440 fetched/m, 'the other types were mirrored beside it');
  const [state] = await mirror.sql`select run_next from sync_state where type = 'Practitioner'`;
  t.match(state.run_next, /_cursor=/, 'the next link of the last committed page is kept');

  // The upstream heals, but the cursor has expired meanwhile: the run starts again from the watermark.
  broken = false;
  await mirror.sql`update sync_state set run_next = regexp_replace(run_next, '_cursor=[^&]*', '_cursor=expired') where run_next is not null`;
  const again = await syncFrom(from, ['--count', '100']);
  exits(t, again, 0);
  t.match(again.stderr, /Practitioner: the interrupted run's next link no longer answers \(400\); starting again from the watermark/);
  await assertMirrored(t, 'after the upstream healed');
});

t.test('answers that are not a searchset Bundle are refused by the client', async (t) => {
  const bundle = await relay(t, () => (res) => res.writeHead(200, { 'content-type': 'application/fhir+json' }).end('{"resourceType":"Bundle","type":"collection"}'));
  const client = new UpstreamClient({ base: bundle, rate: 100, retries: 0 });
  await t.rejects(client.bundle(`${bundle}/Practitioner?_count=1`), /the upstream answered a Bundle of type "collection", not a FHIR searchset Bundle/);
  const login = await relay(t, () => (res) => res.writeHead(302, { location: 'http://login.example/sso' }).end());
  await t.rejects(
    new UpstreamClient({ base: login, rate: 100 }).bundle(`${login}/Practitioner?_count=1`),
    /redirected \(302\) to http:\/\/login\.example\/sso, not on its host \(a login page\?\): not followed/,
  );
  const busy = await relay(t, () => (res) => res.writeHead(503).end());
  await t.rejects(new UpstreamClient({ base: busy, rate: 100, retries: 1, backoffMs: 10 }).bundle(`${busy}/Practitioner?_count=1`), /503 Service Unavailable; gave up after 2 attempts/);
  await t.rejects(new UpstreamClient({ base: busy, rate: 100 }).bundle('http://127.0.0.2:9/fhir/v2/Practitioner'), /not on the upstream's host/);
});

t.test('--prune deletes what the upstream deleted, within --max-prune', async (t) => {
  // The mirror holds what the relays brought: this run, the first from UPSTREAM itself, copies it all again.
  const gone = (await upstreamResources('Practitioner', 6, 30)).map((p) => `Practitioner/${p.id}`);
  await changeUpstream('deletions', [], gone);
  const refused = await sync(['--prune']);
  exits(t, refused, 1);
  t.match(refused.stderr, /Practitioner: --prune would delete 6 of \d+ local resources, more than --max-prune allows \(3\); nothing was deleted/);
  const [row] = await mirror.sql`select count(*)::int as n from resource where type = 'Practitioner' and 'Practitioner/' || id = any(${gone})`;
  t.equal(row.n, 6, 'nothing deleted');

  // A HealthcareService changed alone (its Organization unchanged, out of every window): the walk of ids brings it.
  const [org] = await upstreamResources('Organization', 1);
  const hs = (await upstreamResources('HealthcareService', 10)).find((h) => h.providedBy?.reference !== `Organization/${org.id}`)!;
  t.ok(hs, 'a HealthcareService of an Organization the windows do not bring again');
  await changeUpstream('service', [{ ...hs, name: 'SERVICE RENOMMÉ', meta: { ...hs.meta, lastUpdated: new Date().toISOString() } }]);
  const r = await sync(['--prune', '--max-prune', '2']);
  exits(t, r, 0);
  t.match(r.stdout, /Practitioner: [\d,]+ ids upstream, [\d,]+ local, 6 deleted/);
  t.match(r.stdout, /Device, HealthcareService: 1 written while walking the ids/);
  await assertMirrored(t, 'after --prune');
});

t.test('bad options are refused with a message', async (t) => {
  const r = await startSync(['--from', UPSTREAM, '--rate', '0']).done;
  exits(t, r, 1);
  t.match(r.stderr, /--rate must be a number above 0/);
  const k = await startSync(['--from', UPSTREAM], { SYNC_API_KEY: 'not-a-known-key-000' }).done;
  exits(t, k, 1);
  t.match(k.stderr, /answered 401/);
  t.notMatch(k.stderr, /not-a-known-key-000/, 'the key is not echoed');
  const run = await lastRun();
  t.match(run, { outcome: 'failure', finished: true, detail: { error: /401/ } }, 'the failed run recorded');
  t.notMatch(JSON.stringify(run.detail), /not-a-known-key-000/, 'without the key');
});
