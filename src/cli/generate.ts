// npm run generate -- --scale <s> --out <dir> [--seed <n>] [--gzip]
// Writes Organization/Practitioner/PractitionerRole/Device/HealthcareService NDJSON files.

import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { formatSummary, generate, MAX_SCALE } from '../generate/index.ts';

const USAGE = `Usage: npm run generate -- --scale <s> --out <dir> [--seed <n>] [--gzip]

  --scale <s>   size relative to the national directory (1 = 1.8 M practitioners); 0 < s <= ${MAX_SCALE}
  --out <dir>   output directory (created if missing; existing files are overwritten)
  --seed <n>    integer seed, 0..4294967295 (default 1); same scale + seed => identical files
  --gzip        write .ndjson.gz instead of .ndjson
  -h, --help    show this help`;

export type CliOptions = { scale: number; out: string; seed: number; gzip: boolean };

export class UsageError extends Error {
  override name = 'UsageError';
}

export function parseCli(argv: string[]): CliOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        scale: { type: 'string' },
        out: { type: 'string' },
        seed: { type: 'string' },
        gzip: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return 'help';
  if (values.scale === undefined) throw new UsageError('--scale is required');
  if (values.out === undefined || values.out === '') throw new UsageError('--out is required');
  const scale = Number(values.scale);
  if (!/^\s*[0-9.eE+-]+\s*$/.test(values.scale) || !Number.isFinite(scale) || scale <= 0 || scale > MAX_SCALE) {
    throw new UsageError(`--scale must be a number > 0 and <= ${MAX_SCALE} (got "${values.scale}")`);
  }
  let seed = 1;
  if (values.seed !== undefined) {
    if (!/^\d+$/.test(values.seed) || Number(values.seed) > 0xffffffff) {
      throw new UsageError(`--seed must be an integer between 0 and 4294967295 (got "${values.seed}")`);
    }
    seed = Number(values.seed);
  }
  return { scale, out: values.out, seed, gzip: values.gzip ?? false };
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
  const summary = await generate({
    scale: options.scale,
    seed: options.seed,
    outDir: options.out,
    gzip: options.gzip,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stderr.write(`${formatSummary(summary)}\n`);
}

// Run only when executed directly, so tests can import parseCli.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`generate failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
