-- The labels of codes: those of the code systems shipped with the server (terminology/, stored by
-- src/db.ts at migration, `shipped`), and every Coding.display and CodeableConcept.text the write
-- path meets (src/store/write.ts). `:text` on a token parameter finds the codes whose label has a
-- word starting with each word of the value; CodeSystem/$lookup answers from here.
create table code_label (
  sys     integer not null,                -- token_system.id, 0 = no system
  code    text    not null,
  label   text    not null,
  norm    text collate "C" not null,       -- the label folded (src/fhir/normalize.ts): words, single spaces
  shipped boolean not null default false,
  primary key (sys, code, label)
);
create index code_label_norm on code_label using gin (norm gin_trgm_ops);

-- The digest of the shipped terminology last stored.
create table terminology_state (
  hash text not null
);
