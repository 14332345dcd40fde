import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './app.ts';

/** The API seed (a copy of shared/spec/api-seed.md, so that every clone has it). */
export const SEED_FILE = path.join(FIXTURES, 'seed', 'api-seed.md');

/**
 * The body rows of the first Markdown table under the seed heading that starts with `heading`
 * (e.g. '### 4.4'), each row as its trimmed cells. Throws when the heading or its table is missing.
 */
export function seedTable(heading: string, text = readFileSync(SEED_FILE, 'utf8')): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`${heading} `));
  if (start < 0) throw new Error(`no heading "${heading}" in the seed`);
  const first = lines.findIndex((l, i) => i > start && l.startsWith('|'));
  const next = lines.findIndex((l, i) => i > start && /^#{1,3} /.test(l));
  if (first < 0 || (next >= 0 && first > next)) throw new Error(`no table under "${heading}" in the seed`);
  const rows: string[][] = [];
  for (let i = first; i < lines.length && lines[i].startsWith('|'); i++) {
    rows.push(cells(lines[i]));
  }
  // header and separator rows
  return rows.slice(2);
}

/** The cells of one table row; a `|` inside backticks (`<system_uri>|<value>`) is text, not a border. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (const c of row.trim().slice(1)) {
    if (c === '`') code = !code;
    if (c === '|' && !code) {
      out.push(cell.trim());
      cell = '';
    } else {
      cell += c;
    }
  }
  return out;
}

/** A cell's code, without the backticks around it. */
export const unquote = (cell: string) => cell.replace(/^`(.*)`$/, '$1');
