import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { registry, VERSION_TYPES, RESOURCE_TYPES, type Version } from '../registry/index.ts';

/**
 * docs/search-parameters.md, generated from the registry (`npm run docs`); a test fails when the
 * committed file and the registry disagree.
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'search-parameters.md');
  writeFileSync(file, parameterDocs());
  console.log(`wrote ${file}`);
}
