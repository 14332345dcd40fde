/**
 * An import run without a terminal (cron, a script, output to a file) says where it is in plain
 * lines, one at least every PROGRESS_INTERVAL_MS (at most 10 s), then its summary.
 */
import path from 'node:path';
import t from 'tap';
import { PROGRESS_INTERVAL_MS } from '../src/cli/import-progress.ts';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { testDatabase } from './helpers/db.ts';
import { importCli } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';

t.ok(PROGRESS_INTERVAL_MS <= 10_000, 'silent at most 10 s');

t.test('output to a pipe: a progress line at least every interval, phase, lines read, resources written, rate', async (t) => {
  const db = await testDatabase(t);
  const dir = path.join(tmpDir(t, 'import-progress'), 'day-0');
  await generateOpenData({ scale: 0.002, seed: 5, day: 0, outDir: dir, badShare: 0 });
  const interval = 250;
  process.env.IMPORT_PROGRESS_MS = String(interval);
  t.teardown(() => delete process.env.IMPORT_PROGRESS_MS);
  const r = await importCli(db, [dir]);
  t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
  const progress = r.stderr.split('\n').filter((l) => l.startsWith('import '));
  t.ok(progress.length >= 3, `progress lines (${progress.length})`);
  const pattern = /^import (\d+\.\d) s: (reading|comparing|writing|finishing), [\d,]+ lines read, [\d,]+( of [\d,]+)? resources written, [\d,]+ (lines|resources)\/s$/;
  for (const l of progress) t.match(l, pattern);
  const times = progress.map((l) => Number(pattern.exec(l)?.[1]));
  // A timer's line is late by what holds the event loop: without worker threads, mapping and encoding
  // a chunk (about a second here, several on a loaded machine). So the timer's pace is read off the
  // median gap, and the longest gap is held to the promise users get, PROGRESS_INTERVAL_MS.
  const gaps = times.map((s, i) => s - (i === 0 ? 0 : times[i - 1]));
  const said = gaps.map((g) => g.toFixed(1)).join(' ');
  const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
  t.ok(median <= interval / 1000 + 1, `a line every interval (${said})`);
  t.ok(Math.max(...gaps) <= PROGRESS_INTERVAL_MS / 1000, `never silent longer than ${PROGRESS_INTERVAL_MS / 1000} s (${said})`);
  t.ok(progress.some((l) => / writing, /.test(l) || / finishing, /.test(l)), 'the write phase is said');
  const read = /^([\d,]+) lines read/m.exec(r.stdout)![1];
  t.match(progress.at(-1)!, `, ${read} lines read, `, 'the lines read reach the summary\'s count');
  t.match(r.stdout, /^persons: /m, 'then the summary');
});
