import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { badRequest } from './outcome.ts';
import type { SearchRequest } from './search-request.ts';

/**
 * Stateless keyset cursor: the last key of the page, the total when it was known, and a digest of
 * the search it belongs to, signed with HMAC-SHA256. Nothing is stored on the server; a cursor that
 * was altered, signed with another secret or presented with other search parameters is a 400.
 */
export interface CursorState {
  after: string;
  total?: number;
}

export function searchDigest(req: SearchRequest): string {
  const params = req.applied.map(([k, v]) => `${k}=${v}`).sort();
  return createHash('sha256').update(JSON.stringify([req.version, req.type, params])).digest('base64url').slice(0, 16);
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
    const payload = Buffer.from(JSON.stringify({ a: state.after, t: state.total, h: searchDigest(req) })).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  decode(req: SearchRequest, token: string): CursorState {
    const invalid = () => badRequest('parameter _cursor: the paging link is invalid, expired or was altered; start the search again', '_cursor');
    const [payload, sig, ...rest] = token.split('.');
    if (!payload || !sig || rest.length) throw invalid();
    const given = Buffer.from(sig, 'base64url');
    const want = this.mac(payload);
    if (given.length !== want.length || !timingSafeEqual(given, want)) throw invalid();
    let data: { a?: unknown; t?: unknown; h?: unknown };
    try {
      data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (typeof data.a !== 'string' || !/^\d{1,19}$/.test(data.a) || data.h !== searchDigest(req)) throw invalid();
    return { after: data.a, total: typeof data.t === 'number' ? data.t : undefined };
  }
}
