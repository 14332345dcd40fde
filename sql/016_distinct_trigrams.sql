-- Two indexes fewer to build and to keep up on every write.
--
-- `system|` (any code of one system) is read from the key index, the system included in it: a
-- parameter holds a few systems, each a large share of its rows, so a page in key order meets its
-- matches at once.
delete from load_state where index_name in ('token_idx_sys', 'token_idx_rid', 'string_idx_trgm');
drop index if exists token_idx_sys;
drop index if exists token_idx_rid;
create index token_idx_rid on token_idx (param, rid, code) include (sys);

-- The trigram index of :contains covers each (param, norm) once, not each of its rows (a name or a
-- city repeats on thousands of resources): a needle finds its values here, then their rows in
-- string_idx_norm. Values whose rows were all deleted stay, and match no row.
drop index if exists string_idx_trgm;
create table string_value (
  param integer not null,
  norm  text collate "C" not null
);
insert into string_value (param, norm) select distinct param, norm from string_idx;
create index string_value_key on string_value (param, norm);
create index string_value_trgm on string_value using gin (param, norm gin_trgm_ops);

-- Every write of string_idx adds its new values (a bulk load, whose triggers are off, refills the
-- table: src/load/bulk.ts). No unique constraint: two writers adding one value at once leave it
-- twice, which matches the same rows.
create function add_string_values() returns trigger language plpgsql as $$
begin
  insert into string_value (param, norm)
  select distinct c.param, c.norm from changed c
  where not exists (select 1 from string_value v where v.param = c.param and v.norm = c.norm);
  return null;
end $$;
create trigger string_idx_values after insert on string_idx referencing new table as changed
  for each statement execute function add_string_values();
