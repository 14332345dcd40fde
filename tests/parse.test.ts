import t, { type Test } from 'tap';
import { splitUnescaped, unescape } from '../src/fhir/escape.ts';
import { parseSearch, type ParseContext } from '../src/fhir/parse.ts';
import { FhirError } from '../src/fhir/outcome.ts';
import { registry } from '../src/registry/index.ts';

/** The parser alone: query pairs → SearchRequest, no database. */
const ctx = (over: Partial<ParseContext> = {}): ParseContext => ({
  version: 'v2', type: 'Practitioner', registry, strict: false, bases: ['http://fhir.test/fhir/v1', 'http://fhir.test/fhir/v2'],
  now: Date.UTC(2021, 0, 15), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 10, maxParams: 20, ...over,
});
const parse = (q: string, over: Partial<ParseContext> = {}) => parseSearch([...new URLSearchParams(q)], ctx(over));
const fails = (t: Test, q: string, status: number, re: RegExp, over: Partial<ParseContext> = {}) => {
  try {
    parse(q, over);
    t.fail(`${q} should fail`);
  } catch (err) {
    t.ok(err instanceof FhirError, q);
    t.equal((err as FhirError).status, status, `${q} → ${status}`);
    t.match((err as FhirError).message, re, q);
  }
};

t.test('escapes and splitting', async (t) => {
  t.same(splitUnescaped('a\\,b,c', ','), ['a\\,b', 'c']);
  t.same(splitUnescaped('urn:x\\|y|v', '|'), ['urn:x\\|y', 'v']);
  t.equal(unescape('a\\,b\\|c\\$d\\\\e', 'p'), 'a,b|c$d\\e');
  t.throws(() => unescape('x\\y', 'identifier'), /illegal escape/);
});

t.test('tokens: code, system|code, |code, system|, :not, booleans, v1 systems', async (t) => {
  const r = parse('identifier=a\\,b,http://x|1,|2,http://y|&active:not=true');
  t.match(r.conditions[0], { kind: 'token', not: false, values: [{ code: 'a,b' }, { system: 'http://x', code: '1' }, { system: null, code: '2' }, { system: 'http://y' }] });
  t.notOk('code' in (r.conditions[0] as { values: object[] }).values[3]);
  t.match(r.conditions[1], { kind: 'token', not: true, values: [{ code: 'true' }] });
  const v1 = parse('identifier=http://finess.sante.gouv.fr|123&type=http://interopsante.org/fhir/CodeSystem/fr-v2-3307|LEGAL-ENTITY', { version: 'v1', type: 'Organization' });
  t.match(v1.conditions, [
    { values: [{ system: 'https://finess.esante.gouv.fr', code: '123' }] },
    { values: [{ system: 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307', code: 'LEGAL-ENTITY' }] },
  ]);
  t.match(parse('identifier=http://finess.sante.gouv.fr|123', { type: 'Organization' }).conditions[0], { values: [{ system: 'http://finess.sante.gouv.fr' }] }, 'v2 keeps systems as given');
  fails(t, 'active=yes', 400, /active.*"yes" is not a boolean/);
  fails(t, 'active=x|true', 400, /active/);
  fails(t, 'identifier=a|b|c', 400, /more than one unescaped "\|"/);
  fails(t, 'identifier=x\\y', 400, /illegal escape/);
  fails(t, 'identifier:above=x', 400, /modifier ":above" is not supported/);
});

t.test('strings: modes and name parts', async (t) => {
  const r = parse('name=Hélène&family:exact=Müller&given:contains=eve,ann&name:family=le gall');
  t.match(r.conditions, [
    { kind: 'string', mode: 'prefix', values: ['Hélène'], param: { code: 'name' } },
    { kind: 'string', mode: 'exact', values: ['Müller'], param: { code: 'family' } },
    { kind: 'string', mode: 'contains', values: ['eve', 'ann'] },
    { kind: 'string', mode: 'prefix', param: { code: 'family' } },
  ]);
  fails(t, 'name:foo=x', 400, /name:foo.*modifier ":foo"/);
  fails(t, 'name=---', 400, /no letter or digit/);
  t.same(parse('name=').conditions, [], 'empty values are ignored');
  t.same(parse('name=').applied, []);
});

t.test('dates: prefixes, precisions, zones, the + that became a space', async (t) => {
  const d = (q: string) => parse(q).conditions[0] as { values: { prefix: string; low: number; high: number }[] };
  t.same(d('_lastUpdated=2020').values[0], { prefix: 'eq', low: Date.UTC(2020, 0, 1), high: Date.UTC(2021, 0, 1) });
  t.same(d('_lastUpdated=ge2020-04').values[0], { prefix: 'ge', low: Date.UTC(2020, 3, 1), high: Date.UTC(2020, 4, 1) });
  t.same(d('_lastUpdated=lt2020-04-15').values[0], { prefix: 'lt', low: Date.UTC(2020, 3, 15), high: Date.UTC(2020, 3, 16) });
  t.same(d('_lastUpdated=sa2020-04-15T10:30').values[0].high - d('_lastUpdated=sa2020-04-15T10:30').values[0].low, 60000);
  t.same(d('_lastUpdated=2020-04-15T10:30:00Z').values[0], { prefix: 'eq', low: Date.UTC(2020, 3, 15, 10, 30), high: Date.UTC(2020, 3, 15, 10, 30, 1) });
  t.same(d('_lastUpdated=2020-04-15T10:30:00.250Z').values[0].high - d('_lastUpdated=2020-04-15T10:30:00.250Z').values[0].low, 1);
  t.same(d('_lastUpdated=ge2020-01-15T11:30:00%2B01:00').values[0].low, Date.UTC(2020, 0, 15, 10, 30));
  t.same(d('_lastUpdated=ge2020-01-15T11:30:00+01:00').values[0].low, Date.UTC(2020, 0, 15, 10, 30), 'raw + decoded as a space');
  t.same(d('_lastUpdated=ge2020-01-15T05:30:00-05:00').values[0].low, Date.UTC(2020, 0, 15, 10, 30));
  const ap = d('_lastUpdated=ap2020-01-15').values[0];
  t.ok(ap.low < Date.UTC(2019, 11, 10) && ap.high > Date.UTC(2020, 1, 20), 'ap widens by 10 % of the distance to now');
  for (const bad of ['23 May 2009', 'xx2020-01-15', '2020-01-15T10', '2020-13', '2020-02-30', 'ge']) fails(t, `_lastUpdated=${bad}`, 400, /_lastUpdated/);
  const since = parse('_since=2024-01-01', { version: 'v1', type: 'Organization' }).conditions[0];
  t.match(since, { kind: 'date', values: [{ prefix: 'ge' }], param: { code: '_lastUpdated' } });
  fails(t, '_since=ge2024', 400, /without a prefix/, { version: 'v1', type: 'Organization' });
});

t.test('references: id, Type/id, own absolute URL, other servers, :Type', async (t) => {
  const r = parse('practitioner=p1,Practitioner/p2,http://fhir.test/fhir/v2/Practitioner/p3,http://other/fhir/Practitioner/p4', { type: 'PractitionerRole' });
  t.match(r.conditions[0], { kind: 'reference', values: [{ type: 'Practitioner', id: 'p1' }, { type: 'Practitioner', id: 'p2' }, { type: 'Practitioner', id: 'p3' }] });
  t.equal((r.conditions[0] as { values: unknown[] }).values.length, 3);
  t.match(parse('practitioner=http://other/fhir/Practitioner/p4', { type: 'PractitionerRole' }).conditions[0], { kind: 'none' });
  t.match(parse('practitioner:Practitioner=p1', { type: 'PractitionerRole' }).conditions[0], { values: [{ type: 'Practitioner', id: 'p1' }] });
  fails(t, 'practitioner:Organization=p1', 400, /modifier/, { type: 'PractitionerRole' });
  fails(t, 'practitioner=a/b/c', 400, /not an id, Type\/id/, { type: 'PractitionerRole' });
});

t.test('chains and _has', async (t) => {
  const r = parse('practitioner.identifier=sys|1&organization.partof.name=chu', { type: 'PractitionerRole' });
  t.match(r.conditions[0], { kind: 'chain', targetType: 'Practitioner', param: { code: 'practitioner' }, inner: { kind: 'token', values: [{ system: 'sys', code: '1' }] } });
  t.match(r.conditions[1], { kind: 'chain', targetType: 'Organization', inner: { kind: 'chain', param: { code: 'partof' }, inner: { kind: 'string' } } });
  const h = parse('_has:PractitionerRole:organization:role=FON-01', { version: 'v1', type: 'Organization' });
  t.match(h.conditions[0], { kind: 'has', param: { resourceType: 'PractitionerRole', code: 'organization' }, inner: { kind: 'token' } });
  fails(t, '_has:PractitionerRole:active=true', 400, /_has needs/);
  fails(t, 'name.family=x', 400, /not a reference/);
  const chained = parse('practitioner.foo=1', { type: 'PractitionerRole' });
  t.same(chained.conditions, [], 'unknown chained parameter ignored (lenient)');
  t.same(chained.warnings, ['practitioner.foo: foo is not a search parameter of Practitioner; ignored'], '… and said so');
  fails(t, 'practitioner.foo=1', 400, /^practitioner\.foo: foo is not a search parameter of Practitioner$/, { type: 'PractitionerRole', strict: true });
});

t.test('result parameters', async (t) => {
  const r = parse('_count=5000&_total=accurate&_elements=identifier,name&_summary=false');
  t.equal(r.count, 1000);
  t.match(r.warnings, [/_count=5000 .* 1000 is used/]);
  t.same(r.applied.find(([k]) => k === '_count'), ['_count', '1000']);
  t.equal(r.total, 'accurate');
  t.same(r.elements, ['identifier', 'name']);
  fails(t, '_count=abc', 400, /_count/);
  fails(t, '_count=-1', 400, /_count/);
  fails(t, '_count=1&_count=2', 400, /more than once/);
  fails(t, '_total=maybe', 400, /_total/);
  fails(t, '_summary=text&_include=PractitionerRole:practitioner', 400, /_summary=text/, { type: 'PractitionerRole' });
  // _format is the route's content negotiation (tests/search-http.test.ts): the parser only keeps it for the links.
  t.same(parse('_format=application/fhir%2Bjson').applied, [['_format', 'application/fhir+json']]);
});

t.test('includes', async (t) => {
  const role = parse('_include=*', { type: 'PractitionerRole' });
  t.same(role.include.map((i) => i.param.code).sort(), ['location', 'organization', 'practitioner']);
  t.same(role.revinclude, []);
  const org = parse('_include=*', { type: 'Organization' });
  t.same(org.include.map((i) => `${i.param.resourceType}:${i.param.code}`), ['Organization:partof']);
  t.same(org.revinclude.map((i) => `${i.param.resourceType}:${i.param.code}`).sort(), ['Device:organization', 'HealthcareService:organization', 'Location:organization', 'PractitionerRole:organization']);
  t.same(parse('_revinclude=PractitionerRole:practitioner').revinclude.map((i) => i.param.code), ['practitioner']);
  fails(t, '_include=PractitionerRole:foo', 400, /_include.*PractitionerRole:foo/, { type: 'PractitionerRole' });
  fails(t, '_include=Organization:partof', 400, /not a valid include/, { type: 'PractitionerRole' });
  fails(t, '_revinclude=PractitionerRole:organization', 400, /not a valid reverse include/);
  fails(t, '_include:iterate=Organization:partof', 400, /iterative/, { type: 'Organization' });
});

t.test('near: one point, its distance in km (5 when left out), one condition per near parameter', async (t) => {
  const near = (q: string, over: Partial<ParseContext> = {}) => parse(q, { type: 'Location', ...over }).conditions.map((c) => (c.kind === 'near' ? [c.lat, c.lon, c.km] : c.kind));
  t.same(near('near=48.8534|2.3488'), [[48.8534, 2.3488, 5]]);
  t.same(near('near=48.8534|2.3488||m'), [[48.8534, 2.3488, 5]], 'a unit without a distance: the default');
  t.same(near('near=-21.1|55.5|1500|m'), [[-21.1, 55.5, 1.5]]);
  t.same(near('near=0|-180|2|mi&near=90|180|2|[mi_i]'), [[0, -180, 2 * 1.609344], [90, 180, 2 * 1.609344]], 'two near parameters: two circles');
  t.same(near('near=48.85|2.35|200'), [[48.85, 2.35, 200]], 'the maximum');
  t.same(parse('location.near=48.85|2.35|2', { type: 'PractitionerRole' }).conditions.map((c) => c.kind === 'chain' && c.inner.kind), ['near']);
  for (const q of ['near=48.85', 'near=48.85|2.35|2|km|x', 'near=a|2', 'near=91|0', 'near=0|180.5', 'near=48.85|2.35|0', 'near=48.85|2.35|-1', 'near=48.85|2.35|200.001',
    'near=48.85|2.35|2|ft', 'near=48.85|2.35,45.75|4.85', 'near:missing=maybe', 'near:exact=48.85|2.35']) {
    fails(t, q, 400, /^parameter near(:\w+)?: /, { type: 'Location' });
  }
});

t.test('unknown parameters: ignored and not applied, with a warning, or 400 with handling=strict; limits', async (t) => {
  const r = parse('foo=bar&name=x');
  t.same(r.applied, [['name', 'x']]);
  t.same(r.warnings, ['foo is not a search parameter of Practitioner; ignored']);
  fails(t, 'foo=bar', 400, /^foo is not a search parameter of Practitioner$/, { strict: true });
  const why: [string, Partial<ParseContext>, string][] = [
    ['familly=martin', {}, 'familly is not a search parameter of Practitioner (did you mean family?)'],
    ['familly:exact=martin', {}, 'familly:exact: familly is not a search parameter of Practitioner (did you mean family?)'],
    ['adress-city=lyon', { type: 'Organization' }, 'adress-city is not a search parameter of Organization (did you mean address-city?)'],
    ['_has:Foo:bar:baz=1', {}, '_has:Foo:bar:baz: Foo is not a resource type of this server'],
    ['_has:PractitionerRole:foo:role=1', { type: 'Organization', version: 'v1' }, '_has:PractitionerRole:foo:role: foo is not a reference parameter of PractitionerRole'],
    ['_has:PractitionerRole:organization:rol=1', { type: 'Organization' }, '_has:PractitionerRole:organization:rol: rol is not a search parameter of PractitionerRole (did you mean role?)'],
    ['_text=x', {}, '_text is not a search parameter of Practitioner'],
    ['_containedType=contained', {}, 'parameter _containedType is not supported'],
    ['_contained=true', {}, '_contained=true is not supported: contained resources are not searched'],
  ];
  for (const [q, over, message] of why) {
    const lenient = parse(q, over);
    t.same({ conditions: lenient.conditions, warnings: lenient.warnings }, { conditions: [], warnings: [`${message}; ignored`] }, `${q}: ignored, said why`);
    fails(t, q, 400, new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), { ...over, strict: true });
  }
  t.same(parse('_contained=false&name=x').warnings, [], '_contained=false is what is done anyway');
  fails(t, 'identifier=1,2,3,4,5,6,7,8,9,10,11', 400, /11 values, at most 10/);
  fails(t, Array.from({ length: 21 }, (_, i) => `name=${i}`).join('&'), 400, /21 parameters, at most 20/);
  fails(t, 'name=x', 404, /not served by v1/, { version: 'v1' });
});
