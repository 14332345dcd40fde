// The mirror scenario of the benchmark (npm run bench -- --mirror): `npm run sync` copies the bench
// database from the bench's own server (the upstream, on 127.0.0.1) into an empty database beside
// it, then mirrors a change set of 1 % of the upstream's resources. Figures: resources/s of the
// initial copy against the loader's incremental rate on the same files, and the change set's time.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectUrl, migrate, type Sql } from '../src/db.ts';
import { registry } from '../src/registry/index.ts';
import { TokenSystems } from '../src/store/token-systems.ts';
import { preparePut } from '../src/load/prepare.ts';
import { loaderTx, writeBatch, type WriteEntry } from '../src/store/write.ts';
import { log } from './drive.ts';

export interface MirrorFigures {
  /** requests per second allowed to the sync (its --rate). */
  rate: number;
  initial: { resources: number; requests: number; ms: number; rps: number };
  /** the loader's incremental rate of this run, when it was measured. */
  incrementalRps?: number;
  ratioToIncremental?: number;
  changeSet: { changed: number; fetched: number; requests: number; ms: number };
  method: string;
}

export interface MirrorOptions {
  /** a connection to the PostgreSQL server's maintenance database (CREATE/DROP DATABASE). */
  admin: Sql;
  /** the upstream's database (the bench database the server serves). */
  upstreamDbUrl: string;
  /** the server's FHIR base and key. */
  upstream: string;
  key: string;
  incrementalRps?: number;
  rate?: number;
}

const MIRROR_DB = 'bench_mirror';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface SyncRun {
  fetched: number;
  requests: number;
  ms: number;
}

/** `npm run sync` in a process of its own; its summary line gives what it fetched. */
function runSync(from: string, dbUrl: string, key: string, rate: number): Promise<SyncRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'sync.ts'), '--from', from, '--rate', String(rate)], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: dbUrl, SYNC_API_KEY: key },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const line of d.trim().split('\n')) if (line) log(`  sync: ${line}`);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const m = /mirrored .*: ([\d,]+) resources fetched, .*; ([\d,]+) requests;/.exec(out);
      if (code !== 0 || !m) return reject(new Error(`npm run sync ended with code ${code}: ${out.trim().split('\n').at(-1) ?? ''}`));
      const n = (s: string) => Number(s.replace(/,/g, ''));
      resolve({ fetched: n(m[1]), requests: n(m[2]), ms: performance.now() - t0 });
    });
  });
}

/**
 * 1 % of the upstream's Practitioner, Organization and PractitionerRole resources (every 100th
 * row) changed through the write path with a new lastUpdated; `revert` writes the originals back
 * (content and lastUpdated as they were), leaving the bench database as loaded.
 */
async function changeSet(sql: Sql): Promise<{ changed: number; revert: () => Promise<void> }> {
  const rows = await sql<{ content: Record<string, unknown> }[]>`
    select content from resource where rid % 100 = 0 and type in ('Practitioner', 'Organization', 'PractitionerRole')`;
  const systems = new TokenSystems();
  const write = async (values: Record<string, unknown>[]) => {
    for (let i = 0; i < values.length; i += 1000) {
      const batch: WriteEntry[] = values.slice(i, i + 1000).map((v) => preparePut(registry, v));
      await loaderTx(sql, (tx) => writeBatch(sql, registry, systems, batch, tx));
    }
  };
  const now = new Date().toISOString();
  await write(rows.map(({ content }) => ({ ...content, language: content.language === 'en' ? 'fr' : 'en', meta: { ...(content.meta as object), lastUpdated: now } })));
  return { changed: rows.length, revert: () => write(rows.map((r) => r.content)) };
}

export async function mirrorScenario(o: MirrorOptions): Promise<MirrorFigures> {
  const rate = o.rate ?? 15;
  const mirrorUrl = (() => {
    const u = new URL(o.upstreamDbUrl);
    u.pathname = `/${MIRROR_DB}`;
    return u.toString();
  })();
  await o.admin.unsafe(`drop database if exists ${MIRROR_DB} with (force)`);
  await o.admin.unsafe(`create database ${MIRROR_DB}`);
  const mirror = connectUrl(mirrorUrl, { max: 2 });
  const upstream = connectUrl(o.upstreamDbUrl, { max: 4 });
  try {
    await migrate(mirror);
    log(`mirror: npm run sync -- --from ${o.upstream} --rate ${rate} into an empty database`);
    const first = await runSync(o.upstream, mirrorUrl, o.key, rate);
    const rps = first.fetched / (first.ms / 1000);
    log(`  ${Math.round(rps).toLocaleString('en-US')} resources/s (${first.fetched.toLocaleString('en-US')} in ${(first.ms / 1000).toFixed(1)} s, ${first.requests} requests)`);
    const cs = await changeSet(upstream);
    try {
      log(`mirror: ${cs.changed.toLocaleString('en-US')} resources changed upstream (1 %), synced`);
      const second = await runSync(o.upstream, mirrorUrl, o.key, rate);
      log(`  ${second.fetched.toLocaleString('en-US')} fetched in ${(second.ms / 1000).toFixed(1)} s, ${second.requests} requests`);
      return {
        rate,
        initial: { resources: first.fetched, requests: first.requests, ms: first.ms, rps },
        incrementalRps: o.incrementalRps,
        ratioToIncremental: o.incrementalRps ? rps / o.incrementalRps : undefined,
        changeSet: { changed: cs.changed, fetched: second.fetched, requests: second.requests, ms: second.ms },
        method:
          `\`npm run sync -- --from <the bench server> --rate ${rate}\` (pages of 1000, sorted by _lastUpdated), in a process of its own, into an empty database on the same PostgreSQL, ` +
          'while the server serves nothing else; the time includes the process start. Change set: every 100th row of Practitioner, Organization and PractitionerRole given another `language` and a new lastUpdated through the write path, then synced; written back afterwards.',
      };
    } finally {
      await cs.revert();
    }
  } finally {
    await mirror.end({ timeout: 5 });
    await upstream.end({ timeout: 5 });
    await o.admin.unsafe(`drop database if exists ${MIRROR_DB} with (force)`);
  }
}

/** The report's section. */
export function renderMirror(m: MirrorFigures): string[] {
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  return [
    '## Mirror (npm run sync)',
    '',
    '| run | resources fetched | requests | time | resources/s | × loader incremental |',
    '|---|---|---|---|---|---|',
    `| initial copy | ${int(m.initial.resources)} | ${int(m.initial.requests)} | ${(m.initial.ms / 1000).toFixed(1)} s | ${int(m.initial.rps)} | ${m.ratioToIncremental === undefined ? 'not measured' : `${m.ratioToIncremental.toFixed(2)} × (${int(m.incrementalRps!)}/s; goal ≥ 0.5)`} |`,
    `| 1 % change set (${int(m.changeSet.changed)} changed) | ${int(m.changeSet.fetched)} | ${int(m.changeSet.requests)} | ${(m.changeSet.ms / 1000).toFixed(1)} s | | goal < 60 s |`,
    '',
    m.method,
    '',
  ];
}
