import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { measureOrdered } from './compile.ts';
import { badRequest } from './outcome.ts';
import type { SearchRequest } from './search-request.ts';

/**
 * Stateless keyset cursor: the last key of the page, the total when it was known, and a digest of
 * the search it belongs to, signed with HMAC-SHA256. Nothing is stored on the server; a cursor that
 * was altered, signed with another secret or presented with other search parameters is a 400.
 */
export interface CursorState {
  /** the last key (rid) of the page. */
  after: string;
  /** a sorted search: the last row's phase and keys (src/fhir/sort.ts). */
  sort?: { phase: 1 | 2; keys: string[] };
  /** a ranked search: the rank phase of the last row (src/fhir/compile.ts `ranked`). */
  rank?: 0 | 1 | 2;
  /** a measured search: the last row's measure, as PostgreSQL's float8 text (src/fhir/compile.ts `measuredBy`). */
  measure?: string;
  total?: number;
  /**
   * with replicas (DATABASE_READ_URL): the WAL position the page was read at; the next page is read
   * on a database that has replayed it, so that paging never goes back in time.
   */
  lsn?: string;
}

const LSN_RE = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;
/** PostgreSQL's text of a finite float8 (`1.5`, `3.2e-05`). */
const FLOAT8_TEXT = /^-?\d+(\.\d+)?(e[+-]\d+)?$/;

/**
 * What a page's results depend on, whatever its spelling: the criteria as decoded, in any order, and
 * the result parameters as parsed. Not the page size (a next link states it, a client may change it)
 * nor `_format` and `_pretty`.
 */
export function searchDigest(req: SearchRequest): string {
  const criteria = req.criteria.map(([k, v]) => `${k}=${v}`).sort();
  const target = (s: SearchRequest['include'][number]) => (s.param.target?.length === 1 ? '' : (s.targetType ?? ''));
  const specs = (list: SearchRequest['include']) => [...new Set(list.map((s) => `${s.param.resourceType}:${s.param.code}:${target(s)}`))].sort();
  const result = {
    include: specs(req.include),
    revinclude: specs(req.revinclude),
    total: req.total ?? null,
    summary: req.summary === 'false' ? null : (req.summary ?? null),
    elements: req.elements?.length ? [...new Set(req.elements)].sort() : null,
    sort: req.sort.map((k) => `${k.desc ? '-' : ''}${k.param.code}`),
  };
  return createHash('sha256').update(JSON.stringify([req.version, req.type, criteria, result])).digest('base64url').slice(0, 16);
}

export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret?: string) {
    this.key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16);
  }

  encode(req: SearchRequest, state: CursorState): string {
    const payload = Buffer.from(
      JSON.stringify({ a: state.after, s: state.sort, r: state.rank, m: state.measure, t: state.total, h: searchDigest(req), ...(state.lsn ? { l: state.lsn } : {}) }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  decode(req: SearchRequest, token: string): CursorState {
    const invalid = () => badRequest('parameter _cursor: the paging link is invalid, expired or was altered; start the search again', '_cursor');
    const [payload, sig, ...rest] = token.split('.');
    if (!payload || !sig || rest.length) throw invalid();
    const given = Buffer.from(sig, 'base64url');
    const want = this.mac(payload);
    if (given.length !== want.length || !timingSafeEqual(given, want)) throw invalid();
    let data: { a?: unknown; s?: { phase?: unknown; keys?: unknown }; r?: unknown; m?: unknown; t?: unknown; h?: unknown; l?: unknown };
    try {
      data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (typeof data.a !== 'string' || !/^\d{1,19}$/.test(data.a) || data.h !== searchDigest(req)) throw invalid();
    const total = typeof data.t === 'number' ? data.t : undefined;
    if (data.l !== undefined && (typeof data.l !== 'string' || !LSN_RE.test(data.l))) throw invalid();
    const lsn = data.l === undefined ? {} : { lsn: data.l as string };
    if (data.r !== undefined && data.r !== 0 && data.r !== 1 && data.r !== 2) throw invalid();
    const rank = data.r === undefined ? {} : { rank: data.r as 0 | 1 | 2 };
    // Signed with its search's digest, a measured search's cursor has its measure: checked all the same.
    if (measureOrdered(req)) {
      if (typeof data.m !== 'string' || !FLOAT8_TEXT.test(data.m)) throw invalid();
      return { after: data.a, measure: data.m, total, ...lsn };
    }
    if (req.sort.length === 0) return { after: data.a, total, ...rank, ...lsn };
    // Signed with its search's digest, so its sort: the shape is checked all the same.
    const { phase, keys } = data.s ?? {};
    const width = phase === 1 ? req.sort.length : req.sort.length - 1;
    if ((phase !== 1 && phase !== 2) || !Array.isArray(keys) || keys.length !== width || !keys.every((k) => typeof k === 'string')) throw invalid();
    return { after: data.a, sort: { phase, keys: keys as string[] }, total, ...lsn };
  }
}
