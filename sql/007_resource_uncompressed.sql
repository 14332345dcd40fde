-- Resources are stored uncompressed. PostgreSQL compresses (pglz) any row over 2 kB before it
-- stores it, and pglz is slow: it was half the cost of writing an Organization (COPY of the
-- national Organization file into a one-column jsonb table, 2026-11-24: 24.1 s with compression,
-- 12.7 s without) and a third of writing the whole directory (104.4 s against 71.2 s for the three
-- main files). Compression is tried only above toast_tuple_target; at its maximum, rows up to a
-- page stay inline and uncompressed (a larger one is still compressed, then moved out of line).
-- The price is disk: those three files take 10.4 GB instead of 7.0 GB. Reads gain a little: a
-- page's resources are no longer decompressed before they are rendered.
-- Applies to rows written from now on (a bulk load rewrites them all).
alter table resource set (toast_tuple_target = 8160);
