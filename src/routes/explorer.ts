import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { demoExamples, resourcesOf } from '../fhir/examples.ts';
import { openApiDocument, withServer } from '../fhir/openapi.ts';
import { RESOURCE_TYPES, SEARCHABLE_TYPES, VERSIONS, type Registry, type Version } from '../registry/index.ts';
import type { SearchRouter } from '../store/router.ts';
import { rootUrl } from './fhir.ts';
import { DOCS_PREFIX } from './security.ts';

/**
 * The API explorer: the OpenAPI documents of each version (generated once at start-up from the
 * registry, src/fhir/openapi.ts), Swagger UI over them at /docs (served from the npm packages, no
 * other host), and the home page at / with what the server is and holds.
 */
export interface ExplorerDeps {
  config: Pick<Config, 'publicBaseUrl' | 'defaultCount' | 'maxCount' | 'metadataRequiresKey' | 'docsEnabled'>;
  registry: Registry;
  router: Pick<SearchRouter, 'typeEstimates'>;
  softwareVersion: string;
  startedAt: string;
  /** the folder of the demo data the examples come from (fixtures/directory). */
  demoDir: string;
}

const NAME = 'annuaire-fhir';

/** The resources of the demo data's JSON files, none when the folder is not there. */
function readDemo(dir: string): Record<string, unknown>[] {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  return resourcesOf(files.map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as unknown));
}

/** The path the server is reached under (PUBLIC_BASE_URL's, or none): the docs' links start with it. */
const pathPrefix = (publicBaseUrl: string | undefined) => (publicBaseUrl ? new URL(publicBaseUrl).pathname.replace(/\/+$/, '') : '');

/**
 * Swagger UI's own files only; its requests go to the server (connect-src 'self', and the public
 * origin when PUBLIC_BASE_URL names another). React sets style attributes: 'unsafe-inline' styles.
 */
function docsCsp(publicBaseUrl: string | undefined): string {
  const origin = publicBaseUrl ? ` ${new URL(publicBaseUrl).origin}` : '';
  return `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'${origin}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;
}

const HOME_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What GET / says, as JSON; the HTML page shows the same. */
export interface Home {
  name: string;
  version: string;
  fhirVersion: '4.0.1';
  bases: Record<Version, { url: string; types: string[]; deprecated: boolean }>;
  links: { metadata: Record<Version, string>; openapi: Record<Version, string>; docs?: string };
  apiKey: string;
  /** stored resources per type, estimated from PostgreSQL's statistics; null when the database is away. */
  resources: Record<string, number> | null;
}

const API_KEY_HOW =
  'Send an API key in the SERVICE-API-KEY header of every request under /fhir/. Keys are issued by the operator of this server ' +
  '(npm run keys -- create --name your-app); a development server started with npm start prints its key at start-up and keeps it in .data/dev-api-key.';

function homeHtml(h: Home): string {
  const a = (href: string, text = href) => `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
  const rows = VERSIONS.slice()
    .reverse()
    .map((v) => {
      const b = h.bases[v];
      return `<tr><td>${v}${b.deprecated ? ' (deprecated)' : ''}</td><td><code>${escapeHtml(b.url)}</code></td><td>${b.types.join(', ')}</td><td>${a(h.links.metadata[v], 'metadata')} · ${a(h.links.openapi[v], 'openapi.json')}</td></tr>`;
    })
    .join('\n');
  const counts = h.resources
    ? Object.entries(h.resources).map(([t, n]) => `<tr><td>${t}</td><td class="n">${n.toLocaleString('en-US')}</td></tr>`).join('\n')
    : '<tr><td colspan="2">unavailable: the database does not answer just now</td></tr>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${NAME} ${escapeHtml(h.version)}</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border-bottom:1px solid #ddd;padding:.3rem .8rem;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}code{background:#f3f3f3;padding:0 .2rem}a{color:#0b57d0}</style></head>
<body>
<h1>${NAME} <small>${escapeHtml(h.version)}</small></h1>
<p>A read-only FHIR R4 search API over the French health directory: Practitioner, Organization and PractitionerRole.</p>
${h.links.docs ? `<p><strong>${a(h.links.docs, 'Interactive API docs')}</strong>: choose v2 or v1, authorize with your key, run a search.</p>` : ''}
<h2>FHIR bases</h2>
<table><tr><th>version</th><th>base</th><th>types</th><th>documents</th></tr>
${rows}
</table>
<h2>API key</h2>
<p id="api-key">${escapeHtml(h.apiKey)}</p>
<h2>Resources</h2>
<table id="resources"><tr><th>type</th><th>stored (estimated)</th></tr>
${counts}
</table>
<p>Counts are PostgreSQL's estimates from its table statistics, not counted rows. Device and HealthcareService are returned only through _include and _revinclude.</p>
</body></html>
`;
}

/** HTML unless the client asks for JSON before (or without) HTML. */
function wantsJson(req: FastifyRequest): boolean {
  const types = String(req.headers.accept ?? '').split(',').map((a) => a.split(';')[0].trim().toLowerCase());
  const json = types.findIndex((t) => t === 'application/json' || t === 'application/fhir+json');
  const html = types.findIndex((t) => t === 'text/html');
  return json >= 0 && (html < 0 || json < html);
}

export async function explorerRoutes(app: FastifyInstance, deps: ExplorerDeps): Promise<void> {
  const { config } = deps;
  const examples = demoExamples(deps.registry, readDemo(deps.demoDir));
  const documents = Object.fromEntries(
    VERSIONS.map((v) => [
      v,
      openApiDocument(deps.registry, v, {
        softwareVersion: deps.softwareVersion,
        date: deps.startedAt,
        defaultCount: config.defaultCount,
        maxCount: config.maxCount,
        metadataRequiresKey: config.metadataRequiresKey,
        examples,
      }),
    ]),
  ) as Record<Version, Record<string, unknown>>;

  // A document depends only on the version and the base URL: serialized once for each.
  const texts = new Map<string, string>();
  const documentText = (version: Version, root: string): string => {
    const key = `${version} ${root}`;
    let text = texts.get(key);
    if (text === undefined) {
      text = JSON.stringify(withServer(documents[version], `${root}/fhir/${version}`));
      if (texts.size < 64) texts.set(key, text); // roots come from Host headers: bounded
    }
    return text;
  };
  for (const version of VERSIONS) {
    app.get(`/fhir/${version}/openapi.json`, async (req, reply) => reply.type('application/json; charset=utf-8').send(documentText(version, rootUrl(deps, req))));
  }

  const prefix = pathPrefix(config.publicBaseUrl);
  app.get('/', async (req, reply) => {
    const root = rootUrl(deps, req);
    let resources: Record<string, number> | null = null;
    try {
      resources = await deps.router.typeEstimates(RESOURCE_TYPES);
    } catch (err) {
      req.log.warn({ err: { message: (err as Error).message } }, 'GET /: the resource estimates failed');
    }
    const base = (v: Version) => `${root}/fhir/${v}`;
    const perVersion = (f: (v: Version) => string) => Object.fromEntries(VERSIONS.map((v) => [v, f(v)])) as Record<Version, string>;
    const home: Home = {
      name: NAME,
      version: deps.softwareVersion,
      fhirVersion: '4.0.1',
      bases: {
        v2: { url: base('v2'), types: [...SEARCHABLE_TYPES], deprecated: false },
        v1: { url: base('v1'), types: ['Organization'], deprecated: true },
      },
      links: {
        metadata: perVersion((v) => `${base(v)}/metadata`),
        openapi: perVersion((v) => `${base(v)}/openapi.json`),
        ...(config.docsEnabled ? { docs: `${root}${DOCS_PREFIX}` } : {}),
      },
      apiKey: API_KEY_HOW,
      resources,
    };
    if (wantsJson(req)) return reply.type('application/json; charset=utf-8').send(JSON.stringify(home));
    return reply.type('text/html; charset=utf-8').header('content-security-policy', HOME_CSP).send(homeHtml(home));
  });

  if (!config.docsEnabled) return;
  // @fastify/swagger-ui serves the document of @fastify/swagger at /docs/json: v2's, with its server.
  await app.register(swagger, { mode: 'static', specification: { document: documents.v2 as never } });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    indexPrefix: prefix,
    staticCSP: docsCsp(config.publicBaseUrl),
    transformSpecification: (_doc, req) => withServer(documents.v2, `${rootUrl(deps, req)}/fhir/v2`),
    theme: { title: `${NAME}: API explorer` },
    uiConfig: {
      urls: [
        { url: `${prefix}/fhir/v2/openapi.json`, name: 'v2' },
        { url: `${prefix}/fhir/v1/openapi.json`, name: 'v1 (deprecated)' },
      ],
      'urls.primaryName': 'v2',
      // The key entered once stays through a reload and a switch of version (the browser's storage).
      persistAuthorization: true,
      displayRequestDuration: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: -1,
    } as never,
  });
}
