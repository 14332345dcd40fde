-- The runs of the commands that write the directory (npm run load, sync and import; others may
-- come, so `kind` is open): a row inserted 'running' when a run starts, set to its outcome when it ends.
-- A run killed midway stays 'running'. The server's metrics read the last finished run of each
-- kind and outcome (src/writer-runs.ts, docs/metrics.md): a cron job that stopped succeeding shows.
create table writer_run (
  id          bigint generated always as identity primary key,
  kind        text        not null,
  started_at  timestamptz not null default now(),
  finished_at timestamptz,
  outcome     text        not null default 'running' check (outcome in ('running', 'success', 'failure')),
  detail      jsonb       not null default '{}'
);
create index writer_run_last on writer_run (kind, outcome, finished_at desc) where finished_at is not null;
