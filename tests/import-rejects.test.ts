/**
 * A resource the write path refuses during an import (a NUL in a name: valid in the extract, not
 * storable) is reported at its person's first line of the extract, `file:line: reason`, by the
 * first import (the bulk load, fed the mapped resources as a stream) as by a daily one (batches),
 * and its person is left out of the state, so each run tries it again.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { HEADER_SAVOIR_FAIRE, tmpDir } from './helpers/open-data.ts';
import { importCli, storedResources } from './helpers/import.ts';
import type { Database } from '../src/db.ts';
import { testDatabase } from './helpers/db.ts';

const dir = tmpDir(t, 'import-rejects');
const file = path.join(dir, 'PS_LibreAcces_SavoirFaire.txt');
fs.writeFileSync(
  file,
  [
    HEADER_SAVOIR_FAIRE,
    "8|10009999990|810009999990|MARTIN|ÉLODIE|10|Médecin|C|Civil|CAPA|Capacité|CAPA05|Capacité de médecine d'urgence|",
    '8|10009999992|810009999992|DUPONT|JE\u0000AN|10|Médecin|C|Civil|S|Spécialité ordinale|SM54|Médecine générale|',
    '',
  ].join('\n'),
);

/** One import of the extract: the refused resource reported at its line, the rest stored, exit 2. */
async function importOnce(t: Test, db: Database, args: string[]): Promise<void> {
  const r = await importCli(db, [...args, dir]);
  t.equal(r.code, 2);
  const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('no '));
  t.equal(lines.length, 1, r.stderr);
  t.match(lines[0], `${file}:3: `);
  t.match(lines[0], /NUL/);
  t.match(r.stdout, /^2 lines read, 1 rejected/m);
  const stored = await storedResources(db);
  t.ok(stored.has('Practitioner/810009999990'), 'the good person is stored');
  t.notOk(stored.has('Practitioner/810009999992'), 'the refused one is not');
  t.same((await db.sql`select person from import_person order by person`).map((r) => r.person), ['810009999990'], 'the refused person is not in the state');
}

t.test('first import (bulk load), then a daily one (batches): the refused resource is reported at its line of the extract, exit 2', async (t) => {
  const db = await testDatabase(t);
  await t.test('first import', (t) => importOnce(t, db, []));
  await t.test('daily import', (t) => importOnce(t, db, []));
});

t.test('first import with worker threads (they map and encode the resources): the same', async (t) => {
  const db = await testDatabase(t);
  await importOnce(t, db, ['--workers', '2']);
});
