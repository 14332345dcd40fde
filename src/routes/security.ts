import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import { ensureEnvKeys, type KeyStore, type VerifiedKey } from '../auth/keys.ts';
import type { Sql } from '../db.ts';
import type { Config } from '../config.ts';
import { FhirError, outcome, type IssueType } from '../fhir/outcome.ts';
import { FHIR_JSON } from './fhir.ts';
import { IpcRateLimitStore, isClusterWorker } from '../cluster.ts';

/**
 * API keys, rate limits, request limits and response headers (docs/security.md). Everything here
 * runs in root-level hooks, so it covers every route and the not-found handler alike:
 *
 *   onRequest: security headers (on every response, errors included) → URL length (414) → API key
 *              unless the endpoint is open (401) → rate limit (429)
 *
 * Errors are thrown as FhirError and answered by the application's error handler.
 */
export const API_KEY_HEADER = 'service-api-key';
const REALM = 'annuaire-fhir';

/** Endpoints that need no key. Anything else (any path, any method) needs one. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/health', '/ready', '/']);
/** What the server offers: open like the CapabilityStatement (closed with METADATA_REQUIRES_KEY). */
export const METADATA_PATHS: ReadonlySet<string> = new Set(['/fhir/v1/metadata', '/fhir/v2/metadata', '/fhir/v1/openapi.json', '/fhir/v2/openapi.json']);
/** The interactive docs and their assets (src/routes/explorer.ts), open while DOCS_ENABLED. */
export const DOCS_PREFIX = '/docs';

/** Prometheus's scrapes (src/routes/metrics.ts): open while served on PORT. */
export const METRICS_PATH = '/metrics';

export function isOpen(method: string, path: string, config: Pick<Config, 'metadataRequiresKey' | 'docsEnabled' | 'metricsEnabled' | 'metricsPort'>): boolean {
  if (OPEN_PATHS.has(path)) return true;
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (path === METRICS_PATH) return config.metricsEnabled && config.metricsPort === undefined;
  if (config.docsEnabled && (path === DOCS_PREFIX || path.startsWith(`${DOCS_PREFIX}/`))) return true;
  return !config.metadataRequiresKey && METADATA_PATHS.has(path);
}

const pathOf = (url: string) => {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
};

/** Response headers for a JSON API that no browser should render, frame or sniff. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The key the request was authenticated with (null on open endpoints): src/routes/security.ts. */
    apiKey: VerifiedKey | null;
  }
}

/** The key a request was authenticated with (undefined on open endpoints). */
export function requestKey(req: FastifyRequest): VerifiedKey | undefined {
  return req.apiKey ?? undefined;
}

function unauthorized(missing: boolean): FhirError {
  const challenge = `ApiKey realm="${REALM}", header="SERVICE-API-KEY"${missing ? '' : ', error="invalid_key"'}`;
  return missing
    ? new FhirError(401, 'login', 'An API key is required: send it in the SERVICE-API-KEY header', { 'www-authenticate': challenge })
    : new FhirError(401, 'security', 'The API key sent in the SERVICE-API-KEY header is not valid', { 'www-authenticate': challenge });
}

/**
 * Requests in progress per API key in this process. A client that waits for each answer before
 * sending the next is never refused, however fast it pages; one key's flood of parallel requests
 * is. Counted per process (WORKERS > 1: each has its own count), never through Redis.
 */
class InFlight {
  private readonly counts = new Map<string, number>();

  constructor(readonly max: number) {}

  enter(key: string): boolean {
    const n = this.counts.get(key) ?? 0;
    if (n >= this.max) return false;
    this.counts.set(key, n + 1);
    return true;
  }

  leave(key: string): void {
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }
}

/** The Redis client of the shared rate-limit counters; waits (briefly) for the first connection. */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    // A counter that cannot be reached must not hold requests: fail at once, count nothing.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  let reported = false;
  redis.on('error', (err: Error) => {
    if (!reported) app.log.warn(`rate limit: Redis unavailable (${err.message}); requests are not counted until it is back`);
    reported = true;
  });
  redis.on('ready', () => {
    if (reported) app.log.info('rate limit: Redis connection restored');
    reported = false;
  });
  try {
    await redis.connect();
  } catch {
    // logged by the error listener; ioredis keeps reconnecting in the background
  }
  app.addHook('onClose', async () => {
    try {
      await redis.quit();
    } catch {
      redis.disconnect();
    }
  });
  return redis;
}

/** What the security hooks need: the settings, the API keys and the pool they are stored in. */
export interface SecurityDeps {
  config: Config;
  keys: KeyStore;
  sql: Sql;
}

export async function security(app: FastifyInstance, deps: SecurityDeps): Promise<void> {
  const { config, keys } = deps;
  if (config.apiKeys.length) {
    const seeded = await ensureEnvKeys(deps.sql, config.apiKeys);
    for (const s of seeded) if (s.status === 'revoked') app.log.warn(`API_KEYS: key ${s.name} is revoked and stays so`);
    keys.invalidate();
  }

  // CORS first: a browser's preflight carries no key and is answered here, before the key hook.
  await app.register(cors, {
    origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['SERVICE-API-KEY', 'Content-Type', 'Prefer', 'Accept'],
    exposedHeaders: ['Deprecation', 'Link', 'Retry-After', 'Content-Location', 'X-Progress', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'WWW-Authenticate', 'X-Request-Id'],
    maxAge: 86400,
    // An OPTIONS without the preflight headers is answered like a preflight, not with a bare 400.
    strictPreflight: false,
  });

  app.decorateRequest('apiKey', null);
  const limitOf = (req: FastifyRequest): number => req.apiKey?.rateLimit ?? config.rateLimit;
  await app.register(rateLimit, {
    global: false, // applied from the hook below, after the key is known
    timeWindow: 1000,
    max: async (req) => limitOf(req),
    keyGenerator: (req) => req.apiKey?.bucket ?? 'none',
    enableDraftSpec: true,
    // Redis when configured; else, in a worker of several, the primary's counters (src/cluster.ts).
    ...(config.redisUrl ? { redis: await connectRedis(app, config.redisUrl) } : isClusterWorker() ? { store: IpcRateLimitStore as never } : {}),
    nameSpace: 'annuaire-fhir:ratelimit:',
    skipOnError: true,
    errorResponseBuilder: (_req, ctx) =>
      new FhirError(429, 'throttled', `Rate limit of ${ctx.max} requests per second exceeded for this API key: retry in ${ctx.after}`),
  });
  const limiter = app.rateLimit() as (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

  // Response headers are set first, for every answer this request gets (the route's, an error's, the
  // not-found handler's); a route may still replace one (reply.header).
  const keyed = { ...SECURITY_HEADERS, 'cache-control': 'no-store' };
  const keyedHttps = { ...keyed, 'strict-transport-security': 'max-age=31536000' };
  const open = { ...SECURITY_HEADERS };
  const openHttps = { ...open, 'strict-transport-security': 'max-age=31536000' };

  const inFlight = config.maxConcurrentPerKey > 0 ? new InFlight(config.maxConcurrentPerKey) : undefined;
  const busy = () =>
    new FhirError(
      429,
      'throttled',
      `This API key has ${inFlight!.max} requests in progress already (MAX_CONCURRENT_PER_KEY): wait for their answers, or retry in 1 s`,
      { 'retry-after': '1' },
    );

  /**
   * The key verified: the request goes on, counted among its key's requests in progress until its
   * response is done or its connection closes, then through the rate limit when its key has one.
   */
  const admit = (req: FastifyRequest, reply: FastifyReply, key: VerifiedKey, done: (err?: Error) => void): void => {
    req.apiKey = key;
    if (inFlight) {
      if (!inFlight.enter(key.bucket)) return done(busy());
      reply.raw.once('close', () => inFlight.leave(key.bucket));
    }
    if (limitOf(req) > 0) limiter(req, reply).then(() => done(), done);
    else done();
  };

  /**
   * The checks made before the key (response headers, URL length, a key sent at all): the key as
   * presented, undefined on an open endpoint; throws the FhirError that answers the request.
   */
  const presentedKey = (req: FastifyRequest, reply: FastifyReply): string | undefined => {
    const isOpenPath = isOpen(req.method, pathOf(req.url), config);
    const https = req.protocol === 'https';
    reply.headers(isOpenPath ? (https ? openHttps : open) : https ? keyedHttps : keyed);
    if (req.url.length > config.maxUrlLength) {
      throw new FhirError(
        414,
        'too-long',
        `The request URL is ${req.url.length} characters long, more than the ${config.maxUrlLength} accepted: send a long search as POST [type]/_search with a form body`,
      );
    }
    if (isOpenPath) return undefined;
    const given = req.headers[API_KEY_HEADER];
    const presented = Array.isArray(given) ? given.join(',') : given?.trim();
    if (!presented) throw unauthorized(true);
    return presented;
  };

  // A callback hook, not an async one: a key already verified against the current copy is admitted
  // without a promise (src/auth/keys.ts KeyStore.cached), on the path of every lookup. `done` is
  // called once, outside the try: what it runs next is Fastify's.
  app.addHook('onRequest', (req, reply, done) => {
    let presented: string | undefined;
    try {
      presented = presentedKey(req, reply);
    } catch (err) {
      return done(err as Error);
    }
    if (presented === undefined) return done();
    const known = keys.cached(presented);
    if (known) return admit(req, reply, known, done);
    keys.verify(presented).then(
      (key) => (key ? admit(req, reply, key, done) : done(unauthorized(false))),
      (err: unknown) => {
        req.log.error({ err: { message: (err as Error).message } }, 'API keys could not be loaded');
        done(new FhirError(503, 'transient', 'The API key could not be checked just now: try again'));
      },
    );
  });
}

/**
 * Fastify's frameworkErrors: requests refused by the router before any hook runs (a path with
 * malformed percent-encoding, a path segment longer than maxParamLength) get an OperationOutcome
 * and the security headers, instead of Fastify's default body that echoes the path.
 */
export function frameworkErrors(): (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => void {
  return (err: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
    let status = err.statusCode ?? 400;
    let code: IssueType = 'invalid';
    let message = 'The request could not be routed';
    if (err.code === 'FST_ERR_BAD_URL') message = 'The request path is not a valid URL (malformed percent-encoding)';
    else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') [code, message] = ['too-long', 'A segment of the request path is too long'];
    else if (status >= 500) [status, code, message] = [500, 'exception', 'internal server error'];
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) reply.header(k, v);
    reply.code(status).header('cache-control', 'no-store').type(FHIR_JSON).send(JSON.stringify(outcome('error', code, message)));
  };
}

const CLIENT_ERRORS: Record<string, [number, IssueType, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'too-long', 'The request headers are too large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'too-long', 'The request chunk extensions are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'timeout', 'The request was not received in time'],
};

const METHOD_START = /^[A-Z]{3,10} /;

/**
 * A request line with bytes that are not ASCII (an accent typed into a URL, sent raw as curl does):
 * Node's parser refuses it, and no option short of its insecure parser lets it through. The answer
 * says how to send it, with the first such parameter percent-encoded; undefined for other errors.
 */
function rawNonAscii(raw: unknown): { message: string; param?: string } | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  const eol = raw.indexOf('\r\n');
  const line = raw.subarray(0, eol < 0 ? raw.length : eol);
  if (!line.some((b) => b > 0x7f)) return undefined;
  const how = 'percent-encode it as UTF-8 (é is %C3%A9), let curl do it (curl -G --data-urlencode \'family=lefèvre\' …), or send the search as POST [type]/_search with a form body';
  const target = line.toString('latin1').split(' ')[1] ?? '';
  const q = target.indexOf('?');
  const part = q < 0 ? undefined : target.slice(q + 1).split('&').find((p) => /[^\x00-\x7f]/.test(p));
  if (part === undefined) return { message: `The request URL holds characters that are not percent-encoded: ${how}` };
  const eq = part.indexOf('=');
  const param = Buffer.from(eq < 0 ? part : part.slice(0, eq), 'latin1').toString('utf8');
  const encoded = part.replace(/[^\x00-\x7f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const shown = encoded.length > 120 ? `${encoded.slice(0, 120)}…` : encoded;
  return { param, message: `parameter ${param}: characters that are not percent-encoded: ${how}. Here: ${shown}` };
}

/**
 * Fastify's clientErrorHandler: requests that Node's HTTP parser rejects before Fastify sees them
 * (headers beyond Node's 16 KiB, a request line that never ends, malformed HTTP) get a FHIR
 * OperationOutcome instead of Fastify's default body. A header overflow whose request line alone is
 * longer than MAX_URL_LENGTH is answered 414, like a long URL that Node does accept. The raw bytes
 * (which hold the API key) are never logged.
 */
export function clientErrorHandler(config: Pick<Config, 'maxUrlLength'>): NonNullable<FastifyServerOptions['clientErrorHandler']> {
  return function (this: FastifyInstance, err: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let [status, code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'invalid' as IssueType, 'The request is not valid HTTP'];
    const raw = err.rawPacket;
    const unencoded = err.code === 'HPE_INVALID_URL' ? rawNonAscii(raw) : undefined;
    if (err.code === 'HPE_HEADER_OVERFLOW' && Buffer.isBuffer(raw) && METHOD_START.test(raw.subarray(0, 12).toString('latin1'))) {
      const eol = raw.indexOf('\r\n');
      if (eol < 0 || eol > config.maxUrlLength) [status, code, message] = [414, 'too-long', 'The request URL is too long'];
    }
    this.log.debug({ clientError: err.code, status }, 'client error');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(
      unencoded
        ? outcome('error', 'invalid', unencoded.message, unencoded.param === undefined ? undefined : [unencoded.param])
        : outcome('error', code, `${message} (${err.code ?? 'parse error'})`),
    );
    const headers = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      `content-type: ${FHIR_JSON}`,
      `content-length: ${Buffer.byteLength(body)}`,
      'cache-control: no-store',
      ...Object.entries(SECURITY_HEADERS).map(([k, v]) => `${k}: ${v}`),
      'connection: close',
    ];
    // Close after the answer, and drop the connection a moment later if the client keeps it open
    // (destroying at once could reset the connection before the client has read the answer).
    socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
    const timer = setTimeout(() => socket.destroy(), 1000);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
