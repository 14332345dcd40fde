import type { Db } from '../db.ts';
import { flatten, type Statement } from '../fhir/statement.ts';

/**
 * Statements (src/fhir/statement.ts) run on a pool or transaction, each as a prepared statement of
 * its connection (postgres.js caches them by text).
 */

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

/** Runs a statement as a prepared statement of the connection (postgres.js caches it by text). */
export function run<T extends readonly object[] = Record<string, unknown>[]>(db: Db, s: Statement) {
  const { text, params } = flatten(s);
  return db.unsafe<T extends readonly (infer R extends object)[] ? R[] : never>(statementText(text), params as never[], { prepare: true });
}
