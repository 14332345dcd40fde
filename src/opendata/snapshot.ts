import type { Db } from '../db.ts';
import { KINDS, type FileKind } from '../vocabulary/formats/rpps.ts';
import { KEY_COLUMNS, NOT_A_KEY } from './map.ts';

/**
 * What a snapshot changes, decided from digests alone: the staged lines (src/opendata/stage.ts)
 * against the state the last import left (import_person, import_structure: sql/013).
 *
 * - A person's digest is the md5 of its distinct line digests, sorted (its lines in all three
 *   files); a structure's, of the distinct structure-part digests of its activity lines. Order and
 *   exact duplicates of lines change neither.
 * - Changed: new, digest different, or inactive (back in the extract). Gone: active in the state and
 *   absent from the snapshot.
 * - Roles (PractitionerRole ids, which start with their person's id) follow their person: a changed
 *   person's roles are rebuilt from its lines and those of its previous roles absent now are
 *   dropped; a gone person's roles go with it.
 *
 * - A rejected line never deactivates. An active person it names (import_held) keeps its state:
 *   neither changed nor gone, its roles untouched, and the structures of those roles not gone. A
 *   person new or back is written from its other lines (that deactivates nothing). A rejected
 *   line that names no person keeps every type its kind of file feeds (FEEDS) from being deactivated
 *   by this import; a changed person then keeps its absent roles, and its state digest is left
 *   blank so that the next import decides them again.
 *
 * The result is in staging tables (import_person_change, import_person_gone,
 * import_structure_change, import_structure_gone) that the writer reads.
 */

export interface TypeDiff {
  /** in the snapshot. */
  snapshot: number;
  /** active in the state before this run. */
  active: number;
  /** to write (new, changed or back). */
  changed: number;
  /** to deactivate. */
  gone: number;
}

export interface SnapshotDiff {
  persons: TypeDiff;
  structures: TypeDiff;
  roles: TypeDiff;
}

export type DiffType = keyof SnapshotDiff;

/** The share of a type's active imported resources a run may deactivate without `--force`. */
export const MAX_GONE_SHARE = 0.05;

export const TYPE_NAMES: Record<DiffType, { resource: string; label: string }> = {
  persons: { resource: 'Practitioner', label: 'persons' },
  structures: { resource: 'Organization', label: 'structures' },
  roles: { resource: 'PractitionerRole', label: 'activities' },
};

/** The types an import counts: the RPPS's three, and the Locations of the FINESS establishments. */
export const COUNTED_NAMES = { ...TYPE_NAMES, locations: { resource: 'Location', label: 'locations' } } as const;
export type CountedType = keyof typeof COUNTED_NAMES;

/** What an import may deactivate or remove: the RPPS's three types, and the other sources' own. */
export type Kept = DiffType | 'finess' | 'mailboxes';

/** The types a kind of file feeds: those a line of it that names no person may be the last line of. */
export const FEEDS: Record<FileKind, readonly Kept[]> = {
  activity: ['persons', 'structures', 'roles'],
  savoirFaire: ['persons'],
  diploma: ['persons'],
  mailbox: ['mailboxes'],
};

/**
 * The version of the mapping of lines to resources, folded into the state digests: when it changes
 * (an Organization id rule, a new element), the next import rebuilds every person and structure,
 * and the write path stores a new version only of the resources whose content really changed.
 */
export const MAPPING_VERSION = '3';

/** The import would deactivate more than MAX_GONE_SHARE of a type: nothing was written. */
export class SnapshotRefused extends Error {
  override name = 'SnapshotRefused';
}

/**
 * Digests of the staged snapshot, and its differences with the state, in staging tables; nothing of
 * the types in `kept` is deactivated.
 */
export async function diffSnapshot(db: Db, kept: ReadonlySet<Kept> = new Set()): Promise<SnapshotDiff> {
  const keepPersons = kept.has('persons');
  const keepRoles = kept.has('roles');
  const keepStructures = kept.has('structures');
  await db`
    create unlogged table import_person_now as
    select person, md5(${MAPPING_VERSION} || ':' || string_agg(distinct digest, ',' order by digest)) as digest,
           coalesce(array_agg(distinct role order by role) filter (where role is not null), '{}') as roles
    from import_line group by person`;
  await db`
    create unlogged table import_structure_now as
    select structure, md5(${MAPPING_VERSION} || ':' || string_agg(distinct structure_digest, ',' order by structure_digest)) as digest
    from import_line where structure is not null group by structure`;
  // `absent`: roles of the state absent now (an inactive person's were deactivated when it went);
  // dropped, or kept in the state's roles when roles are kept.
  await db`
    create unlogged table import_person_change as
    select person, case when ${keepRoles}::boolean and cardinality(absent) > 0 then '' else digest end as digest,
           case when ${keepRoles}::boolean then array(select unnest(roles) union select unnest(absent) order by 1) else roles end as roles,
           case when ${keepRoles}::boolean then '{}' else absent end as dropped
    from (
      select n.person, n.digest, n.roles,
             case when s.active then array(select unnest(s.roles) except select unnest(n.roles)) else '{}' end as absent
      from import_person_now n left join import_person s on s.person = n.person
      where (s.person is null or s.digest <> n.digest or not s.active)
        and not (coalesce(s.active, false) and exists (select 1 from import_held h where h.person = n.person))
    ) c`;
  await db`
    create unlogged table import_person_gone as
    select s.person, s.roles from import_person s
    where s.active and not ${keepPersons}::boolean
      and not exists (select 1 from import_person_now n where n.person = s.person)
      and not exists (select 1 from import_held h where h.person = s.person)`;
  await db`
    create unlogged table import_structure_change as
    select n.structure, n.digest from import_structure_now n left join import_structure s on s.structure = n.structure
    where s.structure is null or s.digest <> n.digest or not s.active`;
  // The structures of the held persons' roles stay, as those roles do.
  await db`
    create unlogged table import_structure_gone as
    select s.structure from import_structure s
    where s.active and not ${keepStructures}::boolean
      and not exists (select 1 from import_structure_now n where n.structure = s.structure)
      and not exists (
        select 1 from import_held h join import_person p on p.person = h.person and p.active
        cross join unnest(p.roles) as x(role)
        join resource r on r.type = 'PractitionerRole' and r.id = x.role
        where r.content->'organization'->>'reference' = 'Organization/' || s.structure)`;
  const [c] = await db<Record<string, string>[]>`
    select
      (select count(*) from import_person_now) as persons_snapshot,
      (select count(*) from import_person where active) as persons_active,
      (select count(*) from import_person_change) as persons_changed,
      (select count(*) from import_person_gone) as persons_gone,
      (select count(*) from import_structure_now) as structures_snapshot,
      (select count(*) from import_structure where active) as structures_active,
      (select count(*) from import_structure_change) as structures_changed,
      (select count(*) from import_structure_gone) as structures_gone,
      (select coalesce(sum(cardinality(roles)), 0) from import_person_now) as roles_snapshot,
      (select coalesce(sum(cardinality(roles)), 0) from import_person where active) as roles_active,
      (select coalesce(sum(cardinality(roles)), 0) from import_person_change) as roles_changed,
      (select coalesce(sum(cardinality(dropped)), 0) from import_person_change)
        + (select coalesce(sum(cardinality(roles)), 0) from import_person_gone) as roles_gone`;
  const of = (t: string): TypeDiff => ({
    snapshot: Number(c[`${t}_snapshot`]),
    active: Number(c[`${t}_active`]),
    changed: Number(c[`${t}_changed`]),
    gone: Number(c[`${t}_gone`]),
  });
  return { persons: of('persons'), structures: of('structures'), roles: of('roles') };
}

/**
 * Refuses a snapshot that would deactivate more than MAX_GONE_SHARE of a type's active imported
 * resources (a truncated download must never empty the directory), unless forced.
 */
export function checkGone(types: readonly { label: string; diff: TypeDiff }[], force: boolean): void {
  if (force) return;
  const over = types.filter((t) => t.diff.gone > MAX_GONE_SHARE * t.diff.active);
  if (over.length === 0) return;
  const what = over.map((t) => `${t.diff.gone} of ${t.diff.active} ${t.label} (${((100 * t.diff.gone) / t.diff.active).toFixed(1)} %)`);
  throw new SnapshotRefused(
    `this snapshot would deactivate ${what.join(', ')}, more than ${MAX_GONE_SHARE * 100} % of the active ones: ` +
      'nothing was written. Check that the extract is complete (a truncated download?); to import it anyway, run again with --force',
  );
}

/** The active persons named by rejected lines, who keep their state (diffSnapshot). */
export async function countHeld(db: Db): Promise<number> {
  const [{ held }] = await db<{ held: number }[]>`
    select count(*)::int as held from import_held h join import_person s on s.person = h.person and s.active`;
  return held;
}

/** The state rows of persons written: their digest, their roles now, active. */
export async function markPersons(db: Db, persons: readonly { person: string; digest: string; roles: readonly string[] }[]): Promise<void> {
  if (persons.length === 0) return;
  await db`
    insert into import_person (person, digest, roles, active)
    select x.person, x.digest, array(select jsonb_array_elements_text(x.roles)), true
    from jsonb_to_recordset(${JSON.stringify(persons)}::text::jsonb) as x(person text, digest text, roles jsonb)
    on conflict (person) do update set digest = excluded.digest, roles = excluded.roles, active = true`;
}

/** The RPPS state of structures written: their digest and the line their Organization was built from. */
export async function markStructures(db: Db, structures: readonly { structure: string; digest: string; fields: string | null }[]): Promise<void> {
  if (structures.length === 0) return;
  await db`
    insert into import_structure (structure, digest, fields, active)
    select x.structure, x.digest, x.fields, true
    from unnest(${structures.map((s) => s.structure)}::text[], ${structures.map((s) => s.digest)}::text[], ${structures.map((s) => s.fields)}::text[]) as x(structure, digest, fields)
    on conflict (structure) do update set digest = excluded.digest, fields = excluded.fields, active = true`;
}

/** The FINESS state of entities written: changed ones with their content, gone ones (content null) inactive. */
export async function markFiness(db: Db, entities: readonly { org: string; kind: string | null; digest: string | null; content: string | null }[]): Promise<void> {
  const changed = entities.filter((e) => e.content !== null && e.digest !== null);
  const gone = entities.filter((e) => e.content === null).map((e) => e.org);
  if (changed.length) {
    await db`
      insert into import_finess (org, kind, digest, content, active)
      select x.org, x.kind, x.digest, x.content, true
      from unnest(${changed.map((e) => e.org)}::text[], ${changed.map((e) => e.kind)}::text[], ${changed.map((e) => e.digest)}::text[], ${changed.map((e) => e.content)}::text[]) as x(org, kind, digest, content)
      on conflict (org) do update set kind = excluded.kind, digest = excluded.digest, content = excluded.content, active = true`;
  }
  if (gone.length) await db`update import_finess set active = false where org = any(${gone}::text[])`;
}

/** Persons deactivated: their roles are kept, so that a person who comes back has its old ones dropped. */
export async function markPersonsGone(db: Db, persons: readonly string[]): Promise<void> {
  if (persons.length) await db`update import_person set active = false where person = any(${persons as string[]}::text[])`;
}

export async function markStructuresGone(db: Db, structures: readonly string[]): Promise<void> {
  if (structures.length) await db`update import_structure set active = false where structure = any(${structures as string[]}::text[])`;
}

/**
 * The state of a first import written by the bulk path: every person and structure it wrote (the
 * change tables, which hold the whole snapshot: the state was emptied), active, but for those whose
 * resources the loader rejected.
 */
export async function replaceState(db: Db, rejected: { persons: string[]; structures: string[] }): Promise<void> {
  await db`delete from import_person`;
  await db`delete from import_structure`;
  await db`delete from import_finess`;
  await db`
    insert into import_person (person, digest, roles, active)
    select person, digest, roles, true from import_person_change where person <> all(${rejected.persons}::text[])`;
  await db`
    insert into import_structure (structure, digest, fields, active)
    select distinct on (c.structure) c.structure, c.digest, l.fields, true
    from import_structure_change c join import_line l on l.structure = c.structure
    where c.structure <> all(${rejected.structures}::text[])
    order by c.structure, l.structure_digest, l.seq`;
  await db`
    insert into import_finess (org, kind, digest, content, active)
    select org, kind, digest, content, true from import_finess_change where org <> all(${rejected.structures}::text[])`;
}

// ---- the FINESS and MSSanté sources ---------------------------------------------------------------

/**
 * The FINESS snapshot (import_finess_now, staged by src/opendata/stage-finess.ts) against its
 * state (import_finess): changed (new, different digest, or back) and gone (active, absent now).
 * Without the feed in this run both are empty: a source imported alone never deactivates another's.
 */
export async function diffFiness(db: Db, inRun: boolean, keep: boolean): Promise<{ establishments: TypeDiff; legal: TypeDiff }> {
  await db`
    create unlogged table import_finess_change as
    select n.org, n.kind, n.digest, n.content, n.location, n.at
    from (select distinct on (org) org, kind, digest, content, location, at from import_finess_now order by org, seq) n
    left join import_finess s on s.org = n.org
    where ${inRun}::boolean and (s.org is null or s.digest <> n.digest or not s.active)`;
  await db`
    create unlogged table import_finess_gone as
    select s.org, s.kind from import_finess s
    where ${inRun}::boolean and not ${keep}::boolean and s.active
      and not exists (select 1 from import_finess_now n where n.org = s.org)`;
  const rows = await db<{ kind: string; snapshot: string; active: string; changed: string; gone: string }[]>`
    select k.kind,
      (select count(distinct org) from import_finess_now n where n.kind = k.kind) as snapshot,
      (select count(*) from import_finess s where s.kind = k.kind and s.active) as active,
      (select count(*) from import_finess_change c where c.kind = k.kind) as changed,
      (select count(*) from import_finess_gone g where g.kind = k.kind) as gone
    from (values ('establishment'), ('legal')) as k(kind)`;
  const of = (kind: string): TypeDiff => {
    const r = rows.find((x) => x.kind === kind)!;
    return { snapshot: Number(r.snapshot), active: Number(r.active), changed: Number(r.changed), gone: Number(r.gone) };
  };
  return { establishments: of('establishment'), legal: of('legal') };
}

/**
 * The Locations (an establishment's place, src/opendata/finess-map.ts locationOf) as this run leaves
 * them, against the stored ones. No state of their own: a Location changes only with its
 * establishment's FINESS digest, which covers it; its stored status says what it was.
 *
 * import_located: per establishment, whether its Location is active before the run (stored) and
 * after it (the stored active ones the feed neither changed nor dropped, and those it changed to an
 * active Location). A PractitionerRole at an establishment located after refers to its Location.
 *
 * Gone: active Locations this run makes inactive (closed, point removed, establishment gone).
 */
export async function diffLocations(db: Db, finessInRun: boolean): Promise<TypeDiff> {
  await db`
    create unlogged table import_located as
    select org collate "C" as org, bool_or(before) as before, bool_or(after) as after from (
      select r.id as org, true as before,
             not exists (select 1 from import_finess_change c where c.org = r.id)
               and not exists (select 1 from import_finess_gone g where g.org = r.id) as after
      from resource r where r.type = 'Location' and r.content->>'status' = 'active'
      union all
      select org, false, true from import_finess_change where location::jsonb->>'status' = 'active'
    ) x group by org`;
  await db`alter table import_located add primary key (org)`;
  const [c] = await db<Record<string, string>[]>`
    select (select count(distinct org) from import_finess_now where ${finessInRun}::boolean and located) as snapshot,
           (select count(*) from import_located where before) as active,
           (select count(*) from import_finess_change where location is not null) as changed,
           (select count(*) from import_located where before and not after) as gone`;
  return { snapshot: Number(c.snapshot), active: Number(c.active), changed: Number(c.changed), gone: Number(c.gone) };
}

/**
 * The establishments that gain or lose an active Location marked pending (import_pending, kind
 * `location`), before anything is written: their PractitionerRoles are rewritten from them, and an
 * import killed before it rewrote them all rewrites them when run again.
 */
export async function markLocatedChanges(db: Db): Promise<void> {
  await db`insert into import_pending (kind, key) select 'location', org from import_located where before <> after on conflict do nothing`;
}

/**
 * The MSSanté snapshot: its lines, moved out of import_line into import_mailbox_now (one row per
 * distinct mailbox: exact duplicates are one), against the state (import_mailbox): added and gone.
 * Without the extract in this run both are empty.
 */
export async function diffMailboxes(db: Db, inRun: boolean, keep: boolean): Promise<TypeDiff> {
  await db`
    create unlogged table import_mailbox_now as
    select distinct on (digest) digest, role as kind, nullif(person, '') as person, structure,
           fields::jsonb->>'value' as address, fields as content, at
    from import_line where kind = 'mailbox' order by digest, seq`;
  await db`delete from import_line where kind = 'mailbox'`;
  await db`
    create unlogged table import_mailbox_added as
    select n.* from import_mailbox_now n
    where ${inRun}::boolean and not exists (select 1 from import_mailbox s where s.digest = n.digest)`;
  await db`
    create unlogged table import_mailbox_gone as
    select s.digest, s.kind, s.person, s.structure from import_mailbox s
    where ${inRun}::boolean and not ${keep}::boolean
      and not exists (select 1 from import_mailbox_now n where n.digest = s.digest)`;
  const [c] = await db<Record<string, string>[]>`
    select (select count(*) from import_mailbox_now) as snapshot, (select count(*) from import_mailbox) as active,
           (select count(*) from import_mailbox_added) as changed, (select count(*) from import_mailbox_gone) as gone`;
  return { snapshot: Number(c.snapshot), active: Number(c.active), changed: Number(c.changed), gone: Number(c.gone) };
}

/**
 * The mailbox state made the snapshot's, in one transaction with the owners it changes marked
 * pending (import_pending): the resources are then built from the state, and an import killed
 * before it rewrote them all rewrites the pending ones when run again.
 */
export async function applyMailboxes(db: Db): Promise<void> {
  await db`
    insert into import_pending (kind, key)
    select distinct case when kind = 'PER' then 'person' else 'structure' end, case when kind = 'PER' then person else structure end
    from (select kind, person, structure from import_mailbox_added union all select kind, person, structure from import_mailbox_gone) x
    where case when kind = 'PER' then person else structure end is not null
    on conflict do nothing`;
  await db`delete from import_mailbox s using import_mailbox_gone g where s.digest = g.digest`;
  await db`
    insert into import_mailbox (digest, kind, person, structure, address, content)
    select digest, kind, person, structure, address, content from import_mailbox_added`;
}

/**
 * import_org_key: the identifier values that name each Organization of the directory as this run
 * leaves it — the RPPS structures (this run's lines, else the state's) and the FINESS entities
 * (this run's feed, else the state's) — by which mailboxes find their structure. SIREN is left
 * out: it names a company, shared by its establishments.
 */
export async function buildOrgKeys(db: Db, rppsInRun: boolean, finessInRun: boolean): Promise<void> {
  // This run's keys were staged with its lines and entities (src/opendata/stage.ts); the state's from its lines
  // (an array of values, or an object in the state of an import made before they were arrays).
  await db`
    create unlogged table import_org_key as
    select distinct value, org from (
      select l.structure as org, unnest(l.structure_keys) as value from import_line l
      where ${rppsInRun}::boolean and l.kind = 'activity' and l.structure_keys is not null
      union all
      select s.structure, coalesce(s.fields::jsonb->>c.key, s.fields::jsonb->>c.at) from import_structure s
      cross join unnest(${KEY_COLUMNS as readonly string[]}::text[], ${KEY_COLUMNS.map((k) => KINDS.activity.columns.indexOf(k))}::int[]) as c(key, at)
      where not ${rppsInRun}::boolean and s.active and s.fields is not null
      union all
      select n.org, unnest(n.keys) from import_finess_now n where ${finessInRun}::boolean
      union all
      select f.org, i->>'value' from import_finess f cross join jsonb_array_elements(f.content::jsonb->'identifier') i
      where not ${finessInRun}::boolean and f.active and coalesce(i->'type'->'coding'->0->>'code', '') <> ${NOT_A_KEY}
    ) k where value is not null and value <> ''`;
  await db`create index on import_org_key (value)`;
  await db`create index on import_org_key (org)`;
}

/**
 * import_org_affected: the Organizations to build again — RPPS structures changed or gone, FINESS
 * entities changed or gone, and those named by a pending ORG mailbox.
 */
export async function affectedOrganizations(db: Db): Promise<number> {
  await db`
    create unlogged table import_org_affected as
    select structure as org from import_structure_change
    union select structure from import_structure_gone
    union select org from import_finess_change
    union select org from import_finess_gone
    union select k.org from import_pending p join import_org_key k on k.value = p.key where p.kind = 'structure'`;
  const [{ n }] = await db<{ n: number }[]>`select count(*)::int as n from import_org_affected`;
  return n;
}

/** Mailboxes whose person or structure the directory does not know: counted, on no resource. */
export async function unmatchedMailboxes(db: Db): Promise<{ persons: number; structures: number }> {
  const [c] = await db<{ persons: number; structures: number }[]>`
    select
      (select count(*)::int from import_mailbox m where m.kind = 'PER'
         and not exists (select 1 from import_person p where p.person = m.person and p.active)) as persons,
      (select count(*)::int from import_mailbox m where m.kind = 'ORG'
         and not exists (select 1 from import_org_key k where k.value = m.structure)) as structures`;
  return c;
}
