import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { outcome } from './outcome.ts';
import type { SearchRequest } from './search-request.ts';

/**
 * The searchset Bundle, written as bytes: the entries come rendered (by the database, from the
 * parts below: src/fhir/compile.ts renderQuery; in JavaScript when resources are subsetted) and
 * are spliced in as they are. A page of 1000 resources is megabytes: it is never built as one
 * string.
 */
export interface RenderedEntries {
  /** comma-separated entry objects, UTF-8 ('' when none). */
  json: Buffer;
  count: number;
}

/**
 * The entry format, written here only: `{"fullUrl":…,"resource":…,"search":{"mode":…}}`. The
 * database writes page entries from these parts (renderQuery), JavaScript the subsetted ones and
 * the warning entry (`entry`).
 */
export type EntryMode = 'match' | 'include' | 'outcome';
export const ENTRY_OPEN = '{"fullUrl":';
export const ENTRY_RESOURCE = ',"resource":';
const entryClose = (mode: EntryMode) => `,"search":{"mode":"${mode}"}}`;

/**
 * The text before an entry's `Type/id` (its base) and after its resource, per base and mode: kept
 * rather than built anew for each statement (they are parameters of every render statement). Bases
 * come from Host headers: at most 64 are kept.
 */
const entryTexts = new Map<string, readonly [prefix: string, suffix: string]>();
export function entryParts(base: string, mode: EntryMode): readonly [string, string] {
  const key = `${mode} ${base}`;
  let parts = entryTexts.get(key);
  if (parts === undefined) {
    parts = [`${base}/`, entryClose(mode)];
    if (entryTexts.size < 64) entryTexts.set(key, parts);
  }
  return parts;
}

/** One entry, as the parts of a Bundle's bytes. */
export function entry(fullUrl: string, resource: string | Buffer, mode: EntryMode): (string | Buffer)[] {
  return [`${ENTRY_OPEN}${JSON.stringify(fullUrl)}${ENTRY_RESOURCE}`, resource, entryClose(mode)];
}

const SUMMARY_ELEMENTS: Record<string, string[]> = {
  Practitioner: ['identifier', 'active', 'name', 'telecom', 'address', 'gender', 'birthDate'],
  Organization: ['identifier', 'active', 'type', 'name', 'partOf'],
  PractitionerRole: ['identifier', 'active', 'period', 'practitioner', 'organization', 'code', 'specialty', 'location', 'telecom'],
};
const ALWAYS = ['resourceType', 'id', 'meta', 'implicitRules'];
const SUBSETTED = { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED', display: 'subsetted' };

/** Whether `_elements` or `_summary` asks for less than whole resources. */
export const subsetting = (req: SearchRequest): boolean =>
  (req.elements?.length ?? 0) > 0 || req.summary === 'true' || req.summary === 'text' || req.summary === 'data';

export function subset(req: SearchRequest, content: Buffer): Buffer {
  let keep: Set<string> | undefined;
  let drop: Set<string> | undefined;
  if (req.elements?.length) keep = new Set([...ALWAYS, ...req.elements]);
  else if (req.summary === 'true') keep = new Set([...ALWAYS, ...(SUMMARY_ELEMENTS[req.type] ?? [])]);
  else if (req.summary === 'text') keep = new Set([...ALWAYS, 'text']);
  else if (req.summary === 'data') drop = new Set(['text']);
  else return content;
  const r = JSON.parse(content.toString('utf8')) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let removed = false;
  for (const [k, v] of Object.entries(r)) {
    if ((keep && !keep.has(k)) || drop?.has(k)) removed = true;
    else out[k] = v;
  }
  if (!removed) return content;
  const meta = { ...((out.meta as Record<string, unknown>) ?? {}) };
  meta.tag = [...((meta.tag as unknown[]) ?? []), SUBSETTED];
  out.meta = meta;
  return Buffer.from(JSON.stringify(out), 'utf8');
}

export function queryString(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** Concatenates strings and buffers into one Buffer (one allocation, strings encoded in place); `length`: their bytes, when known. */
export function concat(parts: (string | Buffer)[], length?: number): Buffer {
  let n = length ?? 0;
  if (length === undefined) for (const p of parts) n += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
  const out = Buffer.allocUnsafe(n);
  let at = 0;
  for (const p of parts) at += typeof p === 'string' ? out.write(p, at, 'utf8') : p.copy(out, at);
  return out;
}

export function searchBundle(opts: {
  base: string;
  req: SearchRequest;
  matches: RenderedEntries;
  includes: RenderedEntries;
  total?: number;
  next?: string;
  warnings: string[];
  now?: Date;
}): Buffer | { length: number; stream: Readable } {
  const { base, req } = opts;
  const now = (opts.now ?? new Date()).toISOString();
  const url = (pairs: [string, string][]) => JSON.stringify(`${base}/${req.type}${pairs.length ? `?${queryString(pairs)}` : ''}`);
  // The head is written as text: every value but the URLs is known to need no escaping (a UUID, an
  // ISO date, an integer), which a lookup's Bundle, assembled thousands of times a second, gains by.
  // self: the URL that produced this page (a later page's with its cursor); next: the same search
  // with the page size made explicit and the next cursor.
  let links = `{"relation":"self","url":${url(req.cursor === undefined ? req.applied : [...req.applied, ['_cursor', req.cursor]])}}`;
  if (opts.next) {
    const pairs = req.applied.filter(([k]) => k !== '_count');
    links += `,{"relation":"next","url":${url([...pairs, ['_count', String(req.count)], ['_cursor', opts.next]])}}`;
  }
  const total = opts.total === undefined ? '' : `"total":${opts.total},`;
  const head = `{"resourceType":"Bundle","id":"${randomUUID()}","meta":{"lastUpdated":"${now}"},"type":"searchset","timestamp":"${now}",${total}"link":[${links}]`;
  const sections: (string | Buffer)[] = [];
  if (opts.matches.count > 0) sections.push(opts.matches.json);
  if (opts.includes.count > 0) sections.push(opts.includes.json);
  if (opts.warnings.length) {
    const oo = { ...outcome('warning', 'informational', opts.warnings[0]) };
    oo.issue = opts.warnings.map((w) => ({ severity: 'warning', code: 'informational', diagnostics: w }));
    sections.push(concat(entry(`urn:uuid:${randomUUID()}`, JSON.stringify(oo), 'outcome')));
  }
  if (sections.length === 0) {
    const json = `${head}}`;
    return Buffer.from(req.pretty ? JSON.stringify(JSON.parse(json), null, 2) : json, 'utf8');
  }
  // head, then the entries, sections separated by commas.
  const parts: (string | Buffer)[] = [`${head},"entry":[`];
  sections.forEach((p, i) => parts.push(...(i ? [',', p] : [p])));
  parts.push(']}');
  if (req.pretty) return Buffer.from(JSON.stringify(JSON.parse(concat(parts).toString('utf8')), null, 2), 'utf8');
  let length = 0;
  for (const p of parts) length += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
  if (length < LARGE) return concat(parts, length);
  // A large page is written as its parts: one more copy of megabytes per page would make the
  // garbage collector run full collections (external memory) under concurrent paging.
  return { length, stream: Readable.from(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)), { objectMode: false }) };
}

/** Bodies from this size on are sent as a stream of their parts rather than concatenated. */
const LARGE = 256 * 1024;
