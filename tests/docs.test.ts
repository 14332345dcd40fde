import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARS } from '../src/config.ts';
import { ROOT } from './helpers/app.ts';

/** .env.example and docs/configuration.md are made from the settings; the README links them. */
t.test('every configuration variable is in .env.example and docs/configuration.md, both generated and up to date', async (t) => {
  const { configurationDocs, envExample } = await import('../src/cli/docs.ts');
  const env = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
  const docs = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  t.equal(env, envExample(), '.env.example: run npm run docs');
  t.equal(docs, configurationDocs(), 'docs/configuration.md: run npm run docs');
  for (const name of Object.keys(ENV_VARS)) {
    t.match(env, new RegExp(`^# ${name}=`, 'm'), `.env.example: ${name}`);
    t.match(docs, new RegExp(`\\| \`${name}\` \\|`), `docs/configuration.md: ${name}`);
  }
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  t.match(readme, /npm start/);
  t.match(readme, /npm test/);
  t.match(readme, /docs\/configuration\.md/, 'the README links the configuration');
});

t.test('docs/search-parameters.md is generated from the registry and up to date', async (t) => {
  const { parameterDocs } = await import('../src/cli/docs.ts');
  t.equal(readFileSync(path.join(ROOT, 'docs', 'search-parameters.md'), 'utf8'), parameterDocs(), 'run npm run docs');
});

t.test('npm run load gives node the flags the loader is measured with (src/node-flags.ts)', async (t) => {
  const { LOADER_NODE_FLAGS } = await import('../src/node-flags.ts');
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const load = pkg.scripts.load.split(/\s+/);
  for (const flag of LOADER_NODE_FLAGS) t.ok(load.includes(flag), `npm run load: ${flag}`);
  t.match(pkg.scripts.load, /^node .* dist\/load\.js$/, "runs the CLI's build");
  t.match(pkg.scripts.preload, /^npm run -s build:commands$/, 'and builds it first');
  t.match(pkg.scripts['build:commands'], /src\/cli\/load\.ts/, 'from src/cli/load.ts');
  const child = readFileSync(path.join(ROOT, 'bench', 'load-child.ts'), 'utf8');
  t.match(child, /spawn\(process\.execPath, \[\.\.\.LOADER_NODE_FLAGS,/, "and the benchmark's load processes get them too");
});

t.test('npm start gives node the flags the server is measured with (src/node-flags.ts)', async (t) => {
  const { SERVER_NODE_FLAGS } = await import('../src/node-flags.ts');
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const start = pkg.scripts.start.split(/\s+/);
  for (const flag of SERVER_NODE_FLAGS) t.ok(start.includes(flag), `npm start: ${flag}`);
  t.match(pkg.scripts.start, / dist\/server\.js$/, 'npm start runs the build');
  t.match(pkg.scripts.prestart, /^npm run build$/, 'and builds it first');
  t.match(pkg.scripts.build, /^npm run -s build:commands -- src\/server\.ts$/, 'with the commands');
  t.match(pkg.scripts['build:commands'], /^esbuild .*src\/load\/parse-worker\.ts .*--bundle .*--outdir=dist\b/, 'from the sources');
});
