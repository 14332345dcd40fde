-- Counts of resources per value of a single condition, kept by the write path so that the total of
-- a broad search is read, not counted (src/fhir/types: each type's `counts`). A row is a delta: an
-- insert of index rows adds, a delete subtracts, a value's count is the sum of its rows; writers
-- append and never wait for each other, compact_value_counts() folds the rows of a value into one.
--   token:  c:<code> (any system), s:<sys>:<code> (sys 0: none), y:<sys> (any code of a system)
--   string: p:<prefix> for the first 1, 2 and 3 characters of the folded value
--   date:   d:<YYYY-MM-DD>, the UTC day of an instant
--   type:   t:<Type>, under param 0
-- A resource counts once per value whatever its rows hold (count(distinct rid) per statement: the
-- write path writes and deletes all of a resource's rows of a parameter in one statement).
create table counted_param (
  param integer primary key,
  kind  text not null check (kind in ('token', 'string', 'date'))
);

create table value_count (
  param integer not null,
  key   text collate "C" not null,
  n     bigint not null
);
create index value_count_key on value_count (param, key);

create function token_count_keys(sys integer, code text) returns text[] language sql immutable parallel safe
  as $$ select array['c:' || code, 's:' || sys || ':' || code, 'y:' || sys] $$;
create function string_count_keys(norm text) returns text[] language sql immutable parallel safe
  as $$ select coalesce(array_agg('p:' || left(norm, n)), '{}') from generate_series(1, least(3, length(norm))) n $$;
create function date_count_keys(low timestamptz) returns text[] language sql immutable parallel safe
  as $$ select array['d:' || to_char(low at time zone 'UTC', 'YYYY-MM-DD')] $$;

-- The triggers of the index tables: tg_argv[0] the kind of counted_param, tg_argv[1] the keys of a
-- row `r` (the functions above).
create function count_index_rows() returns trigger language plpgsql as $$
begin
  execute format($q$
    insert into value_count (param, key, n)
    select k.param, k.key, %s * count(distinct k.rid)
    from (select r.rid, r.param, unnest(%s) as key from changed r join counted_param c on c.param = r.param and c.kind = %L) k
    group by k.param, k.key$q$, case when tg_op = 'INSERT' then 1 else -1 end, tg_argv[1], tg_argv[0]);
  return null;
end $$;

create function count_resources() returns trigger language plpgsql as $$
begin
  insert into value_count (param, key, n)
  select 0, 't:' || r.type, (case when tg_op = 'INSERT' then 1 else -1 end) * count(*) from changed r group by r.type;
  return null;
end $$;

create trigger token_idx_count_insert after insert on token_idx referencing new table as changed
  for each statement execute function count_index_rows('token', 'token_count_keys(r.sys, r.code)');
create trigger token_idx_count_delete after delete on token_idx referencing old table as changed
  for each statement execute function count_index_rows('token', 'token_count_keys(r.sys, r.code)');
create trigger string_idx_count_insert after insert on string_idx referencing new table as changed
  for each statement execute function count_index_rows('string', 'string_count_keys(r.norm)');
create trigger string_idx_count_delete after delete on string_idx referencing old table as changed
  for each statement execute function count_index_rows('string', 'string_count_keys(r.norm)');
create trigger date_idx_count_insert after insert on date_idx referencing new table as changed
  for each statement execute function count_index_rows('date', 'date_count_keys(r.low)');
create trigger date_idx_count_delete after delete on date_idx referencing old table as changed
  for each statement execute function count_index_rows('date', 'date_count_keys(r.low)');
create trigger resource_count_insert after insert on resource referencing new table as changed for each statement execute function count_resources();
create trigger resource_count_delete after delete on resource referencing old table as changed for each statement execute function count_resources();

-- Every value's rows folded into one; values that count nothing go.
create function compact_value_counts() returns void language sql as $$
  with merged as (
    delete from value_count v using (select param, key from value_count group by 1, 2 having count(*) > 1 or sum(n) = 0) m
    where v.param = m.param and v.key = m.key returning v.param, v.key, v.n)
  insert into value_count (param, key, n) select param, key, sum(n) from merged group by 1, 2 having sum(n) <> 0
$$;

-- The counts recomputed from the index tables (counted_param changed: the registry did).
create function rebuild_value_counts() returns void language sql as $$
  truncate value_count;
  insert into value_count (param, key, n)
  select k.param, k.key, count(distinct k.rid) from (
    select t.rid, t.param, unnest(token_count_keys(t.sys, t.code)) as key from token_idx t join counted_param c on c.param = t.param and c.kind = 'token'
    union all
    select s.rid, s.param, unnest(string_count_keys(s.norm)) from string_idx s join counted_param c on c.param = s.param and c.kind = 'string'
    union all
    select d.rid, d.param, unnest(date_count_keys(d.low)) from date_idx d join counted_param c on c.param = d.param and c.kind = 'date'
  ) k group by 1, 2;
  insert into value_count (param, key, n) select 0, 't:' || type, count(*) from resource group by type;
$$;
