-- Bulk export jobs (FHIR Bulk Data $export, src/export). A job belongs to the API key that started
-- it (by name: names are never reused) and only that key may see, download or cancel it. Files are
-- in EXPORT_DIR/<id>/, listed in `output`; a job and its files go once `expires_at` has passed.
-- A running job holds an advisory lock in its export transaction: a 'running' row whose lock is free
-- was left by a process that stopped, and is queued again (src/export/jobs.ts).
create table export_job (
  id               text        primary key,
  key_name         text        not null,
  request          text        not null,              -- the kick-off URL, for the manifest
  types            text[]      not null,
  since            timestamptz,
  status           text        not null default 'queued' check (status in ('queued', 'running', 'done', 'failed')),
  created_at       timestamptz not null default now(),
  claimed_at       timestamptz,
  transaction_time timestamptz,
  progress         text,
  output           jsonb       not null default '[]',   -- [{type, file, count, bytes}]
  error            text,
  attempts         integer     not null default 0,
  expires_at       timestamptz
);
create index export_job_status on export_job (status, created_at);
