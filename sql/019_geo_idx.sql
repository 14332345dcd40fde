-- Positions for `near` (src/fhir/types/near.ts), B-tree only (no PostGIS, no contrib module): a
-- row's `band` is its latitude band, floor(lat × 16), and (x, y, z) its unit vector. A search reads,
-- for each band its circle covers, one longitude range of the value index, then checks the exact
-- great-circle distance by the chord from the index alone (x, y, z included). The key index serves
-- :missing, a row's distance, rewrites and deletions.
create table geo_idx (
  rid   bigint  not null,
  param integer not null,
  band  integer not null,
  lat   float8  not null,            -- WGS84 degrees, -90 to 90
  lon   float8  not null,            -- WGS84 degrees, -180 to 180
  x     float8  not null,            -- cos(lat) cos(lon)
  y     float8  not null,            -- cos(lat) sin(lon)
  z     float8  not null             -- sin(lat)
);
create index geo_idx_band on geo_idx (param, band, lon) include (x, y, z, rid);
create index geo_idx_rid on geo_idx (param, rid) include (lat, lon, x, y, z);

-- The positions of Locations stored before, as the extractor makes them: Location.near is
-- paramId('Location', 'near'); a coordinate within 1e-9° of 0 is 0. A position the extractor would
-- refuse is left out (the resource is refused at its next write).
insert into geo_idx (rid, param, band, lat, lon, x, y, z)
select r.rid, 595069498, floor(p.lat * 16)::integer, p.lat, p.lon,
  cos(radians(p.lat)) * cos(radians(p.lon)), cos(radians(p.lat)) * sin(radians(p.lon)), sin(radians(p.lat))
from resource r
cross join lateral (
  select case when abs(x.lat) < 1e-9 then 0 else x.lat end as lat, case when abs(x.lon) < 1e-9 then 0 else x.lon end as lon
  from (select (r.content->'position'->>'latitude')::float8 as lat, (r.content->'position'->>'longitude')::float8 as lon
        where jsonb_typeof(r.content->'position'->'latitude') = 'number' and jsonb_typeof(r.content->'position'->'longitude') = 'number') x) p
where r.type = 'Location' and abs(p.lat) <= 90 and abs(p.lon) <= 180;
