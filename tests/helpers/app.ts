import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp, makeDeps, type AppDeps } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db.ts';
import { loadFiles, type LoadSummary } from '../../src/load/loader.ts';
import { expandPaths } from '../../src/load/sources.ts';
import { LOADER_NODE_FLAGS } from '../../src/node-flags.ts';
import { registry } from '../../src/registry/index.ts';
import { userNode } from './command.ts';
import { testDatabase } from './db.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = path.join(ROOT, 'fixtures');
export const SHARED_EXAMPLES = path.resolve(ROOT, '..', 'shared', 'ans-ig', 'examples');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A command (`load`, `import`) started as its npm script starts it, its build (dist/<command>.js,
 * made before the run by tests/helpers/prepare.mjs), on the test database; `onStart` gets its pid.
 */
export function runCli(db: Database, command: 'load' | 'import', args: string[], onStart?: (pid: number) => void): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(...userNode([...LOADER_NODE_FLAGS, path.join(ROOT, 'dist', `${command}.js`), ...args]), {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: db.url },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    onStart?.(child.pid!);
  });
}

/** The loader CLI, as `npm run load` starts it, on the test database. */
export const loaderCli = (db: Database, args: string[]): Promise<CliRun> => runCli(db, 'load', args);

/** Loads files or folders with the real loader; rejects are collected, not thrown. */
export async function load(db: Database, paths: string[], opts: Parameters<typeof loadFiles>[3] = {}): Promise<LoadSummary & { rejects: string[] }> {
  const rejects: string[] = [];
  const summary = await loadFiles(db.sql, registry, await expandPaths(paths), { ...opts, onReject: (w, r) => rejects.push(`${w}: ${r}`) });
  return { ...summary, rejects };
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  deps: AppDeps;
}

/**
 * The real app on a real database, for app.inject. `env` adds configuration (as environment
 * variables would); `paths` are loaded first.
 */
export async function testApp(
  t: { teardown(fn: () => unknown): void },
  opts: { env?: Record<string, string>; paths?: string[]; db?: Database } = {},
): Promise<TestApp> {
  const db = opts.db ?? (await testDatabase(t));
  if (opts.paths?.length) await load(db, opts.paths);
  // The count behind `total` is timed: a budget no test machine's load can exceed, so that a test
  // that expects a total does not depend on it (tests/search-count.test.ts covers the default).
  const config = loadConfig({ PUBLIC_BASE_URL: 'http://fhir.test', CURSOR_SECRET: 'test-secret-0123456789', TOTAL_BUDGET_MS: '5000', ...opts.env });
  const deps = makeDeps(config, db, registry);
  const app = await buildApp(deps);
  t.teardown(() => app.close());
  return { app, db, deps };
}
