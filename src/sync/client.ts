import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The HTTP client of a mirror run: one request at a time to the upstream, at most `rate` started per
 * second, with bounded retries. The API key travels in a header only: it is never part of a URL, a
 * message or an error.
 */
export interface ClientOptions {
  /** the upstream's FHIR base (`https://host/fhir/v2`): every URL fetched must have its origin. */
  base: string;
  apiKey?: string;
  keyHeader?: string;
  /** requests started per second at most. */
  rate: number;
  /** per request, headers and body (ms). */
  timeoutMs?: number;
  /** attempts after the first on 429, 5xx, network errors and timeouts. */
  retries?: number;
  /** first backoff (ms), doubled at each retry, capped at MAX_BACKOFF_MS. */
  backoffMs?: number;
  /** told of each retry (the message never holds the key). */
  onRetry?: (message: string) => void;
}

/** A refusal or failure that retrying cannot fix: the run stops with this message. */
export class SyncError extends Error {
  constructor(
    message: string,
    /** the upstream's HTTP status, when it answered one that is refused (4xx). */
    readonly status?: number,
  ) {
    super(message);
  }
}

export const MAX_BACKOFF_MS = 60_000;
/** Longest Retry-After honoured as given; a longer one is waited this long, then retried. */
export const MAX_RETRY_AFTER_MS = 300_000;
const MAX_REDIRECTS = 5;

export interface Bundle {
  resourceType: 'Bundle';
  type: 'searchset';
  total?: number;
  link?: { relation?: string; url?: string }[];
  entry?: { fullUrl?: string; resource?: Record<string, unknown>; search?: { mode?: string } }[];
}

export interface Fetched<T> {
  body: T;
  /** the upstream's clock when it answered (its Date header), or this machine's without one. */
  date: Date;
  url: string;
}

/** The Retry-After of a response in ms (seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whether `url` is on the same origin (scheme, host, port) as `base`. */
export function sameOrigin(url: string, base: string): boolean {
  try {
    return new URL(url).origin === new URL(base).origin;
  } catch {
    return false;
  }
}

/** Refuses a next link to another origin (scheme, host, port) than the upstream's base. */
export function assertNextOnHost(next: string | undefined, base: string, page: string): void {
  if (next === undefined || sameOrigin(next, base)) return;
  throw new SyncError(
    `${page}: the upstream's next link ${next} is not on its host (${new URL(base).origin}): not followed ` +
      '(if the upstream names itself otherwise, e.g. by its PUBLIC_BASE_URL, give that base as --from)',
  );
}

class Retryable extends Error {
  constructor(
    message: string,
    readonly waitMs?: number,
  ) {
    super(message);
  }
}

export class UpstreamClient {
  private nextStart = 0;
  /** requests sent (retries included). */
  requests = 0;
  private readonly o: Required<Omit<ClientOptions, 'apiKey' | 'onRetry'>> & Pick<ClientOptions, 'apiKey' | 'onRetry'>;

  constructor(opts: ClientOptions) {
    this.o = { keyHeader: 'SERVICE-API-KEY', timeoutMs: 60_000, retries: 6, backoffMs: 1000, ...opts };
  }

  /** A searchset Bundle from `url` (same origin as the base), or SyncError. */
  async bundle(url: string): Promise<Fetched<Bundle>> {
    const got = await this.json(url);
    const b = got.body as (Omit<Partial<Bundle>, 'resourceType'> & { resourceType?: string }) | null;
    if (b?.resourceType !== 'Bundle' || b.type !== 'searchset') {
      const what = b?.resourceType === 'OperationOutcome' ? `an OperationOutcome (${diagnostics(b)})` : `a ${describe(b)}`;
      throw new SyncError(`${url}: the upstream answered ${what}, not a FHIR searchset Bundle`);
    }
    if (b.entry !== undefined && !Array.isArray(b.entry)) throw new SyncError(`${url}: the upstream's Bundle has an entry that is not an array`);
    return got as Fetched<Bundle>;
  }

  /** The parsed JSON of a 200 answer from `url`, retried on 429, 5xx and network errors. */
  async json(url: string): Promise<Fetched<unknown>> {
    if (!sameOrigin(url, this.o.base)) throw new SyncError(`refused to fetch ${url}: not on the upstream's host (${new URL(this.o.base).origin})`);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(url);
      } catch (err) {
        if (!(err instanceof Retryable)) throw err;
        if (attempt >= this.o.retries) throw new SyncError(`${url}: ${err.message}; gave up after ${attempt + 1} attempts`);
        const backoff = Math.min(MAX_BACKOFF_MS, this.o.backoffMs * 2 ** attempt) * (0.75 + Math.random() / 2);
        const wait = err.waitMs === undefined ? backoff : Math.min(err.waitMs, MAX_RETRY_AFTER_MS);
        this.o.onRetry?.(`${err.message}: retrying in ${(wait / 1000).toFixed(1)} s (attempt ${attempt + 2} of ${this.o.retries + 1})`);
        // Every request of this client waits (the other types' too): the upstream asked for a pause.
        this.nextStart = Math.max(this.nextStart, Date.now() + wait);
      }
    }
  }

  private async pace(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.nextStart);
    this.nextStart = at + 1000 / this.o.rate;
    if (at > now) await sleep(at - now);
  }

  private async once(start: string): Promise<Fetched<unknown>> {
    let url = start;
    for (let hop = 0; ; hop++) {
      await this.pace();
      this.requests++;
      const headers: Record<string, string> = { accept: 'application/fhir+json' };
      if (this.o.apiKey !== undefined) headers[this.o.keyHeader] = this.o.apiKey;
      const signal = AbortSignal.timeout(this.o.timeoutMs);
      let res: Response;
      let text: string;
      try {
        res = await fetch(url, { headers, redirect: 'manual', signal });
        text = await res.text();
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        const why = e.name === 'TimeoutError' ? `no complete answer within ${this.o.timeoutMs / 1000} s` : `network error (${e.cause?.code ?? e.cause?.message ?? e.message})`;
        throw new Retryable(why);
      }
      if (res.status >= 300 && res.status < 400) {
        const location = res.headers.get('location');
        const to = location === null ? undefined : new URL(location, url).toString();
        if (to === undefined || !sameOrigin(to, this.o.base)) {
          throw new SyncError(`${url}: the upstream redirected (${res.status}) to ${to ?? 'nowhere'}, not on its host (a login page?): not followed`);
        }
        if (hop >= MAX_REDIRECTS) throw new SyncError(`${url}: more than ${MAX_REDIRECTS} redirects`);
        url = to;
        continue;
      }
      if (res.status === 429) throw new Retryable('429 Too Many Requests', retryAfterMs(res.headers.get('retry-after')));
      if (res.status >= 500) throw new Retryable(`${res.status} ${res.statusText}`.trim(), retryAfterMs(res.headers.get('retry-after')));
      const type = res.headers.get('content-type') ?? '';
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        const kind = /html/i.test(type) || /^\s*</.test(text) ? 'an HTML page (an error or login page?)' : `${type || 'no content type'}, not JSON`;
        throw new SyncError(`${url}: the upstream answered ${res.status} with ${kind}, not a FHIR searchset Bundle: ${JSON.stringify(text.slice(0, 80))}`);
      }
      if (res.status !== 200) {
        throw new SyncError(`${url}: the upstream answered ${res.status}${isOutcome(body) ? `: ${diagnostics(body)}` : ''}`, res.status);
      }
      const date = Date.parse(res.headers.get('date') ?? '');
      return { body, date: Number.isNaN(date) ? new Date() : new Date(date), url };
    }
  }
}

function isOutcome(b: unknown): b is { issue?: { diagnostics?: string; code?: string }[] } {
  return typeof b === 'object' && b !== null && (b as { resourceType?: unknown }).resourceType === 'OperationOutcome';
}

function diagnostics(b: unknown): string {
  const issues = isOutcome(b) && Array.isArray(b.issue) ? b.issue : [];
  return issues.map((i) => i.diagnostics ?? i.code ?? '').filter(Boolean).join('; ').slice(0, 300) || 'no diagnostics';
}

function describe(b: unknown): string {
  if (b === null || typeof b !== 'object') return `JSON ${b === null ? 'null' : typeof b}`;
  const o = b as { resourceType?: unknown; type?: unknown };
  if (o.resourceType === 'Bundle') return `Bundle of type ${JSON.stringify(o.type)}`;
  return o.resourceType === undefined ? 'JSON value that is not a FHIR resource' : `${String(o.resourceType).slice(0, 40)}`;
}
