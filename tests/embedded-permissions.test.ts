import t from 'tap';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedStartError, startEmbedded } from '../src/embedded.ts';

/**
 * Started as root, the embedded PostgreSQL runs as the `postgres` user; a DATA_DIR that user cannot
 * enter (a 0700 folder of root's, as mktemp makes) stops the start with one message that names the
 * folder and the fix, before initdb runs.
 */
const root = process.getuid?.() === 0;

t.test('a DATA_DIR the postgres user cannot enter: one clear message, and its fix works', { skip: root ? false : 'only root starts PostgreSQL as another user' }, async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'locked-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  t.equal((await stat(dataDir)).mode & 0o777, 0o700, 'a folder only root may enter');

  const err = await startEmbedded({ dataDir, persistent: true, profile: 'test' }).catch((e: unknown) => e);
  t.ok(err instanceof EmbeddedStartError, 'refused before initdb ran');
  const message = (err as Error).message;
  t.match(message, `cannot enter ${dataDir} (mode 0700`, 'names the folder and its mode');
  t.match(message, `chmod o+x ${dataDir}`, 'says how to fix it');
  t.notMatch(message, /initdb|\n/, 'one line, no start-up output');

  await chmod(dataDir, 0o711);
  const cluster = await startEmbedded({ dataDir, persistent: true, profile: 'test' });
  t.teardown(() => cluster.stop());
  t.equal(cluster.owner, true, 'after the fix it starts');
});
