import t from 'tap';
import { searchBundle } from '../src/fhir/bundle.ts';
import { noEntries, type Entries } from '../src/fhir/entries.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import { registry } from '../src/registry/index.ts';

/** The Bundle around rendered entries: small bodies as one buffer, large ones as a stream of parts. */
const req = (q: string) =>
  parseSearch([...new URLSearchParams(q)], {
    version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 50,
  });
const entries = (n: number, mode: string, pad = 0): Entries => {
  const list = Array.from({ length: n }, (_, i) => `{"fullUrl":"http://x/fhir/v2/Practitioner/p${i}","resource":{"resourceType":"Practitioner","id":"p${i}","text":"${'é'.repeat(pad)}"},"search":{"mode":"${mode}"}}`);
  return { json: Buffer.from(list.join(','), 'utf8'), count: n, rows: n, rids: [], ids: [] };
};
const none = noEntries;

async function text(body: ReturnType<typeof searchBundle>): Promise<{ text: string; streamed: boolean; length: number }> {
  if (Buffer.isBuffer(body)) return { text: body.toString('utf8'), streamed: false, length: body.length };
  const chunks: Buffer[] = [];
  for await (const c of body.stream) chunks.push(c as Buffer);
  return { text: Buffer.concat(chunks).toString('utf8'), streamed: true, length: body.length };
}

t.test('entries, includes and warnings in order; the declared length is the bytes sent', async (t) => {
  for (const [pad, streamed] of [[0, false], [400, true]] as const) {
    const out = await text(searchBundle({ base: 'http://x/fhir/v2', req: req('name=a'), matches: entries(300, 'match', pad), includes: entries(2, 'include'), warnings: ['w'], total: 302 }));
    t.equal(out.streamed, streamed, `streamed: ${streamed}`);
    t.equal(Buffer.byteLength(out.text, 'utf8'), out.length, 'length');
    const b = JSON.parse(out.text);
    t.equal(b.total, 302);
    t.same(b.entry.map((e: { search: { mode: string } }) => e.search.mode), [...Array(300).fill('match'), 'include', 'include', 'outcome']);
  }
  const empty = await text(searchBundle({ base: 'http://x/fhir/v2', req: req('name=a'), matches: none, includes: none, warnings: [] }));
  t.notOk('entry' in JSON.parse(empty.text), 'no entry array without entries');
  const inclOnly = JSON.parse((await text(searchBundle({ base: 'http://x/fhir/v2', req: req('name=a'), matches: none, includes: entries(1, 'include'), warnings: [] }))).text);
  t.equal(inclOnly.entry.length, 1);
  const pretty = await text(searchBundle({ base: 'http://x/fhir/v2', req: req('name=a&_pretty=true'), matches: entries(300, 'match', 400), includes: none, warnings: [] }));
  t.match(pretty.text, /\n {2}"resourceType": "Bundle"/, '_pretty is indented whatever the size');
});
