import type { Sql } from '../db.ts';
import { ID_RE } from '../fhir/reference.ts';
import { stmt } from '../fhir/statement.ts';
import { query } from './query.ts';

/** The read interaction: the stored JSON text of one resource, or undefined. */
export async function readResource(sql: Sql, type: string, id: string): Promise<string | undefined> {
  if (!ID_RE.test(id)) return undefined;
  const rows = await query<{ content: string }[]>(sql, stmt`select content::text as content from resource where type = ${type} and id = ${id}`);
  return rows[0]?.content;
}

/**
 * A code's label: the shipped terminology's first, else the first learned (alphabetically);
 * `system: false` when no label of the system is known at all, `display: undefined` when the code is
 * not.
 */
export async function lookupCode(sql: Sql, system: string, code: string): Promise<{ system: boolean; display?: string }> {
  const [row] = await query<{ known: boolean; display: string | null }[]>(sql, stmt`
    select exists (select 1 from code_label l where l.sys = s.id) as known,
      (select l.label from code_label l where l.sys = s.id and l.code = ${code} order by l.shipped desc, l.label limit 1) as display
    from token_system s where s.uri = ${system}`);
  return { system: row?.known ?? false, ...(row?.display ? { display: row.display } : {}) };
}
