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
import { personResources, structureResource, type StagedLine } from './map-chunk.ts';
import { mappedChunks, type ImportPool } from './pool.ts';
import { markPersons, markPersonsGone, markStructures, markStructuresGone, replaceState, type DiffType } from './snapshot.ts';

/**
 * Writes what a snapshot changed (src/opendata/snapshot.ts) as resources, each with
 * meta.lastUpdated = the run's start and versionId "1" (the write path numbers the versions).
 *
 * Incremental (the database holds resources): the changed persons' lines are read back sorted by
 * person, mapped, and written through the loader's write path in batches, a few transactions at
 * once; each transaction also writes the state rows of what it holds, so a killed run leaves state
 * that matches the database and a rerun writes what is still marked changed. Deactivation reads the
 * stored resource and writes it again with `active: false`.
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
export type ImportCounts = Record<DiffType, TypeCounts>;

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

const RESOURCE_OF: Record<DiffType, ResourceType> = { persons: 'Practitioner', structures: 'Organization', roles: 'PractitionerRole' };

const emptyTypeCounts = (): ImportCounts => ({
  persons: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
  structures: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
  roles: { new: 0, changed: 0, deactivated: 0, unchanged: 0 },
});

// ---- reading the staged lines back ------------------------------------------------------------------

/** One changed person: its lines in input order, its digest, its role ids now and its previous ones absent now. */
interface PersonLines {
  person: string;
  digest: string;
  roles: string[];
  dropped: string[];
  lines: StagedLine[];
}

const ROWS = 1000;

/** The changed persons with their lines, sorted by person (one cursor). */
async function* changedPersons(session: Db): AsyncGenerator<PersonLines> {
  let current: PersonLines | undefined;
  const rows = session<(StagedLine & { person: string; digest: string; roles: string[]; dropped: string[] })[]>`
    select c.person, c.digest, c.roles, c.dropped, l.kind, l.at, l.role, l.fields
    from import_person_change c join import_line l on l.person = c.person
    order by c.person, l.seq`.cursor(ROWS);
  for await (const batch of rows) {
    for (const r of batch) {
      if (current?.person !== r.person) {
        if (current) yield current;
        current = { person: r.person, digest: r.digest, roles: r.roles, dropped: r.dropped, lines: [] };
      }
      current.lines.push({ kind: r.kind, at: r.at, role: r.role, fields: r.fields });
    }
  }
  if (current) yield current;
}

interface StructureLine {
  structure: string;
  digest: string;
  at: string;
  fields: string;
}

/**
 * The changed structures, each with the activity line its Organization is built from: of its
 * distinct structure parts the one of smallest digest, so that the Organization, like the
 * structure's digest, depends on the set of its lines and not on their order.
 */
function changedStructures(session: Db): AsyncIterable<StructureLine[]> {
  return session<StructureLine[]>`
    select distinct on (l.structure) l.structure, c.digest, l.at, l.fields
    from import_line l join import_structure_change c on c.structure = l.structure
    order by l.structure, l.structure_digest, l.seq`.cursor(ROWS);
}

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
  private async write(tx: Db, type: DiffType, entries: WriteEntry[], deactivation: boolean): Promise<void> {
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
  private async deactivations(tx: Db, type: DiffType, ids: string[]): Promise<WriteEntry[]> {
    if (ids.length === 0) return [];
    const rows = await tx<{ content: Json }[]>`select content from resource where type = ${RESOURCE_OF[type]} and id = any(${ids}::text[])`;
    return rows
      .filter((r) => r.content.active !== false)
      .map((r) => preparePut(this.opts.registry, { ...r.content, active: false, meta: { ...(r.content.meta as Json), lastUpdated: this.opts.lastUpdated } }));
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
      const r = personResources(p.lines, this.opts.lastUpdated);
      const entries = this.prepared(p.lines[0].at, [r.practitioner, ...r.roles]);
      if (!entries) continue;
      batch.push({ p, practitioner: entries[0], roles: entries.slice(1) });
      size += entries.length + p.dropped.length;
      if (size >= this.opts.batchSize) await flush();
    }
    if (batch.length) await flush();
    await this.writers.drain();
  }

  async structures(session: Db): Promise<void> {
    for await (const lines of changedStructures(session)) {
      const ok: { structure: string; digest: string; entry: WriteEntry }[] = [];
      for (const line of lines) {
        const entries = this.prepared(line.at, [structureResource(line, this.opts.lastUpdated)]);
        if (entries) ok.push({ structure: line.structure, digest: line.digest, entry: entries[0] });
      }
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          await this.write(tx, 'structures', ok.map((x) => x.entry), false);
          await markStructures(tx, ok);
          this.progress(lines.length);
        }),
      );
    }
    await this.writers.drain();
  }

  /** Deactivates the gone persons (Practitioner and roles) and structures, a batch per transaction. */
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
    const structures = session<{ structure: string }[]>`select structure from import_structure_gone order by structure`.cursor(ROWS);
    for await (const rows of structures) {
      await this.writers.submit(() =>
        loaderTx(this.sql, async (tx) => {
          await this.write(tx, 'structures', await this.deactivations(tx, 'structures', rows.map((r) => r.structure)), true);
          await markStructuresGone(tx, rows.map((r) => r.structure));
          this.progress(rows.length);
        }),
      );
    }
    await this.writers.drain();
  }
}

/** Writes the changes of the snapshot into a database that holds resources. */
export async function publishIncremental(sql: Sql, session: Db, opts: PublishOptions): Promise<Published> {
  const w = new Incremental(sql, opts);
  await w.persons(session);
  await w.structures(session);
  await w.gone(session);
  return { counts: w.counts, written: w.written, rejected: w.rejected };
}

// ---- first import -------------------------------------------------------------------------------------

/** Every line of the changed persons as COPY text (src/opendata/map-chunk.ts): a first import maps them all. */
const personRows = (session: Db) => session`
  copy (select l.person, l.kind, l.role, l.at, l.fields
        from import_person_change c join import_line l on l.person = c.person order by c.person, l.seq) to stdout`;

/** The changed structures as COPY text, each with its line as changedStructures chooses it. */
const structureRows = (session: Db) => session`
  copy (select distinct on (l.structure) l.structure, l.at, l.fields
        from import_line l join import_structure_change c on c.structure = l.structure
        order by l.structure, l.structure_digest, l.seq) to stdout`;

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
async function* mappedNdjson(session: Db, opts: PublishOptions, mapped: Record<DiffType, number>): AsyncGenerator<ByteChunk> {
  let first = 1;
  for (const [kind, rows] of [['persons', personRows], ['structures', structureRows]] as const) {
    for await (const r of mappedChunks(copyOut(rows(session)), kind, opts.lastUpdated, opts.pool)) {
      mapped.persons += r.persons;
      mapped.roles += r.roles;
      mapped.structures += r.structures;
      const lines = r.persons + r.roles + r.structures;
      yield { first, lines, bytes: r.ndjson as Buffer, owned: spansBuffer(r.ndjson) };
      first += lines;
    }
  }
}

/** The person or structure whose state holds a resource (`Type/id`): a role's is its person's. */
function ownerOf(key: string): { type: string; owner: 'person' | 'structure'; id: string } {
  const type = key.slice(0, key.indexOf('/'));
  const id = key.slice(type.length + 1);
  if (type === 'Organization') return { type, owner: 'structure', id };
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
  const mapped = { persons: 0, roles: 0, structures: 0 };
  const rejects: { where: string; reason: string; key?: string }[] = [];
  const loaded = await loadBulk(sql, opts.registry, [{ name: 'mapped resource', chunks: mappedNdjson(session, opts, mapped) }], {
    workers: opts.pool,
    batchSize: opts.batchSize,
    onReject: (where, reason, key) => rejects.push({ where, reason, key }),
    onProgress: ({ entries }) => opts.onProgress?.(entries),
  });
  const owners = rejects.map((r) => (r.key ? ownerOf(r.key) : undefined));
  const at = await firstLines(session, owners.filter((o) => o !== undefined));
  const rejected = { persons: new Set<string>(), structures: new Set<string>(), byType: { Practitioner: 0, PractitionerRole: 0, Organization: 0 } as Record<string, number> };
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
  return { counts, written: loaded.inserted + loaded.updated, rejected: rejects.length };
}
