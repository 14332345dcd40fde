-- The open-data import (npm run import, src/opendata/): what the last import wrote, so that the next
-- one writes only what changed. A row is written in the same transaction as its resources, so a
-- killed run leaves state that matches the database exactly.
--   import_person:    one per person (Practitioner id): the digest of its distinct lines, its
--                     PractitionerRole ids, and whether its resources are active.
--   import_structure: one per structure (Organization id): the digest of the distinct structure
--                     parts of its activity lines, and whether the Organization is active.
--   import_run:       one per run, for operators (the last run's time and outcome).
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

create table import_run (
  id          bigserial primary key,
  started_at  timestamptz not null,
  finished_at timestamptz,
  outcome     text not null check (outcome in ('running', 'done', 'failed', 'refused')),
  counts      jsonb not null default '{}'
);
create index import_run_started on import_run (started_at);
