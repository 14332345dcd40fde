import type { LoggerOptions } from 'pino';

/**
 * What the logger must never print: the API key header (and Authorization, should a proxy add one)
 * wherever a request's headers are logged. Fastify's own request serializer logs no headers at all;
 * this is the second line of defence for code that logs `req` or `headers` explicitly. Shared by
 * server.ts and tests/auth.test.ts, which checks that no key reaches the log output.
 */
export const LOG_REDACT: NonNullable<LoggerOptions['redact']> = {
  paths: [
    'req.headers["service-api-key"]',
    'req.headers.authorization',
    'request.headers["service-api-key"]',
    'request.headers.authorization',
    'headers["service-api-key"]',
    'headers.authorization',
  ],
  censor: '[redacted]',
};
