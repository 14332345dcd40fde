-- The mirror of an upstream directory (npm run sync, src/sync/): one row per upstream and type.
-- `watermark`: every upstream change whose lastUpdated is before it is in the mirror (a run asks
-- for _lastUpdated=ge watermark minus an overlap). The run_* columns describe the run in progress,
-- committed with each page it writes: `run_next` is the next link of its last committed page (null
-- when no run is in progress), `run_started` the upstream's clock at its first answer, `run_max`
-- the greatest lastUpdated it has seen.
create table sync_state (
  upstream    text not null,
  type        text not null,
  watermark   timestamptz,
  run_next    text,
  run_started timestamptz,
  run_max     timestamptz,
  run_sorted  boolean not null default false,
  updated_at  timestamptz not null default now(),
  primary key (upstream, type)
);
