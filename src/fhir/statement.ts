/**
 * SQL statements as text and positional parameters, composed without the driver (a driver query
 * object per fragment would cost more than the lookup it builds). `stmt` composes, `flatten` gives
 * the `$n` text and the parameters that src/store/query.ts hands to postgres.js as one prepared
 * statement. The name is not `sql`: that is the driver's tag, which runs what it builds.
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

/** A statement: `stmt\`…${value}…${statement}…\``, values become parameters, statements nest. */
export function stmt(strings: TemplateStringsArray, ...args: unknown[]): Statement {
  return new Statement(strings, args);
}

/** An SQL identifier (a table or an alias of the code's own), double-quoted. */
export const ident = (name: string): Identifier => new Identifier(name);

/** `a op b op c …` (`true` / `false` for none). */
export function join(parts: Statement[], op: 'and' | 'or' | 'union' | 'union all' | 'intersect' | ','): Statement {
  if (parts.length === 0) return op === 'or' ? stmt`false` : stmt`true`;
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
