-- The open-data import (npm run import, src/opendata/): what the last import wrote, so that the next
-- one writes only what changed. A row is written in the same transaction as its resources, so a
-- killed run leaves state that matches the database exactly.
--   import_person:    one per person (Practitioner id): the digest of its distinct lines, its
--                     PractitionerRole ids, and whether its resources are active.
--   import_structure: one per structure (Organization id): the digest of the distinct structure
--                     parts of its activity lines, and whether the Organization is active.
-- Its runs are recorded with the other writers' (writer_run, sql/014, kind 'import').
create table import_person (
  person text collate "C" primary key,
  digest text not null,
  roles  text[] not null default '{}',
  active boolean not null
);

create table import_structure (
  structure text collate "C" primary key,
  digest    text not null,
  active    boolean not null
);
