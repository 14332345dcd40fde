import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';

/**
 * The code systems shipped with the server (`terminology/`): the CodeSystem resources of the ANS
 * IG and a table of NOS codes and labels (system_key, system_url, code, display, source). Their
 * labels are stored beside those the loaders learn from the data (src/store/write.ts): `:text`
 * searches them, `CodeSystem/$lookup` answers from them. The generator and the open-data import
 * code from the same rows (src/vocabulary/codes.ts), which refuses a code listed in two files.
 */
/** terminology/: this file and the bundle (dist/server.js) are both one level deep. */
export const TERMINOLOGY_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'terminology');

export interface CodeSystemInfo {
  /** a computer-friendly name: the CodeSystem's `name`, or the NOS key (TRE_G15-ProfessionSante). */
  name: string;
  title?: string;
  version?: string;
}

export interface Label {
  system: string;
  code: string;
  label: string;
}

export interface Terminology {
  systems: ReadonlyMap<string, CodeSystemInfo>;
  labels: readonly Label[];
  /** digest of the files: the stored copy is refreshed when it changes. */
  hash: string;
}

let shipped: Terminology | undefined;

/** The shipped terminology, read once. */
export function shippedTerminology(dir = TERMINOLOGY_DIR): Terminology {
  if (shipped && dir === TERMINOLOGY_DIR) return shipped;
  const systems = new Map<string, CodeSystemInfo>();
  const labels: Label[] = [];
  const digest = createHash('sha256');
  for (const { file, text, content } of shippedFiles(dir)) {
    digest.update(file).update(text);
    for (const [url, info] of content.systems) if (!systems.has(url)) systems.set(url, info);
    for (const row of content.rows) if (row.display) labels.push({ system: row.system_url, code: row.code, label: row.display });
  }
  const t = { systems, labels, hash: digest.digest('hex') };
  if (dir === TERMINOLOGY_DIR) shipped = t;
  return t;
}

/**
 * A code of the shipped terminology: a row of a code table (terminology/*.csv), or a concept of a
 * CodeSystem resource (terminology/*.json), whose key is the resource's id.
 */
export type CodeTableRow = Record<'system_key' | 'system_url' | 'code' | 'display' | 'source', string>;

export function codeTableRows(text: string): CodeTableRow[] {
  return parse(text, { columns: true, skip_empty_lines: true }) as CodeTableRow[];
}

/** Every code shipped in terminology/, file by file in name order: what the generator and the importer code from. */
export function shippedCodeRows(dir = TERMINOLOGY_DIR): CodeTableRow[] {
  return [...shippedFiles(dir)].flatMap(({ content }) => content.rows);
}

interface FileContent {
  systems: [string, CodeSystemInfo][];
  rows: CodeTableRow[];
}

function* shippedFiles(dir: string): Generator<{ file: string; text: string; content: FileContent }> {
  for (const file of readdirSync(dir).sort()) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    yield { file, text, content: contentOf(file, text) };
  }
}

function contentOf(file: string, text: string): FileContent {
  if (file.endsWith('.json')) {
    const cs = JSON.parse(text) as { resourceType?: string; id?: string; url?: string; name?: string; title?: string; version?: string; concept?: { code: string; display?: string }[] };
    if (cs.resourceType !== 'CodeSystem' || !cs.url) return { systems: [], rows: [] };
    const url = cs.url;
    const info = { name: cs.name ?? url, ...(cs.title ? { title: cs.title } : {}), ...(cs.version ? { version: cs.version } : {}) };
    const key = cs.id ?? info.name;
    return { systems: [[url, info]], rows: (cs.concept ?? []).map((c) => ({ system_key: key, system_url: url, code: c.code, display: c.display ?? '', source: file })) };
  }
  if (file.endsWith('.csv')) {
    const rows = codeTableRows(text);
    return { systems: rows.map((r): [string, CodeSystemInfo] => [r.system_url, { name: r.system_key }]), rows };
  }
  return { systems: [], rows: [] };
}

/** What $lookup says of a system the server knows only from the data: the last segment of its URI. */
export function systemInfo(uri: string): CodeSystemInfo {
  return shippedTerminology().systems.get(uri) ?? { name: uri.replace(/\/+$/, '').split(/[/:]/).at(-1) || uri };
}
