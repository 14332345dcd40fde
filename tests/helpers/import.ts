import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db.ts';
import { hash } from 'node:crypto';
import { organizationId, organizationOf, practitionerId, practitionerOf, roleId, roleOf, structurePart } from '../../src/opendata/map.ts';
import type { ActivityRecord, DiplomaRecord, OpenDataRecord, SavoirFaireRecord } from '../../src/opendata/read.ts';
import { runCli, type CliRun } from './app.ts';
import { everyPage, type Entry } from './search.ts';

type Json = Record<string, any>;
const md5 = (text: string) => hash('md5', text);

/** `npm run import -- …` as users run it, on the test database; `onStart` gets the child's pid (to kill it). */
export const importCli = (db: Database, args: string[], onStart?: (pid: number) => void): Promise<CliRun> =>
  runCli(db, 'import', args, onStart);

/** Every match of a search, following each `next` link to the last page (as a client does: no _count). */
export const searchAll = async (app: FastifyInstance, url: string): Promise<Entry[]> => (await everyPage(app, url)).entries;

/** The sorted `Type/id`s of every match of a search. */
export const searchRefs = async (app: FastifyInstance, url: string) =>
  (await searchAll(app, url)).map((e) => `${e.resource.resourceType}/${e.resource.id}`).sort();

/** A JSON value with its object keys sorted (stored jsonb comes back in its own key order). */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Json)[k])]));
  return v;
}

/** A resource without meta.versionId and meta.lastUpdated (what the write path compares). */
export function withoutVersion(resource: Json): Json {
  const { versionId: _v, lastUpdated: _l, ...meta } = resource.meta ?? {};
  return { ...resource, meta };
}

/**
 * The directory a snapshot describes, computed in memory from all its lines at once (the oracle of
 * the import, which stages and diffs them): `Type/id` → resource, as the mapper makes it.
 */
export function directoryOf(records: readonly OpenDataRecord[]): Map<string, Json> {
  const persons = new Map<string, { activities: ActivityRecord[]; savoirFaire: SavoirFaireRecord[]; diplomas: DiplomaRecord[] }>();
  const out = new Map<string, Json>();
  const structureDigests = new Map<string, string>();
  for (const r of records) {
    const id = practitionerId(r);
    const p = persons.get(id) ?? persons.set(id, { activities: [], savoirFaire: [], diplomas: [] }).get(id)!;
    if (r.kind === 'activity') {
      p.activities.push(r);
      if (!out.has(`PractitionerRole/${roleId(r)}`)) out.set(`PractitionerRole/${roleId(r)}`, roleOf(r));
      const org = organizationId(r);
      // Of a structure's lines, the one of smallest structure-part digest (as the import chooses).
      const digest = md5(JSON.stringify(structurePart(r)));
      if (org !== undefined && !(structureDigests.get(org)! <= digest)) {
        structureDigests.set(org, digest);
        out.set(`Organization/${org}`, organizationOf(r)!);
      }
    } else if (r.kind === 'savoirFaire') p.savoirFaire.push(r);
    else if (r.kind === 'diploma') p.diplomas.push(r);
  }
  for (const [id, p] of persons) out.set(`Practitioner/${id}`, practitionerOf(p));
  return out;
}

/** The stored resources: `Type/id` → version, lastUpdated, content. */
export async function storedResources(db: Database): Promise<Map<string, { version: number; lastUpdated: string; content: Json }>> {
  const rows = await db.sql<{ type: string; id: string; version_id: number; last_updated: Date; content: Json }[]>`
    select type, id, version_id, last_updated, content from resource`;
  return new Map(rows.map((r) => [`${r.type}/${r.id}`, { version: r.version_id, lastUpdated: r.last_updated.toISOString(), content: r.content }]));
}
