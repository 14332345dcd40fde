import type { Db } from './db.ts';
import { SOUND_KEYS_VERSION, soundOf } from './fhir/phonetic.ts';

/**
 * A stored sound key is `soundOf` of its stored word: when the rules change (SOUND_KEYS_VERSION),
 * the keys of every distinct word are made again here, in JavaScript, and only the rows whose key
 * changed are rewritten. Run with the migrations (sql/017), in their transaction.
 */
export async function storeSoundKeys(tx: Db): Promise<{ words: number; changed: number } | undefined> {
  const [state] = await tx<{ version: number }[]>`select version from sound_keys_state`;
  if (state?.version === SOUND_KEYS_VERSION) return undefined;
  const stored = await tx<{ word: string; sound: string }[]>`select distinct word, sound from phonetic_idx`;
  const changed = [...new Set(stored.filter((r) => soundOf(r.word) !== r.sound).map((r) => r.word))];
  if (changed.length > 0) {
    await tx`update phonetic_idx p set sound = n.sound
      from unnest(${changed}::text[], ${changed.map(soundOf)}::text[]) n(word, sound)
      where p.word = n.word collate "C" and p.sound <> n.sound collate "C"`;
  }
  await tx`delete from sound_keys_state`;
  await tx`insert into sound_keys_state (version) values (${SOUND_KEYS_VERSION})`;
  return { words: new Set(stored.map((r) => r.word)).size, changed: changed.length };
}
