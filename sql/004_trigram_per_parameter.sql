-- The trigram index leads with the parameter (btree_gin): a :contains search reads the posting
-- lists of its own parameter's values only. With norm alone, a trigram common in addresses but rare
-- in names sent every address row through the bitmap and the heap recheck of a name search.
create extension if not exists btree_gin;
drop index if exists string_idx_trgm;
create index string_idx_trgm on string_idx using gin (param, norm gin_trgm_ops);
