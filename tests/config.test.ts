import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.ts';

t.test('defaults', async (t) => {
  const c = loadConfig({});
  t.match(c, { port: 8080, host: '0.0.0.0', dataDir: '.data', logLevel: 'info', defaultCount: 50, maxCount: 1000, includeCap: 1000, totalBudgetMs: 20, rateLimit: 0, maxConcurrentPerKey: 8 });
  t.equal(c.databaseUrl, undefined);
  t.equal(c.publicBaseUrl, undefined);
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
