-- A bulk load (src/load/bulk.ts) streams each table through one COPY in a transaction of its own
-- that truncated it first (COPY FREEZE: rows written frozen and all-visible, no VACUUM afterwards;
-- with wal_level=minimal, no WAL either). The five transactions commit together at the end; this
-- row exists from before the first COPY until all five have committed. Found at start-up with no
-- bulk load running, it means the load stopped before its rows were all committed: the five tables
-- (empty when the bulk load began) are emptied again and the load must be run again.
create table bulk_state (
  singleton  boolean primary key default true check (singleton),
  started_at timestamptz not null default now()
);

-- The table of each index a bulk load dropped (largest tables are rebuilt first).
alter table load_state add column table_name text;
