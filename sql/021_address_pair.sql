-- City and postal code indexed together (src/fhir/types/pair.ts), as family and given names are
-- (sql/020): a search with a prefix on each reads one range of pair_idx instead of two sets of a
-- department and a city intersected.

-- The pairs of the Organizations and Locations stored before, as the extractor makes them: each
-- type's address-city+address-postalcode is paramId('<Type>', 'address-city+address-postalcode'),
-- its parts that type's address-city and address-postalcode.
insert into pair_idx (rid, param, a, b)
select distinct c.rid, x.pair, c.norm, p.norm
from (values (1112104088, -1315790020, -1154012811),  -- Organization
             (175158948, -1711180112, -631516095))    -- Location
  as x(pair, city, postalcode)
join string_idx c on c.param = x.city
join string_idx p on p.rid = c.rid and p.param = x.postalcode;
analyze pair_idx;
