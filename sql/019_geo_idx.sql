-- Positions for `near` (src/fhir/types/near.ts), B-tree only (no PostGIS, no contrib module): a
-- row's `band` is its latitude band, floor(lat × 16). A search reads, for each band its circle
-- covers, one longitude range of the value index (lat included: the distance is checked from the
-- index alone), then the exact great-circle distance. The key index serves :missing, rewrites and
-- deletions, like every index table's.
create table geo_idx (
  rid   bigint  not null,
  param integer not null,
  band  integer not null,
  lat   float8  not null,            -- WGS84 degrees, -90 to 90
  lon   float8  not null             -- WGS84 degrees, -180 to 180
);
create index geo_idx_band on geo_idx (param, band, lon) include (lat, rid);
create index geo_idx_rid on geo_idx (param, rid, lat, lon);

-- The positions of Locations stored before, as the extractor makes them: Location.near is
-- paramId('Location', 'near'); a coordinate within 1e-9° of 0 is 0. A position the extractor would
-- refuse is left out (the resource is refused at its next write).
insert into geo_idx (rid, param, band, lat, lon)
select r.rid, 595069498, floor(p.lat * 16)::integer, p.lat, p.lon
from resource r
cross join lateral (
  select case when abs(x.lat) < 1e-9 then 0 else x.lat end as lat, case when abs(x.lon) < 1e-9 then 0 else x.lon end as lon
  from (select (r.content->'position'->>'latitude')::float8 as lat, (r.content->'position'->>'longitude')::float8 as lon
        where jsonb_typeof(r.content->'position'->'latitude') = 'number' and jsonb_typeof(r.content->'position'->'longitude') = 'number') x) p
where r.type = 'Location' and abs(p.lat) <= 90 and abs(p.lon) <= 180;
