-- The version of the rules (src/fhir/phonetic.ts SOUND_KEYS_VERSION) that made the sound keys of
-- phonetic_idx. No row: keys made before this table (version 1). When the code's version differs,
-- the keys are made again from each stored word (src/db.ts storeSoundKeys), then the version stored.
create table sound_keys_state (
  version integer not null
);
