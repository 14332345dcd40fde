import { Redis } from 'ioredis';

/** The Redis the shared rate-limit tests use: the one this kind of machine runs, and CI too. */
export const REDIS_TEST_URL = 'redis://127.0.0.1:6379';

/**
 * Why the tests that need Redis cannot run here (none answers PING at REDIS_TEST_URL), as their
 * skip message; undefined when they can. Asked through ioredis, as the server asks, with time to
 * connect on a loaded machine. With REDIS_TESTS=required (.ci/run, once a Redis answers there) a
 * missing Redis is an error instead: a test CI can run must not be skipped in CI.
 */
export async function redisMissing(): Promise<string | undefined> {
  const redis = new Redis(REDIS_TEST_URL, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let cause: Error | undefined; // the socket's error; connect() rejects with "Connection is closed"
  redis.on('error', (err: Error) => (cause = err));
  let why: string | undefined;
  try {
    await redis.connect();
    const pong = await redis.ping();
    if (pong !== 'PONG') why = `it answered ${pong}`;
  } catch (err) {
    why = (cause ?? (err as Error)).message;
  } finally {
    redis.disconnect();
  }
  if (why === undefined) return undefined;
  const reason = `no Redis answering on ${REDIS_TEST_URL} (${why}): the shared rate limit is not tested`;
  if (process.env.REDIS_TESTS === 'required') throw new Error(`REDIS_TESTS=required, but ${reason}`);
  return reason;
}
