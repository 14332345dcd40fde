import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { badRequest, FhirError, notFound } from '../fhir/outcome.ts';
import { VERSIONS } from '../registry/index.ts';
import type { SearchRouter } from '../store/router.ts';
import { systemInfo } from '../terminology.ts';
import { FHIR_JSON } from './fhir.ts';

/**
 * `CodeSystem/$lookup` (FHIR R4): the name of a code system the server knows and the label of one
 * of its codes, from the shipped terminology and the labels learned from the data. GET with
 * `system` and `code`, or POST a Parameters resource (`system` + `code`, or `coding`).
 */
export interface TerminologyRoutesDeps {
  config: Pick<Config, 'publicBaseUrl'>;
  router: Pick<SearchRouter, 'lookup'>;
}

type Parameter = { name?: unknown; valueUri?: unknown; valueCode?: unknown; valueString?: unknown; valueCoding?: { system?: unknown; code?: unknown } };

/** `system` and `code` of a POSTed Parameters body. */
function fromParameters(body: unknown): { system?: unknown; code?: unknown } {
  let doc: { resourceType?: unknown; parameter?: unknown };
  try {
    doc = typeof body === 'string' ? JSON.parse(body) : (body as typeof doc);
  } catch {
    throw badRequest('the body is not JSON: send a Parameters resource with system and code (or coding)');
  }
  if (doc?.resourceType !== 'Parameters' || !Array.isArray(doc.parameter)) throw badRequest('the body must be a Parameters resource with system and code (or coding)');
  const params = doc.parameter as Parameter[];
  const one = (name: string) => params.find((p) => p?.name === name);
  const coding = one('coding')?.valueCoding;
  return {
    system: coding?.system ?? one('system')?.valueUri ?? one('system')?.valueString,
    code: coding?.code ?? one('code')?.valueCode ?? one('code')?.valueString,
  };
}

export async function terminologyRoutes(app: FastifyInstance, deps: TerminologyRoutesDeps): Promise<void> {
  const lookup = async (reply: FastifyReply, system: unknown, code: unknown) => {
    if (typeof system !== 'string' || system === '') throw badRequest('$lookup needs the system of the code (system=…)', 'system');
    if (typeof code !== 'string' || code === '') throw badRequest('$lookup needs the code (code=…)', 'code');
    const found = await deps.router.lookup(system, code);
    if (!found.system) throw notFound(`Unknown code system ${system}: it is not one this server knows`);
    if (found.display === undefined) throw notFound(`Unknown code ${code} in the code system ${system}`);
    const info = systemInfo(system);
    reply.type(FHIR_JSON);
    return {
      resourceType: 'Parameters',
      parameter: [
        { name: 'name', valueString: info.name },
        ...(info.version ? [{ name: 'version', valueString: info.version }] : []),
        { name: 'display', valueString: found.display },
      ],
    };
  };
  const url = '/fhir/:version/CodeSystem/$lookup';
  const version = (req: FastifyRequest<{ Params: { version: string } }>) => {
    if (!(VERSIONS as readonly string[]).includes(req.params.version)) throw notFound(`Unknown API version "${req.params.version}": this server serves /fhir/v1 and /fhir/v2`);
  };
  app.get<{ Params: { version: string } }>(url, async (req, reply) => {
    version(req);
    const q = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return lookup(reply, q.get('system'), q.get('code'));
  });
  app.post<{ Params: { version: string } }>(url, async (req, reply) => {
    version(req);
    if (!/json/i.test(String(req.headers['content-type'] ?? ''))) {
      throw new FhirError(415, 'not-supported', 'POST $lookup takes a Parameters resource (application/fhir+json)');
    }
    const { system, code } = fromParameters(req.body);
    return lookup(reply, system, code);
  });
}
