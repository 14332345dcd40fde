-- Change detection no longer stores a digest of every resource. The generated `hash` column was
-- computed on every insert (two jsonb deletions, the jsonb text output and md5 of ~1.6 kB) and
-- nearly doubled the cost of writing a resource: COPY of 90,286 resources took 6.0 s with it and
-- 3.4 s without. An upsert that meets a stored row now compares the two contents, both without
-- meta.versionId and meta.lastUpdated (jsonb equality: key order and number spelling do not count),
-- so only rewrites pay for change detection.
alter table resource drop column hash;
