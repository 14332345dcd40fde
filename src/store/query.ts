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

/**
 * Told of each statement `query` hands to the driver, as it is handed: its pool (or transaction),
 * its text (never its parameters) and the query, which settles with the statement. The metrics
 * (src/metrics.ts) and the traces (src/tracing.ts) observe; none by default, and nothing is paid then.
 */
export type StatementObserver = (db: Db, text: string, statement: Promise<unknown>) => void;
const observers = new Set<StatementObserver>();

/** Adds an observer of every statement; returns what removes it. */
export function observeStatements(observer: StatementObserver): () => void {
  observers.add(observer);
  return () => void observers.delete(observer);
}

/**
 * A statement (src/fhir/statement.ts) as a prepared statement of its connection (postgres.js caches
 * it by text); `raw`: rows as arrays of buffers. The one way the search path reaches the driver.
 */
export function query<T extends readonly object[] = Record<string, unknown>[]>(db: Db, s: Statement, opts: { raw?: boolean } = {}) {
  const { text, params } = flatten(s);
  const kept = statementText(text);
  const q = db.unsafe<T extends readonly (infer R extends object)[] ? R[] : never>(kept, params as never[], { prepare: true });
  if (opts.raw) q.raw();
  for (const observe of observers) observe(db, kept, q);
  return q;
}

/**
 * A statement's rows on a connection the caller does not choose: the runner hands one, bound to
 * the pool it chose, to whatever runs a search's statements for it (src/store/runner.ts `runOn`).
 */
export type Run = <T extends readonly object[] = Record<string, unknown>[]>(s: Statement, opts?: { raw?: boolean }) => Promise<T>;

/** `query` on `db`, as a Run. */
export const runOn = (db: Db): Run => (s, opts) => query(db, s, opts) as never;
