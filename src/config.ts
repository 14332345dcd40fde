import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Every setting comes from the environment, is validated here once at start-up and is then passed
 * around as a plain object. Nothing else in the code reads process.env.
 */
export const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  dataDir: Type.String({ minLength: 1 }),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  publicBaseUrl: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' })),
  defaultCount: Type.Integer({ minimum: 1 }),
  maxCount: Type.Integer({ minimum: 1 }),
  includeCap: Type.Integer({ minimum: 1 }),
  totalBudgetMs: Type.Integer({ minimum: 0 }),
  cursorSecret: Type.Optional(Type.String({ minLength: 16 })),
  statementTimeoutMs: Type.Integer({ minimum: 0 }),
  apiKeys: Type.Array(Type.String({ minLength: 8 })),
  metadataRequiresKey: Type.Boolean(),
  rateLimit: Type.Integer({ minimum: 0 }),
  maxConcurrentPerKey: Type.Integer({ minimum: 0 }),
  redisUrl: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  maxUrlLength: Type.Integer({ minimum: 256 }),
  maxBodyBytes: Type.Integer({ minimum: 1024 }),
  maxValuesPerParam: Type.Integer({ minimum: 1 }),
  maxParams: Type.Integer({ minimum: 1 }),
  dbPoolSize: Type.Integer({ minimum: 2, maximum: 1000 }),
  heavySearches: Type.Integer({ minimum: 0, maximum: 1000 }),
  workers: Type.Integer({ minimum: 0, maximum: 256 }),
  loadDemoData: Type.Boolean(),
  corsOrigins: Type.Array(Type.String({ pattern: '^(\\*|https?://[^/?#]+)$' })),
  docsEnabled: Type.Boolean(),
  databaseReadUrls: Type.Array(Type.String({ pattern: '^postgres(ql)?://' })),
  maxReplicaLagS: Type.Integer({ minimum: 1 }),
  exportDir: Type.Optional(Type.String({ minLength: 1 })),
  exportTtlHours: Type.Integer({ minimum: 1, maximum: 8760 }),
  exportJobs: Type.Integer({ minimum: 1, maximum: 64 }),
  exportQueue: Type.Integer({ minimum: 1, maximum: 10000 }),
  exportFileBytes: Type.Integer({ minimum: 1024 }),
  syncApiKey: Type.Optional(Type.String({ minLength: 1 })),
  embeddedSharedBuffers: Type.Optional(Type.String({ pattern: '^([1-9]|[1-7][0-9]|80)%$|^[1-9][0-9]*(MB|GB|TB)$' })),
  metricsEnabled: Type.Boolean(),
  metricsPort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  otelEndpoint: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' })),
});
export type Config = Static<typeof ConfigSchema>;

/** Environment variables, their defaults and documentation: the README and .env.example list the same. */
export const ENV_VARS = {
  PORT: { key: 'port', kind: 'int', default: '8080', doc: 'HTTP port' },
  HOST: { key: 'host', kind: 'string', default: '0.0.0.0', doc: 'listen address' },
  DATABASE_URL: { key: 'databaseUrl', kind: 'string', default: undefined, doc: 'PostgreSQL ≥ 14 URL (a Unix socket as libpq writes it: postgres://user@localhost/db?host=/var/run/postgresql); unset ⇒ embedded PostgreSQL in DATA_DIR' },
  DATA_DIR: { key: 'dataDir', kind: 'string', default: '.data', doc: 'folder of the embedded PostgreSQL, its development API key and cursor secret' },
  EMBEDDED_SHARED_BUFFERS: { key: 'embeddedSharedBuffers', kind: 'string', default: undefined, doc: 'shared_buffers of the embedded PostgreSQL: a share of the memory (40%, at most 80%) or a size (512MB, 8GB); unset ⇒ a quarter of the memory, between 128MB and 1GB. Raise it for a national load' },
  LOG_LEVEL: { key: 'logLevel', kind: 'string', default: 'info', doc: 'pino level: fatal error warn info debug trace silent' },
  PUBLIC_BASE_URL: { key: 'publicBaseUrl', kind: 'string', default: undefined, doc: 'scheme://host[:port][/prefix] under which clients reach the server; /fhir/v1 or /fhir/v2 is appended. Unset ⇒ taken from the request (Host, X-Forwarded-Proto)' },
  DEFAULT_COUNT: { key: 'defaultCount', kind: 'int', default: '50', doc: 'page size when _count is absent' },
  MAX_COUNT: { key: 'maxCount', kind: 'int', default: '1000', doc: 'largest page size; larger _count values are clamped' },
  INCLUDE_CAP: { key: 'includeCap', kind: 'int', default: '1000', doc: 'most included resources per page (a warning entry says when it is hit)' },
  TOTAL_BUDGET_MS: { key: 'totalBudgetMs', kind: 'int', default: '20', doc: 'time allowed to count the matches behind a first page that does not hold them all (counted beside the page); total is omitted past it, exact whenever given; 0 ⇒ never counted unless _total=accurate' },
  CURSOR_SECRET: { key: 'cursorSecret', kind: 'string', default: undefined, doc: 'HMAC key of paging cursors (≥ 16 chars); set the same value on every instance. Unset ⇒ the embedded default keeps one in DATA_DIR/cursor-secret; with DATABASE_URL, random per process' },
  STATEMENT_TIMEOUT_MS: { key: 'statementTimeoutMs', kind: 'int', default: '10000', doc: 'per-statement timeout; exceeded ⇒ 503 OperationOutcome (timeout)' },
  API_KEYS: { key: 'apiKeys', kind: 'list', default: '', doc: 'comma-separated API keys added at start-up (development and tests)' },
  METADATA_REQUIRES_KEY: { key: 'metadataRequiresKey', kind: 'bool', default: 'false', doc: 'true ⇒ GET /metadata needs an API key too' },
  RATE_LIMIT: { key: 'rateLimit', kind: 'int', default: '0', doc: 'requests per second per API key, 0 for no limit; a key\'s own limit (npm run keys -- create --rate-limit) overrides it' },
  MAX_CONCURRENT_PER_KEY: { key: 'maxConcurrentPerKey', kind: 'int', default: '8', doc: 'requests one API key may have in progress at once in each server process (429 past it); 0 for no limit' },
  REDIS_URL: { key: 'redisUrl', kind: 'string', default: undefined, doc: 'redis:// URL; set ⇒ rate-limit counters shared through Redis' },
  MAX_URL_LENGTH: { key: 'maxUrlLength', kind: 'int', default: '8192', doc: 'longest request URL (414 beyond)' },
  MAX_BODY_BYTES: { key: 'maxBodyBytes', kind: 'int', default: '65536', doc: 'largest POST body (413 beyond)' },
  MAX_VALUES_PER_PARAM: { key: 'maxValuesPerParam', kind: 'int', default: '100', doc: 'most comma-separated values in one parameter (400 beyond)' },
  MAX_PARAMS: { key: 'maxParams', kind: 'int', default: '50', doc: 'most parameters in one search (400 beyond)' },
  DB_POOL_SIZE: { key: 'dbPoolSize', kind: 'int', default: '3', doc: 'PostgreSQL connections per process for light searches (at least 2: half, rounded down, for lookups whose plan is made once, the rest for the others); concurrent searches pipeline on them. Heavy searches have connections of their own (HEAVY_SEARCHES)' },
  HEAVY_SEARCHES: { key: 'heavySearches', kind: 'int', default: '0', doc: 'searches run at once per instance in each of two lanes, heavy ones (pages of more than 100, :contains, exact counts: with PostgreSQL connections of their own) and the other non-lookups; the rest wait in order, lookups never do; shared out among the WORKERS; 0 ⇒ the number of CPU cores' },
  WORKERS: { key: 'workers', kind: 'int', default: '1', doc: 'server processes on the port (node:cluster), each with its own connections; 0 ⇒ the number of CPU cores' },
  LOAD_DEMO_DATA: { key: 'loadDemoData', kind: 'bool', default: 'true', doc: 'load fixtures/ into an empty embedded database at start-up (never into a DATABASE_URL database)' },
  CORS_ORIGINS: { key: 'corsOrigins', kind: 'list', default: '*', doc: 'origins whose browser apps may call the API, comma-separated scheme://host[:port], or * for any (the key is a header, never a cookie: a browser gains nothing a script could not do)' },
  DOCS_ENABLED: { key: 'docsEnabled', kind: 'bool', default: 'true', doc: 'serve the interactive API docs at /docs (Swagger UI over the OpenAPI documents /fhir/v2/openapi.json and /fhir/v1/openapi.json, which are served either way)' },
  DATABASE_READ_URL: { key: 'databaseReadUrls', kind: 'list', default: '', doc: 'comma-separated PostgreSQL URLs of hot standbys of DATABASE_URL: searches, reads and API-key checks run on them, the primary when none can answer; loads, keys and migrations stay on DATABASE_URL. Needs CURSOR_SECRET' },
  MAX_REPLICA_LAG_S: { key: 'maxReplicaLagS', kind: 'int', default: '30', doc: 'seconds a replica may lag behind the primary before it is taken out of rotation (checked every second; it comes back once caught up)' },
  EXPORT_DIR: { key: 'exportDir', kind: 'string', default: undefined, doc: 'folder of the bulk export ($export) files; unset ⇒ DATA_DIR/exports' },
  EXPORT_TTL_HOURS: { key: 'exportTtlHours', kind: 'int', default: '24', doc: 'hours an export job and its files are kept after it ends, then deleted' },
  EXPORT_JOBS: { key: 'exportJobs', kind: 'int', default: '1', doc: 'bulk exports run at once (each on a PostgreSQL connection of its own); more wait in a queue' },
  EXPORT_QUEUE: { key: 'exportQueue', kind: 'int', default: '10', doc: 'most bulk exports waiting to run; a kick-off past it gets 429 with Retry-After' },
  EXPORT_FILE_BYTES: { key: 'exportFileBytes', kind: 'int', default: '268435456', doc: 'size past which an export file is closed and the type goes on in the next file (a resource is never split)' },
  SYNC_API_KEY: { key: 'syncApiKey', kind: 'string', default: undefined, doc: 'npm run sync only: the API key sent to the upstream directory (never on the command line, never logged)' },
  METRICS_ENABLED: { key: 'metricsEnabled', kind: 'bool', default: 'true', doc: 'serve Prometheus metrics at GET /metrics (no API key; docs/metrics.md)' },
  METRICS_PORT: { key: 'metricsPort', kind: 'int', default: undefined, doc: 'serve /metrics only on this port, on a listener of its own (HOST), and not on PORT; unset ⇒ on PORT' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { key: 'otelEndpoint', kind: 'string', default: undefined, doc: 'OTLP/HTTP endpoint (http://collector:4318): traces of requests and their SQL statements are exported there; the other OTEL_* variables apply (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER …). Unset ⇒ no tracing' },
} as const;

export class ConfigError extends Error {}

function convert(name: string, kind: string, raw: string): unknown {
  switch (kind) {
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
      return Number(raw.trim());
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(v)) return true;
      if (['false', '0', 'no', ''].includes(v)) return false;
      throw new ConfigError(`${name} must be true or false, got "${raw}"`);
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    default:
      return raw;
  }
}

/** Reads and validates the configuration; throws ConfigError naming the variable on a bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(ENV_VARS)) {
    const given = env[name];
    const raw = given === undefined || given === '' ? spec.default : given;
    if (raw === undefined) continue;
    out[spec.key] = convert(name, spec.kind, raw);
  }
  if (typeof out.publicBaseUrl === 'string') out.publicBaseUrl = out.publicBaseUrl.replace(/\/+$/, '');
  if (!Value.Check(ConfigSchema, out)) {
    const err = [...Value.Errors(ConfigSchema, out)][0];
    const key = err?.path.split('/')[1] ?? '';
    const name = Object.entries(ENV_VARS).find(([, s]) => s.key === key)?.[0] ?? key;
    throw new ConfigError(`invalid ${name}="${String(out[key])}": ${err?.message ?? 'invalid value'}`);
  }
  const cfg = out as Config;
  if (cfg.defaultCount > cfg.maxCount) throw new ConfigError(`DEFAULT_COUNT (${cfg.defaultCount}) must not exceed MAX_COUNT (${cfg.maxCount})`);
  if (cfg.metricsPort !== undefined && cfg.metricsPort === cfg.port) throw new ConfigError(`METRICS_PORT (${cfg.metricsPort}) must differ from PORT: unset it to serve /metrics on PORT`);
  return cfg;
}

/**
 * Why `npm start` must not run with this configuration, if it can tell: replicas mean several
 * instances behind a load balancer, whose next links need one CURSOR_SECRET (WORKERS of one
 * instance share the one their primary makes: src/server.ts).
 */
export function scaleOutProblem(cfg: Pick<Config, 'databaseReadUrls' | 'cursorSecret' | 'databaseUrl'>): string | undefined {
  if (cfg.databaseReadUrls.length === 0) return undefined;
  if (!cfg.databaseUrl) return 'DATABASE_READ_URL needs DATABASE_URL, the primary the replicas follow (the embedded PostgreSQL has no replicas)';
  if (!cfg.cursorSecret) {
    return 'DATABASE_READ_URL is set but CURSOR_SECRET is not: every instance would sign its paging links with a random key of its own, and a next link answered by another instance would be refused. Set the same CURSOR_SECRET (≥ 16 characters) on every instance';
  }
  return undefined;
}
