import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Every setting comes from the environment, is validated here once at start-up and is then passed
 * around as a plain object. Nothing else in the code reads process.env.
 *
 * ENV_VARS is the one list of the settings: each variable's key in Config, its schema, its default
 * and its documentation. The schema of Config, `.env.example` and docs/configuration.md are made
 * from it (`npm run docs`; tests/docs.test.ts fails when they are stale).
 */
interface Setting<K extends string = string, S extends TSchema = TSchema, D extends string | undefined = string | undefined> {
  key: K;
  schema: S;
  /** the raw text used when the variable is unset or empty; undefined: the setting is optional. */
  default: D;
  doc: string;
}

const setting = <K extends string, S extends TSchema, D extends string | undefined>(key: K, schema: S, default_: D, doc: string): Setting<K, S, D> =>
  ({ key, schema, default: default_, doc });

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const ENV_VARS = {
  PORT: setting('port', Type.Integer({ minimum: 0, maximum: 65535 }), '8080',
    'HTTP port'),
  HOST: setting('host', Type.String({ minLength: 1 }), undefined,
    'listen address; unset ⇒ localhost (the loopback: 127.0.0.1, and ::1 where localhost names it) with the embedded PostgreSQL, 0.0.0.0 with DATABASE_URL. HOST=0.0.0.0 listens on every interface'),
  DATABASE_URL: setting('databaseUrl', Type.String({ pattern: '^postgres(ql)?://' }), undefined,
    'PostgreSQL ≥ 14 URL (a Unix socket as libpq writes it: postgres://user@localhost/db?host=/var/run/postgresql); unset ⇒ embedded PostgreSQL in DATA_DIR'),
  DATA_DIR: setting('dataDir', Type.String({ minLength: 1 }), '.data',
    'folder of the embedded PostgreSQL, its development API key and cursor secret'),
  EMBEDDED_SHARED_BUFFERS: setting('embeddedSharedBuffers', Type.String({ pattern: '^([1-9]|[1-7][0-9]|80)%$|^[1-9][0-9]*(MB|GB|TB)$' }), undefined,
    'shared_buffers of the embedded PostgreSQL: a share of the memory (40%, at most 80%) or a size (512MB, 8GB); unset ⇒ a quarter of the memory, between 128MB and 1GB. Raise it for a national load'),
  LOG_LEVEL: setting('logLevel', Type.Union(LOG_LEVELS.map((l) => Type.Literal(l))), 'info',
    'pino level'),
  PUBLIC_BASE_URL: setting('publicBaseUrl', Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' }), undefined,
    'scheme://host[:port][/prefix] under which clients reach the server; /fhir/v1 or /fhir/v2 is appended. Unset ⇒ taken from the request (Host, X-Forwarded-Proto)'),
  DEFAULT_COUNT: setting('defaultCount', Type.Integer({ minimum: 1 }), '50',
    'page size when _count is absent'),
  MAX_COUNT: setting('maxCount', Type.Integer({ minimum: 1 }), '1000',
    'largest page size; larger _count values are clamped'),
  INCLUDE_CAP: setting('includeCap', Type.Integer({ minimum: 1 }), '1000',
    'most included resources per page (a warning entry says when it is hit)'),
  TOTAL_BUDGET_MS: setting('totalBudgetMs', Type.Integer({ minimum: 0 }), '20',
    'time allowed to count the matches behind a first page that does not hold them all (counted once the page is full, unless searches wait for a core); total is omitted past it, exact whenever given; 0 ⇒ never counted unless _total=accurate'),
  CURSOR_SECRET: setting('cursorSecret', Type.String({ minLength: 16 }), undefined,
    'HMAC key of paging cursors (≥ 16 chars); set the same value on every instance. Unset ⇒ the embedded default keeps one in DATA_DIR/cursor-secret; with DATABASE_URL, random per process'),
  STATEMENT_TIMEOUT_MS: setting('statementTimeoutMs', Type.Integer({ minimum: 0 }), '10000',
    'per-statement timeout; exceeded ⇒ 503 OperationOutcome (timeout)'),
  API_KEYS: setting('apiKeys', Type.Array(Type.String({ minLength: 8 })), '',
    'comma-separated API keys added at start-up (development and tests)'),
  METADATA_REQUIRES_KEY: setting('metadataRequiresKey', Type.Boolean(), 'false',
    'true ⇒ GET /metadata needs an API key too'),
  RATE_LIMIT: setting('rateLimit', Type.Integer({ minimum: 0 }), '0',
    'requests per second per API key, 0 for no limit; a key\'s own limit (npm run keys -- create --rate-limit) overrides it'),
  MAX_CONCURRENT_PER_KEY: setting('maxConcurrentPerKey', Type.Integer({ minimum: 0 }), '8',
    'requests one API key may have in progress at once in each server process (429 past it); 0 for no limit'),
  REDIS_URL: setting('redisUrl', Type.String({ pattern: '^rediss?://' }), undefined,
    'redis:// URL; set ⇒ rate-limit counters shared through Redis'),
  MAX_URL_LENGTH: setting('maxUrlLength', Type.Integer({ minimum: 256 }), '8192',
    'longest request URL (414 beyond)'),
  MAX_BODY_BYTES: setting('maxBodyBytes', Type.Integer({ minimum: 1024 }), '65536',
    'largest POST body (413 beyond)'),
  MAX_VALUES_PER_PARAM: setting('maxValuesPerParam', Type.Integer({ minimum: 1 }), '100',
    'most comma-separated values in one parameter (400 beyond)'),
  MAX_PARAMS: setting('maxParams', Type.Integer({ minimum: 1 }), '50',
    'most parameters in one search (400 beyond)'),
  DB_POOL_SIZE: setting('dbPoolSize', Type.Integer({ minimum: 2, maximum: 1000 }), '3',
    'PostgreSQL connections per process for light searches (at least 2: half, rounded down, for lookups whose plan is made once, the rest for the others); concurrent searches pipeline on them. Heavy searches have connections of their own (HEAVY_SEARCHES)'),
  HEAVY_SEARCHES: setting('heavySearches', Type.Integer({ minimum: 0, maximum: 1000 }), '0',
    'searches run at once per instance in each of two lanes, heavy ones (pages of more than 100, :contains, exact counts: with PostgreSQL connections of their own) and the other non-lookups; the rest wait in order, lookups and nearby searches (`near` alone) never do; shared out among the WORKERS; 0 ⇒ the number of CPU cores'),
  SEARCH_PARALLEL_WORKERS: setting('searchParallelWorkers', Type.Integer({ minimum: 0, maximum: 64 }), '0',
    'parallel workers PostgreSQL may start for one search statement (max_parallel_workers_per_gather on the search connections); 0 ⇒ none: each search runs in its own backend and concurrent searches share the cores'),
  WORKERS: setting('workers', Type.Integer({ minimum: 0, maximum: 256 }), '1',
    'server processes on the port (node:cluster), each with its own connections; 0 ⇒ the number of CPU cores'),
  LOAD_DEMO_DATA: setting('loadDemoData', Type.Boolean(), 'true',
    'load fixtures/ into an empty embedded database at start-up (never into a DATABASE_URL database)'),
  CORS_ORIGINS: setting('corsOrigins', Type.Array(Type.String({ pattern: '^(\\*|https?://[^/?#]+)$' })), '*',
    'origins whose browser apps may call the API, comma-separated scheme://host[:port], or * for any (the key is a header, never a cookie: a browser gains nothing a script could not do)'),
  DOCS_ENABLED: setting('docsEnabled', Type.Boolean(), 'true',
    'serve the interactive API docs at /docs (Swagger UI over the OpenAPI documents /fhir/v2/openapi.json and /fhir/v1/openapi.json, which are served either way)'),
  DATABASE_READ_URL: setting('databaseReadUrls', Type.Array(Type.String({ pattern: '^postgres(ql)?://' })), '',
    'comma-separated PostgreSQL URLs of hot standbys of DATABASE_URL: searches, reads and API-key checks run on them, the primary when none can answer; loads, keys and migrations stay on DATABASE_URL. Needs CURSOR_SECRET'),
  MAX_REPLICA_LAG_S: setting('maxReplicaLagS', Type.Integer({ minimum: 1 }), '30',
    'seconds a replica may lag behind the primary before it is taken out of rotation (checked every second; it comes back once caught up)'),
  EXPORT_DIR: setting('exportDir', Type.String({ minLength: 1 }), undefined,
    'folder of the bulk export ($export) files; unset ⇒ DATA_DIR/exports'),
  EXPORT_TTL_HOURS: setting('exportTtlHours', Type.Integer({ minimum: 1, maximum: 8760 }), '24',
    'hours an export job and its files are kept after it ends, then deleted'),
  EXPORT_JOBS: setting('exportJobs', Type.Integer({ minimum: 1, maximum: 64 }), '1',
    'bulk exports run at once (each on a PostgreSQL connection of its own); more wait in a queue'),
  EXPORT_QUEUE: setting('exportQueue', Type.Integer({ minimum: 1, maximum: 10000 }), '10',
    'most bulk exports waiting to run; a kick-off past it gets 429 with Retry-After'),
  EXPORT_FILE_BYTES: setting('exportFileBytes', Type.Integer({ minimum: 1024 }), '268435456',
    'size past which an export file is closed and the type goes on in the next file (a resource is never split)'),
  SYNC_API_KEY: setting('syncApiKey', Type.String({ minLength: 1 }), undefined,
    'npm run sync only: the API key sent to the upstream directory (never on the command line, never logged)'),
  METRICS_ENABLED: setting('metricsEnabled', Type.Boolean(), 'true',
    'serve Prometheus metrics at GET /metrics (no API key; docs/metrics.md)'),
  METRICS_PORT: setting('metricsPort', Type.Integer({ minimum: 1, maximum: 65535 }), undefined,
    'serve /metrics only on this port, on a listener of its own (HOST), and not on PORT; unset ⇒ on PORT'),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting('otelEndpoint', Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' }), undefined,
    'OTLP/HTTP endpoint (http://collector:4318): traces of requests and their SQL statements are exported there; the other OTEL_* variables apply (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER …). Unset ⇒ no tracing'),
} as const;

type Settings = typeof ENV_VARS;
type Shape = { [N in keyof Settings as Settings[N]['key']]: Settings[N]['default'] extends string ? Settings[N]['schema'] : TOptional<Settings[N]['schema']> };

export const ConfigSchema = Type.Object(
  Object.fromEntries(Object.values(ENV_VARS).map((v: Setting) => [v.key, v.default === undefined ? Type.Optional(v.schema) : v.schema])) as Shape,
);
export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** How a variable's text becomes its value: by its schema's type. */
function convert(name: string, schema: TSchema, raw: string): unknown {
  switch (schema.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
      return Number(raw.trim());
    }
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(v)) return true;
      if (['false', '0', 'no', ''].includes(v)) return false;
      throw new ConfigError(`${name} must be true or false, got "${raw}"`);
    }
    case 'array':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    default:
      return raw;
  }
}

/** What a setting accepts, in words, from its schema (docs/configuration.md). */
export function accepted(schema: TSchema): string {
  if (schema.anyOf) return (schema.anyOf as TSchema[]).map((s) => `\`${s.const}\``).join(', ');
  const range = [schema.minimum !== undefined ? `≥ ${schema.minimum}` : '', schema.maximum !== undefined ? `≤ ${schema.maximum}` : ''].filter(Boolean).join(', ');
  switch (schema.type) {
    case 'integer': return `an integer${range ? ` ${range}` : ''}`;
    case 'boolean': return '`true` or `false`';
    case 'array': return 'a comma-separated list';
    default: return schema.minLength > 1 ? `text of ${schema.minLength} characters or more` : schema.minLength === 1 ? 'non-empty text' : 'text';
  }
}

/** Reads and validates the configuration; throws ConfigError naming the variable on a bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(ENV_VARS) as [string, Setting][]) {
    const given = env[name];
    const raw = given === undefined || given === '' ? spec.default : given;
    if (raw === undefined) continue;
    out[spec.key] = convert(name, spec.schema, raw);
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
 * The address the server listens on: HOST, else every interface in production (DATABASE_URL) and
 * the loopback alone in development, where the embedded database and its development key live.
 */
export const listenHost = (cfg: Pick<Config, 'host' | 'databaseUrl'>): string => cfg.host ?? (cfg.databaseUrl ? '0.0.0.0' : 'localhost');

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
