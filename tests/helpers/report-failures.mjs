// Run by tap after every run (package.json "tap.after"): the failed assertions of each test file,
// listed again at the end of the output, where a log that keeps only its tail still shows them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = '.tap/test-results';
/** When the tap run that started this script began (ms), so that results of earlier runs are left out; 0 where /proc cannot tell. */
function runStart() {
  try {
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))[1]);
    const fields = readFileSync(`/proc/${process.ppid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (btime + Number(fields[19]) / 100) * 1000 - 2000;
  } catch {
    return 0;
  }
}
const since = runStart();
const files = [];
const walk = (dir) => {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.tap') && statSync(path).mtimeMs >= since) files.push(path);
  }
};
walk(root);

const failed = [];
for (const file of files) {
  const lines = readFileSync(file, 'utf8').split('\n');
  // Each failure with the subtests it is in (by indentation) and the first lines of its diagnostics.
  const open = [];
  for (let i = 0; i < lines.length; i++) {
    const sub = /^(\s*)# Subtest: (.*)$/.exec(lines[i]);
    if (sub) {
      const depth = sub[1].length / 4;
      open.length = depth;
      open[depth] = sub[2];
      continue;
    }
    // A subtest's own line (it carries its time) repeats the failures inside it: only assertions are listed.
    const bad = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!bad || / # time=[\d.]+m?s$/.test(bad[2])) continue;
    const depth = bad[1].length / 4;
    // The diagnostics without the location blocks (stack, source): what was found, wanted, thrown.
    const detail = [];
    let line = '';
    let skipping = false;
    for (let j = i + 2; lines[i + 1]?.trim() === '---' && j < lines.length && lines[j].trim() !== '...' && detail.length < 10; j++) {
      const own = lines[j].slice(bad[1].length + 2);
      if (/^\S/.test(own)) skipping = /^(at|stack|source|fileName|columnNumber|typeName|isToplevel|lineNumber):/.test(own);
      if (own.trim().startsWith('lineNumber:') && !line) line = `:${own.split(':')[1].trim()}`;
      if (!skipping) detail.push(own);
    }
    failed.push(`${relative('.', file).replace(/^\.tap\/test-results\//, '').replace(/\.tap$/, '')}${line}: ${[...open.slice(0, depth), bad[2]].join(' > ')}${detail.length ? `\n      ${detail.join('\n      ')}` : ''}`);
  }
}
if (failed.length) console.log(`\n# ${failed.length} failed:\n${failed.map((f) => `#   ${f.replace(/\n/g, '\n#')}`).join('\n')}\n`);
