-- Two string parameters indexed together (src/fhir/types/pair.ts): Practitioner's family and given
-- names, a row for each folded family of a resource with each of its folded given names. A prefix
-- of each is one range of (param, a, b, rid): the given names' range within each family's value.
-- (param, rid, a, b) serves rewrites and a walk in key order.
create table pair_idx (
  rid   bigint  not null,
  param integer not null,
  a     text collate "C" not null,
  b     text collate "C" not null
);
create index pair_idx_ab on pair_idx (param, a, b, rid);
create index pair_idx_rid on pair_idx (param, rid, a, b);

-- The pairs of the Practitioners stored before, as the extractor makes them: Practitioner.family+given
-- is paramId('Practitioner', 'family+given'), its parts Practitioner.family and Practitioner.given.
insert into pair_idx (rid, param, a, b)
select distinct f.rid, 638181875, f.norm, g.norm
from string_idx f join string_idx g on g.rid = f.rid and g.param = 951115054
where f.param = 794697393;
analyze pair_idx;
