/**
 * `npm start` as a newcomer runs it: a fresh folder, the embedded PostgreSQL, the demo data, a
 * `.env` file. What it prints must lead somewhere that answers; next links saved before a restart
 * must still work after it; the embedded PostgreSQL takes what EMBEDDED_SHARED_BUFFERS says.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { get } from 'node:http';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { ROOT } from './helpers/app.ts';
import { userNode } from './helpers/command.ts';
import { freePort, startServer } from './helpers/server.ts';

interface Bundle { entry?: { resource: { id: string } }[]; link: { relation: string; url: string }[] }

/** A fresh working folder, which the postgres user can reach (the tests may run as root). */
async function folder(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'annuaire-start-'));
  await chmod(dir, 0o755);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The environment of a user who set nothing: none of this process's settings reach the server. */
const UNSET = { DATABASE_URL: '', API_KEYS: '', CURSOR_SECRET: '', WORKERS: '', REDIS_URL: '', DATA_DIR: undefined, PORT: undefined, HOST: undefined };

t.test('npm start in a fresh folder with a .env: where to go, a curl line that works, next links that outlive a restart', async (t) => {
  const dir = await folder(t);
  const port = await freePort();
  // The environment wins over the file: DEFAULT_COUNT=4 here, 5 in the file.
  await writeFile(path.join(dir, '.env'), `# the settings of this folder\nPORT=${port}\nHOST=127.0.0.1\nexport DATA_DIR=data\nDEFAULT_COUNT=5\nEMBEDDED_SHARED_BUFFERS="160MB"\n`);
  const env = { ...UNSET, DEFAULT_COUNT: '4' };
  const first = startServer(t, env, dir);
  t.equal(await first.ready(1), 1, 'ready', { output: first.output.slice(-2000) });

  const key = readFileSync(path.join(dir, 'data', 'dev-api-key'), 'utf8').trim();
  const where = `http://127.0.0.1:${port}`;
  t.match(first.stdout, `Home page:     ${where}/\n`, 'prints the home page');
  t.match(first.stdout, `API explorer:  ${where}/docs\n`, 'the interactive docs');
  t.match(first.stdout, `  ${key}\n`, 'the development key');
  const curl = /^ {2}curl -H '([^:]+): ([^']+)' '([^']+)'$/m.exec(first.stdout);
  t.ok(curl, 'and a curl line');
  const [, header, value, url] = curl ?? [];
  t.same([header, value], ['SERVICE-API-KEY', key]);
  const tried = await fetch(url, { headers: { [header]: value } });
  t.equal(tried.status, 200, `the curl line answers: ${url}`);
  t.equal(((await tried.json()) as { type: string }).type, 'searchset');
  t.equal((await fetch(`${where}/`)).status, 200, 'the home page answers');
  t.equal((await fetch(`${where}/docs`)).status, 200, '/docs answers');

  const page = (await (await fetch(`${where}/fhir/v2/Practitioner`, { headers: { 'service-api-key': key } })).json()) as Bundle;
  t.equal(page.entry?.length, 4, 'the environment won over .env (DEFAULT_COUNT=4, not 5)');
  const next = page.link.find((l) => l.relation === 'next')?.url ?? '';
  t.match(next, /_cursor=/, 'a next link, saved for later');

  const secret = path.join(dir, 'data', 'cursor-secret');
  t.equal(statSync(secret).mode & 0o777, 0o600, 'the cursor secret is kept in DATA_DIR, mode 0600');
  const pgPort = Number(readFileSync(path.join(dir, 'data', 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
  const pg = postgres(`postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`, { max: 1, onnotice: () => {} });
  const [{ shared_buffers }] = await pg`show shared_buffers`;
  await pg.end();
  t.equal(shared_buffers, '160MB', 'EMBEDDED_SHARED_BUFFERS from .env');

  first.server.kill('SIGTERM');
  t.equal(await first.exited, 0, 'stopped');
  // Started again, now with two workers: the primary hands them the secret kept in DATA_DIR.
  const second = startServer(t, { ...env, WORKERS: '2' }, dir);
  t.equal(await second.ready(2), 2, 'ready again', { output: second.output.slice(-2000) });
  for (let i = 0; i < 4; i++) {
    // A new connection each time: the primary hands connections to the workers in turn.
    const status = await new Promise<number>((resolve, reject) =>
      get(next, { agent: false, headers: { 'service-api-key': key } }, (res) => resolve(res.resume().statusCode ?? 0)).on('error', reject));
    t.equal(status, 200, `the next link saved before the restart still works (connection ${i + 1})`);
  }
  t.match(second.stdout, `Home page:     ${where}/\n`, 'the primary prints where to go, once');
  t.equal(second.stdout.match(/Home page:/g)?.length, 1);
  second.server.kill('SIGTERM');
  t.equal(await second.exited, 0);
});

/** The local addresses of the sockets listening on `port` (from /proc/net/tcp and tcp6), as 127.0.0.1, ::1, 0.0.0.0, ::. */
function listeningAddresses(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local?.endsWith(`:${hex}`)) continue; // 0A: LISTEN
      const addr = local.slice(0, -5);
      if (addr.length === 8) out.push(Buffer.from(addr, 'hex').reverse().join('.'));
      else out.push(addr === '0'.repeat(32) ? '::' : addr === '00000000000000000000000001000000' ? '::1' : addr);
    }
  }
  return out.sort();
}

t.test('npm start in development without HOST listens on the loopback alone, and says so', { skip: process.platform !== 'linux' && 'reads /proc/net' }, async (t) => {
  const dir = await folder(t);
  const port = await freePort();
  const started = startServer(t, { ...UNSET, PORT: String(port) }, dir);
  t.equal(await started.ready(1), 1, 'ready', { output: started.output.slice(-2000) });
  const addresses = listeningAddresses(port);
  t.ok(addresses.length > 0, `listening on ${addresses.join(', ')}`);
  t.same(addresses.filter((a) => a !== '127.0.0.1' && a !== '::1'), [], 'no socket on another address (no 0.0.0.0, no ::)');
  t.ok(addresses.includes('127.0.0.1'), 'IPv4 loopback');
  t.match(started.stdout, 'Listening on:  this machine only (localhost); HOST=0.0.0.0 to accept other machines', 'the banner says where, and how to listen elsewhere');
  t.match(started.stdout, `Home page:     http://localhost:${port}/`);
  t.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200, 'answers on 127.0.0.1');
  started.server.kill('SIGTERM');
  t.equal(await started.exited, 0);
});

t.test('a malformed .env stops the start with one line naming it', async (t) => {
  const dir = await folder(t);
  await writeFile(path.join(dir, '.env'), 'PORT=9999\nLOG_LEVEL warn\nDEFAULT_COUNT=5\n');
  for (const [what, args] of [
    ['npm start', [path.join(ROOT, 'dist', 'server.js')]],
    ['npm run load', [path.join(ROOT, 'dist', 'load.js'), path.join(ROOT, 'fixtures', 'directory')]],
    ['npm run keys', [path.join(ROOT, 'dist', 'keys.js'), 'list']],
  ] as const) {
    const run = spawnSync(...userNode(args), { cwd: dir, env: { ...process.env, DATABASE_URL: '' }, encoding: 'utf8', timeout: 60_000 });
    t.equal(run.status, 1, `${what}: exit code 1`);
    t.equal(run.stderr.trim().split('\n').length, 1, `${what}: one line`);
    t.match(run.stderr, /^configuration(?: error)?: \.env line 2 \("LOG_LEVEL …"\): expected NAME=value/, `${what}: names the file and the line`);
  }
});
