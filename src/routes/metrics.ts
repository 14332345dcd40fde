import type { FastifyInstance } from 'fastify';
import { isClusterWorker, workersMetricsText } from '../cluster.ts';
import type { Config } from '../config.ts';
import { METRICS_CONTENT_TYPE, type Metrics, type RouteKind } from '../metrics.ts';
import { RESOURCE_TYPES, VERSIONS } from '../registry/index.ts';
import type { SearchClass } from '../store/classify.ts';
import { METRICS_PATH } from './security.ts';

/**
 * The request metrics as hooks (src/metrics.ts owns the metrics): each route is given its kind as
 * it is added, each answer is recorded as it is sent; and `GET /metrics` on PORT, unless
 * METRICS_PORT serves it on a listener of its own (src/server.ts, src/cluster.ts).
 */
declare module 'fastify' {
  interface FastifyRequest {
    /** The class of the search the request runs (its execution, src/store/execution.ts), set by the search route. */
    searchClass: SearchClass | null;
  }
  interface FastifyContextConfig {
    /** What the route serves, and its version when its path fixes one: set as the route is added. */
    metrics?: { kind: RouteKind; version?: string };
  }
}

/** The kind of a route, from one of its methods and its URL pattern; a route that only refuses (405) is 'other'. */
export function routeKind(method: string, url: string): RouteKind {
  const reads = method === 'GET' || method === 'HEAD';
  if (/^\/fhir\/[^/]+\/CodeSystem\/\$lookup$/.test(url)) return 'lookup';
  if (url.startsWith('/fhir/v2/$export')) return 'export';
  if (/^\/fhir\/[^/]+\/(metadata|openapi\.json)$/.test(url)) return reads ? 'metadata' : 'other';
  if (url === '/fhir/:version/:type') return reads || method === 'POST' ? 'search' : 'other';
  if (url === '/fhir/:version/:type/_search') return method === 'POST' ? 'search' : 'other';
  if (url === '/fhir/:version/:type/:id') return reads ? 'read' : 'other';
  if (url === '/' || url === '/docs' || url.startsWith('/docs/')) return 'docs';
  return 'other';
}

const TYPES: ReadonlySet<string> = new Set(RESOURCE_TYPES);
const VERSION_SET: ReadonlySet<string> = new Set(VERSIONS);

/** Registered on the root app before any route, so that every route and the not-found handler are covered. */
export function metricsRoutes(app: FastifyInstance, metrics: Metrics | undefined, config: Pick<Config, 'metricsPort'>): void {
  app.decorateRequest('searchClass', null);
  if (!metrics) return;
  app.addHook('onRoute', (route) => {
    const kinds = new Set([route.method].flat().map((m) => routeKind(m, route.url)));
    const kind = kinds.size === 1 ? [...kinds][0] : 'other';
    route.config = { ...route.config, metrics: { kind, version: /^\/fhir\/(v1|v2)\//.exec(route.url)?.[1] } };
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.config.metrics;
    const { type, version } = (req.params ?? {}) as { type?: string; version?: string };
    metrics.request(
      {
        kind: route?.kind ?? 'other',
        type: type !== undefined && TYPES.has(type) ? type : 'none',
        version: version !== undefined && VERSION_SET.has(version) ? version : (route?.version ?? 'none'),
        class: req.searchClass ?? 'none',
        status: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
  metrics.start();
  app.addHook('onClose', async () => metrics.stop());

  if (config.metricsPort !== undefined) return;
  // A worker of several answers every worker's metrics, aggregated by the primary (src/cluster.ts).
  app.get(METRICS_PATH, async (req, reply) => {
    try {
      const text = isClusterWorker() ? await workersMetricsText() : await metrics.text();
      return reply.type(METRICS_CONTENT_TYPE).send(text);
    } catch (err) {
      req.log.warn({ err: { message: (err as Error).message } }, 'metrics could not be collected');
      return reply.code(503).type('text/plain; charset=utf-8').send('metrics unavailable just now\n');
    }
  });
}
