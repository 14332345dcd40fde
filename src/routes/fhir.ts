import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { searchBundle } from '../fhir/bundle.ts';
import { capabilityStatement } from '../fhir/capability.ts';
import { FhirError, notFound } from '../fhir/outcome.ts';
import { queryPairs } from '../fhir/form-encoding.ts';
import { parseSearch } from '../fhir/parse.ts';
import type { Config } from '../config.ts';
import type { Bases } from '../fhir/entries.ts';
import type { SearchRouter } from '../store/router.ts';
import { decideExecution } from '../store/execution.ts';
import { READ_TYPES, RESOURCE_TYPES, VERSION_TYPES, VERSIONS, type Registry, type ResourceType, type Version } from '../registry/index.ts';

/**
 * The FHIR endpoints: thin adapters from HTTP to parse → decide the execution → route (plan,
 * compile, execute) → Bundle.
 * Both versions and every type go through the same handlers.
 */
export const FHIR_JSON = 'application/fhir+json; charset=utf-8';
/** v1 is deprecated since v2 went live (28 April 2025), RFC 9745 structured date. */
export const V1_DEPRECATION = `@${Date.UTC(2025, 3, 28) / 1000}`;

/** What the FHIR routes need: HTTP in, parse, route, Bundle out. */
export interface FhirRoutesDeps {
  config: Pick<Config, 'publicBaseUrl' | 'defaultCount' | 'maxCount' | 'maxValuesPerParam' | 'maxParams'>;
  registry: Registry;
  router: Pick<SearchRouter, 'search' | 'read' | 'policy'>;
  softwareVersion: string;
  startedAt: string;
}

export function rootUrl(deps: { config: Pick<Config, 'publicBaseUrl'> }, req: FastifyRequest): string {
  return deps.config.publicBaseUrl ?? `${req.protocol}://${req.host}`;
}

const versionOf = (v: string): Version => {
  if (!(VERSIONS as readonly string[]).includes(v)) throw notFound(`Unknown API version "${v}": this server serves /fhir/v1 and /fhir/v2`);
  return v as Version;
};

/** The resource type of a path, among those `served` by its version. */
function resourceTypeOf(version: Version, type: string, served = VERSION_TYPES): ResourceType {
  if (!(served[version] as readonly string[]).includes(type)) {
    throw notFound(`Unknown resource type "${type}" in ${version}: this endpoint serves ${served[version].join(', ')}`);
  }
  return type as ResourceType;
}

/** Where each stored type is read: under the version searched, else under v2 (every type is read there). */
function basesOf(root: string, version: Version): Bases {
  const others = RESOURCE_TYPES.filter((t) => !READ_TYPES[version].includes(t));
  return { base: `${root}/fhir/${version}`, others: Object.fromEntries(others.map((t) => [t, `${root}/fhir/v2`])) };
}

/**
 * Content negotiation: JSON only. `_format` (json, application/json, application/fhir+json) wins
 * over Accept; anything that asks for another format is a 406.
 */
function checkFormat(req: FastifyRequest, pairs: [string, string][] = queryPairs(req.url)): void {
  const formats = pairs.filter(([k]) => k === '_format').map(([, v]) => v);
  if (formats.length) {
    for (const f of formats) {
      const v = f.toLowerCase().replace(/ /g, '+').split(';')[0].trim();
      if (!['json', 'application/json', 'application/fhir+json'].includes(v)) {
        throw new FhirError(406, 'not-supported', `_format=${f}: only JSON (application/fhir+json) is served`);
      }
    }
    return;
  }
  const accept = req.headers.accept;
  if (!accept) return;
  const ok = accept.split(',').some((a) => {
    const t = a.split(';')[0].trim().toLowerCase();
    return t === '*/*' || t === 'application/*' || t.includes('json');
  });
  if (!ok) throw new FhirError(406, 'not-supported', `Accept: ${accept} cannot be served: this server produces application/fhir+json only`);
}

function versionHeaders(reply: FastifyReply, version: Version, root: string, type?: string): void {
  reply.header('content-type', FHIR_JSON);
  if (version === 'v1') {
    reply.header('deprecation', V1_DEPRECATION);
    reply.header('link', `<${root}/fhir/v2/${type ?? 'metadata'}>; rel="successor-version"`);
  }
}

const isForm = (req: FastifyRequest) => (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');

export async function fhirRoutes(app: FastifyInstance, deps: FhirRoutesDeps): Promise<void> {
  const search = async (req: FastifyRequest<{ Params: { version: string; type: string } }>, reply: FastifyReply, body: [string, string][]) => {
    const version = versionOf(req.params.version);
    const type = resourceTypeOf(version, req.params.type);
    const query = queryPairs(req.url);
    checkFormat(req, query);
    const root = rootUrl(deps, req);
    const pairs = body.length ? [...query, ...body] : query;
    const parsed = parseSearch(pairs, {
      version,
      type,
      registry: deps.registry,
      strict: /handling\s*=\s*strict/i.test(String(req.headers.prefer ?? '')),
      bases: [`${root}/fhir/v1`, `${root}/fhir/v2`],
      now: Date.now(),
      defaultCount: deps.config.defaultCount,
      maxCount: deps.config.maxCount,
      maxValuesPerParam: deps.config.maxValuesPerParam,
      maxParams: deps.config.maxParams,
    });
    const bases = basesOf(root, version);
    const execution = decideExecution(parsed, deps.router.policy);
    req.searchClass = execution.class; // a label of the request metrics
    const result = await deps.router.search(parsed, execution, bases);
    versionHeaders(reply, version, root, type);
    const bundle = searchBundle({ base: bases.base, req: parsed, ...result });
    if (Buffer.isBuffer(bundle)) return bundle;
    reply.header('content-length', bundle.length);
    return reply.send(bundle.stream);
  };

  // The CapabilityStatement depends only on the version and the base URL: built once for each.
  const statements = new Map<string, string>();
  app.get<{ Params: { version: string } }>('/fhir/:version/metadata', async (req, reply) => {
    const version = versionOf(req.params.version);
    checkFormat(req);
    const root = rootUrl(deps, req);
    versionHeaders(reply, version, root);
    const key = `${version} ${root}`;
    let body = statements.get(key);
    if (body === undefined) {
      body = JSON.stringify(capabilityStatement(deps.registry, version, `${root}/fhir/${version}`, deps.softwareVersion, deps.startedAt));
      if (statements.size < 64) statements.set(key, body); // roots come from Host headers: bounded
    }
    return body;
  });

  app.get<{ Params: { version: string; type: string } }>('/fhir/:version/:type', (req, reply) => search(req, reply, []));

  const postSearch = (req: FastifyRequest<{ Params: { version: string; type: string } }>, reply: FastifyReply) => {
    versionOf(req.params.version);
    if (req.body !== undefined && req.body !== null && !isForm(req)) {
      throw new FhirError(415, 'not-supported', `Content-Type ${req.headers['content-type']} is not accepted here: a search body is application/x-www-form-urlencoded`);
    }
    const body = Array.isArray(req.body) ? (req.body as [string, string][]) : [];
    return search(req, reply, body);
  };
  app.post<{ Params: { version: string; type: string } }>('/fhir/:version/:type/_search', postSearch);
  app.post<{ Params: { version: string; type: string } }>('/fhir/:version/:type', (req, reply) => {
    const version = versionOf(req.params.version);
    resourceTypeOf(version, req.params.type);
    if (!isForm(req)) throw new FhirError(405, 'not-supported', 'This server is read-only: POST [type] is accepted only as a search with a form body');
    return postSearch(req, reply);
  });

  app.get<{ Params: { version: string; type: string; id: string } }>('/fhir/:version/:type/:id', async (req, reply) => {
    const version = versionOf(req.params.version);
    const type = resourceTypeOf(version, req.params.type, READ_TYPES);
    checkFormat(req);
    const content = await deps.router.read(type, req.params.id);
    if (content === undefined) throw notFound(`Resource not found with id: ${type}/${req.params.id}`);
    versionHeaders(reply, version, rootUrl(deps, req), type);
    return content;
  });

  // Everything else under /fhir/ is a method this read-only server does not allow: answered before
  // the body is parsed (onRequest), so its content type is never looked at.
  const notAllowed = (allow: string) => async (req: FastifyRequest) => {
    throw new FhirError(405, 'not-supported', `Method ${req.method} is not allowed on ${req.url.split('?')[0]} (allowed: ${allow})`, { allow });
  };
  const refuse = (method: HTTPMethods[], url: string, allow: string) => {
    const hook = notAllowed(allow);
    app.route({ method, url, onRequest: hook, handler: hook });
  };
  const writes: HTTPMethods[] = ['PUT', 'DELETE', 'PATCH'];
  refuse([...writes, 'POST'], '/fhir/:version/metadata', 'GET, HEAD');
  refuse(writes, '/fhir/:version/:type', 'GET, HEAD, POST');
  refuse([...writes, 'GET'], '/fhir/:version/:type/_search', 'POST');
  refuse([...writes, 'POST'], '/fhir/:version/:type/:id', 'GET, HEAD');
}
