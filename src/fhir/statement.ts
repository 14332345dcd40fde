import type { Db } from '../db.ts';

/**
 * SQL statements as text and positional parameters, composed without the driver. A search used to
 * be built from postgres.js fragments, one driver query object (a promise) per fragment — a dozen
 * per search — which cost the server 0.11 ms of CPU per statement, half of what it spent on an
 * identifier lookup (230 µs against 121 µs for the same text and parameters run with
 * `unsafe`, measured in process). The compiler now composes `Statement`s; `run` flattens one to
 * `$n` text and hands it to postgres.js as one prepared statement (cached per connection by text).
 *
 * Values are always parameters. Identifiers (`ident`) come only from the code's own fixed sets.
 */
export class Statement {
  constructor(
    readonly parts: readonly string[],
    readonly args: readonly unknown[],
  ) {}
}

class Identifier {
  constructor(readonly name: string) {}
}

/** A statement: `sql\`…${value}…${statement}…\``, values become parameters, statements nest. */
export function sql(strings: TemplateStringsArray, ...args: unknown[]): Statement {
  return new Statement(strings, args);
}

/** An SQL identifier (a table or an alias of the code's own), double-quoted. */
export const ident = (name: string): Identifier => new Identifier(name);

/** `a op b op c …` (`true` / `false` for none). */
export function join(parts: Statement[], op: 'and' | 'or' | 'union' | ','): Statement {
  if (parts.length === 0) return op === 'or' ? sql`false` : sql`true`;
  const glue = op === ',' ? ', ' : ` ${op} `;
  return new Statement(['', ...parts.slice(1).map(() => glue), ''], parts);
}

/** The statement's text with `$1…$n` and its parameters. */
export function flatten(s: Statement): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  let text = '';
  const walk = (x: Statement): void => {
    for (let i = 0; i < x.parts.length; i++) {
      text += x.parts[i];
      if (i >= x.args.length) continue;
      const a = x.args[i];
      if (a instanceof Statement) walk(a);
      else if (a instanceof Identifier) text += `"${a.name.replace(/"/g, '""')}"`;
      else text += `$${params.push(a)}`;
    }
  };
  walk(s);
  return { text, params };
}

/** Texts kept by `statementText` at most; the map is emptied when it is full (statement shapes are few). */
export const STATEMENT_TEXTS_KEPT = 4096;
const texts = new Map<string, string>();

/**
 * The one string kept for a statement text: `flatten` builds a new copy (1–2 kB) for every query,
 * and the copies handed to postgres.js outlived V8's young generation. Measured on the national
 * database, identifier lookups at concurrency 16 (wrk): 2.4 kB promoted to the old generation per
 * lookup with a new copy each time, 0.4–1.4 kB with the kept one, and with the Bundle entries' URL
 * prefix and suffix kept too (src/store/render.ts); minor GC pauses of 7–8 ms became 3–4 ms and
 * the p99 latency went from 10–11 ms to 6–8 ms in alternated runs (throughput within its spread).
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
