import type { Readable } from 'node:stream';
import type postgres from 'postgres';
import type { Db, Sql } from '../db.ts';
import { ExtractError } from '../fhir/extract.ts';
import { InvalidResource } from '../fhir/resource.ts';
import { loadBulk } from '../load/loader.ts';
import { preparePut } from '../load/prepare.ts';
import { spansBuffer, type ByteChunk } from '../load/sources.ts';
import { BoundedWriter } from '../load/writer.ts';
import type { Registry, ResourceType } from '../registry/index.ts';
import { loaderTx, writeBatch, type WriteCounts, type WriteEntry } from '../store/write.ts';
import { TokenSystems } from '../store/token-systems.ts';
import { withMailboxes } from './mailbox.ts';
import { personResources, roleMailboxes, stamp, structureResource, withLocation, type PersonMailbox, type StagedLine, type StructureRow } from './map-chunk.ts';
import { mappedChunks, type ImportPool } from './pool.ts';
import { markFiness, markPersons, markPersonsGone, markStructures, markStructuresGone, replaceState, type CountedType } from './snapshot.ts';

/**
 * Writes what a snapshot changed (src/opendata/snapshot.ts) as resources, each with
 * meta.lastUpdated = the run's start and versionId "1" (the write path numbers the versions).
 *
 * Incremental (the database holds resources), in this order: the affected structures rebuilt from
 * their parts (src/opendata/merge.ts), with the Locations of the establishments the feed changed;
 * the changed persons' lines read back sorted by person, mapped with their mailboxes; the gone
 * persons; the persons whose mailboxes alone changed (their stored resources' MSSANTE telecoms
 * replaced); the roles at establishments that gained or lost an active Location (their stored
 * `location` set again). All through the loader's write path in batches, a few
 * transactions at once; each transaction also writes the state rows of what it holds, so a killed
 * run leaves state that matches the database and a rerun writes what is still marked changed.
 * Deactivation reads the stored resource and writes it again with `active: false` (a Location:
 * `status: inactive`).
 *
 * First import (no resource at all): the mapped resources stream into the bulk loader (COPY, indexes
 * built at the end); the state is then filled from the staging tables.
 */

type Json = Record<string, unknown>;

export interface TypeCounts {
  new: number;
  changed: number;
  deactivated: number;
  unchanged: number;
}
export type ImportCounts = Record<CountedType, TypeCounts>;

export interface PublishOptions {
  registry: Registry;
  /** meta.lastUpdated of everything written: the run's start. */
  lastUpdated: string;
  batchSize: number;
  /** batch transactions at once. */
  concurrency: number;
  /** a resource the write path refuses: `where` is the first line of its person or structure. */
  onReject(where: string, reason: string): void;
  /** resources handled so far (written or found unchanged). */
  onProgress?(done: number): void;
  /** the import's worker threads: a first import's lines are mapped and encoded for the bulk load by them (without: on this thread). */
  pool?: ImportPool;
}

export interface Published {
  counts: ImportCounts;
  /** resources given a new version (new, changed, deactivated). */
  written: number;
  rejected: number;
}

const RESOURCE_OF: Record<CountedType, ResourceType> = { persons: 'Practitioner', structures: 'Organization', roles: 'PractitionerRole', locations: 'Location' };

/** A stored resource made inactive: a Location by its status, the others by `active`. */
const inactive = (type: CountedType, content: Json): Json | undefined => {
  if (type === 'locations') return content.status === 'inactive' ? undefined : { ...content, status: 'inactive' };
  return content.active === false ? undefined : { ...content, active: false };
};

const emptyTypeCounts = (): ImportCounts => ({
  persons: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
  structures: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
  roles: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
  locations: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
});

// ---- reading the staged lines back ------------------------------------------------------------------

/** One changed person: its lines in input order, its digest, its role ids now and its previous ones absent now, its mailboxes. */
interface PersonLines {
  person: string;
  digest: string;
  roles: string[];
  dropped: string[];
  lines: StagedLine[];
  mailboxes: PersonMailbox[];
}

const ROWS = 1000;

/**
 * The PER mailboxes (JSON PersonMailbox[], by address) of the persons of `persons` (a table with a
 * `person` column): one per address, with every Organization its lines' structure identifiers name.
 */
const personMailboxes = (db: Db, persons: string) => db`
  select person, json_agg(json_build_object('telecom', telecom::json, 'orgs', orgs) order by address)::text as mailboxes
  from (
    select m.person, m.address, (array_agg(m.content order by m.digest))[1] as telecom,
           coalesce(array_agg(distinct k.org) filter (where k.org is not null), '{}') as orgs
    from import_mailbox m left join import_org_key k on k.value = m.structure
    where m.kind = 'PER' and m.person in (select person from ${db(persons)})
    group by m.person, m.address) x
  group by person`;

/** Whether the structure of the staged line `l` has an active Location (a boolean column). */
const located = (db: Db) => db`exists (select 1 from import_located k where k.org = l.structure and k.after)`;

/** The changed persons with their lines and mailboxes, sorted by person (one cursor). */
async function* changedPersons(session: Db): AsyncGenerator<PersonLines> {
  let current: PersonLines | undefined;
  const rows = session<(StagedLine & { person: string; digest: string; roles: string[]; dropped: string[]; mailboxes: string | null })[]>`
    with pm as (${personMailboxes(session, 'import_person_change')})
    select c.person, c.digest, c.roles, c.dropped, l.kind, l.at, l.role, l.fields, pm.mailboxes, ${located(session)} as located
    from import_person_change c join import_line l on l.person = c.person left join pm on pm.person = c.person
    order by c.person, l.seq`.cursor(ROWS);
  for await (const batch of rows) {
    for (const r of batch) {
      if (current?.person !== r.person) {
        if (current) yield current;
        current = { person: r.person, digest: r.digest, roles: r.roles, dropped: r.dropped, lines: [], mailboxes: r.mailboxes ? JSON.parse(r.mailboxes) : [] };
      }
      current.lines.push({ kind: r.kind, at: r.at, role: r.role, fields: r.fields, located: r.located });
    }
  }
  if (current) yield current;
}

/**
 * What each structure to build is made of (StructureRow, and what its state rows need): for an
 * RPPS structure changed now, of its lines the one of smallest structure-part digest (so that the
 * Organization depends on the set of its lines, not their order), else the line the state keeps;
 * the FINESS entity changed now, else the state's; its ORG mailboxes. A part whose source dropped
 * it this run is absent. `stored`: a structure imported before the state kept its line is read
 * from the resource table — never in a first import, whose bulk load holds that table.
 */
const STRUCTURE_COLUMNS = (db: Db, stored: boolean) => db`
  with chosen as (
    select distinct on (l.structure) l.structure, l.fields, l.at
    from import_line l join import_structure_change c on c.structure = l.structure
    order by l.structure, l.structure_digest, l.seq),
  mb as (
    select org, json_agg(content::json order by address)::text as mailboxes from (
      select distinct on (k.org, m.address) k.org, m.address, m.content
      from import_org_affected a join import_org_key k on k.org = a.org
      join import_mailbox m on m.kind = 'ORG' and m.structure = k.value
      order by k.org, m.address, m.digest) x
    group by org)
  select a.org,
         coalesce(ch.fields, case when rg.structure is null and s.active then s.fields end) as rpps_fields,
         coalesce(ch.at, case when rg.structure is null and s.active then s.structure end) as rpps_at,
         ${stored ? db`(select (r.content #- '{meta,versionId}' #- '{meta,lastUpdated}')::text from resource r
            where r.type = 'Organization' and r.id = a.org and rc.structure is null and rg.structure is null and s.active and s.fields is null)` : db`null::text`} as rpps_legacy,
         coalesce(fc.content, case when fg.org is null and f.active then f.content end) as finess,
         mb.mailboxes,
         rc.digest as rpps_digest, rg.structure is not null as rpps_gone,
         fc.kind as finess_kind, fc.digest as finess_digest, fg.org is not null as finess_gone,
         fc.location,
         coalesce(coalesce(fg.kind, fc.kind) = 'establishment' and fc.location is null, false) as location_gone,
         coalesce(ch.at, fc.at) as at
  from import_org_affected a
  left join import_structure_change rc on rc.structure = a.org
  left join chosen ch on ch.structure = a.org
  left join import_structure_gone rg on rg.structure = a.org
  left join import_structure s on s.structure = a.org
  left join import_finess_change fc on fc.org = a.org
  left join import_finess_gone fg on fg.org = a.org
  left join import_finess f on f.org = a.org
  left join mb on mb.org = a.org
  order by a.org`;

interface StructureBuild {
  org: string;
  rpps_fields: string | null;
  rpps_at: string | null;
  rpps_legacy: string | null;
  finess: string | null;
  mailboxes: string | null;
  rpps_digest: string | null;
  rpps_gone: boolean;
  finess_kind: string | null;
  finess_digest: string | null;
  finess_gone: boolean;
  location: string | null;
  /** the feed dropped the establishment or its point: its Location, if stored, is made inactive. */
  location_gone: boolean;
  at: string | null;
}

const rowOf = (b: StructureBuild): StructureRow => ({
  org: b.org, rppsFields: b.rpps_fields, rppsAt: b.rpps_at, rppsLegacy: b.rpps_legacy, finess: b.finess, mailboxes: b.mailboxes, location: b.location,
});

// ---- incremental -------------------------------------------------------------------------------------

class Incremental {
  readonly counts = emptyTypeCounts();
  written = 0;
  rejected = 0;
  private done = 0;
  private readonly systems = new TokenSystems();
  private readonly writers: BoundedWriter;

  constructor(private readonly sql: Sql, private readonly opts: PublishOptions) {
    this.writers = new BoundedWriter(opts.concurrency);
  }

  /** Writes entries of one type within `tx`, counted as puts (new or changed) or as deactivations. */
  private async write(tx: Db, type: CountedType, entries: WriteEntry[], deactivation: boolean): Promise<void> {
    if (entries.length === 0) return;
    const c: WriteCounts = await writeBatch(this.sql, this.opts.registry, this.systems, entries, tx);
    const t = this.counts[type];
    if (deactivation) t.deactivated += c.updated;
    else {
      t.new += c.inserted;
      t.changed += c.updated;
    }
    this.written += c.inserted + c.updated;
  }

  /** The stored resources of `ids` that are active, made inactive (a new version as of this run). */
  private async deactivations(tx: Db, type: CountedType, ids: string[]): Promise<WriteEntry[]> {
    if (ids.length === 0) return [];
    const rows = await tx<{ content: Json }[]>`select content from resource where type = ${RESOURCE_OF[type]} and id = any(${ids}::text[])`;
    return rows.flatMap((r) => {
      const content = inactive(type, r.content);
      return content ? [this.restamped(content)] : [];
    });
  }

  /** A stored resource's new content, prepared as of this run. */
  private restamped(content: Json): WriteEntry {
    return preparePut(this.opts.registry, { ...content, meta: { ...(content.meta as Json), lastUpdated: this.opts.lastUpdated } });
  }

  private progress(n: number): void {
    this.done += n;
    this.opts.onProgress?.(this.done);
  }

  /** Prepares a group's resources; a resource the write path refuses leaves its whole group out (its state unchanged). */
  private prepared(where: string, resources: Json[]): WriteEntry[] | undefined {
    try {
      return resources.map((r) => preparePut(this.opts.registry, r));
    } catch (err) {
      if (!(err instanceof InvalidResource || err instanceof ExtractError)) throw err;
      this.rejected++;
      this.opts.onReject(where, err.message);
      return undefined;
    }
  }

  async persons(session: Db): Promise<void> {
    let batch: { p: PersonLines; practitioner: WriteEntry; roles: WriteEntry[] }[] = [];
    let size = 0;
    const flush = async () => {
      const b = batch;
      batch = [];
      size = 0;
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          const dropped = await this.deactivations(tx, 'roles', b.flatMap((x) => x.p.dropped));
          await this.write(tx, 'persons', b.map((x) => x.practitioner), false);
          await this.write(tx, 'roles', b.flatMap((x) => x.roles), false);
          await this.write(tx, 'roles', dropped, true);
          await markPersons(tx, b.map((x) => ({ person: x.p.person, digest: x.p.digest, roles: x.p.roles })));
          this.progress(b.reduce((n, x) => n + 1 + x.roles.length + x.p.dropped.length, 0));
        }),
      );
    };
    for await (const p of changedPersons(session)) {
      const r = personResources(p.lines, this.opts.lastUpdated, p.mailboxes);
      const entries = this.prepared(p.lines[0].at, [r.practitioner, ...r.roles]);
      if (!entries) continue;
      batch.push({ p, practitioner: entries[0], roles: entries.slice(1) });
      size += entries.length + p.dropped.length;
      if (size >= this.opts.batchSize) await flush();
    }
    if (batch.length) await flush();
    await this.writers.drain();
  }

  /**
   * Builds every affected structure again from its parts (src/opendata/merge.ts), with the state
   * rows of the sources that changed it; one that no source describes any more is deactivated.
   */
  async structures(session: Db): Promise<void> {
    for await (const rows of session<StructureBuild[]>`${STRUCTURE_COLUMNS(session, true)}`.cursor(ROWS)) {
      const puts: { b: StructureBuild; entries: WriteEntry[] }[] = [];
      const gone: StructureBuild[] = [];
      for (const b of rows) {
        const org = structureResource(rowOf(b), this.opts.lastUpdated);
        if (org === undefined) {
          gone.push(b);
          continue;
        }
        const location = b.location === null ? [] : [stamp(JSON.parse(b.location), this.opts.lastUpdated)];
        // An Organization and its Location stand or fall together: a refused one leaves both (and the state) as they were.
        const entries = this.prepared(b.at ?? `Organization/${b.org}`, [org, ...location]);
        if (entries) puts.push({ b, entries });
      }
      const ok = puts.map((x) => x.b).concat(gone);
      const entries = puts.flatMap((x) => x.entries);
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          await this.write(tx, 'structures', entries.filter((e) => e.type === 'Organization'), false);
          await this.write(tx, 'locations', entries.filter((e) => e.type === 'Location'), false);
          await this.write(tx, 'structures', await this.deactivations(tx, 'structures', gone.map((b) => b.org)), true);
          await this.write(tx, 'locations', await this.deactivations(tx, 'locations', ok.filter((b) => b.location_gone).map((b) => b.org)), true);
          await markStructures(tx, ok.filter((b) => b.rpps_digest !== null).map((b) => ({ structure: b.org, digest: b.rpps_digest!, fields: b.rpps_fields })));
          await markStructuresGone(tx, ok.filter((b) => b.rpps_gone).map((b) => b.org));
          await markFiness(tx, ok.filter((b) => b.finess_digest !== null || b.finess_gone).map((b) => ({ org: b.org, kind: b.finess_kind, digest: b.finess_digest, content: b.finess_gone ? null : b.finess })));
          this.progress(rows.length);
        }),
      );
    }
    await this.writers.drain();
  }

  /**
   * The persons whose mailboxes changed (import_pending) and that the RPPS lines did not rewrite
   * this run: their stored Practitioner and PractitionerRoles with their mailboxes as the state has them.
   */
  async mailboxes(session: Db): Promise<void> {
    await session`
      create unlogged table import_mailbox_persons as
      select p.key as person from import_pending p
      where p.kind = 'person'
        and not exists (select 1 from import_person_change c where c.person = p.key)
        and not exists (select 1 from import_person_gone g where g.person = p.key)`;
    const rows = session<{ person: string; mailboxes: string | null; roles: string[] | null }[]>`
      with pm as (${personMailboxes(session, 'import_mailbox_persons')})
      select x.person, pm.mailboxes, s.roles from import_mailbox_persons x
      left join pm on pm.person = x.person left join import_person s on s.person = x.person and s.active
      order by x.person`.cursor(ROWS);
    for await (const batch of rows) {
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          const mailboxes = new Map(batch.map((b) => [b.person, (b.mailboxes ? JSON.parse(b.mailboxes) : []) as PersonMailbox[]]));
          const roleOwner = new Map(batch.flatMap((b) => (b.roles ?? []).map((r) => [r, b.person] as const)));
          const stored = await tx<{ type: string; id: string; content: Json }[]>`
            select type, id, content from resource
            where (type = 'Practitioner' and id = any(${[...mailboxes.keys()]}::text[]))
               or (type = 'PractitionerRole' and id = any(${[...roleOwner.keys()]}::text[]))`;
          const entries = stored.filter((r) => r.content.active !== false).map((r) => {
            const owned = mailboxes.get(r.type === 'Practitioner' ? r.id : roleOwner.get(r.id)!) ?? [];
            return this.restamped(r.type === 'Practitioner' ? withMailboxes(r.content, owned.map((m) => m.telecom)) : roleMailboxes(r.content, owned));
          });
          await this.write(tx, 'persons', entries.filter((e) => e.type === 'Practitioner'), false);
          await this.write(tx, 'roles', entries.filter((e) => e.type === 'PractitionerRole'), false);
          this.progress(batch.length);
        }),
      );
    }
    await this.writers.drain();
  }

  /**
   * The stored active PractitionerRoles at the establishments marked pending (import_pending, kind
   * `location`: they gained or lost an active Location), found through the index of their
   * `organization` reference, with `location` as import_located says. A role whose content does
   * not change is not written.
   */
  async locatedRoles(session: Db): Promise<void> {
    const organization = this.opts.registry.byCode('PractitionerRole', 'organization')!.id;
    const rows = session<{ content: Json; located: boolean }[]>`
      select r.content, exists (select 1 from import_located k where k.org = p.key and k.after) as located
      from import_pending p
      join reference_idx x on x.param = ${organization} and x.target_type = 'Organization' and x.target_id = p.key
      join resource r on r.rid = x.rid and r.type = 'PractitionerRole'
      where p.kind = 'location'
      order by r.id`.cursor(ROWS);
    for await (const batch of rows) {
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          const entries = batch.filter((r) => r.content.active !== false).map((r) => this.restamped(withLocation(r.content, r.located)));
          await this.write(tx, 'roles', entries, false);
          this.progress(batch.length);
        }),
      );
    }
    await this.writers.drain();
  }

  /** Deactivates the gone persons (Practitioner and roles), a batch per transaction. */
  async gone(session: Db): Promise<void> {
    const persons = session<{ person: string; roles: string[] }[]>`select person, roles from import_person_gone order by person`.cursor(ROWS);
    for await (const rows of persons) {
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          await this.write(tx, 'persons', await this.deactivations(tx, 'persons', rows.map((r) => r.person)), true);
          await this.write(tx, 'roles', await this.deactivations(tx, 'roles', rows.flatMap((r) => r.roles)), true);
          await markPersonsGone(tx, rows.map((r) => r.person));
          this.progress(rows.reduce((n, r) => n + 1 + r.roles.length, 0));
        }),
      );
    }
    await this.writers.drain();
  }
}

/** Writes the changes of the snapshot into a database that holds resources. */
export async function publishIncremental(sql: Sql, session: Db, opts: PublishOptions): Promise<Published> {
  const w = new Incremental(sql, opts);
  await w.structures(session);
  await w.persons(session);
  await w.gone(session);
  await w.mailboxes(session);
  await w.locatedRoles(session);
  return { counts: w.counts, written: w.written, rejected: w.rejected };
}

// ---- first import -------------------------------------------------------------------------------------

/** Every line of the changed persons, with their mailboxes, as COPY text (src/opendata/map-chunk.ts): a first import maps them all. */
const personRows = (session: Db) => session`
  copy (with pm as (${personMailboxes(session, 'import_person_change')})
        select l.person, l.kind, l.role, l.at, l.fields, pm.mailboxes, ${located(session)}
        from import_person_change c join import_line l on l.person = c.person left join pm on pm.person = c.person
        order by c.person, l.seq) to stdout`;

/** The structures to build as COPY text, the columns of StructureRow (mapChunk reads them in this order). */
const structureRows = (session: Db) => session`
  copy (select org, rpps_fields, rpps_at, rpps_legacy, finess, mailboxes, location from (${STRUCTURE_COLUMNS(session, false)}) s) to stdout`;

/**
 * The bytes of a COPY … TO STDOUT. Read to their end even when the consumer stops early (a full
 * disk, a failed worker): a COPY left unread keeps its connection, which the import still needs.
 */
async function* copyOut(query: postgres.PendingQuery<postgres.Row[]>): AsyncGenerator<Buffer> {
  const stream = (await query.readable()) as Readable;
  try {
    yield* stream.iterator({ destroyOnReturn: false });
  } finally {
    if (!stream.readableEnded) for await (const _ of stream);
  }
}

/** The person of a PractitionerRole id (`<IDNPS>-<hash>`, src/opendata/map.ts roleId). */
const personOfRole = (roleId: string) => roleId.slice(0, roleId.lastIndexOf('-'));

/** The mapped resources of every staged person, then structure, as NDJSON chunks for the bulk loader (numbered lines). */
async function* mappedNdjson(session: Db, opts: PublishOptions, mapped: Record<CountedType, number>): AsyncGenerator<ByteChunk> {
  let first = 1;
  for (const [kind, rows] of [['persons', personRows], ['structures', structureRows]] as const) {
    for await (const r of mappedChunks(copyOut(rows(session)), kind, opts.lastUpdated, opts.pool)) {
      mapped.persons += r.persons;
      mapped.roles += r.roles;
      mapped.structures += r.structures;
      mapped.locations += r.locations;
      const lines = r.persons + r.roles + r.structures + r.locations;
      yield { first, lines, bytes: r.ndjson as Buffer, owned: spansBuffer(r.ndjson) };
      first += lines;
    }
  }
}

/** The person or structure whose state holds a resource (`Type/id`): a role's is its person's, a Location's its establishment's. */
function ownerOf(key: string): { type: string; owner: 'person' | 'structure'; id: string } {
  const type = key.slice(0, key.indexOf('/'));
  const id = key.slice(type.length + 1);
  if (type === 'Organization' || type === 'Location') return { type, owner: 'structure', id };
  return { type, owner: 'person', id: type === 'Practitioner' ? id : personOfRole(id) };
}

/**
 * The extract's first line (file:line) of each of these persons and structures, read from the
 * staging: where the incremental path reports a resource it refuses.
 */
async function firstLines(session: Db, owners: readonly ReturnType<typeof ownerOf>[]): Promise<Map<string, string>> {
  if (owners.length === 0) return new Map();
  const of = (kind: string) => owners.filter((o) => o.owner === kind).map((o) => o.id);
  const rows = await session<{ owner: string; at: string }[]>`
    select 'person ' || person as owner, at from (
      select distinct on (person) person, at from import_line where person = any(${of('person')}::text[]) order by person, seq) p
    union all
    select 'structure ' || structure, at from (
      select distinct on (structure) structure, at from import_line where structure = any(${of('structure')}::text[]) order by structure, seq) s`;
  return new Map(rows.map((r) => [r.owner, r.at]));
}

/**
 * A first import into a database without resources: every person and structure of the snapshot
 * mapped and streamed into the bulk loader, then the state filled. A resource the loader rejects
 * is reported at its person's or structure's first line, and that person or structure is left out
 * of the state (a rerun tries it again).
 */
export async function publishBulk(sql: Sql, session: Db, opts: PublishOptions): Promise<Published> {
  const mapped = { persons: 0, roles: 0, structures: 0, locations: 0 };
  const rejects: { where: string; reason: string; key?: string }[] = [];
  const loaded = await loadBulk(sql, opts.registry, [{ name: 'mapped resource', chunks: mappedNdjson(session, opts, mapped) }], {
    workers: opts.pool,
    batchSize: opts.batchSize,
    onReject: (where, reason, key) => rejects.push({ where, reason, key }),
    onProgress: ({ entries }) => opts.onProgress?.(entries),
  });
  const owners = rejects.map((r) => (r.key ? ownerOf(r.key) : undefined));
  const at = await firstLines(session, owners.filter((o) => o !== undefined));
  const rejected = { persons: new Set<string>(), structures: new Set<string>(), byType: { Practitioner: 0, PractitionerRole: 0, Organization: 0, Location: 0 } as Record<string, number> };
  for (const [i, r] of rejects.entries()) {
    const o = owners[i];
    opts.onReject(o ? (at.get(`${o.owner} ${o.id}`) ?? r.key!) : r.where, r.reason);
    if (!o) continue;
    rejected.byType[o.type]++;
    (o.owner === 'structure' ? rejected.structures : rejected.persons).add(o.id);
  }
  await sql.begin((tx) => replaceState(tx, { persons: [...rejected.persons], structures: [...rejected.structures] }));
  const counts = emptyTypeCounts();
  counts.persons.new = mapped.persons - rejected.byType.Practitioner;
  counts.roles.new = mapped.roles - rejected.byType.PractitionerRole;
  counts.structures.new = mapped.structures - rejected.byType.Organization;
  counts.locations.new = mapped.locations - rejected.byType.Location;
  return { counts, written: loaded.inserted + loaded.updated, rejected: rejects.length };
}
