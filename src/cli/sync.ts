import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db.ts';
import { loadDotEnv } from '../env-file.ts';
import { registry } from '../registry/index.ts';
import { TokenSystems } from '../store/token-systems.ts';
import { finishWrites } from '../store/write.ts';
import { SyncError, UpstreamClient } from '../sync/client.ts';
import { mirrorType, type TypeSummary } from '../sync/mirror.ts';
import { prunePlan, type PruneSummary } from '../sync/prune.ts';
import { DEFAULT_TYPES, parseTypes, planTypes } from '../sync/upstream.ts';
import { startRun, type WriterRun } from '../writer-runs.ts';
import { runCommand } from './run.ts';

const USAGE = `usage: npm run sync -- --from <upstream FHIR base> [options]

Mirrors an upstream FHIR directory API (another instance of this server, or the national one) into
DATABASE_URL or the embedded database in DATA_DIR: the first run copies everything, later runs what
changed since (by _lastUpdated). The upstream's API key is read from SYNC_API_KEY.
  --from URL          the upstream's base, e.g. https://host/fhir/v2
  --types A,B         types to mirror (default ${DEFAULT_TYPES.join(',')}; Location, Device
                      and HealthcareService come too when the upstream offers them)
  --rate N            requests per second at most (default 15)
  --count N           page size asked of the upstream (default 1000; its own size is followed)
  --overlap S         seconds before the watermark asked again, for changes committed late (default 300)
  --timeout S         seconds a request may take (default 60)
  --retries N         retries of a request on 429, 5xx, timeouts and network errors (default 6)
  --key-header NAME   header that carries the key (default SERVICE-API-KEY)
  --parallel N        types mirrored at once, sharing --rate (default 3)
  --prune             then delete local resources the upstream no longer has (walks its ids)
  --max-prune P       refuse to delete more than P % of a type's resources (default 1)
  --force             delete even beyond --max-prune
Exit code: 0 mirrored, 2 some resources rejected, 1 failure (what was committed stays, and the
next run resumes from it).`;

const fmt = (n: number) => n.toLocaleString('en-US');

function positive(name: string, raw: string, integer: boolean, max: number): number {
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v <= 0 || v > max || (integer && !Number.isInteger(v))) {
    throw new SyncError(`--${name} must be ${integer ? 'an integer' : 'a number'} above 0 and at most ${max}, got "${raw}"`);
  }
  return v;
}

function upstreamBase(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new SyncError(`--from must be an http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SyncError(`--from must be an http(s) URL, got "${raw}"`);
  if (u.username || u.password) throw new SyncError('--from must not carry credentials: put the key in SYNC_API_KEY');
  if (u.search || u.hash) throw new SyncError('--from is the FHIR base, without query or fragment');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

async function main(): Promise<number> {
  const args = parseArgs({
    options: {
      from: { type: 'string' },
      types: { type: 'string', default: DEFAULT_TYPES.join(',') },
      rate: { type: 'string', default: '15' },
      count: { type: 'string', default: '1000' },
      overlap: { type: 'string', default: '300' },
      timeout: { type: 'string', default: '60' },
      retries: { type: 'string', default: '6' },
      'key-header': { type: 'string', default: 'SERVICE-API-KEY' },
      parallel: { type: 'string', default: '3' },
      prune: { type: 'boolean', default: false },
      'max-prune': { type: 'string', default: '1' },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.from === undefined) throw new SyncError(`--from is required\n${USAGE}`);
  const base = upstreamBase(args.from);
  const types = parseTypes(args.types);
  const rate = positive('rate', args.rate, false, 1000);
  const count = positive('count', args.count, true, 100_000);
  const overlap = args.overlap.trim() === '0' ? 0 : positive('overlap', args.overlap, false, 86_400 * 30);
  const timeout = positive('timeout', args.timeout, false, 3600);
  const retries = args.retries.trim() === '0' ? 0 : positive('retries', args.retries, true, 100);
  const maxPrune = positive('max-prune', args['max-prune'], false, 100);
  const parallel = positive('parallel', args.parallel, true, 8);
  loadDotEnv();
  const config = loadConfig();
  const tty = process.stderr.isTTY;
  const clear = () => tty && process.stderr.write('\r\x1b[K');
  const say = (m: string, to = console.error) => {
    clear();
    to(m);
  };
  const client = new UpstreamClient({ base, apiKey: config.syncApiKey, keyHeader: args['key-header'], rate, timeoutMs: timeout * 1000, retries, onRetry: say });
  if (config.syncApiKey === undefined) say('SYNC_API_KEY is not set: the upstream is asked without a key');

  // A connection per type written at once, and one to intern token systems outside their transactions.
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, persistent: true, profile: { sharedBuffers: config.embeddedSharedBuffers }, max: parallel + 1 });
  const systems = new TokenSystems();
  const t0 = Date.now();
  const results: TypeSummary[] = [];
  const pruned: PruneSummary[] = [];
  let rejected = 0;
  // Recorded in writer_run, for the server's metrics: a cron job that stopped syncing shows there,
  // an upstream that does not answer included.
  let run: WriterRun | undefined;
  const progress = (what: string, done: number, pages: number, total?: number) => {
    if (!tty) return;
    const s = (Date.now() - t0) / 1000;
    const r = done / Math.max(s, 0.001);
    const eta = total !== undefined && total > done && r > 0 ? `, ETA ${Math.round((total - done) / r)} s` : '';
    process.stderr.write(`\r\x1b[K${what}: ${fmt(done)}${total !== undefined ? ` of ${fmt(total)}` : ''} resources, ${fmt(pages)} pages, ${fmt(Math.round(r))}/s, ${fmt(client.requests)} requests${eta}`);
  };
  try {
    run = await startRun(db.sql, 'sync', { upstream: base, types, prune: args.prune });
    const capability = await client.json(`${base}/metadata`);
    const { plans, notes } = planTypes(capability.body, types);
    for (const n of notes) say(n);
    // Types are mirrored side by side (their rows never meet): one writes while another fetches.
    const queue = [...plans];
    const failures: unknown[] = [];
    const pages = new Map<string, { resources: number; pages: number; total?: number }>();
    const typeWorker = async () => {
      for (let plan = queue.shift(); plan && failures.length === 0; plan = queue.shift()) {
        const typeStart = Date.now();
        try {
          const s = await mirrorType(db.sql, registry, systems, client, plan, {
            upstream: base,
            count,
            overlapMs: overlap * 1000,
            onReject: (where, reason) => say(`${where}: ${reason}`),
            onNote: say,
            onPage: (p) => {
              pages.set(p.type, p);
              const all = [...pages.values()];
              const total = all.length === plans.length && all.every((x) => x.total !== undefined) ? all.reduce((a, x) => a + x.total!, 0) : undefined;
              progress([...pages.keys()].join(', '), all.reduce((a, x) => a + x.resources, 0), all.reduce((a, x) => a + x.pages, 0), total);
            },
          });
          results.push(s);
          say(
            `${s.type}: ${fmt(s.fetched)} fetched in ${fmt(s.pages)} pages${s.start === 'cursor' ? ' (resumed from the interrupted run)' : ''}: ` +
              `${fmt(s.inserted)} inserted, ${fmt(s.updated)} updated, ${fmt(s.unchanged)} unchanged, ${fmt(s.rejected)} rejected; ${((Date.now() - typeStart) / 1000).toFixed(1)} s`,
            console.log,
          );
        } catch (err) {
          failures.push(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, plans.length) }, typeWorker));
    for (const f of failures.slice(1)) say(`also failed: ${(f as Error).message}`);
    if (failures.length) throw failures[0];
    if (args.prune) {
      for (const plan of plans) {
        const p = await prunePlan(db.sql, registry, systems, client, plan, {
          upstream: base,
          count,
          maxShare: maxPrune / 100,
          force: args.force,
          onPage: (x) => progress(`${x.type} ids`, x.ids, x.pages, x.total),
          onReject: (where, reason) => {
            rejected++;
            say(`${where}: ${reason}`);
          },
        });
        pruned.push(...p.types);
        clear();
        for (const s of p.types) console.log(`${s.type}: ${fmt(s.upstream)} ids upstream, ${fmt(s.local)} local, ${fmt(s.deleted)} deleted`);
        if (plan.revinclude.length) console.log(`${plan.revinclude.map((r) => r.split(':')[0]).join(', ')}: ${fmt(p.refreshed)} written while walking the ids`);
      }
    }
    // As after a load: a first copy leaves millions of rows the planner has no statistics for.
    await finishWrites(db.sql, results.reduce((a, r) => a + r.inserted + r.updated + r.deleted, 0) + pruned.reduce((a, p) => a + p.deleted, 0));
    const sum = (f: (s: TypeSummary) => number) => results.reduce((a, s) => a + f(s), 0);
    await run.finish('success', {
      fetched: sum((s) => s.fetched), inserted: sum((s) => s.inserted), updated: sum((s) => s.updated),
      rejected: rejected + sum((s) => s.rejected), deleted: pruned.reduce((a, p) => a + p.deleted, 0),
    });
  } catch (err) {
    await run?.finish('failure', { error: String((err as Error)?.message ?? err) });
    throw err;
  } finally {
    clear();
    await db.close();
  }
  const fetched = results.reduce((a, s) => a + s.fetched, 0);
  rejected += results.reduce((a, s) => a + s.rejected, 0);
  const secs = (Date.now() - t0) / 1000;
  console.log(
    `mirrored ${base}: ${fmt(fetched)} resources fetched, ${fmt(rejected)} rejected` +
      (args.prune ? `, ${fmt(pruned.reduce((a, p) => a + p.deleted, 0))} deleted` : '') +
      `; ${fmt(client.requests)} requests; ${secs.toFixed(1)} s, ${fmt(Math.round(fetched / Math.max(secs, 0.001)))} resources/s`,
  );
  return rejected > 0 ? 2 : 0;
}

runCommand(
  main,
  (err) => {
    const known = err instanceof SyncError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    return `${err instanceof ConfigError ? 'configuration: ' : 'sync failed: '}${known ? (err as Error).message : String((err as Error).message ?? err)}`;
  },
  'sync failed: it stopped waiting for an answer that never came. What was written is kept: run the same sync again to finish it.',
);
