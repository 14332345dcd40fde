import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { observeConnectionCloses, type Db, type Pools, type Sql } from './db.ts';
import { classifyDbError } from './db-errors.ts';
import { RESOURCE_TYPES } from './registry/index.ts';
import type { Lane } from './store/lane.ts';
import { observeStatements } from './store/query.ts';
import type { SearchRouter } from './store/router.ts';
import { within } from './timeout.ts';
import { lastRuns, type LastRun } from './writer-runs.ts';

/**
 * The server's Prometheus metrics (docs/metrics.md): one registry per app, with Node's default
 * metrics in one registry per process beside it. Every label comes from a fixed set (route kinds,
 * resource types, versions, search classes, statuses, pools, lanes, the configured replicas, the
 * kinds of writer runs), never from a URL or a value a client sends. Requests are recorded by the
 * hooks of src/routes/metrics.ts; the rest is read when Prometheus scrapes.
 */

/** What a route serves: the `kind` label of the request metrics. */
export type RouteKind = 'search' | 'read' | 'metadata' | 'export' | 'lookup' | 'docs' | 'other';

/** The labels of one answered request. `none` where a label does not apply (a type on /ready …). */
export interface RequestLabels {
  kind: RouteKind;
  type: string;
  version: string;
  class: string;
  status: number;
}

/** Latency buckets, in seconds: lookups answer in about a millisecond, a search may run to its deadline. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The data metrics (estimates, writer runs) are read from the database at most this often. */
const DATA_TTL_MS = 60_000;
/** A scrape waits this long for them at most, then shows what it had. */
const DATA_DEADLINE_MS = 2_000;
const REPLICA_STATES = ['up', 'down', 'lagging'] as const;

/** A pool's statements handed to the driver by `query` and not yet settled. */
interface PoolStats {
  labels: { database: string; pool: string };
  max: number;
  inFlight: number;
}

/** What the database says of the data, and when it said it. */
interface DataMetrics {
  at: number;
  resources?: Record<string, number>;
  runs?: LastRun[];
}

let processRegistry: Registry | undefined;

/** Node's default metrics (event-loop lag, heap, GC, CPU …): collected once per process, whatever the apps built in it. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class Metrics {
  /** the app's own metrics; `registries()` adds the process's. */
  readonly registry = new Registry();
  private readonly requests: Counter<keyof RequestLabels>;
  private readonly durations: Histogram<keyof RequestLabels>;
  private readonly laneWait: Histogram<'lane'>;
  private readonly timeouts: Counter<'database' | 'pool'>;
  private readonly transients: Counter<'database' | 'pool'>;
  private readonly closes: Counter<'database' | 'pool'>;
  /** the series of each label set, found once: a request records without hashing its labels. */
  private readonly series = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<keyof RequestLabels> }>();
  private readonly pools = new Map<Db, PoolStats>();
  private readonly stops: (() => void)[] = [];
  private data: DataMetrics = { at: -Infinity };
  private refreshing?: Promise<void>;

  constructor(private readonly sources: { router: SearchRouter; sql: Sql }) {
    const registers = [this.registry];
    const labelNames = ['kind', 'type', 'version', 'class', 'status'] as const;
    this.requests = new Counter({ name: 'annuaire_http_requests_total', help: 'HTTP requests answered, by route kind, resource type, FHIR version, search class and status', labelNames, registers });
    this.durations = new Histogram({ name: 'annuaire_http_request_duration_seconds', help: 'Time to answer an HTTP request, from its arrival to its last byte handed to the socket', labelNames, buckets: REQUEST_BUCKETS, registers });

    const lanes = () => Object.entries(this.sources.router.lanes) as [string, Lane][];
    const laneGauge = (name: string, help: string, value: (lane: Lane) => number) =>
      new Gauge({ name, help, labelNames: ['lane'], registers, collect() { for (const [lane, l] of lanes()) this.set({ lane }, value(l)); } });
    laneGauge('annuaire_lane_queue_length', 'Searches waiting for their turn in a lane (page, heavy)', (l) => l.load.waiting);
    laneGauge('annuaire_lane_running_searches', 'Searches running in a lane', (l) => l.load.active);
    laneGauge('annuaire_lane_width', 'Searches a lane runs at once (this process\'s share of HEAVY_SEARCHES)', (l) => l.width);
    this.laneWait = new Histogram({ name: 'annuaire_lane_wait_seconds', help: 'Time a search waited for its turn in a lane (lookups never wait)', labelNames: ['lane'], buckets: WAIT_BUCKETS, registers });

    const poolLabels = ['database', 'pool'] as const;
    const pools = this.pools;
    const poolGauge = (name: string, help: string, value: (p: PoolStats) => number) =>
      new Gauge({ name, help, labelNames: poolLabels, registers, collect() { for (const p of pools.values()) this.set(p.labels, value(p)); } });
    poolGauge('annuaire_db_pool_connections_max', 'Connections a pool may open', (p) => p.max);
    poolGauge('annuaire_db_pool_connections_in_use', 'Connections of a pool running a statement: its statements in flight, up to its size', (p) => Math.min(p.inFlight, p.max));
    poolGauge('annuaire_db_pool_statements_waiting', 'Statements in flight beyond a pool\'s size: pipelined behind another on a busy connection, or queued in the driver', (p) => Math.max(0, p.inFlight - p.max));
    this.timeouts = new Counter({ name: 'annuaire_db_statement_timeouts_total', help: 'Statements cancelled by their statement timeout (SQLSTATE 57014): a 503 timeout, or on pool="count" a total left out past TOTAL_BUDGET_MS', labelNames: poolLabels, registers });
    this.transients = new Counter({ name: 'annuaire_db_transient_errors_total', help: 'Statements failed because the database was away, restarting or refusing connections (503 transient, or retried on another database)', labelNames: poolLabels, registers });
    this.closes = new Counter({ name: 'annuaire_db_connection_closes_total', help: 'Connections of a pool that closed (the server restarted or ended them, a network cut, their maximum lifetime): each is opened again when a statement next needs it', labelNames: poolLabels, registers });

    const replicas = () => this.sources.router.replicas?.members ?? [];
    new Gauge({
      name: 'annuaire_replica_state', help: 'State of each read replica (DATABASE_READ_URL): 1 for its current state', labelNames: ['replica', 'state'], registers, aggregator: 'max',
      collect() { for (const m of replicas()) for (const state of REPLICA_STATES) this.set({ replica: m.name, state }, m.state === state ? 1 : 0); },
    });
    new Gauge({
      name: 'annuaire_replica_lag_seconds', help: 'Seconds a read replica is behind the primary (absent while it cannot be told)', labelNames: ['replica'], registers, aggregator: 'max',
      collect() {
        this.reset();
        for (const m of replicas()) if (m.lagS !== null) this.set({ replica: m.name }, m.lagS);
      },
    });

    const fresh = () => this.fresh();
    new Gauge({
      name: 'annuaire_resources', help: 'Resources stored per type, as PostgreSQL\'s planner estimates them (read at most once a minute)', labelNames: ['type'], registers, aggregator: 'max',
      async collect() {
        const { resources } = await fresh();
        for (const [type, n] of Object.entries(resources ?? {})) this.set({ type }, n);
      },
    });
    const runGauge = (name: string, help: string, value: (r: LastRun) => number) =>
      new Gauge({
        name, help, labelNames: ['kind', 'outcome'], registers, aggregator: 'max',
        async collect() {
          const { runs } = await fresh();
          this.reset();
          for (const r of runs ?? []) this.set({ kind: r.kind, outcome: r.outcome }, value(r));
        },
      });
    runGauge('annuaire_last_run_timestamp_seconds', 'End of the last finished run of each writer (load, sync, import) and outcome, Unix time (read at most once a minute)', (r) => r.finishedAt);
    runGauge('annuaire_last_run_duration_seconds', 'Duration of that run', (r) => r.durationS);
  }

  /** Starts watching the router's lanes and every statement run on its pools; `stop` undoes it. */
  start(): void {
    const { router } = this.sources;
    const watch = (database: string, pools: Pools) => {
      for (const [pool, sql] of Object.entries(pools) as [string, Sql][]) this.pools.set(sql, { labels: { database, pool }, max: sql.options.max, inFlight: 0 });
    };
    watch('primary', router.pools);
    for (const m of router.replicas?.members ?? []) watch(m.name, m.pools);
    this.stops.push(observeStatements((db, _text, statement) => this.statement(db, statement)));
    for (const p of this.pools.values()) this.closes.inc(p.labels, 0);
    this.stops.push(observeConnectionCloses((pool) => {
      const p = this.pools.get(pool);
      if (p) this.closes.inc(p.labels);
    }));
    for (const [lane, l] of Object.entries(router.lanes) as [string, Lane][]) {
      this.laneWait.zero({ lane });
      const wait = this.laneWait.labels({ lane });
      l.onAdmit = (s) => wait.observe(s);
      this.stops.push(() => (l.onAdmit = undefined));
    }
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s();
  }

  /** Records an answered request. */
  request(l: RequestLabels, seconds: number): void {
    const key = `${l.kind} ${l.type} ${l.version} ${l.class} ${l.status}`;
    let s = this.series.get(key);
    if (!s) {
      const labels = { ...l, status: String(l.status) };
      s = { count: this.requests.labels(labels), duration: this.durations.labels(labels) };
      this.series.set(key, s);
    }
    s.count.inc();
    s.duration.observe(seconds);
  }

  /** The registries a scrape reads: the app's and the process's. */
  registries(): Registry[] {
    return [processMetrics(), this.registry];
  }

  /** This process's metrics in the Prometheus text format. */
  async text(): Promise<string> {
    const texts = await Promise.all(this.registries().map((r) => r.metrics()));
    return texts.join('');
  }

  private statement(db: Db, statement: Promise<unknown>): void {
    const p = this.pools.get(db);
    if (!p) return;
    p.inFlight++;
    statement.then(
      () => void p.inFlight--,
      (err: unknown) => {
        p.inFlight--;
        const failure = classifyDbError(err);
        if (failure === 'timeout') this.timeouts.inc(p.labels);
        else if (failure === 'transient') this.transients.inc(p.labels);
      },
    );
  }

  /**
   * The data metrics, read again when older than a minute (one read at a time, shared by the
   * gauges): the planner's estimates, never a count, and the last writer runs. A read that fails
   * or is late leaves the last values.
   */
  private async fresh(): Promise<DataMetrics> {
    if (Date.now() - this.data.at >= DATA_TTL_MS) {
      this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
      await within(this.refreshing, DATA_DEADLINE_MS, () => undefined);
    }
    return this.data;
  }

  private async refresh(): Promise<void> {
    const [resources, runs] = await Promise.allSettled([this.sources.router.typeEstimates(RESOURCE_TYPES), lastRuns(this.sources.sql)]);
    this.data = {
      at: Date.now(),
      resources: resources.status === 'fulfilled' ? resources.value : this.data.resources,
      runs: runs.status === 'fulfilled' ? runs.value : this.data.runs,
    };
  }
}

/** The content type of the Prometheus text format. */
export const METRICS_CONTENT_TYPE = new Registry().contentType;

/**
 * The listener of METRICS_PORT: GET /metrics and nothing else (404), so that operators can keep
 * metrics off the public port. `text` is this process's metrics, or the workers' aggregated.
 */
export async function serveMetrics(port: number, host: string, text: () => Promise<string>, warn: (msg: string) => void): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    text().then(
      (body) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : body),
      (err: Error) => {
        warn(`metrics could not be collected: ${err.message}`);
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable just now\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
  return server;
}
