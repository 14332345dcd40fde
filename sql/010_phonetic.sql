-- The words of `phonetic` parameters (src/fhir/types/phonetic.ts): every word of a value, folded,
-- and its French phonetic key. A word is found by its spelling, by its sound, or among the
-- one-typo spellings of a query word (an array of spellings, looked up in the word index).
create table phonetic_idx (
  rid   bigint  not null,
  param integer not null,
  word  text collate "C" not null,
  sound text collate "C" not null
);
create index phonetic_idx_word on phonetic_idx (param, word, rid);
create index phonetic_idx_sound on phonetic_idx (param, sound, rid);
create index phonetic_idx_rid on phonetic_idx (param, rid, word);
alter table phonetic_idx alter column word set statistics 1000;
alter table phonetic_idx alter column sound set statistics 1000;
