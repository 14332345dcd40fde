import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connectUrl } from '../src/db.ts';
import { generate } from '../src/generate/index.ts';
import { load, testApp } from './helpers/app.ts';

/**
 * An export whose database sessions are ended while it reads (a failover, an administrator): the
 * server's process lives on, the job is queued again, and its files hold every stored resource.
 */
const KEY = 'export-faults-key-0123456789';
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'export-faults-data-'));
const exportDir = await mkdtemp(path.join(os.tmpdir(), 'export-faults-'));
t.teardown(() => Promise.all([dataDir, exportDir].map((d) => rm(d, { recursive: true, force: true }))));
await generate({ scale: 0.002, seed: 5, outDir: dataDir });

t.test('sessions ended under a running export: the job is queued again and ends whole', async (t) => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => void uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  t.teardown(() => void process.off('uncaughtException', onUncaught));
  const { app, db } = await testApp(t, { env: { API_KEYS: KEY, EXPORT_DIR: exportDir } });
  await load(db, [dataDir], { bulk: true });
  const admin = connectUrl(db.url, { max: 1 });
  t.teardown(() => admin.end({ timeout: 1 }));
  const ask = (url: string) => app.inject({ url, headers: { 'service-api-key': KEY, prefer: 'respond-async' } });

  const kickOff = await ask('/fhir/v2/$export');
  t.equal(kickOff.statusCode, 202);
  const status = new URL(kickOff.headers['content-location'] as string).pathname;
  let reading = false;
  for (let i = 0; i < 2000 && !reading; i++) {
    [{ reading }] = await admin<{ reading: boolean }[]>`
      select exists (select 1 from pg_stat_activity where datname = current_database() and query like 'select content from resource where type = %') as reading`;
    if (!reading) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.ok(reading, 'the export was reading the resources');
  await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;

  // Polled as a client does: 202 while it runs, and a 503 (Retry-After) while the database is away.
  let done = await ask(status);
  for (let i = 0; i < 600 && (done.statusCode === 202 || done.statusCode === 503); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    done = await ask(status);
  }
  t.equal(done.statusCode, 200, 'the job ends with its manifest');
  const manifest = done.json() as { output: { type: string; url: string; count: number }[] };
  const exported = manifest.output.reduce((n, o) => n + o.count, 0);
  const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from resource`;
  t.equal(exported, n, `its files hold every stored resource (${n})`);
  const ids = new Set<string>();
  for (const o of manifest.output) {
    const file = await ask(new URL(o.url).pathname);
    for (const line of file.body.split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as { resourceType: string; id: string };
      ids.add(`${r.resourceType}/${r.id}`);
    }
  }
  t.equal(ids.size, n, 'each once');
  t.same(uncaught.map(String), [], 'nothing thrown outside a promise: the server lives on');
  t.equal((await ask('/fhir/v2/Practitioner?_count=1')).statusCode, 200, 'and searches');
});
