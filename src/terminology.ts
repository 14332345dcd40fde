import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';

/**
 * The code systems shipped with the server (`terminology/`): the CodeSystem resources of the ANS
 * IG and a table of NOS codes and labels (system_key, system_url, code, display, source). Their
 * labels are stored beside those the loaders learn from the data (src/store/write.ts): `:text`
 * searches them, `CodeSystem/$lookup` answers from them.
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
  for (const file of readdirSync(dir).sort()) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    digest.update(file).update(text);
    if (file.endsWith('.json')) {
      const cs = JSON.parse(text) as { resourceType?: string; url?: string; name?: string; title?: string; version?: string; concept?: { code: string; display?: string }[] };
      if (cs.resourceType !== 'CodeSystem' || !cs.url) continue;
      systems.set(cs.url, { name: cs.name ?? cs.url, ...(cs.title ? { title: cs.title } : {}), ...(cs.version ? { version: cs.version } : {}) });
      for (const c of cs.concept ?? []) if (c.display) labels.push({ system: cs.url, code: c.code, label: c.display });
    } else if (file.endsWith('.csv')) {
      for (const row of codeTableRows(text)) {
        if (!systems.has(row.system_url)) systems.set(row.system_url, { name: row.system_key });
        if (row.display) labels.push({ system: row.system_url, code: row.code, label: row.display });
      }
    }
  }
  const t = { systems, labels, hash: digest.digest('hex') };
  if (dir === TERMINOLOGY_DIR) shipped = t;
  return t;
}

/** A row of a code table (terminology/*.csv). */
export type CodeTableRow = Record<'system_key' | 'system_url' | 'code' | 'display' | 'source', string>;

export function codeTableRows(text: string): CodeTableRow[] {
  return parse(text, { columns: true, skip_empty_lines: true }) as CodeTableRow[];
}

/** What $lookup says of a system the server knows only from the data: the last segment of its URI. */
export function systemInfo(uri: string): CodeSystemInfo {
  return shippedTerminology().systems.get(uri) ?? { name: uri.replace(/\/+$/, '').split(/[/:]/).at(-1) || uri };
}
