import { createHash } from 'node:crypto';
import { flatten, type Statement } from '../../src/fhir/statement.ts';
import { registry } from '../../src/registry/index.ts';

/**
 * A compiled statement as text a reviewer reads in a diff: its SQL laid out one clause per line
 * (a parenthesised part kept on one line when it fits), then its parameters, one per line. Only
 * whitespace is laid out: every token, and whether a space separated it, is the statement's own.
 */

const WIDTH = 100;
/** Clauses that start a line when the part holding them does not fit on one. */
const CLAUSES = new Set(['select', 'from', 'join', 'where', 'order', 'group', 'limit', 'offset', 'union', 'intersect']);
const CONNECTIVES = new Set(['and', 'or']);

interface Token {
  text: string;
  /** whitespace came before it. */
  space: boolean;
}
interface Group {
  open: Token;
  items: Item[];
  close: Token;
}
type Item = Token | Group;

const TOKEN = /\s+|'(?:[^']|'')*'|"(?:[^"]|"")*"|\$\d+|[A-Za-z_][A-Za-z0-9_]*|::|<>|<=|>=|\|\||[\s\S]/g;

function tree(text: string): Item[] {
  const stack: Item[][] = [[]];
  const opens: Token[] = [];
  let space = false;
  for (const [t] of text.matchAll(TOKEN)) {
    if (/^\s+$/.test(t)) {
      space = true;
      continue;
    }
    const token = { text: t, space };
    space = false;
    if (t === '(') {
      opens.push(token);
      stack.push([]);
    } else if (t === ')' && opens.length) {
      const items = stack.pop()!;
      stack.at(-1)!.push({ open: opens.pop()!, items, close: token });
    } else stack.at(-1)!.push(token);
  }
  if (opens.length) throw new Error(`unbalanced parentheses in ${text}`);
  return stack[0];
}

const isGroup = (i: Item): i is Group => 'items' in i;
const space = (i: Item) => (isGroup(i) ? i.open.space : i.space);
const word = (i: Item) => (isGroup(i) ? '' : i.text.toLowerCase());

function flat(items: Item[]): string {
  return items.map((i, n) => (n > 0 && space(i) ? ' ' : '') + (isGroup(i) ? `(${flat(i.items)}${i.close.space ? ' ' : ''})` : i.text)).join('');
}

/**
 * `items` from column `col`; a part that does not fit is broken at its clauses (lines at `indent`,
 * `and` / `or` two further), and a part inside it opens lines two beyond the line it starts on.
 */
function lay(items: Item[], indent: number, col: number, broken: boolean): string {
  let out = '';
  let column = col;
  let line = indent;
  items.forEach((item, n) => {
    const w = word(item);
    let sep = n > 0 && space(item) ? ' ' : '';
    if (broken && n > 0 && (CLAUSES.has(w) || CONNECTIVES.has(w))) {
      line = indent + (CONNECTIVES.has(w) ? 2 : 0);
      sep = `\n${' '.repeat(line)}`;
    }
    out += sep;
    column = sep.startsWith('\n') ? line : column + sep.length;
    const text = isGroup(item) ? layGroup(item, line, column) : item.text;
    out += text;
    const nl = text.lastIndexOf('\n');
    column = nl < 0 ? column + text.length : text.length - nl - 1;
  });
  return out;
}

function layGroup(g: Group, line: number, col: number): string {
  const inline = `(${flat(g.items)}${g.close.space ? ' ' : ''})`;
  if (col + inline.length <= WIDTH) return inline;
  const inner = line + 2;
  return `(\n${' '.repeat(inner)}${lay(g.items, inner, inner, true)}\n${' '.repeat(line)})`;
}

/** Parameter identities (registry `paramId`) are named beside their number. */
const PARAM_NAMES = new Map(registry.all.map((p) => [p.id, `${p.resourceType}.${p.code}`]));

/** Text as JSON, with what would not show (a sentinel beyond every character, controls) escaped. */
const text = (v: string) => JSON.stringify(v).replace(/[^\p{L}\p{N}\p{P}\p{S} ]/gu, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase()}>`);

/** A parameter as the reader checks it: text quoted, a parameter's identity named, a long array counted and digested. */
function value(v: unknown): string {
  if (v instanceof Date) return `${v.toISOString()} (Date)`;
  if (typeof v === 'string') return text(v);
  if (typeof v === 'number' && PARAM_NAMES.has(v)) return `${v} (${PARAM_NAMES.get(v)})`;
  if (Array.isArray(v) && v.length > 12) {
    const digest = createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 12);
    return `[${v.slice(0, 6).map(value).join(', ')}, … ${v.length} values, sha256 ${digest}]`;
  }
  if (Array.isArray(v)) return `[${v.map(value).join(', ')}]`;
  return JSON.stringify(v);
}

export function layout(s: Statement): string {
  const { text, params } = flatten(s);
  const sql = lay(tree(text), 0, 0, true);
  return [sql, ...params.map((p, i) => `-- $${i + 1} = ${value(p)}`)].join('\n');
}
