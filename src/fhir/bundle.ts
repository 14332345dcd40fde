import { randomUUID } from 'node:crypto';
import { outcome } from './outcome.ts';
import type { SearchRequest } from './search-request.ts';

/**
 * The searchset Bundle, written as a string: stored resources are spliced in as the JSON text the
 * database returns (no parse/serialise round trip per resource) unless they must be subsetted.
 */
export interface BundleRow {
  type: string;
  id: string;
  content: string;
}

const SUMMARY_ELEMENTS: Record<string, string[]> = {
  Practitioner: ['identifier', 'active', 'name', 'telecom', 'address', 'gender', 'birthDate'],
  Organization: ['identifier', 'active', 'type', 'name', 'partOf'],
  PractitionerRole: ['identifier', 'active', 'period', 'practitioner', 'organization', 'code', 'specialty', 'location', 'telecom'],
};
const ALWAYS = ['resourceType', 'id', 'meta', 'implicitRules'];
const SUBSETTED = { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED', display: 'subsetted' };

export function subset(req: SearchRequest, content: string): string {
  let keep: Set<string> | undefined;
  let drop: Set<string> | undefined;
  if (req.elements?.length) keep = new Set([...ALWAYS, ...req.elements]);
  else if (req.summary === 'true') keep = new Set([...ALWAYS, ...(SUMMARY_ELEMENTS[req.type] ?? [])]);
  else if (req.summary === 'text') keep = new Set([...ALWAYS, 'text']);
  else if (req.summary === 'data') drop = new Set(['text']);
  else return content;
  const r = JSON.parse(content) as Record<string, unknown>;
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
  return JSON.stringify(out);
}

export function queryString(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

export function searchBundle(opts: {
  base: string;
  req: SearchRequest;
  matches: BundleRow[];
  includes: BundleRow[];
  total?: number;
  next?: string;
  warnings: string[];
  now?: Date;
}): string {
  const { base, req } = opts;
  const now = (opts.now ?? new Date()).toISOString();
  const url = (pairs: [string, string][]) => `${base}/${req.type}${pairs.length ? `?${queryString(pairs)}` : ''}`;
  const links = [{ relation: 'self', url: url(req.applied) }];
  if (opts.next) {
    const pairs = req.applied.filter(([k]) => k !== '_count');
    links.push({ relation: 'next', url: url([...pairs, ['_count', String(req.count)], ['_cursor', opts.next]]) });
  }
  const head: Record<string, unknown> = { resourceType: 'Bundle', id: randomUUID(), meta: { lastUpdated: now }, type: 'searchset', timestamp: now };
  if (opts.total !== undefined) head.total = opts.total;
  head.link = links;
  const parts: string[] = [];
  const entry = (row: BundleRow, mode: 'match' | 'include', content: string) =>
    `{"fullUrl":${JSON.stringify(`${base}/${row.type}/${row.id}`)},"resource":${content},"search":{"mode":"${mode}"}}`;
  for (const m of opts.matches) parts.push(entry(m, 'match', subset(req, m.content)));
  for (const i of opts.includes) parts.push(entry(i, 'include', i.content));
  if (opts.warnings.length) {
    const oo = { ...outcome('warning', 'informational', opts.warnings[0]) };
    oo.issue = opts.warnings.map((w) => ({ severity: 'warning', code: 'informational', diagnostics: w }));
    parts.push(`{"fullUrl":"urn:uuid:${randomUUID()}","resource":${JSON.stringify(oo)},"search":{"mode":"outcome"}}`);
  }
  const json = JSON.stringify(head);
  const body = parts.length ? `${json.slice(0, -1)},"entry":[${parts.join(',')}]}` : json;
  return req.pretty ? JSON.stringify(JSON.parse(body), null, 2) : body;
}
