import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { shippedCodeRows, shippedTerminology } from '../src/terminology.ts';
import { codesOf, displayOf, EXTRA_CODE_SYSTEMS } from '../src/vocabulary/codes.ts';
import { CODE_SYSTEMS, type SystemKey } from '../src/vocabulary/systems.ts';

/** Text that stands in for a label nobody looked up: such a label would ship as a display. */
const PLACEHOLDER = /not (fetched|verified)|display not|placeholder|\b(todo|fixme|tbd|xxx)\b|lorem|example|unknown|verify|^\s*[([]|\?/i;

const rows = shippedCodeRows();

t.test('no shipped label is a placeholder', async (t) => {
  const labels = [
    ...rows.map((r) => ({ where: `${r.system_key}|${r.code}`, label: r.display })),
    ...shippedTerminology().labels.map((l) => ({ where: `${l.system}|${l.code}`, label: l.label })),
    ...Object.entries(EXTRA_CODE_SYSTEMS).flatMap(([key, codes]) => codes.map(([code, label]) => ({ where: `${key}|${code}`, label }))),
  ];
  t.ok(labels.length > 400, `${labels.length} labels read`);
  t.same(labels.filter((l) => PLACEHOLDER.test(l.label)).map((l) => `${l.where}: ${l.label}`), []);
  const unchecked = /not (fetched|verified)|general knowledge|verify/i;
  t.same(rows.filter((r) => unchecked.test(r.source)).map((r) => `${r.system_key}|${r.code}: ${r.source}`), [], 'no row says its label was not checked');
});

t.test('the pattern catches the placeholders it is meant for', async (t) => {
  for (const text of ['(used in real-API-derived example; display not fetched)', '(BAL cabinet - display not verified)', 'TODO', '???']) t.match(text, PLACEHOLDER);
  for (const text of ['DE Masseur-Kinésithérapeute', 'Orthopédie dento-faciale (SCD)', "Centre Hospitalier Régional (C.H.R.)"]) t.notMatch(text, PLACEHOLDER);
});

t.test('the generator reads the rows the server ships', async (t) => {
  for (const key of new Set(rows.map((r) => r.system_key))) {
    const shipped = rows.filter((r) => r.system_key === key);
    t.equal(CODE_SYSTEMS[key as SystemKey], shipped[0].system_url, `${key} URL`);
    t.same(codesOf(key as SystemKey), shipped.map((r) => r.code), `${key} codes in order`);
    t.same(shipped.map((r) => displayOf(key as SystemKey, r.code)), shipped.map((r) => r.display), `${key} labels`);
  }
});

t.test('a code listed without a label is shipped without one', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vocabulary-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const url = 'https://example.org/CodeSystem/cs';
  await writeFile(path.join(dir, 'codes.csv'), `system_key,system_url,code,display,source\ncs,${url},A,Label A,test\ncs,${url},B,,test\n`);
  const shipped = shippedTerminology(dir);
  t.same(shipped.labels, [{ system: url, code: 'A', label: 'Label A' }]);
  t.same(shipped.systems.get(url), { name: 'cs' }, 'the system is still known');
});
