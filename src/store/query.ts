import type { Db } from '../db.ts';
import { flatten, type Statement } from '../fhir/statement.ts';

/** Texts kept by `statementText` at most; the map is emptied when it is full (statement shapes are few). */
export const STATEMENT_TEXTS_KEPT = 4096;
const texts = new Map<string, string>();

/**
 * The one string kept for a statement text: `flatten` builds a new copy for every query, and the
 * copies handed to postgres.js outlive V8's young generation (garbage collection pauses under load).
 */
export function statementText(text: string): string {
  const kept = texts.get(text);
  if (kept !== undefined) return kept;
  if (texts.size >= STATEMENT_TEXTS_KEPT) texts.clear();
  texts.set(text, text);
  return text;
}

/** Texts `statementText` holds now. */
export const statementTextsKept = (): number => texts.size;

/** A statement (src/fhir/statement.ts) as a prepared statement of its connection (postgres.js caches it by text). */
export function query<T extends readonly object[] = Record<string, unknown>[]>(db: Db, s: Statement) {
  const { text, params } = flatten(s);
  return db.unsafe<T extends readonly (infer R extends object)[] ? R[] : never>(statementText(text), params as never[], { prepare: true });
}
