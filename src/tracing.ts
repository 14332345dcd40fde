import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { FastifyPluginCallback } from 'fastify';
import { observeStatements } from './store/query.ts';

/**
 * OpenTelemetry traces, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (src/server.ts starts them before
 * the app is built): a span per request (@fastify/otel, the W3C `traceparent` of the caller as its
 * parent) and a span per SQL statement under it (src/store/query.ts, the one place statements are
 * run: postgres.js has no instrumentation of its own), exported over OTLP/HTTP (protobuf). Off, the
 * SDK is not even loaded, and the OpenTelemetry API the code imports is a no-op.
 */
export interface Tracing {
  /** Registered on the app before anything else (src/app.ts), so that every route is covered. */
  plugin: FastifyPluginCallback;
  /** Exports what is left, then uninstalls the SDK. */
  shutdown(): Promise<void>;
}

/** Not traced: Prometheus's scrapes and the probes, a span every few seconds that says nothing. */
const UNTRACED = /^\/(metrics|health|ready)(\?|$)/;

/** A statement's span name: its first keyword (`SELECT`, `EXPLAIN` …), the name semantic conventions ask for when no table can be told. */
const operationOf = (text: string) => /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? 'postgresql';

/**
 * Installs the SDK: spans batched to OTLP (OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_* variables
 * the exporter and the resource read), or handed to `exporter` one by one (tests).
 */
export async function startTracing(o: { serviceVersion: string; exporter?: SpanExporter }): Promise<Tracing> {
  const [sdk, { OTLPTraceExporter }, resources, { FastifyOtelInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/resources'),
    import('@fastify/otel'),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'annuaire-fhir', 'service.version': o.serviceVersion }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const processor = o.exporter ? new sdk.SimpleSpanProcessor(o.exporter) : new sdk.BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new sdk.NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  const tracer = provider.getTracer('annuaire-fhir', o.serviceVersion);

  // The statement's text, never its parameters (identifiers, names: what a client searched for).
  // Only under a traced request: the background's statements (the metrics' estimates) would be
  // traces of one span each.
  const unobserve = observeStatements((_db, text, statement) => {
    if (!trace.getSpan(context.active())) return;
    const operation = operationOf(text);
    const span = tracer.startSpan(operation, {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': text },
    });
    statement.then(
      () => span.end(),
      (err: Error & { code?: string }) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
        if (err.code) span.setAttribute('db.response.status_code', err.code);
        span.end();
      },
    );
  });

  const fastify = new FastifyOtelInstrumentation({
    ignorePaths: (route) => UNTRACED.test(route.url),
    // A request span and its handler's; a span per hook would say little and cost on every request.
    instrumentHooks: false,
    requestHook: (span, req) => {
      span.updateName(`${req.method} ${req.routeOptions.url ?? 'unknown route'}`);
      // The path without its query (search values), and the id the logs know the request by.
      span.setAttribute('url.path', req.url.split('?')[0]);
      span.setAttribute('http.request.header.x-request-id', [req.id]);
    },
  });
  fastify.setTracerProvider(provider);

  return {
    plugin: fastify.plugin() as FastifyPluginCallback,
    shutdown: async () => {
      unobserve();
      fastify.disable();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
