import type { Sql } from '../db.ts';
import { ID_RE } from '../fhir/reference.ts';

/** The read interaction: the stored JSON text of one resource, or undefined. */
export async function readResource(sql: Sql, type: string, id: string): Promise<string | undefined> {
  if (!ID_RE.test(id)) return undefined;
  const rows = await sql<{ content: string }[]>`select content::text as content from resource where type = ${type} and id = ${id}`;
  return rows[0]?.content;
}
