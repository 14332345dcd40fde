import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Request ids (Fastify's `genReqId`, logged under `requestId` on every line of a request, and sent
 * back in this header): a client's complaint that quotes it is found in the logs. An incoming id is
 * kept only when it cannot forge anything in a log line; otherwise the request gets a new UUID.
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** 1 to 128 letters, digits and `- _ . : / + = @`: the ids proxies and tracing systems send (UUIDs, base64, `Root=1-…`). */
const VALID_ID = /^[\w.:/+=@-]{1,128}$/;

export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && VALID_ID.test(given) ? given : randomUUID();
}
