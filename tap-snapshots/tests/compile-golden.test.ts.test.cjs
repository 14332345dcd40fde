/* IMPORTANT
 * This snapshot file is auto-generated, but designed for humans.
 * It should be checked into source control and tracked carefully.
 * Re-generate by setting TAP_SNAPSHOT=1 and running tests.
 * Make sure to inspect the output below.  Do not ignore changes!
 */
'use strict'
exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > Organization?_include=*: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select t.rid
  from reference_idx x
  join resource t on t.type = x.target_type
    and t.id = x.target_id
  where x.rid = any($1::bigint[])
    and (x.param = $2)
  union
  select x.rid
  from reference_idx x
  where x.param = any($3::int[])
    and x.target_type = $4
    and x.target_id = any($5::text[])
)
  and r.rid <> all($6::bigint[])
order by r.rid
limit $7
-- $1 = ["11", "12"]
-- $2 = -287431876 (Organization.partof)
-- $3 = [-1843838546 (PractitionerRole.organization), 2124547271 (Location.organization), -1518042888 (Device.organization), -1624926242 (HealthcareService.organization)]
-- $4 = "Organization"
-- $5 = ["a", "b"]
-- $6 = ["11", "12"]
-- $7 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > Organization?_include=Organization:partof:Organization&_revinclude=PractitionerRole:organization: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select t.rid
  from reference_idx x
  join resource t on t.type = x.target_type
    and t.id = x.target_id
  where x.rid = any($1::bigint[])
    and ((x.param = $2 and x.target_type = $3))
  union
  select x.rid
  from reference_idx x
  where x.param = any($4::int[])
    and x.target_type = $5
    and x.target_id = any($6::text[])
)
  and r.rid <> all($7::bigint[])
order by r.rid
limit $8
-- $1 = ["11", "12"]
-- $2 = -287431876 (Organization.partof)
-- $3 = "Organization"
-- $4 = [-1843838546 (PractitionerRole.organization)]
-- $5 = "Organization"
-- $6 = ["a", "b"]
-- $7 = ["11", "12"]
-- $8 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > Practitioner?_revinclude=*: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select x.rid
  from reference_idx x
  where x.param = any($1::int[])
    and x.target_type = $2
    and x.target_id = any($3::text[])
)
  and r.rid <> all($4::bigint[])
order by r.rid
limit $5
-- $1 = [-364934787 (PractitionerRole.practitioner)]
-- $2 = "Practitioner"
-- $3 = ["a", "b"]
-- $4 = ["11", "12"]
-- $5 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > PractitionerRole?_include=*: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select t.rid
  from reference_idx x
  join resource t on t.type = x.target_type
    and t.id = x.target_id
  where x.rid = any($1::bigint[])
    and (x.param = $2 or x.param = $3 or x.param = $4)
)
  and r.rid <> all($5::bigint[])
order by r.rid
limit $6
-- $1 = ["11", "12"]
-- $2 = -364934787 (PractitionerRole.practitioner)
-- $3 = -1843838546 (PractitionerRole.organization)
-- $4 = -437351886 (PractitionerRole.location)
-- $5 = ["11", "12"]
-- $6 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > PractitionerRole?_include=PractitionerRole:*: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select t.rid
  from reference_idx x
  join resource t on t.type = x.target_type
    and t.id = x.target_id
  where x.rid = any($1::bigint[])
    and (x.param = $2 or x.param = $3 or x.param = $4)
)
  and r.rid <> all($5::bigint[])
order by r.rid
limit $6
-- $1 = ["11", "12"]
-- $2 = -364934787 (PractitionerRole.practitioner)
-- $3 = -1843838546 (PractitionerRole.organization)
-- $4 = -437351886 (PractitionerRole.location)
-- $5 = ["11", "12"]
-- $6 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > PractitionerRole?_include=PractitionerRole:practitioner: an empty page 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > PractitionerRole?_include=PractitionerRole:practitioner: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select t.rid
  from reference_idx x
  join resource t on t.type = x.target_type
    and t.id = x.target_id
  where x.rid = any($1::bigint[])
    and (x.param = $2)
)
  and r.rid <> all($3::bigint[])
order by r.rid
limit $4
-- $1 = ["11", "12"]
-- $2 = -364934787 (PractitionerRole.practitioner)
-- $3 = ["11", "12"]
-- $4 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _include and _revinclude > v1/Organization?_revinclude=PractitionerRole:organization: page rids 11,12 ids a,b 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from resource r
where r.rid in (
  select x.rid
  from reference_idx x
  where x.param = any($1::int[])
    and x.target_type = $2
    and x.target_id = any($3::text[])
)
  and r.rid <> all($4::bigint[])
order by r.rid
limit $5
-- $1 = [-1843838546 (PractitionerRole.organization)]
-- $2 = "Organization"
-- $3 = ["a", "b"]
-- $4 = ["11", "12"]
-- $5 = 101
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_lastUpdated=ge2024-01-01&_sort=_lastUpdated: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."low" as "s1", json_build_array(
      1, w."low", "w".rid::text
    )::text as key
    from (select "d".* from "date_idx" "d" where "d".param = $1 and (d.low >= $2)) w
    where true
    order by "s1" asc, rid asc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_lastUpdated=ge2024-01-01&_sort=_lastUpdated: phase 2 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=_id: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."id" as "s1", json_build_array(
      1, w."id", "w".rid::text
    )::text as key
    from resource w
    where w.type = $1
    order by "s1" asc, rid asc
    limit $2
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "Practitioner"
-- $2 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=_id: phase 2 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=_lastUpdated,family after phase 1 ["2024-03-01T10:00:00.000Z","􏿿"] rid 1234: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, "s2" asc, rid asc) as ord
  from (
    select distinct on ("s1", "s2", rid) "w".rid, w."low" as "s1", coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = "w".rid), $2::text
    ) as "s2", json_build_array(
      1, w."low", coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = "w".rid), $4::text
      ), "w".rid::text
    )::text as key
    from "date_idx" w
    where w.param = $5
      and w."low" >= $6::text::timestamptz
      and (
        w."low" > $7::text::timestamptz
          or w."low" = $8::text::timestamptz
          and coalesce(
            (select min(o."norm") from "string_idx" o where o.param = $9 and o.rid = "w".rid), $10::text
          ) > $11::text
          or w."low" = $12::text::timestamptz
          and coalesce(
            (select min(o."norm") from "string_idx" o where o.param = $13 and o.rid = "w".rid), $14::text
          ) = $15::text
          and "w".rid > $16::bigint
      )
    order by "s1" asc, "s2" asc, rid asc
    limit $17
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = "<U+10FFFF>"
-- $3 = 794697393 (Practitioner.family)
-- $4 = "<U+10FFFF>"
-- $5 = 669280917 (Practitioner._lastUpdated)
-- $6 = "2024-03-01T10:00:00.000Z"
-- $7 = "2024-03-01T10:00:00.000Z"
-- $8 = "2024-03-01T10:00:00.000Z"
-- $9 = 794697393 (Practitioner.family)
-- $10 = "<U+10FFFF>"
-- $11 = "<U+10FFFF>"
-- $12 = "2024-03-01T10:00:00.000Z"
-- $13 = 794697393 (Practitioner.family)
-- $14 = "<U+10FFFF>"
-- $15 = "<U+10FFFF>"
-- $16 = "1234"
-- $17 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=_lastUpdated,family after phase 1 ["2024-03-01T10:00:00.000Z","􏿿"] rid 1234: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select x.rid, coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", json_build_array(
      2, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = x.rid), $4::text
      ), x.rid::text
    )::text as key
    from (select r.rid from resource r where r.type = $5) x
    where not exists (select 1 from "date_idx" o where o.param = $6 and o.rid = x.rid)
    order by "s1" asc, rid asc
    limit $7
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = "<U+10FFFF>"
-- $3 = 794697393 (Practitioner.family)
-- $4 = "<U+10FFFF>"
-- $5 = "Practitioner"
-- $6 = 669280917 (Practitioner._lastUpdated)
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-_lastUpdated: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" desc, rid desc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."low" as "s1", json_build_array(
      1, w."low", "w".rid::text
    )::text as key
    from "date_idx" w
    where w.param = $1
    order by "s1" desc, rid desc
    limit $2
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-_lastUpdated: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by rid desc) as ord
  from (
    select x.rid, json_build_array(2, x.rid::text)::text as key
    from (select r.rid from resource r where r.type = $1) x
    where not exists (select 1 from "date_idx" o where o.param = $2 and o.rid = x.rid)
    order by rid desc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "Practitioner"
-- $2 = 669280917 (Practitioner._lastUpdated)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-family,given after phase 1 ["martin","jean"] rid 1234: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" desc, "s2" asc, rid desc) as ord
  from (
    select distinct on ("s1", "s2", rid) "w".rid, w."norm" as "s1", coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = "w".rid), $2::text
    ) as "s2", json_build_array(
      1, w."norm", coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = "w".rid), $4::text
      ), "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $5
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $6
          and o.rid = w.rid
          and o."norm" > w."norm"
      )
      and w."norm" <= $7::text
      and (
        w."norm" < $8::text
          or w."norm" = $9::text
          and coalesce(
            (select min(o."norm") from "string_idx" o where o.param = $10 and o.rid = "w".rid), $11::text
          ) > $12::text
          or w."norm" = $13::text
          and coalesce(
            (select min(o."norm") from "string_idx" o where o.param = $14 and o.rid = "w".rid), $15::text
          ) = $16::text
          and "w".rid < $17::bigint
      )
    order by "s1" desc, "s2" asc, rid desc
    limit $18
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 794697393 (Practitioner.family)
-- $6 = 794697393 (Practitioner.family)
-- $7 = "martin"
-- $8 = "martin"
-- $9 = "martin"
-- $10 = 951115054 (Practitioner.given)
-- $11 = "<U+10FFFF>"
-- $12 = "jean"
-- $13 = "martin"
-- $14 = 951115054 (Practitioner.given)
-- $15 = "<U+10FFFF>"
-- $16 = "jean"
-- $17 = "1234"
-- $18 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-family,given after phase 1 ["martin","jean"] rid 1234: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid desc) as ord
  from (
    select x.rid, coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", json_build_array(
      2, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = x.rid), $4::text
      ), x.rid::text
    )::text as key
    from (select r.rid from resource r where r.type = $5) x
    where not exists (select 1 from "string_idx" o where o.param = $6 and o.rid = x.rid)
    order by "s1" asc, rid desc
    limit $7
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = "Practitioner"
-- $6 = 794697393 (Practitioner.family)
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-family,given after phase 2 ["jean"] rid 1234: phase 1 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-family,given after phase 2 ["jean"] rid 1234: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid desc) as ord
  from (
    select x.rid, coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", json_build_array(
      2, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = x.rid), $4::text
      ), x.rid::text
    )::text as key
    from (select r.rid from resource r where r.type = $5) x
    where not exists (select 1 from "string_idx" o where o.param = $6 and o.rid = x.rid)
      and (
        coalesce(
          (select min(o."norm") from "string_idx" o where o.param = $7 and o.rid = x.rid), $8::text
        ) > $9::text
          or coalesce(
            (select min(o."norm") from "string_idx" o where o.param = $10 and o.rid = x.rid), $11::text
          ) = $12::text
          and x.rid < $13::bigint
      )
    order by "s1" asc, rid desc
    limit $14
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = "Practitioner"
-- $6 = 794697393 (Practitioner.family)
-- $7 = 951115054 (Practitioner.given)
-- $8 = "<U+10FFFF>"
-- $9 = "jean"
-- $10 = 951115054 (Practitioner.given)
-- $11 = "<U+10FFFF>"
-- $12 = "jean"
-- $13 = "1234"
-- $14 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-family: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" desc, rid desc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."norm" as "s1", json_build_array(
      1, w."norm", "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $1
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $2
          and o.rid = w.rid
          and o."norm" > w."norm"
      )
    order by "s1" desc, rid desc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = 794697393 (Practitioner.family)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=-family: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by rid desc) as ord
  from (
    select x.rid, json_build_array(2, x.rid::text)::text as key
    from (select r.rid from resource r where r.type = $1) x
    where not exists (select 1 from "string_idx" o where o.param = $2 and o.rid = x.rid)
    order by rid desc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "Practitioner"
-- $2 = 794697393 (Practitioner.family)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=family after phase 1 ["martin"] rid 1234: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."norm" as "s1", json_build_array(
      1, w."norm", "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $1
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $2
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
      and (w."norm", "w".rid) > ($3::text, $4::bigint)
    order by "s1" asc, rid asc
    limit $5
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = 794697393 (Practitioner.family)
-- $3 = "martin"
-- $4 = "1234"
-- $5 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=family after phase 1 ["martin"] rid 1234: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by rid asc) as ord
  from (
    select x.rid, json_build_array(2, x.rid::text)::text as key
    from (select r.rid from resource r where r.type = $1) x
    where not exists (select 1 from "string_idx" o where o.param = $2 and o.rid = x.rid)
    order by rid asc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "Practitioner"
-- $2 = 794697393 (Practitioner.family)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=family,-given,_lastUpdated: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, "s2" desc, "s3" asc, rid asc) as ord
  from (
    select distinct on ("s1", "s2", "s3", rid) "w".rid, w."norm" as "s1", coalesce(
      (select max(o."norm") from "string_idx" o where o.param = $1 and o.rid = "w".rid), $2::text
    ) as "s2", coalesce(
      (select min(o."low") from "date_idx" o where o.param = $3 and o.rid = "w".rid), $4::text::timestamptz
    ) as "s3", json_build_array(
      1, w."norm", coalesce(
        (select max(o."norm") from "string_idx" o where o.param = $5 and o.rid = "w".rid), $6::text
      ), coalesce(
        (select min(o."low") from "date_idx" o where o.param = $7 and o.rid = "w".rid), $8::text::timestamptz
      ), "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $9
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $10
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
    order by "s1" asc, "s2" desc, "s3" asc, rid asc
    limit $11
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = ""
-- $3 = 669280917 (Practitioner._lastUpdated)
-- $4 = "infinity"
-- $5 = 951115054 (Practitioner.given)
-- $6 = ""
-- $7 = 669280917 (Practitioner._lastUpdated)
-- $8 = "infinity"
-- $9 = 794697393 (Practitioner.family)
-- $10 = 794697393 (Practitioner.family)
-- $11 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=family,-given,_lastUpdated: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" desc, "s2" asc, rid asc) as ord
  from (
    select x.rid, coalesce(
      (select max(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", coalesce(
      (select min(o."low") from "date_idx" o where o.param = $3 and o.rid = x.rid), $4::text::timestamptz
    ) as "s2", json_build_array(
      2, coalesce(
        (select max(o."norm") from "string_idx" o where o.param = $5 and o.rid = x.rid), $6::text
      ), coalesce(
        (select min(o."low") from "date_idx" o where o.param = $7 and o.rid = x.rid), $8::text::timestamptz
      ), x.rid::text
    )::text as key
    from (select r.rid from resource r where r.type = $9) x
    where not exists (select 1 from "string_idx" o where o.param = $10 and o.rid = x.rid)
    order by "s1" desc, "s2" asc, rid asc
    limit $11
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = ""
-- $3 = 669280917 (Practitioner._lastUpdated)
-- $4 = "infinity"
-- $5 = 951115054 (Practitioner.given)
-- $6 = ""
-- $7 = 669280917 (Practitioner._lastUpdated)
-- $8 = "infinity"
-- $9 = "Practitioner"
-- $10 = 794697393 (Practitioner.family)
-- $11 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=family: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."norm" as "s1", json_build_array(
      1, w."norm", "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $1
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $2
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
    order by "s1" asc, rid asc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = 794697393 (Practitioner.family)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?_sort=family: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by rid asc) as ord
  from (
    select x.rid, json_build_array(2, x.rid::text)::text as key
    from (select r.rid from resource r where r.type = $1) x
    where not exists (select 1 from "string_idx" o where o.param = $2 and o.rid = x.rid)
    order by rid asc
    limit $3
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "Practitioner"
-- $2 = 794697393 (Practitioner.family)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=-_lastUpdated (sortPath sorted) after phase 1 ["2024-03-01T10:00:00.000Z"] rid 1234: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" desc, rid desc) as ord
  from (
    select distinct on ("s1", rid) "m".rid, m.s1 as "s1", json_build_array(1, m.s1, "m".rid::text)::text as key
    from (
      select m.rid, (select max(o."low") from "date_idx" o where o.param = $1 and o.rid = m.rid) as s1
      from (
        select distinct r.rid
        from (select t.rid from token_idx t where t.param = $2 and t.code = $3) r
        where true
      ) m
      offset 0
    ) m
    where m.s1 is not null
      and (m.s1, "m".rid) < ($4::text::timestamptz, $5::bigint)
    order by "s1" desc, rid desc
    limit $6
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 867648487 (Practitioner.active)
-- $3 = "true"
-- $4 = "2024-03-01T10:00:00.000Z"
-- $5 = "1234"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=-_lastUpdated (sortPath sorted) after phase 1 ["2024-03-01T10:00:00.000Z"] rid 1234: phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by rid desc) as ord
  from (
    select x.rid, json_build_array(2, x.rid::text)::text as key
    from (
      select distinct r.rid
      from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
      where true
    ) x
    where not exists (select 1 from "date_idx" o where o.param = $3 and o.rid = x.rid)
    order by rid desc
    limit $4
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 867648487 (Practitioner.active)
-- $2 = "true"
-- $3 = 669280917 (Practitioner._lastUpdated)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=family,given&_count=10 (sortPath hashed): phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, "s2" asc, rid asc) as ord
  from (
    select distinct on ("s1", "s2", rid) "w".rid, w."norm" as "s1", coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = "w".rid), $2::text
    ) as "s2", json_build_array(
      1, w."norm", coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = "w".rid), $4::text
      ), "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $5
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $6
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
      and coalesce(
        w.rid in (
          select distinct r.rid
          from (select t.rid from token_idx t where t.param = $7 and t.code = $8) r
          where true
        ), false
      )
    order by "s1" asc, "s2" asc, rid asc
    limit $9
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 794697393 (Practitioner.family)
-- $6 = 794697393 (Practitioner.family)
-- $7 = 867648487 (Practitioner.active)
-- $8 = "true"
-- $9 = 11
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=family,given&_count=10 (sortPath hashed): phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select x.rid, coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", json_build_array(
      2, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = x.rid), $4::text
      ), x.rid::text
    )::text as key
    from (
      select distinct r.rid
      from (select t.rid from token_idx t where t.param = $5 and t.code = $6) r
      where true
    ) x
    where not exists (select 1 from "string_idx" o where o.param = $7 and o.rid = x.rid)
    order by "s1" asc, rid asc
    limit $8
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 867648487 (Practitioner.active)
-- $6 = "true"
-- $7 = 794697393 (Practitioner.family)
-- $8 = 11
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=family,given&_count=10 (sortPath sorted): phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, "s2" asc, rid asc) as ord
  from (
    select distinct on ("s1", "s2", rid) "m".rid, m.s1 as "s1", coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = "m".rid), $2::text
    ) as "s2", json_build_array(
      1, m.s1, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = "m".rid), $4::text
      ), "m".rid::text
    )::text as key
    from (
      select m.rid, (select min(o."norm") from "string_idx" o where o.param = $5 and o.rid = m.rid) as s1
      from (
        select distinct r.rid
        from (select t.rid from token_idx t where t.param = $6 and t.code = $7) r
        where true
      ) m
      offset 0
    ) m
    where m.s1 is not null
    order by "s1" asc, "s2" asc, rid asc
    limit $8
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 794697393 (Practitioner.family)
-- $6 = 867648487 (Practitioner.active)
-- $7 = "true"
-- $8 = 11
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=family,given&_count=10 (sortPath sorted): phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select x.rid, coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", json_build_array(
      2, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = x.rid), $4::text
      ), x.rid::text
    )::text as key
    from (
      select distinct r.rid
      from (select t.rid from token_idx t where t.param = $5 and t.code = $6) r
      where true
    ) x
    where not exists (select 1 from "string_idx" o where o.param = $7 and o.rid = x.rid)
    order by "s1" asc, rid asc
    limit $8
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 867648487 (Practitioner.active)
-- $6 = "true"
-- $7 = 794697393 (Practitioner.family)
-- $8 = 11
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=family,given&_count=10 (sortPath walk): phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, "s2" asc, rid asc) as ord
  from (
    select distinct on ("s1", "s2", rid) "w".rid, w."norm" as "s1", coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = "w".rid), $2::text
    ) as "s2", json_build_array(
      1, w."norm", coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = "w".rid), $4::text
      ), "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $5
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $6
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
      and exists (
        select 1
        from "token_idx" "t"
        where "t".rid = "w".rid
          and "t".param = $7
          and t.code = $8
        offset 0
      )
    order by "s1" asc, "s2" asc, rid asc
    limit $9
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 794697393 (Practitioner.family)
-- $6 = 794697393 (Practitioner.family)
-- $7 = 867648487 (Practitioner.active)
-- $8 = "true"
-- $9 = 11
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?active=true&_sort=family,given&_count=10 (sortPath walk): phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select x.rid, coalesce(
      (select min(o."norm") from "string_idx" o where o.param = $1 and o.rid = x.rid), $2::text
    ) as "s1", json_build_array(
      2, coalesce(
        (select min(o."norm") from "string_idx" o where o.param = $3 and o.rid = x.rid), $4::text
      ), x.rid::text
    )::text as key
    from (
      select distinct r.rid
      from (select t.rid from token_idx t where t.param = $5 and t.code = $6) r
      where true
    ) x
    where not exists (select 1 from "string_idx" o where o.param = $7 and o.rid = x.rid)
    order by "s1" asc, rid asc
    limit $8
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 951115054 (Practitioner.given)
-- $2 = "<U+10FFFF>"
-- $3 = 951115054 (Practitioner.given)
-- $4 = "<U+10FFFF>"
-- $5 = 867648487 (Practitioner.active)
-- $6 = "true"
-- $7 = 794697393 (Practitioner.family)
-- $8 = 11
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?family=martin&_sort=family: phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."norm" as "s1", json_build_array(
      1, w."norm", "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $1
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $2
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
      and exists (
        select 1
        from "string_idx" "s"
        where "s".rid = "w".rid
          and "s".param = $3
          and (s.norm >= $4 and s.norm < $5)
        offset 0
      )
    order by "s1" asc, rid asc
    limit $6
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = 794697393 (Practitioner.family)
-- $3 = 794697393 (Practitioner.family)
-- $4 = "martin"
-- $5 = "martio"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > _sort > Practitioner?family=martin&_sort=family: phase 2 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > Organization?_has:PractitionerRole:organization:practitioner.family=martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select h.rid
    from resource h
    where h.type = $1
      and h.id in (
        select "c1".target_id
        from reference_idx "c1"
        where "c1".param = $2
          and "c1".target_type = $3
          and "c1".rid in (
            select x.rid
            from reference_idx x
            join resource "c2" on "c2".type = x.target_type
              and "c2".id = x.target_id
            where x.param = $4
              and x.target_type = $5
              and "c2".rid in (
                select s.rid
                from string_idx s
                where s.param = $6
                  and (s.norm >= $7 and s.norm < $8)
              )
          )
      )
  ) r
  where true
  order by 1
  limit $9
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Organization"
-- $2 = -1843838546 (PractitionerRole.organization)
-- $3 = "Organization"
-- $4 = -364934787 (PractitionerRole.practitioner)
-- $5 = "Practitioner"
-- $6 = 794697393 (Practitioner.family)
-- $7 = "martin"
-- $8 = "martio"
-- $9 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > Practitioner?_has:PractitionerRole:practitioner:organization.name=clinique&family=martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select h.rid
    from resource h
    where h.type = $1
      and h.id in (
        select "c1".target_id
        from reference_idx "c1"
        where "c1".param = $2
          and "c1".target_type = $3
          and "c1".rid in (
            select x.rid
            from reference_idx x
            join resource "c2" on "c2".type = x.target_type
              and "c2".id = x.target_id
            where x.param = $4
              and x.target_type = $5
              and "c2".rid in (
                select s.rid
                from string_idx s
                where s.param = $6
                  and (s.norm >= $7 and s.norm < $8)
              )
          )
      )
  ) r
  where "r".rid in (
    select s.rid
    from string_idx s
    where s.param = $9
      and (s.norm >= $10 and s.norm < $11)
  )
  order by 1
  limit $12
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = -364934787 (PractitionerRole.practitioner)
-- $3 = "Practitioner"
-- $4 = -1843838546 (PractitionerRole.organization)
-- $5 = "Organization"
-- $6 = 1616999399 (Organization.name)
-- $7 = "clinique"
-- $8 = "cliniquf"
-- $9 = 794697393 (Practitioner.family)
-- $10 = "martin"
-- $11 = "martio"
-- $12 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > Practitioner?_has:PractitionerRole:practitioner:role=FON-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select h.rid
    from resource h
    where h.type = $1
      and h.id in (
        select "c1".target_id
        from reference_idx "c1"
        where "c1".param = $2
          and "c1".target_type = $3
          and "c1".rid in (select t.rid from token_idx t where t.param = $4 and t.code = $5)
      )
  ) r
  where true
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = -364934787 (PractitionerRole.practitioner)
-- $3 = "Practitioner"
-- $4 = -994924139 (PractitionerRole.role)
-- $5 = "FON-01"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > PractitionerRole?organization.partof.name=hopital 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $1
      and x.target_type = $2
      and "c1".rid in (
        select x.rid
        from reference_idx x
        join resource "c2" on "c2".type = x.target_type
          and "c2".id = x.target_id
        where x.param = $3
          and x.target_type = $4
          and "c2".rid in (
            select s.rid
            from string_idx s
            where s.param = $5
              and (s.norm >= $6 and s.norm < $7)
          )
      )
  ) r
  where true
  order by 1
  limit $8
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1843838546 (PractitionerRole.organization)
-- $2 = "Organization"
-- $3 = -287431876 (Organization.partof)
-- $4 = "Organization"
-- $5 = 1616999399 (Organization.name)
-- $6 = "hopital"
-- $7 = "hopitam"
-- $8 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > PractitionerRole?organization.partof.partof.address-city=paris 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $1
      and x.target_type = $2
      and "c1".rid in (
        select x.rid
        from reference_idx x
        join resource "c2" on "c2".type = x.target_type
          and "c2".id = x.target_id
        where x.param = $3
          and x.target_type = $4
          and "c2".rid in (
            select x.rid
            from reference_idx x
            join resource "c3" on "c3".type = x.target_type
              and "c3".id = x.target_id
            where x.param = $5
              and x.target_type = $6
              and "c3".rid in (
                select s.rid
                from string_idx s
                where s.param = $7
                  and (s.norm >= $8 and s.norm < $9)
              )
          )
      )
  ) r
  where true
  order by 1
  limit $10
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1843838546 (PractitionerRole.organization)
-- $2 = "Organization"
-- $3 = -287431876 (Organization.partof)
-- $4 = "Organization"
-- $5 = -287431876 (Organization.partof)
-- $6 = "Organization"
-- $7 = -1315790020 (Organization.address-city)
-- $8 = "paris"
-- $9 = "parit"
-- $10 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > PractitionerRole?practitioner:Practitioner.phonetic=fontaine 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $1
      and x.target_type = $2
      and "c1".rid in (
        select m.rid
        from (
          select "p".rid
          from phonetic_idx "p"
          where "p".param = $3
            and "p"."sound" = $4
          union all
          select p.rid
          from phonetic_idx p
          where p.param = $5
            and p.word in (select unnest($6::text[]))
        ) m
      )
  ) r
  where true
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "f3tEn"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = ["afontaine", "bfontaine", "cfontaine", "dfontaine", "efontaine", "gfontaine", … 430 values, sha256 4ca169aa8e20]
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > PractitionerRole?practitioner.family=martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $1
      and x.target_type = $2
      and "c1".rid in (
        select s.rid
        from string_idx s
        where s.param = $3
          and (s.norm >= $4 and s.norm < $5)
      )
  ) r
  where true
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = 794697393 (Practitioner.family)
-- $4 = "martin"
-- $5 = "martio"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > chains and _has > PractitionerRole?practitioner.identifier=https://rpps.esante.gouv.fr|810000000001 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $1
      and x.target_type = $2
      and "c1".rid in (
        select t.rid
        from token_idx t
        where t.param = $3
          and (t.code = $4 and t.sys = $5)
      )
  ) r
  where true
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = -2026893178 (Practitioner.identifier)
-- $4 = "810000000001"
-- $5 = 3
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > counts > Organization?type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307|: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key = any($2::text[])
-- $1 = 1387171300 (Organization.type)
-- $2 = ["y:7"]
`

exports[`tests/compile-golden.test.ts > TAP > counts > Organization?type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307|: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.sys = $2) r
  where true
) m
-- $1 = 1387171300 (Organization.type)
-- $2 = 7
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?_lastUpdated=ge2024-01-01: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key >= $2
  and v.key < $3
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = "d:2024-01-01"
-- $3 = "d;"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?_lastUpdated=ge2024-01-01: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
) m
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T00:00:00.000Z (Date)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?_lastUpdated=ge2024-01-01&_lastUpdated=lt2024-07-01: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key >= $2
  and v.key < $3
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = "d:2024-01-01"
-- $3 = "d:2024-07-01"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?_lastUpdated=ge2024-01-01&_lastUpdated=lt2024-07-01: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and ((d.low >= $2 and d.low < $3))) r
  where true
) m
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T00:00:00.000Z (Date)
-- $3 = 2024-07-01T00:00:00.000Z (Date)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?_lastUpdated=ge2024-01-01T10:00:00Z: countedQuery (the kept total) 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?_lastUpdated=ge2024-01-01T10:00:00Z: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
) m
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T10:00:00.000Z (Date)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key = $2
-- $1 = 0
-- $2 = "t:Practitioner"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?: countQuery 1`] = `
select count(*) as count
from (select r.rid from resource r where r.type = $1) m
-- $1 = "Practitioner"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?active=true: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key = any($2::text[])
-- $1 = 867648487 (Practitioner.active)
-- $2 = ["c:true"]
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?active=true: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
) m
-- $1 = 867648487 (Practitioner.active)
-- $2 = "true"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?active=true&family=ma: countedQuery (the kept total) 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?active=true&family=ma: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where "r".rid in (select t.rid from token_idx t where t.param = $4 and t.code = $5)
) m
-- $1 = 794697393 (Practitioner.family)
-- $2 = "ma"
-- $3 = "mb"
-- $4 = 867648487 (Practitioner.active)
-- $5 = "true"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?family:contains=mar (a common needle): countQuery reads it whole 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from (select v.norm from string_value v where v.param = $1 and (v.norm like $2)) v, lateral (
        select s.rid
        from string_idx s
        where s.param = $3
          and s.norm = v.norm
        offset 0
      ) s
      offset 0
    ) s
  ) r
  where true
) m
-- $1 = 794697393 (Practitioner.family)
-- $2 = "%mar%"
-- $3 = 794697393 (Practitioner.family)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?family=ma: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key = any($2::text[])
-- $1 = 794697393 (Practitioner.family)
-- $2 = ["p:ma"]
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?family=ma: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where true
) m
-- $1 = 794697393 (Practitioner.family)
-- $2 = "ma"
-- $3 = "mb"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?family=martin: countedQuery (the kept total) 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?family=martin: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where true
) m
-- $1 = 794697393 (Practitioner.family)
-- $2 = "martin"
-- $3 = "martio"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?identifier=810000000001: countedQuery (the kept total) 1`] = `
(no statement)
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?identifier=810000000001: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
) m
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = "810000000001"
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?qualification-code=|SM26: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key = any($2::text[])
-- $1 = 1612460460 (Practitioner.qualification-code)
-- $2 = ["s:0:SM26"]
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?qualification-code=|SM26: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
) m
-- $1 = 1612460460 (Practitioner.qualification-code)
-- $2 = "SM26"
-- $3 = 0
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?qualification-code=https://unknown.example|SM26: countedQuery (the kept total) 1`] = `
select coalesce(sum(v.n), 0)::bigint as count
from value_count v
where v.param = $1
  and v.key = any($2::text[])
-- $1 = 1612460460 (Practitioner.qualification-code)
-- $2 = ["s:-1:SM26"]
`

exports[`tests/compile-golden.test.ts > TAP > counts > Practitioner?qualification-code=https://unknown.example|SM26: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
) m
-- $1 = 1612460460 (Practitioner.qualification-code)
-- $2 = "SM26"
-- $3 = -1
`

exports[`tests/compile-golden.test.ts > TAP > cursors of the default order > Practitioner? after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (select r.rid from resource r where r.type = $1 and r.rid > $2 order by 1 limit $3) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = "1234"
-- $3 = 21
`

exports[`tests/compile-golden.test.ts > TAP > cursors of the default order > Practitioner?family=martin after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where r.rid > $4
  order by 1
  limit $5
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "martin"
-- $3 = "martio"
-- $4 = "1234"
-- $5 = 21
`

exports[`tests/compile-golden.test.ts > TAP > cursors of the default order > PractitionerRole?practitioner.family=martin after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $1
      and x.target_type = $2
      and "c1".rid in (
        select s.rid
        from string_idx s
        where s.param = $3
          and (s.norm >= $4 and s.norm < $5)
      )
  ) r
  where r.rid > $6
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = 794697393 (Practitioner.family)
-- $4 = "martin"
-- $5 = "martio"
-- $6 = "1234"
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > a date of a period (not an instant), every prefix 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select d.rid
    from date_idx d
    where d.param = $1
      and (
        (d.low >= $2 or d.high > $3)
          or (d.high <= $4 or d.low < $5)
          or (d.low >= $6 and d.high <= $7)
          or (d.low < $8 or d.high > $9)
          or d.high > $10
          or d.low < $11
          or d.low >= $12
          or d.high <= $13
          or (d.low < $14 and d.high > $15)
      )
  ) r
  where true
  order by 1
  limit $16
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 2024-03-02T00:00:00.000Z (Date)
-- $4 = 2025-01-01T00:00:00.000Z (Date)
-- $5 = 2024-01-01T00:00:00.000Z (Date)
-- $6 = 2024-03-01T00:00:00.000Z (Date)
-- $7 = 2024-04-01T00:00:00.000Z (Date)
-- $8 = 2024-03-01T00:00:00.000Z (Date)
-- $9 = 2024-03-02T00:00:00.000Z (Date)
-- $10 = 2025-01-01T00:00:00.000Z (Date)
-- $11 = 2024-01-01T00:00:00.000Z (Date)
-- $12 = 2025-01-01T00:00:00.000Z (Date)
-- $13 = 2024-01-01T00:00:00.000Z (Date)
-- $14 = 2025-02-08T00:00:00.000Z (Date)
-- $15 = 2023-11-24T00:00:00.000Z (Date)
-- $16 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=2024 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and ((d.low >= $2 and d.low < $3))) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T00:00:00.000Z (Date)
-- $3 = 2025-01-01T00:00:00.000Z (Date)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=ap2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and ((d.low >= $2 and d.low < $3))) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-29T00:00:00.000Z (Date)
-- $3 = 2024-04-03T00:00:00.000Z (Date)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=eb2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low < $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=eq2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and ((d.low >= $2 and d.low < $3))) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 2024-03-02T00:00:00.000Z (Date)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=ge2024-01-01&_lastUpdated=lt2024-07-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and ((d.low >= $2 and d.low < $3))) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T00:00:00.000Z (Date)
-- $3 = 2024-07-01T00:00:00.000Z (Date)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=ge2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=ge2024-03-01T10:00:00%2B01:00 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T09:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=gt2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-02T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=le2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low < $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-02T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=lt2024-01-01,ge2025-01-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low < $2 or d.low >= $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-01-01T00:00:00.000Z (Date)
-- $3 = 2025-01-01T00:00:00.000Z (Date)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=lt2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low < $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=ne2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and ((d.low < $2 or d.low >= $3))) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 2024-03-02T00:00:00.000Z (Date)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > date > Practitioner?_lastUpdated=sa2024-03-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 669280917 (Practitioner._lastUpdated)
-- $2 = 2024-03-02T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > a measured page rendered as entries 1`] = `
select count(*) as rows, (array_agg(p.key order by p.n desc) filter (where p.n <= $1))[1] as last, string_agg(
  p.rid::text, ','
  order by p.n
) filter (where p.n <= $2) as rids, string_agg(p.id, ',' order by p.n) filter (where p.n <= $3) as ids, string_agg(
  $4::text || to_json($5::text || p.type || '/' || p.id)::text || $6::text || p.content || $7::text || p.extension || $8::text, ','
  order by p.n
) filter (where p.n <= $9) as entries
from (
  select q.rid, q.type, q.id, q.content, q.key, q.extension, row_number() over (order by q.ord) as n
  from (
    select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
    from (
      select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
        k.m::text, k.rid::text
      )::text as key, $10::text || trim_scale(round(k.m::numeric, 3))::text || $11::text as extension
      from (
        with n as materialized (
          select k.rid, k.m
          from (
            select r.rid, r.m
            from (
              select g.rid, 2 * $12::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
              from (
                select g.rid, g.c2
                from (
                  select g.rid, (
                    (g.x - $13::float8) * (g.x - $14::float8) + (g.y - $15::float8) * (
                      g.y - $16::float8
                    ) + (g.z - $17::float8) * (g.z - $18::float8)
                  ) as c2
                  from unnest($19::int[], $20::float8[], $21::float8[]) b(band, lo, hi)
                  join geo_idx g on g.param = $22
                    and g.band = b.band
                    and g.lon >= b.lo
                    and g.lon <= b.hi
                ) g
                where g.c2 <= $23::float8
              ) g
            ) r
            where true
          ) k
          where true
          order by k.m, k.rid
          limit $24
        ), filled as (select count(*) = $25 and max(m) < $26::float8 as yes from n)
        select n.rid, n.m
        from n
        where (select yes from filled)
        union all
        select w.rid, w.m
        from (
          select k.rid, k.m
          from (
            select r.rid, r.m
            from (
              select g.rid, 2 * $27::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
              from (
                select g.rid, g.c2
                from (
                  select g.rid, (
                    (g.x - $28::float8) * (g.x - $29::float8) + (g.y - $30::float8) * (
                      g.y - $31::float8
                    ) + (g.z - $32::float8) * (g.z - $33::float8)
                  ) as c2
                  from unnest($34::int[], $35::float8[], $36::float8[]) b(band, lo, hi)
                  join geo_idx g on g.param = $37
                    and g.band = b.band
                    and g.lon >= b.lo
                    and g.lon <= b.hi
                ) g
                where g.c2 <= $38::float8
              ) g
            ) r
            where true
          ) k
          where true
          order by k.m, k.rid
          limit $39
        ) w
        where not (select yes from filled)
      ) k
    ) page
    join resource r on r.rid = page.rid
    order by page.ord
  ) q
) p
-- $1 = 20
-- $2 = 20
-- $3 = 20
-- $4 = "{\\"fullUrl\\":"
-- $5 = "http://fhir.test/fhir/v2/"
-- $6 = ",\\"resource\\":"
-- $7 = ",\\"search\\":{\\"mode\\":\\"match\\",\\"extension\\":"
-- $8 = "}}"
-- $9 = 20
-- $10 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $11 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $12 = 6371.0088
-- $13 = 0.6574351115806376
-- $14 = 0.6574351115806376
-- $15 = 0.026966195447164384
-- $16 = 0.026966195447164384
-- $17 = 0.7530284844307418
-- $18 = 0.7530284844307418
-- $19 = [781]
-- $20 = [2.3351322652543938]
-- $21 = [2.3624677347456067]
-- $22 = 595069498 (Location.near)
-- $23 = 2.4636759793835275e-8
-- $24 = 21
-- $25 = 21
-- $26 = 0.999999999
-- $27 = 6371.0088
-- $28 = 0.6574351115806376
-- $29 = 0.6574351115806376
-- $30 = 0.026966195447164384
-- $31 = 0.026966195447164384
-- $32 = 0.7530284844307418
-- $33 = 0.7530284844307418
-- $34 = [780, 781, 782]
-- $35 = [2.320414265931127, 2.2804613214513845, 2.2888492720483242]
-- $36 = [2.3771857340688736, 2.417138678548616, 2.408750727951676]
-- $37 = 595069498 (Location.near)
-- $38 = 6.159189644973858e-7
-- $39 = 21
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near:missing=true 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select r.rid
  from resource r
  where r.type = $1
    and not exists (select 1 from "geo_idx" "g" where "g".rid = "r".rid and "g".param = $2)
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Location"
-- $2 = 595069498 (Location.near)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=-17.5|179.99|20|km 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
from (
  select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
    k.m::text, k.rid::text
  )::text as key, $1::text || trim_scale(round(k.m::numeric, 3))::text || $2::text as extension
  from (
    with n as materialized (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $3::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                  g.z - $8::float8
                ) * (g.z - $9::float8)
              ) as c2
              from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $13
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $14::float8
          ) g
        ) r
        where true
      ) k
      where true
      order by k.m, k.rid
      limit $15
    ), filled as (select count(*) = $16 and max(m) < $17::float8 as yes from n)
    select n.rid, n.m
    from n
    where (select yes from filled)
    union all
    select w.rid, w.m
    from (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $18::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $19::float8) * (g.x - $20::float8) + (g.y - $21::float8) * (
                  g.y - $22::float8
                ) + (g.z - $23::float8) * (g.z - $24::float8)
              ) as c2
              from unnest($25::int[], $26::float8[], $27::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $28
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $29::float8
          ) g
        ) r
        where true
      ) k
      where true
      order by k.m, k.rid
      limit $30
    ) w
    where not (select yes from filled)
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $3 = 6371.0088
-- $4 = -0.9537169362222871
-- $5 = -0.9537169362222871
-- $6 = 0.00016645500838139308
-- $7 = 0.00016645500838139308
-- $8 = -0.3007057995042731
-- $9 = -0.3007057995042731
-- $10 = [-281, -281, -280, -280]
-- $11 = [179.96642590908493, -180, 179.96642590913004, -180]
-- $12 = [180, -179.98642590908491, 180, -179.98642590913002]
-- $13 = 595069498 (Location.near)
-- $14 = 1.5397974705178705e-7
-- $15 = 51
-- $16 = 51
-- $17 = 2.4999999975000002
-- $18 = 6371.0088
-- $19 = -0.9537169362222871
-- $20 = -0.9537169362222871
-- $21 = 0.00016645500838139308
-- $22 = 0.00016645500838139308
-- $23 = -0.3007057995042731
-- $24 = -0.3007057995042731
-- $25 = [-283, -283, -282, -282, -281, -281, -280, -280, -279, -279, -278, -278]
-- $26 = [179.85434761849442, -180, 179.8131288467594, -180, 179.8014072493667, -180, 179.8014072724621, -180, 179.81318966901804, -180, 179.8544408985295, -180]
-- $27 = [180, -179.8743476184944, 180, -179.8331288467594, 180, -179.82140724936667, 180, -179.82140727246207, 180, -179.83318966901803, 180, -179.87444089852949]
-- $28 = 595069498 (Location.near)
-- $29 = 0.000009854695844836623
-- $30 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488&status=active 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
from (
  select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
    k.m::text, k.rid::text
  )::text as key, $1::text || trim_scale(round(k.m::numeric, 3))::text || $2::text as extension
  from (
    with n as materialized (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $3::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                  g.z - $8::float8
                ) * (g.z - $9::float8)
              ) as c2
              from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $13
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $14::float8
          ) g
        ) r
        where "r".rid in (select t.rid from token_idx t where t.param = $15 and t.code = $16)
      ) k
      where true
      order by k.m, k.rid
      limit $17
    ), filled as (select count(*) = $18 and max(m) < $19::float8 as yes from n)
    select n.rid, n.m
    from n
    where (select yes from filled)
    union all
    select w.rid, w.m
    from (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $20::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $21::float8) * (g.x - $22::float8) + (g.y - $23::float8) * (
                  g.y - $24::float8
                ) + (g.z - $25::float8) * (g.z - $26::float8)
              ) as c2
              from unnest($27::int[], $28::float8[], $29::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $30
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $31::float8
          ) g
        ) r
        where "r".rid in (select t.rid from token_idx t where t.param = $32 and t.code = $33)
      ) k
      where true
      order by k.m, k.rid
      limit $34
    ) w
    where not (select yes from filled)
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $3 = 6371.0088
-- $4 = 0.6574351115806376
-- $5 = 0.6574351115806376
-- $6 = 0.026966195447164384
-- $7 = 0.026966195447164384
-- $8 = 0.7530284844307418
-- $9 = 0.7530284844307418
-- $10 = [781]
-- $11 = [2.3351322652543938]
-- $12 = [2.3624677347456067]
-- $13 = 595069498 (Location.near)
-- $14 = 2.4636759793835275e-8
-- $15 = 1748933882 (Location.status)
-- $16 = "active"
-- $17 = 51
-- $18 = 51
-- $19 = 0.999999999
-- $20 = 6371.0088
-- $21 = 0.6574351115806376
-- $22 = 0.6574351115806376
-- $23 = 0.026966195447164384
-- $24 = 0.026966195447164384
-- $25 = 0.7530284844307418
-- $26 = 0.7530284844307418
-- $27 = [780, 781, 782]
-- $28 = [2.320414265931127, 2.2804613214513845, 2.2888492720483242]
-- $29 = [2.3771857340688736, 2.417138678548616, 2.408750727951676]
-- $30 = 595069498 (Location.near)
-- $31 = 6.159189644973858e-7
-- $32 = 1748933882 (Location.status)
-- $33 = "active"
-- $34 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2&_sort=name 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select g.rid
    from (
      select g.rid, g.c2
      from (
        select g.rid, (
          (g.x - $1::float8) * (g.x - $2::float8) + (g.y - $3::float8) * (g.y - $4::float8) + (
            g.z - $5::float8
          ) * (g.z - $6::float8)
        ) as c2
        from unnest($7::int[], $8::float8[], $9::float8[]) b(band, lo, hi)
        join geo_idx g on g.param = $10
          and g.band = b.band
          and g.lon >= b.lo
          and g.lon <= b.hi
      ) g
      where g.c2 <= $11::float8
    ) g
  ) r
  where true
  order by 1
  limit $12
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 0.6574351115806376
-- $2 = 0.6574351115806376
-- $3 = 0.026966195447164384
-- $4 = 0.026966195447164384
-- $5 = 0.7530284844307418
-- $6 = 0.7530284844307418
-- $7 = [781]
-- $8 = [2.3214645310677584]
-- $9 = [2.376135468932242]
-- $10 = 595069498 (Location.near)
-- $11 = 9.854703856837119e-8
-- $12 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2&_sort=name: phase 1, each row with its distance 1`] = `
select q.rid, q.type, q.id, q.content, q.ord, q.key, $1::text || trim_scale(
  round(
    (
      select 2 * $2::float8 * asin(
        least(
          1, sqrt(
            min(
              (
                (g.x - $3::float8) * (g.x - $4::float8) + (g.y - $5::float8) * (g.y - $6::float8) + (
                  g.z - $7::float8
                ) * (g.z - $8::float8)
              )
            )
          ) / 2
        )
      )
      from geo_idx g
      where g.param = $9
        and g.rid = q.rid
    )::numeric, 3
  )
)::text || $10::text as extension
from (
  select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
  from (
    select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
    from (
      select distinct on ("s1", rid) "m".rid, m.s1 as "s1", json_build_array(1, m.s1, "m".rid::text)::text as key
      from (
        select m.rid, (
          select min(o."norm")
          from "string_idx" o
          where o.param = $11
            and o.rid = m.rid
        ) as s1
        from (
          select distinct r.rid
          from (
            select g.rid
            from (
              select g.rid, g.c2
              from (
                select g.rid, (
                  (g.x - $12::float8) * (g.x - $13::float8) + (g.y - $14::float8) * (
                    g.y - $15::float8
                  ) + (g.z - $16::float8) * (g.z - $17::float8)
                ) as c2
                from unnest($18::int[], $19::float8[], $20::float8[]) b(band, lo, hi)
                join geo_idx g on g.param = $21
                  and g.band = b.band
                  and g.lon >= b.lo
                  and g.lon <= b.hi
              ) g
              where g.c2 <= $22::float8
            ) g
          ) r
          where true
        ) m
        offset 0
      ) m
      where m.s1 is not null
      order by "s1" asc, rid asc
      limit $23
    ) k
  ) page
  join resource r on r.rid = page.rid
  order by page.ord
) q
order by q.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = 6371.0088
-- $3 = 0.6574351115806376
-- $4 = 0.6574351115806376
-- $5 = 0.026966195447164384
-- $6 = 0.026966195447164384
-- $7 = 0.7530284844307418
-- $8 = 0.7530284844307418
-- $9 = 595069498 (Location.near)
-- $10 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $11 = 2050318747 (Location.name)
-- $12 = 0.6574351115806376
-- $13 = 0.6574351115806376
-- $14 = 0.026966195447164384
-- $15 = 0.026966195447164384
-- $16 = 0.7530284844307418
-- $17 = 0.7530284844307418
-- $18 = [781]
-- $19 = [2.3214645310677584]
-- $20 = [2.376135468932242]
-- $21 = 595069498 (Location.near)
-- $22 = 9.854703856837119e-8
-- $23 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2&near=45.75|4.85|200 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
from (
  select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
    k.m::text, k.rid::text
  )::text as key, $1::text || trim_scale(round(k.m::numeric, 3))::text || $2::text as extension
  from (
    with n as materialized (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $3::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                  g.z - $8::float8
                ) * (g.z - $9::float8)
              ) as c2
              from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $13
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $14::float8
          ) g
        ) r
        where "r".rid in (
          select g.rid
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $15::float8) * (g.x - $16::float8) + (g.y - $17::float8) * (
                  g.y - $18::float8
                ) + (g.z - $19::float8) * (g.z - $20::float8)
              ) as c2
              from unnest($21::int[], $22::float8[], $23::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $24
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $25::float8
          ) g
        )
      ) k
      where true
      order by k.m, k.rid
      limit $26
    ), filled as (select count(*) = $27 and max(m) < $28::float8 as yes from n)
    select n.rid, n.m
    from n
    where (select yes from filled)
    union all
    select w.rid, w.m
    from (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $29::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $30::float8) * (g.x - $31::float8) + (g.y - $32::float8) * (
                  g.y - $33::float8
                ) + (g.z - $34::float8) * (g.z - $35::float8)
              ) as c2
              from unnest($36::int[], $37::float8[], $38::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $39
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $40::float8
          ) g
        ) r
        where "r".rid in (
          select g.rid
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $41::float8) * (g.x - $42::float8) + (g.y - $43::float8) * (
                  g.y - $44::float8
                ) + (g.z - $45::float8) * (g.z - $46::float8)
              ) as c2
              from unnest($47::int[], $48::float8[], $49::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $50
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $51::float8
          ) g
        )
      ) k
      where true
      order by k.m, k.rid
      limit $52
    ) w
    where not (select yes from filled)
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $3 = 6371.0088
-- $4 = 0.6574351115806376
-- $5 = 0.6574351115806376
-- $6 = 0.026966195447164384
-- $7 = 0.026966195447164384
-- $8 = 0.7530284844307418
-- $9 = 0.7530284844307418
-- $10 = [781]
-- $11 = [2.3351322652543938]
-- $12 = [2.3624677347456067]
-- $13 = 595069498 (Location.near)
-- $14 = 2.4636759793835275e-8
-- $15 = 0.6952919911849537
-- $16 = 0.6952919911849537
-- $17 = 0.05899637989000565
-- $18 = 0.05899637989000565
-- $19 = 0.7163019434246541
-- $20 = 0.7163019434246541
-- $21 = [703, 704, 705, 706, 707, 708, … 58 values, sha256 5263fae4a0ce]
-- $22 = [4.2636341497308825, 3.9710195047756227, 3.760636120048261, 3.5905956981523715, 3.446177901349239, 3.3201246941175215, … 58 values, sha256 c48451559bb1]
-- $23 = [5.436365850269117, 5.728980495224377, 5.939363879951738, 6.109404301847627, 6.25382209865076, 6.379875305882478, … 58 values, sha256 aa7a56fafcf2]
-- $24 = 595069498 (Location.near)
-- $25 = 0.000985389467110295
-- $26 = 51
-- $27 = 51
-- $28 = 0.999999999
-- $29 = 6371.0088
-- $30 = 0.6574351115806376
-- $31 = 0.6574351115806376
-- $32 = 0.026966195447164384
-- $33 = 0.026966195447164384
-- $34 = 0.7530284844307418
-- $35 = 0.7530284844307418
-- $36 = [781]
-- $37 = [2.3214645310677584]
-- $38 = [2.376135468932242]
-- $39 = 595069498 (Location.near)
-- $40 = 9.854703856837119e-8
-- $41 = 0.6952919911849537
-- $42 = 0.6952919911849537
-- $43 = 0.05899637989000565
-- $44 = 0.05899637989000565
-- $45 = 0.7163019434246541
-- $46 = 0.7163019434246541
-- $47 = [703, 704, 705, 706, 707, 708, … 58 values, sha256 5263fae4a0ce]
-- $48 = [4.2636341497308825, 3.9710195047756227, 3.760636120048261, 3.5905956981523715, 3.446177901349239, 3.3201246941175215, … 58 values, sha256 c48451559bb1]
-- $49 = [5.436365850269117, 5.728980495224377, 5.939363879951738, 6.109404301847627, 6.25382209865076, 6.379875305882478, … 58 values, sha256 aa7a56fafcf2]
-- $50 = 595069498 (Location.near)
-- $51 = 0.000985389467110295
-- $52 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2|km 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
from (
  select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
    k.m::text, k.rid::text
  )::text as key, $1::text || trim_scale(round(k.m::numeric, 3))::text || $2::text as extension
  from (
    with n as materialized (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $3::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                  g.z - $8::float8
                ) * (g.z - $9::float8)
              ) as c2
              from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $13
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $14::float8
          ) g
        ) r
        where true
      ) k
      where true
      order by k.m, k.rid
      limit $15
    ), filled as (select count(*) = $16 and max(m) < $17::float8 as yes from n)
    select n.rid, n.m
    from n
    where (select yes from filled)
    union all
    select w.rid, w.m
    from (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $18::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $19::float8) * (g.x - $20::float8) + (g.y - $21::float8) * (
                  g.y - $22::float8
                ) + (g.z - $23::float8) * (g.z - $24::float8)
              ) as c2
              from unnest($25::int[], $26::float8[], $27::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $28
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $29::float8
          ) g
        ) r
        where true
      ) k
      where true
      order by k.m, k.rid
      limit $30
    ) w
    where not (select yes from filled)
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $3 = 6371.0088
-- $4 = 0.6574351115806376
-- $5 = 0.6574351115806376
-- $6 = 0.026966195447164384
-- $7 = 0.026966195447164384
-- $8 = 0.7530284844307418
-- $9 = 0.7530284844307418
-- $10 = [781]
-- $11 = [2.3351322652543938]
-- $12 = [2.3624677347456067]
-- $13 = 595069498 (Location.near)
-- $14 = 2.4636759793835275e-8
-- $15 = 51
-- $16 = 51
-- $17 = 0.999999999
-- $18 = 6371.0088
-- $19 = 0.6574351115806376
-- $20 = 0.6574351115806376
-- $21 = 0.026966195447164384
-- $22 = 0.026966195447164384
-- $23 = 0.7530284844307418
-- $24 = 0.7530284844307418
-- $25 = [781]
-- $26 = [2.3214645310677584]
-- $27 = [2.376135468932242]
-- $28 = 595069498 (Location.near)
-- $29 = 9.854703856837119e-8
-- $30 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2|km after 1.0052017739912417 km, rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
from (
  select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
    k.m::text, k.rid::text
  )::text as key, $1::text || trim_scale(round(k.m::numeric, 3))::text || $2::text as extension
  from (
    select k.rid, k.m
    from (
      select r.rid, r.m
      from (
        select g.rid, 2 * $3::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
        from (
          select g.rid, g.c2
          from (
            select g.rid, (
              (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                g.z - $8::float8
              ) * (g.z - $9::float8)
            ) as c2
            from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
            join geo_idx g on g.param = $13
              and g.band = b.band
              and g.lon >= b.lo
              and g.lon <= b.hi
          ) g
          where g.c2 <= $14::float8
        ) g
      ) r
      where true
    ) k
    where (k.m, k.rid) > ($15::text::float8, $16::bigint)
    order by k.m, k.rid
    limit $17
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $3 = 6371.0088
-- $4 = 0.6574351115806376
-- $5 = 0.6574351115806376
-- $6 = 0.026966195447164384
-- $7 = 0.026966195447164384
-- $8 = 0.7530284844307418
-- $9 = 0.7530284844307418
-- $10 = [781]
-- $11 = [2.3214645310677584]
-- $12 = [2.376135468932242]
-- $13 = 595069498 (Location.near)
-- $14 = 9.854703856837119e-8
-- $15 = "1.0052017739912417"
-- $16 = "1234"
-- $17 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2|km: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (
    select g.rid
    from (
      select g.rid, g.c2
      from (
        select g.rid, (
          (g.x - $1::float8) * (g.x - $2::float8) + (g.y - $3::float8) * (g.y - $4::float8) + (
            g.z - $5::float8
          ) * (g.z - $6::float8)
        ) as c2
        from unnest($7::int[], $8::float8[], $9::float8[]) b(band, lo, hi)
        join geo_idx g on g.param = $10
          and g.band = b.band
          and g.lon >= b.lo
          and g.lon <= b.hi
      ) g
      where g.c2 <= $11::float8
    ) g
  ) r
  where true
) m
-- $1 = 0.6574351115806376
-- $2 = 0.6574351115806376
-- $3 = 0.026966195447164384
-- $4 = 0.026966195447164384
-- $5 = 0.7530284844307418
-- $6 = 0.7530284844307418
-- $7 = [781]
-- $8 = [2.3214645310677584]
-- $9 = [2.376135468932242]
-- $10 = 595069498 (Location.near)
-- $11 = 9.854703856837119e-8
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=48.8534|2.3488|2|km&status=active: countQuery 1`] = `
select count(*) as count
from (
  select distinct r.rid
  from (
    select g.rid
    from (
      select g.rid, g.c2
      from (
        select g.rid, (
          (g.x - $1::float8) * (g.x - $2::float8) + (g.y - $3::float8) * (g.y - $4::float8) + (
            g.z - $5::float8
          ) * (g.z - $6::float8)
        ) as c2
        from unnest($7::int[], $8::float8[], $9::float8[]) b(band, lo, hi)
        join geo_idx g on g.param = $10
          and g.band = b.band
          and g.lon >= b.lo
          and g.lon <= b.hi
      ) g
      where g.c2 <= $11::float8
    ) g
  ) r
  where "r".rid in (select t.rid from token_idx t where t.param = $12 and t.code = $13)
) m
-- $1 = 0.6574351115806376
-- $2 = 0.6574351115806376
-- $3 = 0.026966195447164384
-- $4 = 0.026966195447164384
-- $5 = 0.7530284844307418
-- $6 = 0.7530284844307418
-- $7 = [781]
-- $8 = [2.3214645310677584]
-- $9 = [2.376135468932242]
-- $10 = 595069498 (Location.near)
-- $11 = 9.854703856837119e-8
-- $12 = 1748933882 (Location.status)
-- $13 = "active"
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Location?near=89.99|0|5|km 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
from (
  select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(
    k.m::text, k.rid::text
  )::text as key, $1::text || trim_scale(round(k.m::numeric, 3))::text || $2::text as extension
  from (
    with n as materialized (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $3::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                  g.z - $8::float8
                ) * (g.z - $9::float8)
              ) as c2
              from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $13
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $14::float8
          ) g
        ) r
        where true
      ) k
      where true
      order by k.m, k.rid
      limit $15
    ), filled as (select count(*) = $16 and max(m) < $17::float8 as yes from n)
    select n.rid, n.m
    from n
    where (select yes from filled)
    union all
    select w.rid, w.m
    from (
      select k.rid, k.m
      from (
        select r.rid, r.m
        from (
          select g.rid, 2 * $18::float8 * asin(least(1, sqrt(g.c2) / 2)) as m
          from (
            select g.rid, g.c2
            from (
              select g.rid, (
                (g.x - $19::float8) * (g.x - $20::float8) + (g.y - $21::float8) * (
                  g.y - $22::float8
                ) + (g.z - $23::float8) * (g.z - $24::float8)
              ) as c2
              from unnest($25::int[], $26::float8[], $27::float8[]) b(band, lo, hi)
              join geo_idx g on g.param = $28
                and g.band = b.band
                and g.lon >= b.lo
                and g.lon <= b.hi
            ) g
            where g.c2 <= $29::float8
          ) g
        ) r
        where true
      ) k
      where true
      order by k.m, k.rid
      limit $30
    ) w
    where not (select yes from filled)
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = "[{\\"url\\":\\"http://hl7.org/fhir/StructureDefinition/location-distance\\",\\"valueDistance\\":{\\"value\\":"
-- $2 = ",\\"unit\\":\\"km\\",\\"system\\":\\"http://unitsofmeasure.org\\",\\"code\\":\\"km\\"}}]"
-- $3 = 6371.0088
-- $4 = 0.00017453292431338717
-- $5 = 0.00017453292431338717
-- $6 = 0
-- $7 = 0
-- $8 = 0.9999999847691291
-- $9 = 0.9999999847691291
-- $10 = [1439]
-- $11 = [-64.06887550232445]
-- $12 = [64.06887550232445]
-- $13 = 595069498 (Location.near)
-- $14 = 2.4636759793835275e-8
-- $15 = 51
-- $16 = 51
-- $17 = 0.999999999
-- $18 = 6371.0088
-- $19 = 0.00017453292431338717
-- $20 = 0.00017453292431338717
-- $21 = 0
-- $22 = 0
-- $23 = 0.9999999847691291
-- $24 = 0.9999999847691291
-- $25 = [1439, 1440]
-- $26 = [-180, -180]
-- $27 = [180, 180]
-- $28 = 595069498 (Location.near)
-- $29 = 6.159189644973858e-7
-- $30 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > Organization?_has:Location:organization:near=48.8534|2.3488|500|m 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select h.rid
    from resource h
    where h.type = $1
      and h.id in (
        select "c1".target_id
        from reference_idx "c1"
        where "c1".param = $2
          and "c1".target_type = $3
          and "c1".rid in (
            select g.rid
            from (
              select g.rid, g.c2
              from (
                select g.rid, (
                  (g.x - $4::float8) * (g.x - $5::float8) + (g.y - $6::float8) * (g.y - $7::float8) + (
                    g.z - $8::float8
                  ) * (g.z - $9::float8)
                ) as c2
                from unnest($10::int[], $11::float8[], $12::float8[]) b(band, lo, hi)
                join geo_idx g on g.param = $13
                  and g.band = b.band
                  and g.lon >= b.lo
                  and g.lon <= b.hi
              ) g
              where g.c2 <= $14::float8
            ) g
          )
      )
  ) r
  where true
  order by 1
  limit $15
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Organization"
-- $2 = 2124547271 (Location.organization)
-- $3 = "Organization"
-- $4 = 0.6574351115806376
-- $5 = 0.6574351115806376
-- $6 = 0.026966195447164384
-- $7 = 0.026966195447164384
-- $8 = 0.7530284844307418
-- $9 = 0.7530284844307418
-- $10 = [781]
-- $11 = [2.3419661321547616]
-- $12 = [2.355633867845239]
-- $13 = 595069498 (Location.near)
-- $14 = 6.159189957942724e-9
-- $15 = 51
`

exports[`tests/compile-golden.test.ts > TAP > near: nearest first, its circle read band by band > PractitionerRole?location.near=48.8534|2.3488|2&role=FON-33 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where "r".rid in (
    select x.rid
    from reference_idx x
    join resource "c1" on "c1".type = x.target_type
      and "c1".id = x.target_id
    where x.param = $3
      and x.target_type = $4
      and "c1".rid in (
        select g.rid
        from (
          select g.rid, g.c2
          from (
            select g.rid, (
              (g.x - $5::float8) * (g.x - $6::float8) + (g.y - $7::float8) * (g.y - $8::float8) + (
                g.z - $9::float8
              ) * (g.z - $10::float8)
            ) as c2
            from unnest($11::int[], $12::float8[], $13::float8[]) b(band, lo, hi)
            join geo_idx g on g.param = $14
              and g.band = b.band
              and g.lon >= b.lo
              and g.lon <= b.hi
          ) g
          where g.c2 <= $15::float8
        ) g
      )
  )
  order by 1
  limit $16
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -994924139 (PractitionerRole.role)
-- $2 = "FON-33"
-- $3 = -437351886 (PractitionerRole.location)
-- $4 = "Location"
-- $5 = 0.6574351115806376
-- $6 = 0.6574351115806376
-- $7 = 0.026966195447164384
-- $8 = 0.026966195447164384
-- $9 = 0.7530284844307418
-- $10 = 0.7530284844307418
-- $11 = [781]
-- $12 = [2.3214645310677584]
-- $13 = [2.376135468932242]
-- $14 = 595069498 (Location.near)
-- $15 = 9.854703856837119e-8
-- $16 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos looked up): rank phase 0 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."word" = $2
        and true
        and true
      order by r.rid
      limit $3
    )
  ) r
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "fontaine"
-- $3 = 51
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos looked up): rank phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select distinct "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."sound" = $2
        and not exists (
          select 1
          from phonetic_idx e
          where e.param = $3
            and e.word = $4
            and e.rid = "r".rid
        )
        and true
      order by r.rid
      limit $5
    )
  ) r
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "f3tEn"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "fontaine"
-- $5 = 51
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos looked up): rank phase 1 after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select distinct "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."sound" = $2
        and not exists (
          select 1
          from phonetic_idx e
          where e.param = $3
            and e.word = $4
            and e.rid = "r".rid
        )
        and r.rid > $5
      order by r.rid
      limit $6
    )
  ) r
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "f3tEn"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "fontaine"
-- $5 = "1234"
-- $6 = 51
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos looked up): rank phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."word" = $2
        and not exists (
          select 1
          from phonetic_idx e
          where e.param = $3
            and e.sound = $4
            and e.rid = "r".rid
        )
        and true
      order by r.rid
      limit $5
    )
    union all (
      select "r".rid
      from phonetic_idx "r"
      where "r".param = $6
        and "r"."word" = $7
        and not exists (
          select 1
          from phonetic_idx e
          where e.param = $8
            and e.sound = $9
            and e.rid = "r".rid
        )
        and true
      order by r.rid
      limit $10
    )
  ) r
  order by 1
  limit $11
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "fontaime"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "f3tEn"
-- $5 = 51
-- $6 = -56992151 (Practitioner.phonetic)
-- $7 = "fortaine"
-- $8 = -56992151 (Practitioner.phonetic)
-- $9 = "f3tEn"
-- $10 = 51
-- $11 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos not looked up): rank phase 0 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."word" = $2
        and true
        and true
      order by r.rid
      limit $3
    )
  ) r
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "fontaine"
-- $3 = 51
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos not looked up): rank phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select distinct "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."sound" = $2
        and not exists (
          select 1
          from phonetic_idx e
          where e.param = $3
            and e.word = $4
            and e.rid = "r".rid
        )
        and true
      order by r.rid
      limit $5
    )
  ) r
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "f3tEn"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "fontaine"
-- $5 = 51
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos not looked up): rank phase 1 after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    (
      select distinct "r".rid
      from phonetic_idx "r"
      where "r".param = $1
        and "r"."sound" = $2
        and not exists (
          select 1
          from phonetic_idx e
          where e.param = $3
            and e.word = $4
            and e.rid = "r".rid
        )
        and r.rid > $5
      order by r.rid
      limit $6
    )
  ) r
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "f3tEn"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "fontaine"
-- $5 = "1234"
-- $6 = 51
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine (its typos not looked up): rank phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select p.rid
      from phonetic_idx p
      where p.param = $1
        and p.word in (select unnest($2::text[]))
    ) m
    where not (
      exists (select 1 from phonetic_idx e where e.param = $3 and e.sound = $4 and e.rid = "m".rid)
    )
  ) r
  where true
  order by 1
  limit $5
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = ["afontaine", "bfontaine", "cfontaine", "dfontaine", "efontaine", "gfontaine", … 430 values, sha256 4ca169aa8e20]
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "f3tEn"
-- $5 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine,dupont&active=true (two values, another condition): rank phase 0 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $1
        and "p"."word" = $2
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $3
        and "p"."word" = $4
    ) m
  ) r
  where "r".rid in (select t.rid from token_idx t where t.param = $5 and t.code = $6)
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "fontaine"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "dupont"
-- $5 = 867648487 (Practitioner.active)
-- $6 = "true"
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine,dupont&active=true (two values, another condition): rank phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $1
        and "p"."sound" = $2
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $3
        and "p"."sound" = $4
    ) m
    where not (
      exists (select 1 from phonetic_idx e where e.param = $5 and e.word = $6 and e.rid = "m".rid)
        or exists (
          select 1
          from phonetic_idx e
          where e.param = $7
            and e.word = $8
            and e.rid = "m".rid
        )
    )
  ) r
  where "r".rid in (select t.rid from token_idx t where t.param = $9 and t.code = $10)
  order by 1
  limit $11
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "f3tEn"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "dup3"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "fontaine"
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "dupont"
-- $9 = 867648487 (Practitioner.active)
-- $10 = "true"
-- $11 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine,dupont&active=true (two values, another condition): rank phase 1 after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $1
        and "p"."sound" = $2
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $3
        and "p"."sound" = $4
    ) m
    where not (
      exists (select 1 from phonetic_idx e where e.param = $5 and e.word = $6 and e.rid = "m".rid)
        or exists (
          select 1
          from phonetic_idx e
          where e.param = $7
            and e.word = $8
            and e.rid = "m".rid
        )
    )
  ) r
  where "r".rid in (select t.rid from token_idx t where t.param = $9 and t.code = $10)
    and r.rid > $11
  order by 1
  limit $12
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "f3tEn"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "dup3"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "fontaine"
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "dupont"
-- $9 = 867648487 (Practitioner.active)
-- $10 = "true"
-- $11 = "1234"
-- $12 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine,dupont&active=true (two values, another condition): rank phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $1
        and "p"."word" = $2
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $3
        and "p"."word" = $4
      union all
      select p.rid
      from phonetic_idx p
      where p.param = $5
        and p.word in (select unnest($6::text[]))
    ) m
    where not (
      exists (select 1 from phonetic_idx e where e.param = $7 and e.sound = $8 and e.rid = "m".rid)
        or exists (
          select 1
          from phonetic_idx e
          where e.param = $9
            and e.sound = $10
            and e.rid = "m".rid
        )
    )
  ) r
  where "r".rid in (select t.rid from token_idx t where t.param = $11 and t.code = $12)
  order by 1
  limit $13
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "fontaime"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "fortaine"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = ["adupont", "bdupont", "cdupont", "edupont", "fdupont", "gdupont", … 321 values, sha256 9fa1b3f92c39]
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "f3tEn"
-- $9 = -56992151 (Practitioner.phonetic)
-- $10 = "dup3"
-- $11 = 867648487 (Practitioner.active)
-- $12 = "true"
-- $13 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=fontaine&_sort=family (sorted: every level at once, phase 1) 1`] = `
select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key
from (
  select k.rid, k.key, row_number() over (order by "s1" asc, rid asc) as ord
  from (
    select distinct on ("s1", rid) "w".rid, w."norm" as "s1", json_build_array(
      1, w."norm", "w".rid::text
    )::text as key
    from "string_idx" w
    where w.param = $1
      and not exists (
        select 1
        from "string_idx" o
        where o.param = $2
          and o.rid = w.rid
          and o."norm" < w."norm"
      )
      and "w".rid in (
        select m.rid
        from (
          select "p".rid
          from phonetic_idx "p"
          where "p".param = $3
            and "p"."sound" = $4
          union all
          select "p".rid
          from phonetic_idx "p"
          where "p".param = $5
            and "p"."word" = $6
          union all
          select "p".rid
          from phonetic_idx "p"
          where "p".param = $7
            and "p"."word" = $8
        ) m
      )
    order by "s1" asc, rid asc
    limit $9
  ) k
) page
join resource r on r.rid = page.rid
order by page.ord
-- $1 = 794697393 (Practitioner.family)
-- $2 = 794697393 (Practitioner.family)
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "f3tEn"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "fontaime"
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "fortaine"
-- $9 = 21
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=le bihan (two words): rank phase 0 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select w0.rid
      from (select "p".rid from phonetic_idx "p" where "p".param = $1 and "p"."word" = $2) w0
      join (select "p".rid from phonetic_idx "p" where "p".param = $3 and "p"."word" = $4) "w1" on "w1".rid = w0.rid
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $5
        and "p"."word" = $6
    ) m
  ) r
  where true
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "le"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "bihan"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "lebihan"
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=le bihan (two words): rank phase 1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select w0.rid
      from (select "p".rid from phonetic_idx "p" where "p".param = $1 and "p"."sound" = $2) w0
      join (select "p".rid from phonetic_idx "p" where "p".param = $3 and "p"."sound" = $4) "w1" on "w1".rid = w0.rid
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $5
        and "p"."sound" = $6
    ) m
    where not (
      (
        exists (select 1 from phonetic_idx e where e.param = $7 and e.word = $8 and e.rid = "m".rid)
          and exists (
            select 1
            from phonetic_idx e
            where e.param = $9
              and e.word = $10
              and e.rid = "m".rid
          )
      )
        or exists (
          select 1
          from phonetic_idx e
          where e.param = $11
            and e.word = $12
            and e.rid = "m".rid
        )
    )
  ) r
  where true
  order by 1
  limit $13
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "l"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "bi2"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "lebi2"
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "le"
-- $9 = -56992151 (Practitioner.phonetic)
-- $10 = "bihan"
-- $11 = -56992151 (Practitioner.phonetic)
-- $12 = "lebihan"
-- $13 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=le bihan (two words): rank phase 1 after rid 1234 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select w0.rid
      from (select "p".rid from phonetic_idx "p" where "p".param = $1 and "p"."sound" = $2) w0
      join (select "p".rid from phonetic_idx "p" where "p".param = $3 and "p"."sound" = $4) "w1" on "w1".rid = w0.rid
      union all
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $5
        and "p"."sound" = $6
    ) m
    where not (
      (
        exists (select 1 from phonetic_idx e where e.param = $7 and e.word = $8 and e.rid = "m".rid)
          and exists (
            select 1
            from phonetic_idx e
            where e.param = $9
              and e.word = $10
              and e.rid = "m".rid
          )
      )
        or exists (
          select 1
          from phonetic_idx e
          where e.param = $11
            and e.word = $12
            and e.rid = "m".rid
        )
    )
  ) r
  where r.rid > $13
  order by 1
  limit $14
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "l"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "bi2"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "lebi2"
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "le"
-- $9 = -56992151 (Practitioner.phonetic)
-- $10 = "bihan"
-- $11 = -56992151 (Practitioner.phonetic)
-- $12 = "lebihan"
-- $13 = "1234"
-- $14 = 51
`

exports[`tests/compile-golden.test.ts > TAP > phonetic > Practitioner?phonetic=le bihan (two words): rank phase 2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (select "p".rid from phonetic_idx "p" where "p".param = $1 and "p"."word" = $2) m
    where not (
      (
        exists (
          select 1
          from phonetic_idx e
          where e.param = $3
            and e.sound = $4
            and e.rid = "m".rid
        )
          and exists (
            select 1
            from phonetic_idx e
            where e.param = $5
              and e.sound = $6
              and e.rid = "m".rid
          )
      )
        or exists (
          select 1
          from phonetic_idx e
          where e.param = $7
            and e.sound = $8
            and e.rid = "m".rid
        )
    )
  ) r
  where true
  order by 1
  limit $9
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -56992151 (Practitioner.phonetic)
-- $2 = "lebihen"
-- $3 = -56992151 (Practitioner.phonetic)
-- $4 = "l"
-- $5 = -56992151 (Practitioner.phonetic)
-- $6 = "bi2"
-- $7 = -56992151 (Practitioner.phonetic)
-- $8 = "lebi2"
-- $9 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > Organization?partof=o1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    where x.param = $1
      and ((x.target_type = $2 and x.target_id = $3))
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -287431876 (Organization.partof)
-- $2 = "Organization"
-- $3 = "o1"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > PractitionerRole?organization=o1,o2,Organization/o3 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    where x.param = $1
      and ((x.target_type = $2 and x.target_id = any($3::text[])))
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1843838546 (PractitionerRole.organization)
-- $2 = "Organization"
-- $3 = ["o1", "o2", "o3"]
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > PractitionerRole?practitioner=http://fhir.test/fhir/v2/Practitioner/p1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    where x.param = $1
      and ((x.target_type = $2 and x.target_id = $3))
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = "p1"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > PractitionerRole?practitioner=https://elsewhere.example/fhir/Practitioner/p1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (select r.rid from resource r where r.type = $1 and false order by 1 limit $2) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "PractitionerRole"
-- $2 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > PractitionerRole?practitioner=p1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    where x.param = $1
      and ((x.target_type = $2 and x.target_id = $3))
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = "p1"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > PractitionerRole?practitioner=p1&organization=o1&role=FON-01 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where "r".rid in (
    select x.rid
    from reference_idx x
    where x.param = $3
      and ((x.target_type = $4 and x.target_id = $5))
  )
    and "r".rid in (
      select x.rid
      from reference_idx x
      where x.param = $6
        and ((x.target_type = $7 and x.target_id = $8))
    )
  order by 1
  limit $9
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -994924139 (PractitionerRole.role)
-- $2 = "FON-01"
-- $3 = -364934787 (PractitionerRole.practitioner)
-- $4 = "Practitioner"
-- $5 = "p1"
-- $6 = -1843838546 (PractitionerRole.organization)
-- $7 = "Organization"
-- $8 = "o1"
-- $9 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > PractitionerRole?practitioner=Practitioner/p1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    where x.param = $1
      and ((x.target_type = $2 and x.target_id = $3))
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -364934787 (PractitionerRole.practitioner)
-- $2 = "Practitioner"
-- $3 = "p1"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > reference > v1/Organization?endpoint=Endpoint/e1,e2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select x.rid
    from reference_idx x
    where x.param = $1
      and ((x.target_type = $2 and x.target_id = $3) or x.target_id = any($4::text[]))
  ) r
  where true
  order by 1
  limit $5
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 104794845 (Organization.endpoint)
-- $2 = "Endpoint"
-- $3 = "e1"
-- $4 = ["e2"]
-- $5 = 51
`

exports[`tests/compile-golden.test.ts > TAP > rendered entries, _summary and _elements > a page rendered as entries 1`] = `
select count(*) as rows, (array_agg(p.key order by p.n desc) filter (where p.n <= $1))[1] as last, null as rids, null as ids, string_agg(
  $2::text || to_json($3::text || p.type || '/' || p.id)::text || $4::text || p.content || $5::text, ','
  order by p.n
) filter (where p.n <= $6) as entries
from (
  select q.rid, q.type, q.id, q.content, q.key, row_number() over (order by q.ord) as n
  from (
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
    from (
      select distinct r.rid
      from (select t.rid from token_idx t where t.param = $7 and t.code = $8) r
      where true
      order by 1
      limit $9
    ) page
    join resource r on r.rid = page.rid
    order by r.rid
  ) q
) p
-- $1 = 20
-- $2 = "{\\"fullUrl\\":"
-- $3 = "http://fhir.test/fhir/v2/"
-- $4 = ",\\"resource\\":"
-- $5 = ",\\"search\\":{\\"mode\\":\\"match\\"}}"
-- $6 = 20
-- $7 = -994924139 (PractitionerRole.role)
-- $8 = "FON-01"
-- $9 = 21
`

exports[`tests/compile-golden.test.ts > TAP > rendered entries, _summary and _elements > a v1 page with includes of another version, keys kept 1`] = `
select count(*) as rows, (array_agg(p.key order by p.n desc) filter (where p.n <= $1))[1] as last, string_agg(
  p.rid::text, ','
  order by p.n
) filter (where p.n <= $2) as rids, string_agg(p.id, ',' order by p.n) filter (where p.n <= $3) as ids, string_agg(
  $4::text || to_json(
    (case when p.type = $5 then $6::text else $7::text end) || p.type || '/' || p.id
  )::text || $8::text || p.content || $9::text, ','
  order by p.n
) filter (where p.n <= $10) as entries
from (
  select q.rid, q.type, q.id, q.content, q.key, row_number() over (order by q.ord) as n
  from (
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
    from (
      select distinct r.rid
      from (select t.rid from token_idx t where t.param = $11 and t.code = $12) r
      where true
      order by 1
      limit $13
    ) page
    join resource r on r.rid = page.rid
    order by r.rid
  ) q
) p
-- $1 = 100
-- $2 = 100
-- $3 = 100
-- $4 = "{\\"fullUrl\\":"
-- $5 = "PractitionerRole"
-- $6 = "http://fhir.test/fhir/v2/"
-- $7 = "http://fhir.test/fhir/v1/"
-- $8 = ",\\"resource\\":"
-- $9 = ",\\"search\\":{\\"mode\\":\\"include\\"}}"
-- $10 = 100
-- $11 = -994924139 (PractitionerRole.role)
-- $12 = "FON-01"
-- $13 = 21
`

exports[`tests/compile-golden.test.ts > TAP > string > Organization?address-postalcode=75 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1154012811 (Organization.address-postalcode)
-- $2 = "75"
-- $3 = "76"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Organization?address-postalcode=75&address-city=paris 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select p.rid
    from pair_idx p
    where p.param = $1
      and (p.a >= $2 and p.a < $3)
      and (p.b >= $4 and p.b < $5)
  ) r
  where true
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 1112104088 (Organization.address-city+address-postalcode)
-- $2 = "paris"
-- $3 = "parit"
-- $4 = "75"
-- $5 = "76"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family:contains=100%_sûr 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from (select v.norm from string_value v where v.param = $1 and (v.norm like $2)) v, lateral (
        select s.rid
        from string_idx s
        where s.param = $3
          and s.norm = v.norm
        offset 0
      ) s
      offset 0
    ) s
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "%100 sur%"
-- $3 = 794697393 (Practitioner.family)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family:contains=ar 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and s.norm like $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "%ar%"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family:contains=art 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from (select v.norm from string_value v where v.param = $1 and (v.norm like $2)) v, lateral (
        select s.rid
        from string_idx s
        where s.param = $3
          and s.norm = v.norm
        offset 0
      ) s
      offset 0
    ) s
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "%art%"
-- $3 = 794697393 (Practitioner.family)
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family:contains=art&active=true (a rare needle drives, the others probed) 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from (select v.norm from string_value v where v.param = $1 and (v.norm like $2)) v, lateral (
        select s.rid
        from string_idx s
        where s.param = $3
          and s.norm = v.norm
        offset 0
      ) s
      offset 0
    ) s
  ) r
  where exists (
    select 1
    from "token_idx" "t"
    where "t".rid = "r".rid
      and "t".param = $4
      and t.code = $5
    offset 0
  )
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "%art%"
-- $3 = 794697393 (Practitioner.family)
-- $4 = 867648487 (Practitioner.active)
-- $5 = "true"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family:contains=mar (a common needle) 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and s.norm like $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "%mar%"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family:exact=Martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm = $2 and s.exact = $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "martin"
-- $3 = "Martin"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family=martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "martin"
-- $3 = "martio"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family=Martin,Dupont 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from string_idx s
    where s.param = $1
      and ((s.norm >= $2 and s.norm < $3) or (s.norm >= $4 and s.norm < $5))
  ) r
  where true
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "martin"
-- $3 = "martio"
-- $4 = "dupont"
-- $5 = "duponu"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family=martin&given=jea 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select p.rid
    from pair_idx p
    where p.param = $1
      and (p.a >= $2 and p.a < $3)
      and (p.b >= $4 and p.b < $5)
  ) r
  where true
  order by 1
  limit $6
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 638181875 (Practitioner.family+given)
-- $2 = "martin"
-- $3 = "martio"
-- $4 = "jea"
-- $5 = "jeb"
-- $6 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family=zyg (a rare prefix) 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from string_idx s
      where s.param = $1
        and (s.norm >= $2 and s.norm < $3)
      offset 0
    ) s
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "zyg"
-- $3 = "zyh"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family=zyg&name=jean&active=true (a rare prefix drives, a prefix of a smaller range than its probes read once, hashed) 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from string_idx s
      where s.param = $1
        and (s.norm >= $2 and s.norm < $3)
      offset 0
    ) s
  ) r
  where coalesce(
    "r".rid in (
      select s.rid
      from string_idx s
      where s.param = $4
        and (s.norm >= $5 and s.norm < $6)
    ), false
  )
    and exists (
      select 1
      from "token_idx" "t"
      where "t".rid = "r".rid
        and "t".param = $7
        and t.code = $8
      offset 0
    )
  order by 1
  limit $9
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "zyg"
-- $3 = "zyh"
-- $4 = 362174670 (Practitioner.name)
-- $5 = "jean"
-- $6 = "jeao"
-- $7 = 867648487 (Practitioner.active)
-- $8 = "true"
-- $9 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?family=zyg&name=jean&active=true (a rare prefix drives, the others probed) 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select s.rid
    from (
      select s.rid
      from string_idx s
      where s.param = $1
        and (s.norm >= $2 and s.norm < $3)
      offset 0
    ) s
  ) r
  where exists (
    select 1
    from "string_idx" "s"
    where "s".rid = "r".rid
      and "s".param = $4
      and (s.norm >= $5 and s.norm < $6)
    offset 0
  )
    and exists (
      select 1
      from "token_idx" "t"
      where "t".rid = "r".rid
        and "t".param = $7
        and t.code = $8
      offset 0
    )
  order by 1
  limit $9
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "zyg"
-- $3 = "zyh"
-- $4 = 362174670 (Practitioner.name)
-- $5 = "jean"
-- $6 = "jeao"
-- $7 = 867648487 (Practitioner.active)
-- $8 = "true"
-- $9 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?name:family=martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 794697393 (Practitioner.family)
-- $2 = "martin"
-- $3 = "martio"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?name:family=martin&name:given=jea,mar&active=true 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select p.rid
    from pair_idx p
    where p.param = $1
      and (p.a >= $2 and p.a < $3)
      and ((p.b >= $4 and p.b < $5) or (p.b >= $6 and p.b < $7))
  ) r
  where "r".rid in (select t.rid from token_idx t where t.param = $8 and t.code = $9)
  order by 1
  limit $10
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 638181875 (Practitioner.family+given)
-- $2 = "martin"
-- $3 = "martio"
-- $4 = "jea"
-- $5 = "jeb"
-- $6 = "mar"
-- $7 = "mas"
-- $8 = 867648487 (Practitioner.active)
-- $9 = "true"
-- $10 = 51
`

exports[`tests/compile-golden.test.ts > TAP > string > Practitioner?name=jean&family=martin 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select s.rid from string_idx s where s.param = $1 and (s.norm >= $2 and s.norm < $3)) r
  where "r".rid in (
    select s.rid
    from string_idx s
    where s.param = $4
      and (s.norm >= $5 and s.norm < $6)
  )
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 362174670 (Practitioner.name)
-- $2 = "jean"
-- $3 = "jeao"
-- $4 = 794697393 (Practitioner.family)
-- $5 = "martin"
-- $6 = "martio"
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?_id:not=p1 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select r.rid
  from resource r
  where r.type = $1
    and "r".rid not in (select i.rid from resource i where i.type = $2 and i.id = any($3::text[]))
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = "Practitioner"
-- $3 = ["p1"]
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?_id=p1,p2 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select i.rid from resource i where i.type = $1 and i.id = any($2::text[])) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = ["p1", "p2"]
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?active:not=true 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select r.rid
  from resource r
  where r.type = $1
    and not exists (
      select 1
      from "token_idx" "t"
      where "t".rid = "r".rid
        and "t".param = $2
        and t.code = $3
    )
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = 867648487 (Practitioner.active)
-- $3 = "true"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?active=true 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 867648487 (Practitioner.active)
-- $2 = "true"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?data-information-system:text=rpps 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select t.rid
    from token_idx t
    where t.param = $1
      and (
        t.sys = 0
          and t.code in (
            select l.code
            from code_label l
            where (l.sys = 0 or l.sys = (select s.id from token_system s where s.uri = $2))
              and ((' ' || l.norm) like $3)
          )
      )
  ) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 1882204344 (Practitioner.data-information-system)
-- $2 = "https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem/as-cs-type-systeme-information"
-- $3 = "% rpps%"
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?data-information-system=RPPS 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 1882204344 (Practitioner.data-information-system)
-- $2 = "RPPS"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?family:missing=false 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select r.rid
  from resource r
  where r.type = $1
    and exists (select 1 from "string_idx" "s" where "s".rid = "r".rid and "s".param = $2)
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = 794697393 (Practitioner.family)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=|810000000001 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = "810000000001"
-- $3 = 0
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=810000000001 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = "810000000001"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=810000000001,810000000002,https://rpps.esante.gouv.fr|3,|4 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select t.rid
    from token_idx t
    where t.param = $1
      and (t.code = any($2::text[]) or (t.code = $3 and t.sys = $4) or (t.code = $5 and t.sys = $6))
  ) r
  where true
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = ["810000000001", "810000000002"]
-- $3 = "3"
-- $4 = 3
-- $5 = "4"
-- $6 = 0
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=810000000001&active=true&qualification-code=SM26 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where "r".rid in (select t.rid from token_idx t where t.param = $3 and t.code = $4)
    and "r".rid in (select t.rid from token_idx t where t.param = $5 and t.code = $6)
  order by 1
  limit $7
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = "810000000001"
-- $3 = 867648487 (Practitioner.active)
-- $4 = "true"
-- $5 = 1612460460 (Practitioner.qualification-code)
-- $6 = "SM26"
-- $7 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=https://rpps.esante.gouv.fr| 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.sys = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = 3
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=https://rpps.esante.gouv.fr|810000000001 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = "810000000001"
-- $3 = 3
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?identifier=https://unknown.example|810000000001 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -2026893178 (Practitioner.identifier)
-- $2 = "810000000001"
-- $3 = -1
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?qualification-code:missing=true 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select r.rid
  from resource r
  where r.type = $1
    and not exists (select 1 from "token_idx" "t" where "t".rid = "r".rid and "t".param = $2)
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = 1612460460 (Practitioner.qualification-code)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?qualification-code:not=SM26,SM54 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select r.rid
  from resource r
  where r.type = $1
    and not exists (
      select 1
      from "token_idx" "t"
      where "t".rid = "r".rid
        and "t".param = $2
        and t.code = any($3::text[])
    )
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = "Practitioner"
-- $2 = 1612460460 (Practitioner.qualification-code)
-- $3 = ["SM26", "SM54"]
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > token > Practitioner?qualification-code:text=medecine gen,chirurgien 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select t.rid
    from token_idx t
    where t.param = $1
      and (t.sys, t.code) in (
        select l.sys, l.code
        from code_label l
        where ((' ' || l.norm) like $2 and (' ' || l.norm) like $3)
          or ((' ' || l.norm) like $4)
      )
  ) r
  where true
  order by 1
  limit $5
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 1612460460 (Practitioner.qualification-code)
-- $2 = "% medecine%"
-- $3 = "% gen%"
-- $4 = "% chirurgien%"
-- $5 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?_since=2024-03-01T00:00:00Z 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select d.rid from date_idx d where d.param = $1 and (d.low >= $2)) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 870946120 (Organization._lastUpdated)
-- $2 = 2024-03-01T00:00:00.000Z (Date)
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?address-use=http://hl7.org/fhir/address-use|work 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1778835310 (Organization.address-use)
-- $2 = "work"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?address-use=work 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1778835310 (Organization.address-use)
-- $2 = "work"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?as-sp-data-information-system=FINESS 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and t.code = $2) r
  where true
  order by 1
  limit $3
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1386135305 (Organization.data-information-system)
-- $2 = "FINESS"
-- $3 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?identifier=http://finess.sante.gouv.fr|010000024 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -1561950273 (Organization.identifier)
-- $2 = "010000024"
-- $3 = 4
-- $4 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?phonetic=hopital 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (
    select m.rid
    from (
      select "p".rid
      from phonetic_idx "p"
      where "p".param = $1
        and "p"."sound" = $2
      union all
      select p.rid
      from phonetic_idx p
      where p.param = $3
        and p.word in (select unnest($4::text[]))
    ) m
  ) r
  where true
  order by 1
  limit $5
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = -59949620 (Organization.phonetic)
-- $2 = "opital"
-- $3 = -59949620 (Organization.phonetic)
-- $4 = ["ahopital", "bhopital", "chopital", "dhopital", "ehopital", "fhopital", … 368 values, sha256 9c719e140876]
-- $5 = 51
`

exports[`tests/compile-golden.test.ts > TAP > v1 names and systems > v1/Organization?type=http://interopsante.org/fhir/CodeSystem/fr-v2-3307|LEGAL-ENTITY 1`] = `
select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
from (
  select distinct r.rid
  from (select t.rid from token_idx t where t.param = $1 and (t.code = $2 and t.sys = $3)) r
  where true
  order by 1
  limit $4
) page
join resource r on r.rid = page.rid
order by r.rid
-- $1 = 1387171300 (Organization.type)
-- $2 = "LEGAL-ENTITY"
-- $3 = 7
-- $4 = 51
`
