import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbedded } from '../../src/embedded.ts';

/**
 * An embedded cluster initialised and stopped once per tap run (tests/helpers/prepare.mjs): a test
 * process copies its files instead of running initdb. Without it (a test file run alone with node),
 * each test process runs initdb as before. In the system's temporary folder, which the postgres user
 * can enter when the tests run as root (a checkout under /root is not), one per checkout, made again
 * by each run.
 */
const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PG_TEMPLATE = path.join(os.tmpdir(), `annuaire-test-template-${createHash('sha256').update(CHECKOUT).digest('hex').slice(0, 12)}`);

/** Fills `dataDir` (startEmbedded's, its cluster in `pg`) from the template, when there is one. */
export function copyTemplate(dataDir: string): void {
  const from = path.join(PG_TEMPLATE, 'pg');
  if (!existsSync(path.join(from, 'PG_VERSION'))) return;
  // cp -a keeps the files' owner: run as root, the cluster belongs to the postgres user.
  execFileSync('cp', ['-a', from, path.join(dataDir, 'pg')]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await rm(PG_TEMPLATE, { recursive: true, force: true });
  await mkdir(PG_TEMPLATE, { recursive: true });
  await chmod(PG_TEMPLATE, 0o755); // the postgres user must reach it when the tests run as root
  const handle = await startEmbedded({ dataDir: PG_TEMPLATE, persistent: true, profile: 'test' });
  await handle.stop();
}
