import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { accepted, ENV_VARS } from '../config.ts';
import { registry, VERSION_TYPES, RESOURCE_TYPES, type Version } from '../registry/index.ts';

/**
 * The documents generated from the code's own lists (`npm run docs`): docs/search-parameters.md
 * from the registry, docs/configuration.md and .env.example from the settings (src/config.ts
 * ENV_VARS). tests/docs.test.ts fails when a committed one is stale.
 */
export function parameterDocs(): string {
  const out = ['# Search parameters', '', 'Generated from `src/registry/params.ts` by `npm run docs`; do not edit by hand.', ''];
  for (const version of ['v2', 'v1'] as Version[]) {
    for (const type of VERSION_TYPES[version]) {
      out.push(`## ${version} ${type}`, '', '| name | type | indexes | meaning |', '|---|---|---|---|');
      for (const [name, { param, prefix }] of [...registry.names(version, type)].sort(([a], [b]) => a.localeCompare(b))) {
        const paths = param.column ? `resource ${param.column}` : param.paths.map((p) => p.map((s) => (typeof s === 'string' ? s : 'ext' in s ? `extension(${s.ext.split('/').pop()})` : `where(…=${s.is})`)).join('.')).join(' \\| ');
        const meaning = prefix ? `alias of ${param.code}=${prefix}…` : name !== param.code ? `alias of ${param.code}: ${param.description}` : param.description;
        out.push(`| \`${name}\` | ${param.type} | \`${paths}\` | ${meaning.replace(/\|/g, '\\|')} |`);
      }
      out.push('');
    }
  }
  out.push('## Stored only to be included', '');
  for (const type of RESOURCE_TYPES.filter((t) => !VERSION_TYPES.v2.includes(t))) {
    for (const p of registry.forType(type)) out.push(`- \`${type}:${p.code}\` (${p.description})`);
  }
  out.push('');
  return out.join('\n');
}

const settings = () => Object.entries(ENV_VARS) as [string, { default: string | undefined; doc: string; schema: Parameters<typeof accepted>[0] }][];

export function configurationDocs(): string {
  const out = [
    '# Configuration',
    '',
    'Generated from `src/config.ts` (ENV_VARS) by `npm run docs`; do not edit by hand.',
    '',
    'Every setting is an environment variable, read by `npm start` and the commands (`npm run load`, `import`,',
    '`keys`, `sync`), validated at start-up: a bad value stops the process with a message naming it. The',
    'commands also read a `.env` file in the folder they run in (a variable of the environment wins over it);',
    '[.env.example](../.env.example) lists every variable with its default. Unset (or empty) means the default.',
    '',
    '| variable | default | accepts | meaning |',
    '|---|---|---|---|',
  ];
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  for (const [name, s] of settings()) out.push(`| \`${name}\` | ${s.default === undefined || s.default === '' ? '—' : `\`${s.default}\``} | ${cell(accepted(s.schema))} | ${cell(s.doc)} |`);
  out.push('');
  return out.join('\n');
}

export function envExample(): string {
  const out = [
    '# Every setting of the server and its commands, with its default; unset = default.',
    '# Copy this file to .env: npm start and the commands (load, import, keys, sync) read .env from the',
    '# folder they run in (a variable set in the environment wins over it; tests never read it). Or export',
    '# them. Generated from src/config.ts by `npm run docs` (docs/configuration.md says more).',
  ];
  for (const [name, s] of settings()) out.push('', `# ${s.doc}`, `# ${name}=${s.default ?? ''}`);
  out.push('');
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const files: [string, string][] = [
    [path.join(root, 'docs', 'search-parameters.md'), parameterDocs()],
    [path.join(root, 'docs', 'configuration.md'), configurationDocs()],
    [path.join(root, '.env.example'), envExample()],
  ];
  for (const [file, text] of files) {
    writeFileSync(file, text);
    console.log(`wrote ${file}`);
  }
}
