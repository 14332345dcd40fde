-- Compactions run one at a time: two at once would each fold only the rows their snapshot saw, and a
-- value would keep two rows. The lock comes first, so the fold's statement (a fresh snapshot: the
-- function is volatile) sees what the compaction before it wrote.
create or replace function compact_value_counts() returns void language sql as $$
  select pg_advisory_xact_lock(724014);
  with merged as (
    delete from value_count v using (select param, key from value_count group by 1, 2 having count(*) > 1 or sum(n) = 0) m
    where v.param = m.param and v.key = m.key returning v.param, v.key, v.n)
  insert into value_count (param, key, n) select param, key, sum(n) from merged group by 1, 2 having sum(n) <> 0
$$;
