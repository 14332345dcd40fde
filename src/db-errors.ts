/**
 * What a failed database call means to a client. 'transient': the database cannot be reached or
 * is restarting, failing over or refusing connections; the same request will work again once it is
 * back (503, Retry-After). 'timeout': the statement ran past STATEMENT_TIMEOUT_MS (503, Retry-After).
 * Anything else is a bug (500).
 */
export type DbFailure = 'transient' | 'timeout';

/** Seconds a client is told to wait before trying again (Retry-After) after a 503. */
export const RETRY_AFTER_SECONDS = 1;

/** Socket errors of a connection that could not be made or was lost. */
const NETWORK = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN',
  'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_SOCKET_CLOSED', 'ERR_STREAM_DESTROYED',
]);

/** postgres.js's own connection errors. */
const DRIVER = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);

/**
 * SQLSTATEs of a server that is going away, coming back or full: class 08 (connection exception)
 * and class 53 (insufficient resources, 53300 too many connections among them) are matched by
 * their class; these are the others.
 */
const SERVER = new Set([
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the database system is starting up / shutting down
  '57P05', // idle_session_timeout
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

const QUERY_CANCELED = '57014';

export function classifyDbError(err: unknown): DbFailure | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, errors } = err as { code?: unknown; errors?: unknown };
  // Node reports every address it tried (autoSelectFamily) in an AggregateError.
  if (code === undefined && Array.isArray(errors) && errors.length > 0) return classifyDbError(errors[0]);
  if (typeof code !== 'string') return undefined;
  if (code === QUERY_CANCELED) return 'timeout';
  if (NETWORK.has(code) || DRIVER.has(code) || SERVER.has(code)) return 'transient';
  if (/^(08|53)[0-9A-Z]{3}$/.test(code)) return 'transient';
  return undefined;
}
