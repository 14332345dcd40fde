import { constants, setPriority } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { classifyDbError } from '../db-errors.ts';
import { openDatabase } from '../db.ts';
import { BulkIncomplete } from '../load/bulk.ts';
import { DEFAULT_CONCURRENCY } from '../load/loader.ts';
import { importConnections, importOpenData, ImportRefused, OpenDataError, SnapshotRefused, type ImportSummary } from '../opendata/import.ts';
import { COUNTED_NAMES, MAX_GONE_SHARE, TYPE_NAMES, type CountedType, type DiffType } from '../opendata/snapshot.ts';
import { Progress, PROGRESS_INTERVAL_MS } from './import-progress.ts';
import { runCommand } from './run.ts';
import { integerOption, UsageError } from './usage.ts';

const USAGE = `usage: npm run import -- [--force] [--batch-size N] [--concurrency N] [--workers N] <file | ZIP | folder>...

Imports the national open data into DATABASE_URL or the embedded database in DATA_DIR, as
Practitioner, Organization, PractitionerRole and Location: the RPPS extracts (PS_LibreAcces: Personne_activite,
SavoirFaire, Dipl_AutExerc), the FINESS feed (finess-structures-*.json.gz) and the MSSanté
extraction (Extraction_Correspondance_MSSante, the ZIP or the text), any of them, recognised by
content. Each source is its own snapshot; one left out keeps what it brought. Each import is the directory as of its files:
what is unchanged is not written, what changed gets a new version, what is absent becomes
inactive. Safe while the server serves; one import at a time.
  --force          deactivate even more than ${MAX_GONE_SHARE * 100} % of a type's active resources, and import a
                   file whose last line is cut, that line rejected (both refused otherwise: a truncated
                   download must not empty the directory)
  --batch-size N   resources per transaction (default 1000)
  --concurrency N  transactions at once (default ${DEFAULT_CONCURRENCY})
  --workers N      threads that stage the lines and map a first import's, and parse them for its
                   bulk load (default 2 from 4 MiB of input; 0: none, all on the main thread)
A rejected line never deactivates: the persons it names keep their state; if it names none,
nothing of the types its file feeds is deactivated (the summary says so).
Exit code: 0 imported, 2 imported but some lines rejected (file:line: reason), 1 failure or refusal
(nothing of this import was written, or, if the database went away, what was written is kept and
the same command finishes it).`;

const fmt = (n: number) => n.toLocaleString('en-US');

/** One line saying why the import stopped and what is stored. */
function failureMessage(err: unknown): string {
  if (err instanceof ImportRefused || err instanceof SnapshotRefused) return `import refused: ${err.message}.`;
  if (err instanceof OpenDataError) return `import failed: ${err.message}. Nothing was written.`;
  const cause = err instanceof BulkIncomplete ? err.cause : err;
  const text = cause instanceof Error ? cause.message : String(cause);
  const what = classifyDbError(cause) ? `the database went away or did not answer (${text})` : text;
  return `import failed: ${what}. What was written is kept, with the state that describes it: run the same import again to finish it.`;
}

function report(s: ImportSummary): string {
  const lines = (Object.keys(COUNTED_NAMES) as CountedType[]).map((t) => {
    const c = s.counts[t];
    return `${COUNTED_NAMES[t].label}: ${fmt(c.new)} new, ${fmt(c.changed)} changed, ${fmt(c.deactivated)} deactivated, ${fmt(c.unchanged)} unchanged`;
  });
  if (s.held) lines.push(`${fmt(s.held)} person${s.held > 1 ? 's' : ''} kept as they were: a line naming them was rejected`);
  for (const u of s.unattributed) {
    const kept = [...(Object.keys(TYPE_NAMES) as DiffType[]).filter((t) => u.kept.includes(t)).map((t) => TYPE_NAMES[t].label), ...(u.kept.includes('mailboxes') ? ['mailbox'] : [])];
    const what = kept.length > 1 ? `${kept.slice(0, -1).join(', ')} or ${kept.at(-1)}` : kept[0];
    lines.push(`${fmt(u.lines)} rejected line${u.lines > 1 ? 's' : ''} of ${u.file} name${u.lines > 1 ? '' : 's'} no ${u.kept.includes('mailboxes') ? 'mailbox' : 'person'}: no ${what} ${u.kept.includes('mailboxes') ? 'removed' : 'deactivated'} by this import`);
  }
  if (s.finess) {
    const f = s.finess;
    lines.push(`FINESS: ${fmt(f.establishments.snapshot)} establishments (${fmt(f.establishments.changed)} new or changed, ${fmt(f.establishments.gone)} gone), ` +
      `${fmt(f.legal.snapshot)} legal entities (${fmt(f.legal.changed)} new or changed, ${fmt(f.legal.gone)} gone)`);
  }
  if (s.mailboxes) {
    const m = s.mailboxes;
    lines.push(`MSSanté: ${fmt(m.snapshot)} mailboxes (${fmt(m.changed)} added, ${fmt(m.gone)} removed); ` +
      `${fmt(m.unknownPersons)} of a person and ${fmt(m.unknownStructures)} of a structure the directory does not know`);
  }
  lines.push(
    `${fmt(s.lines)} lines read, ${fmt(s.rejected)} rejected${s.skippedFiles ? `, ${s.skippedFiles} file(s) skipped` : ''}; ` +
      `${s.path === 'bulk' ? 'first import (bulk load)' : 'import'} as of ${s.startedAt.toISOString()} in ${(s.elapsedMs / 1000).toFixed(1)} s, ` +
      `peak memory ${fmt(Math.round(process.resourceUsage().maxRSS / 1024))} MB`,
  );
  return lines.join('\n');
}

async function main(): Promise<number> {
  const args = parseArgs({
    allowPositionals: true,
    options: {
      force: { type: 'boolean', default: false },
      'batch-size': { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
      workers: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (args.values.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.positionals.length === 0) throw new UsageError(USAGE);
  const batchSize = integerOption('batch-size', args.values['batch-size'], 100_000);
  const concurrency = integerOption('concurrency', args.values.concurrency, 16);
  const workers = args.values.workers === undefined ? undefined : integerOption('workers', args.values.workers, 16, 0);
  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, persistent: true, max: importConnections(concurrency) });
  // A batch beside a server: its threads (the workers inherit it) yield the CPU to searches. After
  // the database opens, so that an embedded PostgreSQL started here keeps the normal priority.
  setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
  // IMPORT_PROGRESS_MS: a shorter interval between plain progress lines, for tests.
  const progress = new Progress(process.stderr.isTTY, Number(process.env.IMPORT_PROGRESS_MS) || PROGRESS_INTERVAL_MS);
  try {
    const summary = await importOpenData(db.sql, args.positionals, {
      batchSize,
      concurrency,
      workers,
      force: args.values.force,
      onReject: (where, reason) => progress.say(`${where}: ${reason}`),
      onSkip: (file, reason) => progress.say(`${file}: skipped: ${reason}`),
      onNote: (message) => progress.say(message),
      onProgress: (p) => progress.update(p),
    });
    progress.stop();
    console.log(report(summary));
    return summary.rejected > 0 ? 2 : 0;
  } finally {
    progress.stop();
    await db.close();
  }
}

runCommand(
  main,
  (err) => {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    return err instanceof ConfigError ? `configuration: ${err.message}` : usage ? (err as Error).message : failureMessage(err);
  },
  failureMessage(new Error('it stopped waiting for an answer that never came')),
);
