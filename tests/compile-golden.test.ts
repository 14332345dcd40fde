import t, { type Test } from 'tap';
import { countedQuery, countQuery, includeQuery, measuredPageQuery, pageQuery, RANK_PHASES, rankPhase, withMeasure } from '../src/fhir/compile.ts';
import { renderStatement, subsetting } from '../src/fhir/entries.ts';
import { parseSearch, type ParseContext } from '../src/fhir/parse.ts';
import type { PlanHints, SearchRequest } from '../src/fhir/search-request.ts';
import { hasPhase2, sortedPageQuery, type SortCursor } from '../src/fhir/sort.ts';
import type { Statement } from '../src/fhir/statement.ts';
import { registry, type ResourceType, type Version } from '../src/registry/index.ts';
import { layout } from './helpers/sql-layout.ts';

/**
 * The SQL the compiler writes, checked in (tap-snapshots/tests/compile-golden.test.ts.test.cjs):
 * real query strings through the real parser and registry, plan hints made by hand, every statement
 * laid out with its parameters. A change to the SQL is a diff of that file, reviewed with the code;
 * `npx tap --snapshot tests/compile-golden.test.ts` writes it again. No database: it runs first.
 */

const BASES = ['http://fhir.test/fhir/v1', 'http://fhir.test/fhir/v2'];
const ctx = (version: Version, type: ResourceType): ParseContext => ({
  version, type, registry, strict: true, bases: BASES,
  now: Date.UTC(2025, 0, 15), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 10, maxParams: 20,
});

/** `Type?query` (v2) or `v1/Type?query`, parsed as the route parses it. */
function parse(search: string): SearchRequest {
  const [, v1, type, query] = /^(v1\/)?(\w+)\?(.*)$/s.exec(search)!;
  return parseSearch([...new URLSearchParams(query)], ctx(v1 ? 'v1' : 'v2', type as ResourceType));
}

/** Token systems interned with fixed ids; any other system is unknown to the database. */
const SYSTEMS: Record<string, number> = {
  'https://rpps.esante.gouv.fr': 3,
  'https://finess.esante.gouv.fr': 4,
  'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307': 7,
};
const hints = (over: Partial<PlanHints> = {}): PlanHints => ({ systemId: (uri) => SYSTEMS[uri], ...over });
const pid = (type: ResourceType, code: string) => registry.byCode(type, code)!.id;

/** A first page of 20 (`_count` aside): its statement asks for one row more. */
const page = (req: SearchRequest, h = hints(), after?: string) => pageQuery(h, req, after, req.count + 1);

/** One snapshot per statement, named by the search and what else it was compiled with. */
function golden(t: Test, name: string, s: Statement | undefined): void {
  t.matchSnapshot(s === undefined ? '(no statement)' : layout(s), name);
}

/** The default form of each search: its first page. */
function pages(t: Test, searches: string[], h = hints()): void {
  for (const s of searches) golden(t, s, page(parse(s), h));
}

t.test('token', async (t) => {
  pages(t, [
    'Practitioner?identifier=810000000001',
    'Practitioner?identifier=https://rpps.esante.gouv.fr|810000000001',
    'Practitioner?identifier=https://unknown.example|810000000001',
    'Practitioner?identifier=|810000000001',
    'Practitioner?identifier=https://rpps.esante.gouv.fr|',
    'Practitioner?identifier=810000000001,810000000002,https://rpps.esante.gouv.fr|3,|4',
    'Practitioner?active=true',
    'Practitioner?active:not=true',
    'Practitioner?qualification-code:not=SM26,SM54',
    'Practitioner?qualification-code:text=medecine gen,chirurgien',
    'Practitioner?data-information-system=RPPS',
    'Practitioner?data-information-system:text=rpps',
    'Practitioner?qualification-code:missing=true',
    'Practitioner?family:missing=false',
    'Practitioner?_id=p1,p2',
    'Practitioner?_id:not=p1',
    'Practitioner?identifier=810000000001&active=true&qualification-code=SM26',
  ]);
});

t.test('string', async (t) => {
  const family = pid('Practitioner', 'family');
  const name = pid('Practitioner', 'name');
  pages(t, [
    'Practitioner?family=martin',
    'Practitioner?family=Martin,Dupont',
    'Practitioner?family:exact=Martin',
    'Practitioner?family:contains=art',
    'Practitioner?family:contains=ar',
    'Practitioner?family:contains=100%_sûr',
    'Practitioner?name:family=martin',
    'Practitioner?name=jean&family=martin',
    'Organization?address-postalcode=75',
    // A prefix on family and on given: one range of their pairs (src/fhir/types/pair.ts).
    'Practitioner?family=martin&given=jea',
    'Practitioner?name:family=martin&name:given=jea,mar&active=true',
    'Organization?address-postalcode=75&address-city=paris',
  ]);
  golden(t, 'Practitioner?family:contains=mar (a common needle)', page(parse('Practitioner?family:contains=mar'), hints({ commonNeedles: new Set([`${family}/mar`]) })));
  golden(t, 'Practitioner?family=zyg (a rare prefix)', page(parse('Practitioner?family=zyg'), hints({ rarePrefixes: new Map([[`${family}/zyg`, 20]]) })));
  golden(
    t,
    'Practitioner?family=zyg&name=jean&active=true (a rare prefix drives, the others probed)',
    page(parse('Practitioner?family=zyg&name=jean&active=true'), hints({ rarePrefixes: new Map([[`${family}/zyg`, 20]]) })),
  );
  golden(
    t,
    'Practitioner?family=zyg&name=jean&active=true (a rare prefix drives, a prefix of a smaller range than its probes read once, hashed)',
    page(parse('Practitioner?family=zyg&name=jean&active=true'), hints({ rarePrefixes: new Map([[`${family}/zyg`, 20]]), prefixBounds: new Map([[`${name}/jean`, 300]]) })),
  );
  golden(t, 'Practitioner?family:contains=art&active=true (a rare needle drives, the others probed)', page(parse('Practitioner?family:contains=art&active=true')));
});

t.test('date', async (t) => {
  pages(t, ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap'].map((p) => `Practitioner?_lastUpdated=${p}2024-03-01`));
  pages(t, [
    'Practitioner?_lastUpdated=2024',
    'Practitioner?_lastUpdated=ge2024-03-01T10:00:00%2B01:00',
    'Practitioner?_lastUpdated=ge2024-01-01&_lastUpdated=lt2024-07-01',
    'Practitioner?_lastUpdated=lt2024-01-01,ge2025-01-01',
  ]);
  // No parameter of the registry is a date of a period today: _lastUpdated read as one shows that SQL.
  const req = parse('Practitioner?_lastUpdated=ge2024-03-01,le2024,eq2024-03,ne2024-03-01,gt2024,lt2024,sa2024,eb2024,ap2024');
  const [c] = req.conditions as Extract<SearchRequest['conditions'][number], { kind: 'date' }>[];
  golden(t, 'a date of a period (not an instant), every prefix', page({ ...req, conditions: [{ ...c, param: { ...c.param, instant: false } }] }));
});

t.test('reference', async (t) => {
  pages(t, [
    'PractitionerRole?practitioner=p1',
    'PractitionerRole?practitioner=Practitioner/p1',
    'PractitionerRole?practitioner=http://fhir.test/fhir/v2/Practitioner/p1',
    'PractitionerRole?practitioner=https://elsewhere.example/fhir/Practitioner/p1',
    'PractitionerRole?organization=o1,o2,Organization/o3',
    'Organization?partof=o1',
    'v1/Organization?endpoint=Endpoint/e1,e2',
    'PractitionerRole?practitioner=p1&organization=o1&role=FON-01',
  ]);
});

t.test('chains and _has', async (t) => {
  pages(t, [
    'PractitionerRole?practitioner.family=martin',
    'PractitionerRole?practitioner.identifier=https://rpps.esante.gouv.fr|810000000001',
    'PractitionerRole?organization.partof.name=hopital',
    'PractitionerRole?organization.partof.partof.address-city=paris',
    'PractitionerRole?practitioner:Practitioner.phonetic=fontaine',
    'Practitioner?_has:PractitionerRole:practitioner:role=FON-01',
    'Organization?_has:PractitionerRole:organization:practitioner.family=martin',
    'Practitioner?_has:PractitionerRole:practitioner:organization.name=clinique&family=martin',
  ]);
});

t.test('phonetic', async (t) => {
  const phonetic = pid('Practitioner', 'phonetic');
  const spellings = hints({ spellings: new Map([[`${phonetic}/fontaine`, ['fontaime', 'fortaine']], [`${phonetic}/bihan`, []], [`${phonetic}/lebihan`, ['lebihen']]]) });
  for (const [search, h, note] of [
    ['Practitioner?phonetic=fontaine', spellings, 'its typos looked up'],
    ['Practitioner?phonetic=fontaine', hints(), 'its typos not looked up'],
    ['Practitioner?phonetic=le bihan', spellings, 'two words'],
    ['Practitioner?phonetic=fontaine,dupont&active=true', spellings, 'two values, another condition'],
  ] as const) {
    const req = parse(search);
    for (const phase of RANK_PHASES) golden(t, `${search} (${note}): rank phase ${phase}`, page(rankPhase(req, phase), h));
    golden(t, `${search} (${note}): rank phase 1 after rid 1234`, page(rankPhase(req, 1), h, '1234'));
  }
  golden(t, 'Practitioner?phonetic=fontaine&_sort=family (sorted: every level at once, phase 1)', sortedPageQuery(spellings, parse('Practitioner?phonetic=fontaine&_sort=family'), 1, undefined, 21));
});

t.test('near: nearest first, its circle read band by band', async (t) => {
  const measured = (search: string, cursor?: { measure: string; rid: string }) => {
    const req = parse(search);
    golden(t, `${search}${cursor ? ` after ${cursor.measure} km, rid ${cursor.rid}` : ''}`, measuredPageQuery(hints(), req, cursor, req.count + 1));
  };
  measured('Location?near=48.8534|2.3488|2|km');
  measured('Location?near=48.8534|2.3488&status=active');
  measured('Location?near=48.8534|2.3488|2|km', { measure: '1.0052017739912417', rid: '1234' });
  measured('Location?near=-17.5|179.99|20|km');
  measured('Location?near=89.99|0|5|km');
  measured('Location?near=48.8534|2.3488|2&near=45.75|4.85|200');
  pages(t, [
    'Location?near=48.8534|2.3488|2&_sort=name',
    'PractitionerRole?location.near=48.8534|2.3488|2&role=FON-33',
    'Organization?_has:Location:organization:near=48.8534|2.3488|500|m',
    'Location?near:missing=true',
  ]);
  const byName = parse('Location?near=48.8534|2.3488|2&_sort=name');
  golden(t, 'Location?near=48.8534|2.3488|2&_sort=name: phase 1, each row with its distance', withMeasure(byName, sortedPageQuery(hints({ sortPath: 'sorted' }), byName, 1, undefined, 51)));
  golden(t, 'Location?near=48.8534|2.3488|2|km: countQuery', countQuery(hints(), parse('Location?near=48.8534|2.3488|2|km')));
  golden(t, 'Location?near=48.8534|2.3488|2|km&status=active: countQuery', countQuery(hints(), parse('Location?near=48.8534|2.3488|2|km&status=active')));
  const rows = measuredPageQuery(hints(), parse('Location?near=48.8534|2.3488'), undefined, 21);
  golden(t, 'a measured page rendered as entries', renderStatement(rows, { bases: { base: 'http://fhir.test/fhir/v2' }, mode: 'match', shown: 20, keys: true, extension: true }));
});

t.test('_sort', async (t) => {
  const sorted = (search: string, h: PlanHints, cursor?: SortCursor) => {
    const req = parse(search);
    const path = h.sortPath ? ` (sortPath ${h.sortPath})` : '';
    const at = `${path}${cursor ? ` after phase ${cursor.phase} ${JSON.stringify(cursor.keys)} rid ${cursor.rid}` : ''}`;
    golden(t, `${search}${at}: phase 1`, cursor?.phase === 2 ? undefined : sortedPageQuery(h, req, 1, cursor, req.count + 1));
    golden(t, `${search}${at}: phase 2`, hasPhase2(req) ? sortedPageQuery(h, req, 2, cursor?.phase === 2 ? cursor : undefined, req.count + 1) : undefined);
  };
  sorted('Practitioner?_sort=family', hints());
  sorted('Practitioner?_sort=-family', hints());
  sorted('Practitioner?_sort=family,-given,_lastUpdated', hints());
  sorted('Practitioner?_sort=_id', hints());
  sorted('Practitioner?_sort=-_lastUpdated', hints());
  sorted('Practitioner?_lastUpdated=ge2024-01-01&_sort=_lastUpdated', hints());
  sorted('Practitioner?family=martin&_sort=family', hints());
  for (const sortPath of ['walk', 'hashed', 'sorted'] as const) sorted('Practitioner?active=true&_sort=family,given&_count=10', hints({ sortPath }));
  sorted('Practitioner?_sort=family', hints(), { phase: 1, keys: ['martin'], rid: '1234' });
  sorted('Practitioner?_sort=-family,given', hints(), { phase: 1, keys: ['martin', 'jean'], rid: '1234' });
  sorted('Practitioner?_sort=-family,given', hints(), { phase: 2, keys: ['jean'], rid: '1234' });
  sorted('Practitioner?_sort=_lastUpdated,family', hints(), { phase: 1, keys: ['2024-03-01T10:00:00.000Z', '\u{10FFFF}'], rid: '1234' });
  sorted('Practitioner?active=true&_sort=-_lastUpdated', hints({ sortPath: 'sorted' }), { phase: 1, keys: ['2024-03-01T10:00:00.000Z'], rid: '1234' });
});

t.test('cursors of the default order', async (t) => {
  golden(t, 'Practitioner? after rid 1234', page(parse('Practitioner?_count=20'), hints(), '1234'));
  golden(t, 'Practitioner?family=martin after rid 1234', page(parse('Practitioner?family=martin&_count=20'), hints(), '1234'));
  golden(t, 'PractitionerRole?practitioner.family=martin after rid 1234', page(parse('PractitionerRole?practitioner.family=martin'), hints(), '1234'));
});

t.test('_include and _revinclude', async (t) => {
  const keys = { rids: ['11', '12'], ids: ['a', 'b'] };
  for (const search of [
    'PractitionerRole?_include=PractitionerRole:practitioner',
    'PractitionerRole?_include=PractitionerRole:*',
    'PractitionerRole?_include=*',
    'Organization?_include=Organization:partof:Organization&_revinclude=PractitionerRole:organization',
    'Organization?_include=*',
    'Practitioner?_revinclude=*',
    'v1/Organization?_revinclude=PractitionerRole:organization',
  ]) {
    golden(t, `${search}: page rids 11,12 ids a,b`, includeQuery(parse(search), keys, 101));
  }
  golden(t, 'PractitionerRole?_include=PractitionerRole:practitioner: an empty page', includeQuery(parse('PractitionerRole?_include=PractitionerRole:practitioner'), { rids: [], ids: [] }, 101));
});

t.test('counts', async (t) => {
  for (const search of [
    'Practitioner?',
    'Practitioner?active=true',
    'Practitioner?qualification-code=https://unknown.example|SM26',
    'Practitioner?qualification-code=|SM26',
    'Organization?type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307|',
    'Practitioner?family=ma',
    'Practitioner?family=martin',
    'Practitioner?_lastUpdated=ge2024-01-01',
    'Practitioner?_lastUpdated=ge2024-01-01&_lastUpdated=lt2024-07-01',
    'Practitioner?_lastUpdated=ge2024-01-01T10:00:00Z',
    'Practitioner?identifier=810000000001',
    'Practitioner?active=true&family=ma',
  ]) {
    const req = parse(search);
    golden(t, `${search}: countedQuery (the kept total)`, countedQuery(hints(), req));
    golden(t, `${search}: countQuery`, countQuery(hints(), req));
  }
  const family = pid('Practitioner', 'family');
  golden(t, 'Practitioner?family:contains=mar (a common needle): countQuery reads it whole', countQuery(hints({ commonNeedles: new Set([`${family}/mar`]) }), parse('Practitioner?family:contains=mar')));
});

t.test('v1 names and systems', async (t) => {
  pages(t, [
    'v1/Organization?identifier=http://finess.sante.gouv.fr|010000024',
    'v1/Organization?type=http://interopsante.org/fhir/CodeSystem/fr-v2-3307|LEGAL-ENTITY',
    'v1/Organization?_since=2024-03-01T00:00:00Z',
    'v1/Organization?as-sp-data-information-system=FINESS',
    'v1/Organization?address-use=work',
    'v1/Organization?address-use=http://hl7.org/fhir/address-use|work',
    'v1/Organization?phonetic=hopital',
  ]);
});

t.test('rendered entries, _summary and _elements', async (t) => {
  const rows = page(parse('PractitionerRole?role=FON-01&_count=20'));
  golden(t, 'a page rendered as entries', renderStatement(rows, { bases: { base: 'http://fhir.test/fhir/v2' }, mode: 'match', shown: 20, keys: false }));
  golden(
    t,
    'a v1 page with includes of another version, keys kept',
    renderStatement(rows, { bases: { base: 'http://fhir.test/fhir/v1', others: { PractitionerRole: 'http://fhir.test/fhir/v2' } }, mode: 'include', shown: 100, keys: true }),
  );
  // _summary and _elements leave the compiled rows as they are; the runner reads them raw.
  for (const search of ['Practitioner?family=martin&_summary=true', 'Practitioner?family=martin&_elements=name,identifier']) {
    const req = parse(search);
    t.ok(subsetting(req), `${search} is subsetted`);
    t.equal(layout(page(req)), layout(page(parse('Practitioner?family=martin'))), `${search}: the same rows`);
  }
});
