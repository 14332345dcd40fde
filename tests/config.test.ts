import t from 'tap';
import { ConfigError, listenHost, loadConfig } from '../src/config.ts';
import { sharedBuffersMb } from '../src/embedded.ts';
import { checkDotEnv } from '../src/env-file.ts';

t.test('defaults', async (t) => {
  const c = loadConfig({});
  t.match(c, { port: 8080, dataDir: '.data', logLevel: 'info', defaultCount: 50, maxCount: 1000, includeCap: 1000, totalBudgetMs: 20, rateLimit: 0, maxConcurrentPerKey: 8 });
  t.equal(c.databaseUrl, undefined);
  t.equal(c.publicBaseUrl, undefined);
});

t.test('the listen address: the loopback in development, every interface in production, HOST when set', async (t) => {
  t.equal(listenHost(loadConfig({})), 'localhost', 'embedded PostgreSQL, no HOST: the loopback');
  t.equal(listenHost(loadConfig({ DATABASE_URL: 'postgres://db/annuaire' })), '0.0.0.0', 'DATABASE_URL, no HOST: every interface');
  t.equal(listenHost(loadConfig({ HOST: '0.0.0.0' })), '0.0.0.0', 'HOST=0.0.0.0 in development');
  t.equal(listenHost(loadConfig({ HOST: '10.1.2.3', DATABASE_URL: 'postgres://db/annuaire' })), '10.1.2.3');
});

t.test('values are converted and validated, with a message naming the variable', async (t) => {
  t.equal(loadConfig({ PORT: '9000' }).port, 9000);
  t.equal(loadConfig({ PUBLIC_BASE_URL: 'https://annuaire.example.fr/api/' }).publicBaseUrl, 'https://annuaire.example.fr/api');
  t.same(loadConfig({ API_KEYS: 'abcdefgh1, ijklmnop2 ,' }).apiKeys, ['abcdefgh1', 'ijklmnop2']);
  const bad: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /invalid PORT="70000"/],
    [{ LOG_LEVEL: 'loud' }, /invalid LOG_LEVEL="loud"/],
    [{ DATABASE_URL: 'mysql://x' }, /invalid DATABASE_URL/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /invalid PUBLIC_BASE_URL/],
    [{ METADATA_REQUIRES_KEY: 'maybe' }, /METADATA_REQUIRES_KEY must be true or false/],
    [{ DEFAULT_COUNT: '2000' }, /DEFAULT_COUNT \(2000\) must not exceed MAX_COUNT/],
    [{ CURSOR_SECRET: 'short' }, /invalid CURSOR_SECRET/],
  ];
  for (const [env, re] of bad) t.throws(() => loadConfig(env), re, JSON.stringify(env));
  try {
    loadConfig({ PORT: 'x' });
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof ConfigError, 'a ConfigError');
  }
});

t.test('EMBEDDED_SHARED_BUFFERS: a share of the memory or a size; by default a quarter, between 128 MB and 1 GB', async (t) => {
  const GiB = 2 ** 30;
  t.equal(loadConfig({}).embeddedSharedBuffers, undefined);
  for (const v of ['40%', '80%', '1%', '512MB', '8GB', '1TB']) t.equal(loadConfig({ EMBEDDED_SHARED_BUFFERS: v }).embeddedSharedBuffers, v);
  for (const v of ['0%', '81%', '40', '8gb', '8 GB', '1.5GB', '-1GB', 'lots']) {
    t.throws(() => loadConfig({ EMBEDDED_SHARED_BUFFERS: v }), new RegExp(`invalid EMBEDDED_SHARED_BUFFERS="${v}"`), v);
  }
  t.equal(sharedBuffersMb(undefined, 128 * GiB), 1024, 'a 128 GiB machine: 1 GB, not 40 %');
  t.equal(sharedBuffersMb(undefined, 2 * GiB), 512, 'a 2 GiB machine: a quarter');
  t.equal(sharedBuffersMb(undefined, 0.25 * GiB), 128, 'never under 128 MB');
  t.equal(sharedBuffersMb('40%', 24 * GiB), 9830, '40 % of 24 GiB');
  t.equal(sharedBuffersMb('8GB', 24 * GiB), 8192);
  t.equal(sharedBuffersMb('512MB', 24 * GiB), 512);
});

t.test('.env: every line is NAME=value, a comment or blank; a quoted value may span lines', async (t) => {
  t.doesNotThrow(() => checkDotEnv('# settings\n\nPORT=9000\nexport HOST = 127.0.0.1\nKEY="a\nmulti-line value"\nEMPTY=\r\nLAST=1', '.env'));
  t.throws(() => checkDotEnv('PORT=9000\nLOG_LEVEL warn\n', '.env'), /^\.env line 2 \("LOG_LEVEL …"\): expected NAME=value/);
  t.throws(() => checkDotEnv('A=1\nB="never closed\nC=3\n', '.env'), /^\.env line 2 \(B\): the " that opens its value is never closed/);
  try {
    checkDotEnv('SYNC_API_KEY:afk_secret\n', '.env');
    t.fail('should throw');
  } catch (err) {
    t.notMatch((err as Error).message, /afk_secret/, 'a malformed line is not echoed past its first word');
  }
});
