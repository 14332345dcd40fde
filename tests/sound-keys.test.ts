import t from 'tap';
import { SOUND_KEYS_VERSION, soundOf } from '../src/fhir/phonetic.ts';
import { migrate, storeSoundKeys } from '../src/db.ts';
import { testDatabase } from './helpers/db.ts';

/** Sound keys made by older rules are made again from their words, once per version of the rules. */
t.test('stored sound keys of older rules are made again, only where they changed, once', async (t) => {
  const db = await testDatabase(t);
  await storeSoundKeys(db.sql);
  // Keys as version 1 wrote them: a final ene read as a schwa, an oin before a vowel as a nasal.
  const rows: [number, string, string][] = [[1, 'fontene', 'f3ten'], [2, 'antoine', '2tU1'], [2, 'antoine', '2tU1'], [3, 'fontaine', 'f3tEn'], [4, 'martin', 'mart1']];
  await db.sql`insert into phonetic_idx (rid, param, word, sound)
    select * from unnest(${rows.map((r) => r[0])}::bigint[], ${rows.map(() => 7)}::int[], ${rows.map((r) => r[1])}::text[], ${rows.map((r) => r[2])}::text[])`;
  await db.sql`delete from sound_keys_state`;

  t.same(await storeSoundKeys(db.sql), { words: 4, changed: 2 }, 'four words read, two keyed again');
  const keys = await db.sql<{ word: string; sound: string }[]>`select distinct word, sound from phonetic_idx order by word`;
  t.same(keys.map((k) => [k.word, k.sound]), [['antoine', '2tUan'], ['fontaine', 'f3tEn'], ['fontene', 'f3tEn'], ['martin', 'mart1']]);
  t.ok(keys.every((k) => soundOf(k.word) === k.sound), 'every key is its word\'s');
  t.equal(await storeSoundKeys(db.sql), undefined, 'the same version: nothing read');
  t.same(await db.sql`select version from sound_keys_state`, [{ version: SOUND_KEYS_VERSION }]);
});

t.test('a start-up after the rules changed makes the stored keys again (the migrations run storeSoundKeys)', async (t) => {
  const db = await testDatabase(t);
  await db.sql`insert into phonetic_idx (rid, param, word, sound) values (1, 7, 'fontene', 'f3ten')`;
  await db.sql`delete from sound_keys_state`;
  await migrate(db.sql);
  t.same(await db.sql`select sound from phonetic_idx where word = 'fontene'`, [{ sound: soundOf('fontene') }], 'the key of the rules in force');
  t.same(await db.sql`select version from sound_keys_state`, [{ version: SOUND_KEYS_VERSION }]);
});
