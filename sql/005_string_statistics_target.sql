-- The (param, norm) MCV list shrinks from 1,000 to 200 entries. A prefix range is checked against
-- every entry of the list while planning: 1.3 ms for a name prefix, 2.5 ms for name:family +
-- name:given, more than executing many of them. With 200 entries: 0.56 and 1.0 ms, executed as
-- fast (national data, every path of the benchmark's string classes). Values of one parameter keep
-- their estimates from the column statistics of norm (still 1,000 entries) and the 200 most common
-- pairs.
alter statistics string_idx_param_norm set statistics 200;
analyze string_idx;
