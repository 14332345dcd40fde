import { VERSION_TYPES, type BoundParam, type Registry, type ResourceType, type Version } from '../registry/index.ts';
import { capabilityStatement } from './capability.ts';
import type { DemoExamples } from './examples.ts';
import { sortable } from './sort.ts';
import { searchType } from './types/index.ts';

/**
 * The OpenAPI 3 document of one API version, made from its CapabilityStatement (which the registry
 * makes): the same parameters, documentation, types, _include and _revinclude values, so the two
 * cannot disagree. The registry adds what a CapabilityStatement does not say: the modifiers of each
 * parameter, its aliases (deprecated), the _sort keys; the demo data gives the examples.
 * `servers` is set per base URL when served (withServer).
 */
export interface OpenApiOptions {
  softwareVersion: string;
  date: string;
  defaultCount: number;
  maxCount: number;
  metadataRequiresKey: boolean;
  examples: DemoExamples;
}

type Json = Record<string, unknown>;
type CsParam = { name: string; type: string; documentation: string; definition?: string };
type CsResource = { type: ResourceType; profile: string; interaction: { code: string }[]; operation?: { name: string; documentation: string }[]; searchParam?: CsParam[]; searchInclude?: string[]; searchRevInclude?: string[] };

const FHIR_JSON = 'application/fhir+json';

/** The statuses each operation can answer with besides 200, each an OperationOutcome. */
export const ERROR_STATUSES = {
  search: [400, 401, 406, 414, 429, 503],
  searchPost: [400, 401, 406, 413, 414, 415, 429, 503],
  searchForm: [400, 401, 405, 406, 413, 414, 415, 429, 503],
  read: [401, 404, 406, 414, 429, 503],
  metadata: [401, 406],
  lookup: [400, 401, 404, 414, 429, 503],
  lookupPost: [400, 401, 404, 413, 415, 429, 503],
} as const;

/** A code of the shipped terminology (terminology/ans-codes.csv): the example of $lookup. */
const LOOKUP_EXAMPLE = { system: 'https://mos.esante.gouv.fr/NOS/TRE_G15-ProfessionSante/FHIR/TRE-G15-ProfessionSante', code: '10' };

const STATUS_TEXT: Record<number, string> = {
  400: 'A bad value, modifier, cursor or percent-encoding; too many parameters or values; an unknown parameter under Prefer: handling=strict. The issue names the parameter.',
  401: 'No API key, or a key that is unknown or revoked (SERVICE-API-KEY header).',
  404: 'No resource of this type with this id.',
  405: 'POST [type] without a form body: the server is read-only.',
  406: 'Accept or _format asks for something other than JSON.',
  413: 'The form body is larger than the server accepts.',
  414: 'The URL is longer than the server accepts: send the search as POST [type]/_search.',
  415: 'The body is not application/x-www-form-urlencoded.',
  429: 'The API key has too many requests in progress, or has spent its rate limit: retry after Retry-After.',
  503: 'The search ran past the statement timeout, or the database is unavailable just now: retry after Retry-After.',
};

/** The headers an error answer carries, by status. */
const STATUS_HEADERS: Record<number, string[]> = { 401: ['WWW-Authenticate'], 429: ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'], 503: ['Retry-After'] };

/** The modifiers the parser takes on a parameter (its type's, src/fhir/types): `:missing` on every one. */
export function modifiersOf(param: BoundParam): string[] {
  return [...searchType(param).modifiers(param), 'missing'];
}

/**
 * An optional parameter's example, offered in a list whose first choice is no value: Swagger UI
 * fills every parameter with its `example` on "Try it out", and a search with all of them at once
 * finds nothing.
 */
function offered(value: unknown, summary = 'a value of the demo data'): Json {
  return value === undefined ? {} : { examples: { none: { summary: 'no value', value: '' }, demo: { summary, value } } };
}

/** The result parameters every search takes, beyond those the CapabilityStatement lists. */
function resultParameters(o: OpenApiOptions): Record<string, Json> {
  return {
    _count: {
      name: '_count', in: 'query', description: `Result parameter: matches per page (default ${o.defaultCount}; larger values than ${o.maxCount} are clamped, with a warning entry). 0 gives the total alone.`,
      schema: { type: 'integer', minimum: 0 }, ...offered(10, 'an example'),
    },
    _elements: {
      name: '_elements', in: 'query', description: 'Result parameter: the top-level elements to return, comma-separated; the resources are tagged SUBSETTED.',
      schema: { type: 'string' }, ...offered('name,identifier', 'an example'),
    },
    _summary: {
      name: '_summary', in: 'query', description: 'Result parameter: true (summary elements), text, data, count (the total alone) or false.',
      schema: { type: 'string', enum: ['true', 'text', 'data', 'count', 'false'] },
    },
    Prefer: {
      name: 'Prefer', in: 'header', description: 'handling=strict: an unknown parameter or an unusable _sort key is a 400 instead of being ignored with a warning entry.',
      schema: { type: 'string', enum: ['handling=strict', 'handling=lenient'] },
    },
  };
}

/** A `_has` pair from the demo data: a resource that references `type` and has a token value. */
function hasExample(registry: Registry, version: Version, type: ResourceType, examples: DemoExamples): Json | undefined {
  for (const from of VERSION_TYPES.v2) {
    for (const ref of registry.forType(from)) {
      if (ref.type !== 'reference' || !ref.target?.includes(type) || !ref.versions.includes(version)) continue;
      const on = registry.forType(from).find((p) => p.type === 'token' && !p.selective && p.versions.includes('v2') && examples.value(p) !== undefined);
      if (on) return { [`_has:${from}:${ref.code}:${on.code}`]: examples.value(on) };
    }
  }
  return undefined;
}

/** `_total`, `_sort` and `_has` as OpenAPI parameters (the CapabilityStatement lists them). */
function specialParameter(sp: CsParam, registry: Registry, version: Version, type: ResourceType, examples: DemoExamples): Json {
  switch (sp.name) {
    case '_total':
      return { name: sp.name, in: 'query', description: sp.documentation, schema: { type: 'string', enum: ['none', 'estimate', 'accurate'] } };
    case '_sort': {
      const keys = sortKeys(registry, version, type);
      return {
        name: sp.name, in: 'query', description: sp.documentation, style: 'form', explode: false,
        schema: { type: 'array', items: { type: 'string', enum: keys.flatMap((k) => [k, `-${k}`]) } },
      };
    }
    default: {
      // _has:Type:reference:parameter=value, any number of them: free-form query pairs.
      const example = hasExample(registry, version, type, examples);
      return {
        name: sp.name, in: 'query', description: sp.documentation, style: 'form', explode: true,
        schema: { type: 'object', additionalProperties: { type: 'string' } },
        ...offered(example),
        'x-fhir-type': sp.type,
      };
    }
  }
}

/** The keys `_sort` takes on a type: its sortable names, no alias. */
export function sortKeys(registry: Registry, version: Version, type: ResourceType): string[] {
  return [...registry.names(version, type)].filter(([, { param, prefix }]) => prefix === undefined && sortable(param)).map(([name]) => name).sort();
}

/** A registry parameter (or alias) as an OpenAPI query parameter. */
function searchParameter(sp: CsParam, param: BoundParam, prefix: string | undefined, examples: DemoExamples): Json {
  const alias = sp.name !== param.code;
  const modifiers = modifiersOf(param);
  let example = examples.value(param);
  if (example !== undefined && prefix !== undefined) example = example.replace(new RegExp(`^${prefix}`), '');
  return {
    name: sp.name,
    in: 'query',
    description:
      `**${sp.type}**. ${alias ? `Deprecated alias of ${param.code}${prefix ? `=${prefix}…` : ''}. ` : ''}${sp.documentation}` +
      ` Modifiers: ${modifiers.map((m) => `:${m}`).join(', ')}. ${sp.type === 'special' ? 'One value' : 'A comma is OR'}, a repeated parameter is AND.`,
    schema: { type: 'string' },
    ...offered(example),
    ...(alias ? { deprecated: true } : {}),
    'x-fhir-type': sp.type,
    'x-fhir-modifiers': modifiers,
    ...(sp.definition ? { 'x-fhir-definition': sp.definition } : {}),
  };
}

const outcomeRef = (status: number) => ({ $ref: `#/components/responses/Outcome${status}` });

function responses(ok: Json, statuses: readonly number[]): Json {
  return { 200: ok, ...Object.fromEntries(statuses.map((s) => [String(s), outcomeRef(s)])) };
}

function okResponse(description: string, schema: string, deprecated: boolean): Json {
  return {
    description,
    ...(deprecated ? { headers: { Deprecation: { $ref: '#/components/headers/Deprecation' }, Link: { $ref: '#/components/headers/Link' } } } : {}),
    content: { [FHIR_JSON]: { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
}

export function openApiDocument(registry: Registry, version: Version, o: OpenApiOptions): Json {
  const cs = capabilityStatement(registry, version, '', o.softwareVersion, o.date);
  const rest = cs.rest[0] as unknown as { resource: CsResource[] };
  const deprecated = version === 'v1';
  const result = resultParameters(o);
  const paths: Json = {
    '/metadata': {
      get: {
        tags: ['Server'], operationId: 'capabilities', summary: 'The CapabilityStatement of this version',
        ...(o.metadataRequiresKey ? {} : { security: [] }),
        ...(deprecated ? { deprecated } : {}),
        responses: responses(okResponse('The CapabilityStatement', 'CapabilityStatement', deprecated), o.metadataRequiresKey ? ERROR_STATUSES.metadata : [406]),
      },
    },
  };
  const schemas: Json = {};
  for (const r of rest.resource) {
    const type = r.type;
    const op = (operationId: string, summary: string, extra: Json) => ({ tags: [type], operationId, summary, ...(deprecated ? { deprecated } : {}), ...extra });
    const lookup = r.operation?.find((x) => x.name === 'lookup');
    if (lookup) {
      const parameters = [
        { name: 'system', in: 'query', required: true, description: 'The code system URI', schema: { type: 'string' }, example: LOOKUP_EXAMPLE.system },
        { name: 'code', in: 'query', required: true, description: 'The code', schema: { type: 'string' }, example: LOOKUP_EXAMPLE.code },
      ];
      const parametersBody = { required: true, content: { [FHIR_JSON]: { schema: { $ref: '#/components/schemas/Parameters' } } } };
      const ok = okResponse('A Parameters resource: name, version (when known), display', 'Parameters', deprecated);
      paths[`/${type}/$lookup`] = {
        get: op('lookupCode', 'Look up a code: its label and its code system', { description: lookup.documentation, parameters, responses: responses(ok, ERROR_STATUSES.lookup) }),
        post: op('lookupCodePost', 'Look up a code (a Parameters body)', { description: lookup.documentation, requestBody: parametersBody, responses: responses(ok, ERROR_STATUSES.lookupPost) }),
      };
    }
    if (!r.interaction.some((i) => i.code === 'read')) continue;
    const example = o.examples.resource(type);
    paths[`/${type}/{id}`] = {
      get: op(`read${type}`, `Read one ${type}`, {
        parameters: [{ name: 'id', in: 'path', required: true, description: 'The technical id of the resource', schema: { type: 'string', pattern: '^[A-Za-z0-9\\-.]{1,64}$' }, ...(example?.id ? { example: example.id } : {}) }],
        responses: responses(okResponse(`The ${type}`, type, deprecated), ERROR_STATUSES.read),
      }),
    };
    schemas[type] = {
      type: 'object', required: ['resourceType', 'id'], description: `A ${type} of the health directory (profile ${r.profile}).`,
      properties: { resourceType: { type: 'string', enum: [type] }, id: { type: 'string' }, meta: { type: 'object' } },
      additionalProperties: true,
      externalDocs: { url: r.profile },
      ...(example ? { example } : {}),
    };
    if (!r.searchParam) continue; // read only
    const names = registry.names(version, type);
    const query: Json[] = r.searchParam.map((sp) => {
      const found = names.get(sp.name);
      return found ? searchParameter(sp, found.param, found.prefix, o.examples) : specialParameter(sp, registry, version, type, o.examples);
    });
    const includes = (name: string, values: string[] | undefined): Json[] =>
      values?.length
        ? [{ name, in: 'query', description: `Result parameter: ${name === '_include' ? 'resources this page references' : 'resources referencing this page'} (Type:parameter, or * for all), each once.`, style: 'form', explode: true, schema: { type: 'array', items: { type: 'string', enum: values } } }]
        : [];
    query.push(...includes('_include', r.searchInclude), ...includes('_revinclude', r.searchRevInclude), result._count, result._elements, result._summary);
    const headers = [{ $ref: '#/components/parameters/Prefer' }];
    const form = {
      required: false,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            properties: Object.fromEntries(query.filter((q) => (q.schema as Json).type !== 'object').map((q) => [q.name, { ...(q.schema as Json), description: q.description }])),
            additionalProperties: { type: 'string' },
          },
          encoding: Object.fromEntries(query.filter((q) => (q.schema as Json).type === 'array').map((q) => [q.name, { style: 'form', explode: q.explode }])),
        },
      },
    };
    const bundle = okResponse(`A searchset Bundle of ${type} resources (search.mode match), with the included ones (include) and warnings (outcome)`, 'Bundle', deprecated);
    paths[`/${type}`] = {
      get: op(`search${type}`, `Search ${type}`, { parameters: [...query, ...headers], responses: responses(bundle, ERROR_STATUSES.search) }),
      post: op(`search${type}Form`, `Search ${type} with a form body (POST [type])`, { parameters: headers, requestBody: form, responses: responses(bundle, ERROR_STATUSES.searchForm) }),
    };
    paths[`/${type}/_search`] = {
      post: op(`search${type}Post`, `Search ${type} with a form body (POST [type]/_search)`, { parameters: headers, requestBody: form, responses: responses(bundle, ERROR_STATUSES.searchPost) }),
    };
  }

  const anyResource = { type: 'object', required: ['resourceType'], properties: { resourceType: { type: 'string' }, id: { type: 'string' } }, additionalProperties: true };
  return {
    openapi: '3.0.3',
    info: {
      title: cs.title,
      version: o.softwareVersion,
      description:
        `${cs.description}\n\nGenerated from the server's search parameter registry, like its CapabilityStatement (GET metadata). ` +
        'Authorize once with your SERVICE-API-KEY, then try a search.',
    },
    tags: [...rest.resource.map((r) => ({ name: r.type })), { name: 'Server' }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'SERVICE-API-KEY', description: 'The API key of your application (npm run keys -- create, or the development key printed by npm start).' },
      },
      parameters: { Prefer: result.Prefer },
      headers: {
        Deprecation: { description: 'v1 is deprecated (RFC 9745 date)', schema: { type: 'string' } },
        Link: { description: 'rel="successor-version": the same endpoint in v2', schema: { type: 'string' } },
        'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } },
        'WWW-Authenticate': { description: 'ApiKey realm="annuaire-fhir", header="SERVICE-API-KEY"', schema: { type: 'string' } },
        'RateLimit-Limit': { description: 'requests per second of this key', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'requests left in this second', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'seconds until the limit resets', schema: { type: 'integer' } },
      },
      responses: Object.fromEntries(
        Object.entries(STATUS_TEXT).map(([s, text]) => [
          `Outcome${s}`,
          {
            description: text,
            ...(STATUS_HEADERS[Number(s)] ? { headers: Object.fromEntries(STATUS_HEADERS[Number(s)].map((h) => [h, { $ref: `#/components/headers/${h}` }])) } : {}),
            content: { [FHIR_JSON]: { schema: { $ref: '#/components/schemas/OperationOutcome' } } },
          },
        ]),
      ),
      schemas: {
        ...schemas,
        Resource: anyResource,
        CapabilityStatement: { ...anyResource, properties: { resourceType: { type: 'string', enum: ['CapabilityStatement'] } } },
        Parameters: { ...anyResource, properties: { resourceType: { type: 'string', enum: ['Parameters'] }, parameter: { type: 'array', items: { type: 'object' } } } },
        Bundle: {
          type: 'object',
          required: ['resourceType', 'type'],
          properties: {
            resourceType: { type: 'string', enum: ['Bundle'] },
            type: { type: 'string', enum: ['searchset'] },
            total: { type: 'integer', description: 'all the matches, when counted (see _total)' },
            link: { type: 'array', items: { type: 'object', properties: { relation: { type: 'string', enum: ['self', 'next'] }, url: { type: 'string' } } } },
            entry: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  fullUrl: { type: 'string' },
                  resource: { $ref: '#/components/schemas/Resource' },
                  search: { type: 'object', properties: { mode: { type: 'string', enum: ['match', 'include', 'outcome'] } } },
                },
              },
            },
          },
        },
        OperationOutcome: {
          type: 'object',
          required: ['resourceType', 'issue'],
          properties: {
            resourceType: { type: 'string', enum: ['OperationOutcome'] },
            issue: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  severity: { type: 'string', enum: ['fatal', 'error', 'warning', 'information'] },
                  code: { type: 'string' },
                  diagnostics: { type: 'string', description: 'what to change' },
                  expression: { type: 'array', items: { type: 'string' }, description: 'the parameter at fault' },
                },
              },
            },
          },
        },
      },
    },
  };
}

/** The document with the base URL of its version as its only server. */
export function withServer(doc: Json, base: string): Json {
  return { ...doc, servers: [{ url: base }] };
}
