/**
 * A command's exit (src/cli/run.ts): its code, one line for an error, and exit code 1 with a line —
 * never a silent 0 — when its work waits for a promise nothing will ever settle.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { userNode } from './helpers/command.ts';

const RUN = path.join(import.meta.dirname, '..', 'src', 'cli', 'run.ts');

function command(main: string) {
  const script = `import { runCommand } from ${JSON.stringify(RUN)};
runCommand(${main}, (err) => 'failed: ' + err.message, 'stalled: nothing will ever answer');`;
  const r = spawnSync(...userNode(['--import', 'tsx', '--input-type=module', '-e', script]), { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('the exit code of main', async (t) => {
  t.match(command('async () => 2'), { code: 2, stderr: '' });
  t.match(command('async () => { setTimeout(() => {}, 50); await new Promise((r) => setTimeout(r, 100)); return 0; }'), { code: 0, stderr: '' }, 'after waiting on a timer');
});

t.test('an error: one line, exit code 1', async (t) => {
  t.match(command("async () => { throw new Error('no database') }"), { code: 1, stderr: 'failed: no database\n' });
});

t.test('a main that waits for ever on nothing: one line, exit code 1', async (t) => {
  t.match(command('() => new Promise(() => {})'), { code: 1, stdout: '', stderr: 'stalled: nothing will ever answer\n' });
});
