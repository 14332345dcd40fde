/**
 * Shared helpers for the search tests: app.inject with the API key, the id lists of a searchset
 * Bundle and the assertions the search test files make on them (one assertion per call, so the
 * assertion counts of a file do not depend on these helpers).
 */
import type { FastifyInstance } from 'fastify';
import type { TAP } from 'tap';

/** The API key the search test files configure (`API_KEYS`) and send (`SERVICE-API-KEY`). */
export const API_KEY = 'test-key-0123456789abcdef';

/** What the helpers assert with: `t` or a subtest's `t`. */
export type A = Pick<TAP, 'same' | 'equal' | 'ok' | 'notOk' | 'match' | 'has' | 'fail' | 'not'>;
export interface Entry {
  fullUrl: string;
  resource: { resourceType: string; id: string; meta?: { tag?: { system?: string; code?: string }[] }; [k: string]: unknown };
  search: { mode: string };
}
export interface Bundle { resourceType: string; type: string; total?: number; link: { relation: string; url: string }[]; entry?: Entry[] }
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';
type Headers = Record<string, string>;
/** Anything with searchset entries: the Bundle above, or a fhir-kit-client result. */
interface Entries { entry?: { resource: { resourceType: string; id: string }; search?: { mode: string } }[] }

/** Percent-encodes what may not travel raw in a URL (non-ASCII, space, | \ …); %XX and + are kept as written. */
export const encodeUnsafe = (s: string) => s.replace(/[^\x21-\x7e]|[|\\"<>^`{}]/gu, (c) => encodeURIComponent(c));

/** The ids of the entries of one search mode, in Bundle order. */
export const idsOf = (b: Entries, mode: string) => (b.entry ?? []).filter((e) => e.search?.mode === mode).map((e) => e.resource.id);
/** The `Type/id` of the entries of one search mode, in Bundle order. */
export const refsOf = (b: Entries, mode: string) => (b.entry ?? []).filter((e) => e.search?.mode === mode).map((e) => `${e.resource.resourceType}/${e.resource.id}`);
/** The match ids, sorted. */
export const matchIds = (b: Entries) => idsOf(b, 'match').sort();
/** The included `Type/id`s, sorted. */
export const includeIds = (b: Entries) => refsOf(b, 'include').sort();

/**
 * Every match of a search and its first page's total, each `next` link followed to the last page,
 * `_count` left to its default, as a client reads it.
 */
export async function everyPage(app: FastifyInstance, url: string): Promise<{ entries: Entry[]; total: number | undefined }> {
  const entries: Entry[] = [];
  let total: number | undefined;
  for (let next: string | undefined = url; next; ) {
    const res = await app.inject({ method: 'GET', url: encodeUnsafe(next), headers: { 'SERVICE-API-KEY': API_KEY } });
    if (res.statusCode !== 200) throw new Error(`${next} → ${res.statusCode} ${res.body.slice(0, 300)}`);
    const b = res.json() as Bundle;
    total ??= b.total;
    entries.push(...(b.entry ?? []).filter((e) => e.search.mode === 'match'));
    const link = b.link.find((l) => l.relation === 'next')?.url;
    next = link === undefined ? undefined : link.slice(link.indexOf('/fhir/'));
  }
  return { entries, total };
}

export interface SearchHelperOptions {
  /** sent as SERVICE-API-KEY on every request (default API_KEY) */
  key?: string;
  /**
   * When set, expectEntries also checks that every entry's fullUrl is `${fullUrlBase}/Type/id`
   * (e.g. 'http://fhir.test/fhir/v2', for a file whose include searches are all on that base).
   */
  fullUrlBase?: string;
}

export function searchHelpers(app: FastifyInstance, opts: SearchHelperOptions = {}) {
  const headers: Headers = { 'SERVICE-API-KEY': opts.key ?? API_KEY };

  /** app.inject with the API key; `url` goes through encodeUnsafe(). */
  const request = (method: Method, url: string, o: { headers?: Headers; payload?: string } = {}) =>
    app.inject({ method, url: encodeUnsafe(url), headers: { ...headers, ...o.headers }, payload: o.payload });
  const get = (url: string, extra: Headers = {}) => request('GET', url, { headers: extra });

  /** One assertion per query: status 200, the match ids (sorted) and `total`. */
  async function expectIds(tt: A, url: string, expected: string[]) {
    const res = await get(url);
    if (res.statusCode !== 200) return tt.fail(`${url} → ${res.statusCode} ${res.body.slice(0, 300)}`);
    const b = res.json() as Bundle;
    return tt.same({ ids: matchIds(b), total: b.total }, { ids: [...expected].sort(), total: expected.length }, url);
  }

  /** expectIds on each row, in order; `prefix` is put before each row's query. */
  async function table(tt: A, rows: [string, string[]][], prefix = '/fhir/v2/') {
    for (const [q, ids] of rows) await expectIds(tt, `${prefix}${q}`, ids);
  }

  /** One assertion: a 400 OperationOutcome whose first issue is an error naming `param`. */
  async function expect400(tt: A, url: string, param: string, extra: Headers = {}) {
    const res = await get(url, extra);
    const body = res.json() as { resourceType?: string; issue?: { severity: string; diagnostics?: string }[] };
    tt.same(
      { status: res.statusCode, type: body.resourceType, severity: body.issue?.[0]?.severity, names: (body.issue?.[0]?.diagnostics ?? '').includes(param) },
      { status: 400, type: 'OperationOutcome', severity: 'error', names: true },
      `${url} → 400 OperationOutcome naming ${param} (${body.issue?.[0]?.diagnostics})`,
    );
  }

  /** One assertion per query: the match ids, the included `Type/id`s, `total` (matches only) and no fullUrl twice. */
  async function expectEntries(tt: A, url: string, matches: string[], includes: string[]) {
    const res = await get(url);
    if (res.statusCode !== 200) return tt.fail(`${url} → ${res.statusCode} ${res.body.slice(0, 300)}`);
    const b = res.json() as Bundle;
    const entries = b.entry ?? [];
    const fullUrls = entries.map((e) => e.fullUrl);
    const base = opts.fullUrlBase;
    const [gotUrls, wantUrls] = base === undefined
      ? [{}, {}]
      : [{ wellFormed: entries.every((e) => e.fullUrl === `${base}/${e.resource.resourceType}/${e.resource.id}`) }, { wellFormed: true }];
    return tt.same(
      { matches: matchIds(b), includes: includeIds(b), total: b.total, uniqueFullUrls: new Set(fullUrls).size === fullUrls.length, ...gotUrls },
      { matches: [...matches].sort(), includes: [...includes].sort(), total: matches.length, uniqueFullUrls: true, ...wantUrls },
      url,
    );
  }

  return { request, get, encodeUnsafe, matchIds, includeIds, expectIds, table, expect400, expectEntries };
}
