import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db.ts';
import { loadDotEnv } from '../env-file.ts';
import { finishInterruptedBulk } from '../load/bulk.ts';
import { failureMessage } from '../load/failure.ts';
import { DEFAULT_CONCURRENCY, loadFiles, loaderConnections } from '../load/loader.ts';
import { expandPaths, NOT_LOADABLE } from '../load/sources.ts';
import { registry } from '../registry/index.ts';
import { MAX_DEPTH } from '../fhir/resource.ts';
import { startRun, type WriterRun } from '../writer-runs.ts';
import { runCommand } from './run.ts';
import { integerOption, UsageError } from './usage.ts';

const USAGE = `usage: npm run load -- [--strict] [--bulk] [--batch-size N] [--concurrency N] [--workers N] <file-or-directory>...

Loads .json (a resource or a Bundle), .ndjson (one resource per line), optionally gzip-compressed
(.gz), into DATABASE_URL or the embedded database in DATA_DIR. Directories are read recursively;
files of other extensions are skipped (said once per file). An entry is rejected, and the load goes
on, when it is not valid UTF-8, not JSON, nested deeper than ${MAX_DEPTH} or not a valid resource.
  --strict        reject a whole file (nothing of it written) when any entry in it is bad
                  (with --bulk: nothing of the whole load is written)
  --bulk          initial load into an empty database: rows by COPY, indexes built once at the end
  --batch-size N  resources per transaction (default 1000)
  --concurrency N batches written at once (default ${DEFAULT_CONCURRENCY})
  --workers N     threads that parse and extract NDJSON (default 2 above 16 MiB of NDJSON, else 0)
Exit code: 0 all loaded (skipped files aside), 2 some entries or files rejected, 1 failure or no
file to load.`;

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      allowPositionals: true,
      options: {
        strict: { type: 'boolean', default: false },
        bulk: { type: 'boolean', default: false },
        'batch-size': { type: 'string', default: '1000' },
        concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 1;
  }
  if (args.values.help) {
    console.log(USAGE);
    return 0;
  }
  const batchSize = integerOption('batch-size', args.values['batch-size'], 100_000);
  const concurrency = integerOption('concurrency', args.values.concurrency, 16);
  const workers = args.values.workers === undefined ? undefined : integerOption('workers', args.values.workers, 16, 0);
  if (args.positionals.length === 0) {
    console.error(USAGE);
    return 1;
  }
  let files: string[];
  let skipped = 0;
  try {
    files = await expandPaths(args.positionals, (file) => {
      skipped++;
      console.error(`${file}: ${NOT_LOADABLE}`);
    });
  } catch (err) {
    console.error(`cannot read ${(err as NodeJS.ErrnoException).path ?? ''}: ${(err as Error).message}`);
    return 1;
  }
  if (files.length === 0) {
    console.error(skipped > 0 ? 'no file to load' : `no file to load: no .json, .ndjson or .gz file in ${args.positionals.join(', ')}`);
    return 1;
  }
  loadDotEnv();
  const config = loadConfig();
  const totalBytes = (await Promise.all(files.map((f) => stat(f).then((s) => s.size)))).reduce((a, b) => a + b, 0);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, persistent: true, profile: { sharedBuffers: config.embeddedSharedBuffers }, max: loaderConnections(concurrency) });
  const tty = process.stderr.isTTY;
  const t0 = Date.now();
  // Recorded in writer_run, for the server's metrics: a cron job that stopped loading shows there.
  let run: WriterRun | undefined;
  try {
    run = await startRun(db.sql, 'load', { files: files.length, bulk: args.values.bulk, strict: args.values.strict });
    if (!args.values.bulk) await finishInterruptedBulk(db.sql, (m) => console.error(m));
    const summary = await loadFiles(db.sql, registry, files, {
      strict: args.values.strict,
      bulk: args.values.bulk,
      batchSize,
      concurrency,
      workers,
      onReject: (where, reason) => {
        if (tty) process.stderr.write('\r\x1b[K');
        console.error(`${where}: ${reason}`);
      },
      onIndex: (name, ms) => {
        if (tty) process.stderr.write(`\r\x1b[K${name}: ${(ms / 1000).toFixed(1)} s\n`);
      },
      onProgress: ({ entries, bytes }) => {
        if (!tty) return;
        const s = (Date.now() - t0) / 1000;
        const rate = entries / Math.max(s, 0.001);
        const eta = bytes > 0 && totalBytes > bytes ? ((totalBytes - bytes) / bytes) * s : 0;
        process.stderr.write(
          `\r\x1b[K${fmt(entries)} entries, ${fmt(Math.round(rate))}/s, ${((100 * bytes) / Math.max(totalBytes, 1)).toFixed(1)}%` +
            (eta ? `, ETA ${Math.round(eta)}s` : ''),
        );
      },
    });
    if (tty) process.stderr.write('\r\x1b[K');
    const secs = summary.elapsedMs / 1000;
    const written = summary.inserted + summary.updated + summary.unchanged + summary.deleted;
    console.log(
      `${summary.files} file(s)${skipped ? ` (${skipped} skipped)` : ''}: ${fmt(summary.inserted)} inserted, ${fmt(summary.updated)} updated, ` +
        `${fmt(summary.unchanged)} unchanged, ${fmt(summary.deleted)} deleted, ${fmt(summary.rejected)} rejected` +
        (summary.rejectedFiles ? ` (${summary.rejectedFiles} file(s) rejected whole)` : '') +
        `; ${fmt(summary.indexRows)} index rows; ${secs.toFixed(1)} s` +
        (summary.indexMs ? ` (of which ${(summary.indexMs / 1000).toFixed(1)} s building indexes)` : '') +
        `, ${fmt(Math.round(written / Math.max(secs, 0.001)))} resources/s`,
    );
    const { inserted, updated, unchanged, deleted, rejected, rejectedFiles } = summary;
    await run.finish('success', { inserted, updated, unchanged, deleted, rejected, rejectedFiles });
    return rejected > 0 || rejectedFiles > 0 ? 2 : 0;
  } catch (err) {
    if (tty) process.stderr.write('\r\x1b[K');
    const message = failureMessage(err, args.values.bulk === true);
    console.error(message);
    await run?.finish('failure', { error: message });
    return 1;
  } finally {
    await db.close();
  }
}

runCommand(
  main,
  (err) => (err instanceof UsageError ? err.message : err instanceof ConfigError ? `configuration: ${err.message}` : `load failed: ${(err as Error).message}`),
  'load failed: it stopped waiting for an answer that never came. What was written is kept: run the same load again to finish it.',
);
