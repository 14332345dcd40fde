import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { concat, entry, type Entries } from './entries.ts';
import { outcome } from './outcome.ts';
import type { SearchRequest } from './search-request.ts';

/**
 * The searchset Bundle, written as bytes: its head, links and warning entry around the entries
 * (src/fhir/entries.ts), which are spliced in as they come. A page of 1000 resources is megabytes:
 * it is never built as one string.
 */

export function queryString(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** The Bundle of a page, as bytes, or as a stream of its parts when it is large. */
export function searchBundle(opts: {
  base: string;
  req: SearchRequest;
  matches: Entries;
  includes: Entries;
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
