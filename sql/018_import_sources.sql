-- The open-data import's three sources (src/opendata/): each keeps what it last brought, so that an
-- Organization described by several is rebuilt whole when one of them changes, and a source
-- imported alone changes only what is its own.
--   import_structure.fields: the structure part of the activity line its Organization is built
--                     from (src/opendata/map.ts structurePart). None for a structure imported
--                     before: its stored Organization, the RPPS's alone until now, stands for it.
--   import_finess:    one per FINESS establishment (`F`+FINESS) or legal entity (`J`+FINESS): the
--                     digest and the Organization the feed alone describes.
--   import_mailbox:   the MSSanté extract's mailboxes, one per distinct line: its owner (a person's
--                     IDNPS for PER, the structure's identifier value for ORG) and its telecom.
--   import_pending:   owners whose mailboxes changed in the state but whose resources an
--                     interrupted import may not have rewritten yet; emptied when a run finishes.
alter table import_structure add column fields text;

create table import_finess (
  org     text collate "C" primary key,
  kind    text not null,
  digest  text not null,
  content text not null,
  active  boolean not null
);

create table import_mailbox (
  digest    text collate "C" primary key,
  kind      text not null,
  person    text collate "C",
  structure text collate "C",
  address   text collate "C" not null,
  content   text not null
);
create index import_mailbox_person on import_mailbox (person) where person is not null;
create index import_mailbox_structure on import_mailbox (structure) where structure is not null;

create table import_pending (
  kind text not null,
  key  text collate "C" not null,
  primary key (kind, key)
);
