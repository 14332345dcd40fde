import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import { serveMetrics } from './metrics.ts';

/**
 * Several server processes on one port (WORKERS > 1, node:cluster). The primary prepares the
 * database once (embedded start, migrations, demo data, development key) and forks the workers;
 * each worker is the ordinary server (src/server.ts) on the prepared database. What the workers
 * must share:
 *
 * - the paging cursors' HMAC key: the primary gives every worker the same CURSOR_SECRET (a random
 *   one when none is configured), so a next link answered by another worker is still valid;
 * - the rate-limit counters: without Redis, the primary keeps them and the workers ask it
 *   (`PrimaryCounters`, `IpcRateLimitStore`), so a key's limit is the limit whichever worker serves
 *   its requests;
 * - the metrics: a scrape, whichever worker or METRICS_PORT (the primary's own listener) gets it,
 *   answers every worker's metrics aggregated by prom-client in the primary (`WorkerMetrics`).
 *
 * A single Node process uses one core; a search mostly waits on PostgreSQL, but its HTTP, the
 * driver and the Bundle are CPU, and at 16 clients on two cores one process left a share of the
 * machine idle while requests queued behind its event loop.
 */

interface CountRequest {
  t: 'rate-limit';
  id: number;
  key: string;
  window: number;
}
interface CountReply {
  t: 'rate-limit';
  id: number;
  current: number;
  ttl: number;
}

const isCountRequest = (m: unknown): m is CountRequest => (m as CountRequest)?.t === 'rate-limit' && typeof (m as CountRequest).key === 'string';
const isCountReply = (m: unknown): m is CountReply => (m as CountReply)?.t === 'rate-limit' && typeof (m as CountReply).current === 'number';

/** The counters of every worker, in the primary: fixed windows per key, as @fastify/rate-limit's own store. */
export class PrimaryCounters {
  private readonly windows = new Map<string, { current: number; start: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  count(key: string, window: number): { current: number; ttl: number } {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || w.start + window <= now) {
      w = { current: 0, start: now };
      this.windows.set(key, w);
      if (this.windows.size > 10_000) this.sweep(now, window);
    }
    w.current++;
    return { current: w.current, ttl: w.start + window - now };
  }

  private sweep(now: number, window: number): void {
    for (const [k, w] of this.windows) if (w.start + window <= now) this.windows.delete(k);
  }

  /** Answers the counting requests of a worker. */
  serve(worker: Worker): void {
    worker.on('message', (m: unknown) => {
      if (!isCountRequest(m)) return;
      const { current, ttl } = this.count(m.key, m.window);
      worker.send({ t: 'rate-limit', id: m.id, current, ttl } satisfies CountReply);
    });
  }
}

/**
 * A @fastify/rate-limit store that counts in the primary process (the store interface: `incr`
 * calls back with the key's count in its window and the time left). If the primary does not answer
 * within a second the request is counted as the first of its window: a limit that cannot be
 * checked lets requests through, as with Redis (`skipOnError`).
 */
export class IpcRateLimitStore {
  private static pending = new Map<number, (r: { current: number; ttl: number }) => void>();
  private static nextId = 0;
  private static listening = false;

  constructor(_options?: unknown) {
    if (!IpcRateLimitStore.listening) {
      IpcRateLimitStore.listening = true;
      process.on('message', (m: unknown) => {
        if (!isCountReply(m)) return;
        IpcRateLimitStore.pending.get(m.id)?.({ current: m.current, ttl: m.ttl });
        IpcRateLimitStore.pending.delete(m.id);
      });
    }
  }

  incr(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number): void {
    const id = IpcRateLimitStore.nextId++;
    const timer = setTimeout(() => {
      IpcRateLimitStore.pending.delete(id);
      cb(null, { current: 1, ttl: timeWindow });
    }, 1000);
    timer.unref();
    IpcRateLimitStore.pending.set(id, (r) => {
      clearTimeout(timer);
      cb(null, r);
    });
    process.send!({ t: 'rate-limit', id, key, window: timeWindow } satisfies CountRequest);
  }

  child(): IpcRateLimitStore {
    return this;
  }
}

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];
/** primary → worker: send your metrics; worker → primary: here they are (or why not). */
interface CollectRequest {
  t: 'metrics-collect';
  id: number;
}
interface CollectReply {
  t: 'metrics-collected';
  id: number;
  metrics?: MetricsJson;
  error?: string;
}
/** worker → primary: a scrape reached me; primary → worker: every worker's metrics, as text. */
interface ScrapeRequest {
  t: 'metrics-scrape';
  id: number;
}
interface ScrapeReply {
  t: 'metrics-scraped';
  id: number;
  text?: string;
  error?: string;
}

const isMessage = <M extends { t: string; id: number }>(t: M['t']) => (m: unknown): m is M => (m as M)?.t === t && typeof (m as M).id === 'number';
const isCollectRequest = isMessage<CollectRequest>('metrics-collect');
const isCollectReply = isMessage<CollectReply>('metrics-collected');
const isScrapeRequest = isMessage<ScrapeRequest>('metrics-scrape');
const isScrapeReply = isMessage<ScrapeReply>('metrics-scraped');

/** How long the primary waits for a worker's metrics before the scrape fails (prom-client's own limit). */
const COLLECT_TIMEOUT_MS = 5000;

/**
 * The metrics of every worker, in the primary: each listening worker sends its registries as JSON,
 * and prom-client's AggregatorRegistry adds them up, each metric by its aggregator (counters and
 * histograms summed, a replica's state or the data's figures the highest seen, the event loop's
 * lag averaged). A worker not yet listening has answered no request and is not asked; a scrape
 * fails rather than leave out a worker that does not answer (its counters would seem to go back).
 */
export class WorkerMetrics {
  private readonly listening = new Set<Worker>();
  private readonly pending = new Map<number, { worker: Worker; done: (err: Error | null, metrics?: MetricsJson) => void }>();
  private nextId = 0;

  /** Serves a worker: collected once it listens; its scrapes answered with everyone's metrics. */
  add(worker: Worker): void {
    worker.once('listening', () => this.listening.add(worker));
    worker.once('exit', () => {
      this.listening.delete(worker);
      for (const [id, p] of this.pending) if (p.worker === worker) p.done(new Error(`worker ${worker.process.pid} exited`)), this.pending.delete(id);
    });
    worker.on('message', (m: unknown) => {
      if (isCollectReply(m)) {
        this.pending.get(m.id)?.done(m.error === undefined ? null : new Error(m.error), m.metrics);
        this.pending.delete(m.id);
      } else if (isScrapeRequest(m)) {
        this.text().then(
          (text) => worker.send({ t: 'metrics-scraped', id: m.id, text } satisfies ScrapeReply),
          (err: Error) => worker.send({ t: 'metrics-scraped', id: m.id, error: err.message } satisfies ScrapeReply),
        );
      }
    });
  }

  /** Every listening worker's metrics, aggregated, in the Prometheus text format. */
  async text(): Promise<string> {
    const all = await Promise.all([...this.listening].map((w) => this.collect(w)));
    return AggregatorRegistry.aggregate(all).metrics();
  }

  private collect(worker: Worker): Promise<MetricsJson> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`worker ${worker.process.pid} sent no metrics within ${COLLECT_TIMEOUT_MS} ms`));
      }, COLLECT_TIMEOUT_MS);
      this.pending.set(id, {
        worker,
        done: (err, metrics) => {
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(metrics ?? []);
        },
      });
      worker.send({ t: 'metrics-collect', id } satisfies CollectRequest);
    });
  }
}

const scrapes = new Map<number, (reply: ScrapeReply) => void>();
let nextScrape = 0;
let answering = false;

/** In a worker: answers the primary's requests for this process's metrics, read from `registries`. */
export function answerMetricsRequests(registries: () => Registry[]): void {
  if (answering) return;
  answering = true;
  process.on('message', (m: unknown) => {
    if (isScrapeReply(m)) {
      scrapes.get(m.id)?.(m);
      scrapes.delete(m.id);
    } else if (isCollectRequest(m)) {
      Promise.all(registries().map((r) => r.getMetricsAsJSON())).then(
        (metrics) => process.send!({ t: 'metrics-collected', id: m.id, metrics: metrics.flat() } satisfies CollectReply),
        (err: Error) => process.send!({ t: 'metrics-collected', id: m.id, error: err.message } satisfies CollectReply),
      );
    }
  });
}

/** In a worker: every worker's metrics, aggregated by the primary (a scrape of /metrics on PORT). */
export function workersMetricsText(): Promise<string> {
  const id = nextScrape++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      scrapes.delete(id);
      reject(new Error('the primary sent no metrics in time'));
    }, COLLECT_TIMEOUT_MS + 1000);
    scrapes.set(id, (r) => {
      clearTimeout(timer);
      if (r.text !== undefined) resolve(r.text);
      else reject(new Error(r.error ?? 'no metrics'));
    });
    process.send!({ t: 'metrics-scrape', id } satisfies ScrapeRequest);
  });
}

/** True in a worker forked by the primary of src/server.ts. */
export const isClusterWorker = (): boolean => cluster.isWorker && process.env.ANNUAIRE_CLUSTER_WORKER === '1';

export interface PrimaryOptions {
  workers: number;
  /** environment every worker gets on top of the primary's (database URL, cursor secret …). */
  env: Record<string, string>;
  log: { info(msg: string): void; warn(msg: string): void; error(msg: string): void };
  /** called once, when the first worker listens. */
  onListening?: () => void;
  /** called once every worker has exited after a signal (stops the embedded database). */
  onExit: () => Promise<void>;
  /** metrics enabled: the workers' scrapes are answered; with `port`, on a listener of the primary's own too. */
  metrics?: { port?: number; host: string };
}

/**
 * Forks the workers and keeps them running: a worker that dies is replaced (after a second; if
 * workers die more than 10 times in a minute the primary gives up and exits 1). SIGINT/SIGTERM are
 * passed on; the primary exits when the workers have finished their requests.
 */
export function runPrimary(opts: PrimaryOptions): void {
  const counters = new PrimaryCounters();
  const metrics = opts.metrics ? new WorkerMetrics() : undefined;
  let metricsServer: Server | undefined;
  if (opts.metrics?.port !== undefined) {
    serveMetrics(opts.metrics.port, opts.metrics.host, () => metrics!.text(), (m) => opts.log.warn(m)).then(
      (server) => (metricsServer = server),
      (err: Error) => {
        opts.log.error(`metrics: cannot listen on METRICS_PORT ${opts.metrics!.port}: ${err.message}`);
        void stop('METRICS_PORT unavailable', 1);
      },
    );
  }
  let stopping = false;
  let listening = false;
  const deaths: number[] = [];
  const fork = () => {
    const w = cluster.fork({ ...opts.env, ANNUAIRE_CLUSTER_WORKER: '1' });
    counters.serve(w);
    metrics?.add(w);
    w.once('listening', () => {
      if (!listening) opts.onListening?.();
      listening = true;
    });
    w.on('exit', (code, signal) => {
      if (stopping) return;
      const now = Date.now();
      deaths.push(now);
      while (deaths.length && deaths[0] < now - 60_000) deaths.shift();
      if (deaths.length > 10) {
        opts.log.error('workers keep dying (more than 10 in a minute): stopping');
        void stop('crash loop', 1);
        return;
      }
      opts.log.warn(`worker ${w.process.pid} exited (${signal ?? `code ${code}`}): starting another`);
      setTimeout(() => {
        if (!stopping) fork();
      }, 1000).unref();
    });
  };
  const stop = async (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    opts.log.info(`${why}: stopping the workers (in-flight requests finish first)`);
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    for (const w of workers) if (!w.isDead()) w.process.kill('SIGTERM');
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    metricsServer?.close();
    await Promise.all(exited);
    await opts.onExit();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  for (let i = 0; i < opts.workers; i++) fork();
}
