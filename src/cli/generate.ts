// npm run generate -- --scale <s> --out <dir> [--seed <n>] [--gzip]
// npm run generate -- --format open-data --scale <s> --out <dir> [--seed <n>] [--zip] [--day <d>] [--change-rate <r>] [--form52]
//   [--sources rpps,finess,mss] [--mss-header-variant plain|suffixed]
// Writes Organization/Practitioner/PractitionerRole/Device/HealthcareService NDJSON files, or the
// open-data extracts (PS_LibreAcces, the FINESS feed, the MSSanté extraction) of the same kind of synthetic directory.

import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { formatBytes, formatSummary, generate, MAX_SCALE } from '../generate/index.ts';
import { generateOpenData, SOURCES, type Source } from '../generate/open-data-files.ts';
import type { MssHeaderVariant } from '../generate/open-data-mssante.ts';
import { DEFAULT_CHANGE_RATE, MAX_OPEN_DATA_SCALE } from '../generate/open-data.ts';
import { UsageError } from './usage.ts';

const USAGE = `Usage: npm run generate -- [--format ndjson|open-data] --scale <s> --out <dir> [options]

  --format <f>       ndjson (default): FHIR resources; open-data: the PS_LibreAcces extracts, the FINESS feed and the MSSanté extraction
  --scale <s>        size relative to the national directory; 0 < s <= ${MAX_SCALE} (ndjson: 1 = 1.8 M practitioners),
                     0 < s <= ${MAX_OPEN_DATA_SCALE} (open-data: 1 = 1 M persons, 1.1 M activity lines)
  --out <dir>        output directory (created if missing; existing files are overwritten)
  --seed <n>         integer seed, 0..4294967295 (default 1); same options + seed => identical files
  -h, --help         show this help

ndjson:
  --gzip             write .ndjson.gz instead of .ndjson

open-data:
  --sources <list>   comma-separated, of rpps, finess, mss (default all three):
                     rpps: PS_LibreAcces_<kind>_<stamp>.txt; finess: finess-structures-journalier-<date>.json.gz;
                     mss: Extraction_Correspondance_MSSante_<stamp>.txt
  --zip              write one PS_LibreAcces_<stamp>.zip instead of three .txt files, and the MSSanté
                     text in Extraction_Correspondance_MSSante.zip
  --day <d>          the snapshot of day d (default 0): d days of changes after the first one
  --change-rate <r>  per day, the share of activity lines (and establishments, mailboxes) that change, 0..1 (default ${DEFAULT_CHANGE_RATE})
  --form52           Personne_activite in its older 52-column form
  --mss-header-variant <v>  plain or suffixed (address columns named "… structure BAL");
                     default: by seed and day, suffixed about one day in four`;

export type CliOptions =
  | { format: 'ndjson'; scale: number; out: string; seed: number; gzip: boolean }
  | {
    format: 'open-data'; scale: number; out: string; seed: number; zip: boolean; day: number; changeRate: number; form52: boolean;
    /** absent: all of SOURCES. */
    sources?: Source[]; mssHeaderVariant?: MssHeaderVariant;
  };

function number(name: string, raw: string, ok: (n: number) => boolean, expected: string): number {
  const n = Number(raw);
  if (!/^\s*[0-9.eE+-]+\s*$/.test(raw) || !Number.isFinite(n) || !ok(n)) throw new UsageError(`--${name} must be ${expected} (got "${raw}")`);
  return n;
}

export function parseCli(argv: string[]): CliOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        format: { type: 'string', default: 'ndjson' },
        scale: { type: 'string' },
        out: { type: 'string' },
        seed: { type: 'string' },
        gzip: { type: 'boolean', default: false },
        zip: { type: 'boolean', default: false },
        day: { type: 'string' },
        'change-rate': { type: 'string' },
        form52: { type: 'boolean', default: false },
        sources: { type: 'string' },
        'mss-header-variant': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return 'help';
  const format = values.format;
  if (format !== 'ndjson' && format !== 'open-data') throw new UsageError(`--format must be ndjson or open-data (got "${format}")`);
  if (values.scale === undefined) throw new UsageError('--scale is required');
  if (values.out === undefined || values.out === '') throw new UsageError('--out is required');
  const max = format === 'ndjson' ? MAX_SCALE : MAX_OPEN_DATA_SCALE;
  const scale = number('scale', values.scale, (n) => n > 0 && n <= max, `a number > 0 and <= ${max}`);
  let seed = 1;
  if (values.seed !== undefined) {
    if (!/^\d+$/.test(values.seed) || Number(values.seed) > 0xffffffff) {
      throw new UsageError(`--seed must be an integer between 0 and 4294967295 (got "${values.seed}")`);
    }
    seed = Number(values.seed);
  }
  const out = values.out;
  if (format === 'ndjson') {
    for (const o of ['zip', 'form52'] as const) if (values[o]) throw new UsageError(`--${o} is an option of --format open-data`);
    for (const o of ['day', 'change-rate', 'sources', 'mss-header-variant'] as const) if (values[o] !== undefined) throw new UsageError(`--${o} is an option of --format open-data`);
    return { format, scale, out, seed, gzip: values.gzip ?? false };
  }
  if (values.gzip) throw new UsageError('--gzip is an option of --format ndjson (open-data takes --zip)');
  const day = values.day === undefined ? 0 : number('day', values.day, (n) => Number.isInteger(n) && n >= 0, 'an integer >= 0');
  const changeRate = values['change-rate'] === undefined ? DEFAULT_CHANGE_RATE
    : number('change-rate', values['change-rate'], (n) => n >= 0 && n <= 1, 'a number between 0 and 1');
  const sources = values.sources?.split(',').map((x) => x.trim());
  if (sources && !sources.every((x) => (SOURCES as readonly string[]).includes(x))) {
    throw new UsageError(`--sources must be a comma-separated list of ${SOURCES.join(', ')} (got "${values.sources}")`);
  }
  const variant = values['mss-header-variant'];
  if (variant !== undefined && variant !== 'plain' && variant !== 'suffixed') {
    throw new UsageError(`--mss-header-variant must be plain or suffixed (got "${variant}")`);
  }
  return {
    format, scale, out, seed, zip: values.zip ?? false, day, changeRate, form52: values.form52 ?? false,
    ...(sources && { sources: [...new Set(sources as Source[])] }), ...(variant && { mssHeaderVariant: variant }),
  };
}

async function main(): Promise<void> {
  let options: CliOptions | 'help';
  try {
    options = parseCli(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (options.format === 'open-data') {
    const started = performance.now();
    const { scale, seed, out: outDir, zip, day, changeRate, form52, sources = [...SOURCES], mssHeaderVariant } = options;
    const summary = await generateOpenData({ scale, seed, outDir, zip, day, changeRate, form52, sources, mssHeaderVariant, log });
    const bytes = summary.files.reduce((s, f) => s + f.bytes, 0) + (summary.finess?.bytes ?? 0) + (summary.mss?.bytes ?? 0);
    log(`Generated open-data day ${summary.day} (${summary.stamp})${summary.zip ? ` in ${summary.zip}` : ''}: ${formatBytes(bytes)} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return;
  }
  const summary = await generate({ scale: options.scale, seed: options.seed, outDir: options.out, gzip: options.gzip, log });
  log(formatSummary(summary));
}

// Run only when executed directly, so tests can import parseCli.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`generate failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
