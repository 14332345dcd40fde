import type { Db } from '../db.ts';
import type { FileKind } from '../vocabulary/formats/rpps.ts';

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

/** The types a kind of file feeds: those a line of it that names no person may be the last line of. */
export const FEEDS: Record<FileKind, readonly DiffType[]> = {
  activity: ['persons', 'structures', 'roles'],
  savoirFaire: ['persons'],
  diploma: ['persons'],
};

/** The import would deactivate more than MAX_GONE_SHARE of a type: nothing was written. */
export class SnapshotRefused extends Error {
  override name = 'SnapshotRefused';
}

/**
 * Digests of the staged snapshot, and its differences with the state, in staging tables; nothing of
 * the types in `kept` is deactivated.
 */
export async function diffSnapshot(db: Db, kept: ReadonlySet<DiffType> = new Set()): Promise<SnapshotDiff> {
  const keepPersons = kept.has('persons');
  const keepRoles = kept.has('roles');
  const keepStructures = kept.has('structures');
  await db`
    create unlogged table import_person_now as
    select person, md5(string_agg(distinct digest, ',' order by digest)) as digest,
           coalesce(array_agg(distinct role order by role) filter (where role is not null), '{}') as roles
    from import_line group by person`;
  await db`
    create unlogged table import_structure_now as
    select structure, md5(string_agg(distinct structure_digest, ',' order by structure_digest)) as digest
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
export function checkGone(diff: SnapshotDiff, force: boolean): void {
  if (force) return;
  const over = (Object.keys(TYPE_NAMES) as DiffType[]).filter((t) => diff[t].gone > MAX_GONE_SHARE * diff[t].active);
  if (over.length === 0) return;
  const what = over.map((t) => `${diff[t].gone} of ${diff[t].active} ${TYPE_NAMES[t].label} (${((100 * diff[t].gone) / diff[t].active).toFixed(1)} %)`);
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

export async function markStructures(db: Db, structures: readonly { structure: string; digest: string }[]): Promise<void> {
  if (structures.length === 0) return;
  await db`
    insert into import_structure (structure, digest, active)
    select x.structure, x.digest, true from unnest(${structures.map((s) => s.structure)}::text[], ${structures.map((s) => s.digest)}::text[]) as x(structure, digest)
    on conflict (structure) do update set digest = excluded.digest, active = true`;
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
  await db`
    insert into import_person (person, digest, roles, active)
    select person, digest, roles, true from import_person_change where person <> all(${rejected.persons}::text[])`;
  await db`
    insert into import_structure (structure, digest, active)
    select structure, digest, true from import_structure_change where structure <> all(${rejected.structures}::text[])`;
}
