import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Exporter } from '../export/exporter.ts';
import { isJobId } from '../export/exporter.ts';
import type { Job } from '../export/jobs.ts';
import { checkPrefer, parametersPairs, parseExportParams } from '../export/request.ts';
import { queryPairs } from '../fhir/form-encoding.ts';
import { FhirError, notFound, outcome } from '../fhir/outcome.ts';
import { FHIR_JSON, rootUrl } from './fhir.ts';
import { requestKey } from './security.ts';

/**
 * FHIR Bulk Data Access, system level, on v2: the kick-off `[base]/$export` (GET, or POST with a
 * Parameters body), the status URL (GET polls, DELETE cancels) and the files. Every job is the
 * key's own: another key gets 404 for it, as for a job that does not exist.
 */
export interface ExportRoutesDeps {
  config: Pick<Config, 'publicBaseUrl'>;
  exporter: Exporter;
}

const BASE = '/fhir/v2';
export const KICK_OFF = `${BASE}/$export`;
export const STATUS = `${BASE}/$export-status`;
export const FILES = `${BASE}/$export-file`;
/** Seconds a client waits between polls of a job not yet done. */
const POLL_SECONDS = 2;

const keyName = (req: FastifyRequest) => {
  const key = requestKey(req);
  if (!key) throw new FhirError(401, 'login', 'An API key is required');
  return key.name;
};

/** A client that accepts gzip (and did not refuse it with q=0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  return String(header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding.trim() !== 'gzip' && coding.trim() !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export function manifest(job: Job, root: string) {
  return {
    transactionTime: job.transactionTime!.toISOString(),
    request: job.request,
    requiresAccessToken: true,
    output: job.output.map((f) => ({ type: f.type, url: `${root}${FILES}/${job.id}/${f.file}`, count: f.count })),
    error: [],
  };
}

export async function exportRoutes(app: FastifyInstance, deps: ExportRoutesDeps): Promise<void> {
  const { exporter } = deps;

  const kickOff = async (req: FastifyRequest, reply: FastifyReply, body: [string, string][] | undefined) => {
    const { lenient } = checkPrefer(req.headers.prefer as string | undefined);
    const query = queryPairs(req.url);
    const pairs = body ? [...query, ...body] : query;
    const parsed = parseExportParams(pairs, lenient);
    const root = rootUrl(deps, req);
    const qs = new URLSearchParams(pairs).toString();
    const id = await exporter.submit(keyName(req), `${root}${KICK_OFF}${qs ? `?${qs}` : ''}`, parsed);
    reply.code(202).header('content-location', `${root}${STATUS}/${id}`).type(FHIR_JSON);
    return outcome('information', 'informational', `Export ${id} accepted: poll ${root}${STATUS}/${id}`);
  };
  app.get(KICK_OFF, (req, reply) => kickOff(req, reply, undefined));
  app.post(KICK_OFF, (req, reply) => {
    const type = String(req.headers['content-type'] ?? '').toLowerCase();
    if (req.body === undefined || req.body === null || req.body === '') return kickOff(req, reply, []);
    if (Array.isArray(req.body)) return kickOff(req, reply, req.body as [string, string][]);
    if (!type.includes('json')) throw new FhirError(415, 'not-supported', `Content-Type ${type}: a $export body is a Parameters resource (application/fhir+json)`);
    return kickOff(req, reply, parametersPairs(req.body));
  });

  /** The key's job, or 404 (an unknown id and another key's job look alike). */
  const jobOf = async (req: FastifyRequest<{ Params: { id: string } }>): Promise<Job> => {
    const id = req.params.id;
    const job = isJobId(id) ? await exporter.store.get(id, keyName(req)) : undefined;
    if (!job) throw notFound(`No export job ${id} for this API key (it may have expired)`);
    return job;
  };

  app.get<{ Params: { id: string } }>(`${STATUS}/:id`, async (req, reply) => {
    const job = await jobOf(req);
    if (job.status === 'queued' || job.status === 'running') {
      reply.code(202).header('x-progress', job.status === 'queued' ? 'queued' : (job.progress ?? 'running')).header('retry-after', String(POLL_SECONDS));
      return reply.type(FHIR_JSON).send('');
    }
    if (job.expiresAt) reply.header('expires', job.expiresAt.toUTCString());
    if (job.status === 'failed') {
      return reply.code(500).type(FHIR_JSON).send(outcome('error', 'exception', job.error ?? 'the export failed'));
    }
    return reply.code(200).type('application/json; charset=utf-8').send(manifest(job, rootUrl(deps, req)));
  });

  app.delete<{ Params: { id: string } }>(`${STATUS}/:id`, async (req, reply) => {
    if (!isJobId(req.params.id) || !(await exporter.cancel(req.params.id, keyName(req)))) {
      throw notFound(`No export job ${req.params.id} for this API key (it may have expired)`);
    }
    reply.code(202).type(FHIR_JSON);
    return outcome('information', 'informational', `Export ${req.params.id} cancelled and its files deleted`);
  });

  app.get<{ Params: { id: string; file: string } }>(`${FILES}/:id/:file`, async (req, reply) => {
    const job = await jobOf(req);
    const file = job.status === 'done' ? job.output.find((f) => f.file === req.params.file) : undefined;
    if (!file) throw notFound(`No file ${req.params.file} in export ${job.id}`);
    const stream = createReadStream(exporter.fileOf(job.id, file.file));
    reply.type('application/fhir+ndjson').header('vary', 'accept-encoding');
    if (!acceptsGzip(req.headers['accept-encoding'])) return reply.header('content-length', file.bytes).send(stream);
    // Compressed as it is sent: a fast level, the files stay plain for the loader and for Range-less clients.
    const gzip = createGzip({ level: 1 });
    pipeline(stream, gzip, () => {});
    return reply.header('content-encoding', 'gzip').send(gzip);
  });
}
