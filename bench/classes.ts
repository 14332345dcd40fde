// The query classes of the benchmark: request paths whose values are drawn from a seeded sample of
// the generated data (never one hot value), each class with the targets that apply to it.

import { normalize } from '../src/fhir/normalize.ts';
import type { ResourceType } from '../src/generate/index.ts';
import { Rng } from '../src/generate/prng.ts';

export interface QueryClass {
  name: string;
  description: string;
  /** request paths (`/fhir/v2/...?...`), drawn at random for every request. */
  paths: string[];
  concurrency: number[];
  /** true when the HTTP requests carry `_total=none` (no count statement after a full page). */
  totalNone: boolean;
}

export const CLASS_NAMES = [
  'identifier', 'id', 'name-prefix', 'name-prefix-accented', 'name-family-given', 'contains', 'postalcode-city',
  'org-type', 'qualification', 'role', 'last-updated', 'reference', 'chained', 'include', 'revinclude',
  'default-total', 'deep', 'total-accurate',
] as const;
export type ClassName = (typeof CLASS_NAMES)[number];

type Res = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = '/fhir/v2';
const RPPS = 'https://rpps.esante.gouv.fr';
const NON_ASCII = /[^\x00-\x7f]/;

export function searchPath(type: string, pairs: [string, string][]): string {
  return `${BASE}/${type}?${new URLSearchParams(pairs).toString()}`;
}

const cps = (s: string) => Array.from(s);
const uniq = (xs: string[]) => [...new Set(xs)];
const codes = (concepts: Res[] | undefined): string[] =>
  (concepts ?? []).flatMap((c) => (c?.coding ?? []).map((x: Res) => x?.code).filter((x: unknown): x is string => typeof x === 'string'));
const rppsOf = (p: Res): string | undefined => (p.identifier ?? []).find((i: Res) => i.system === RPPS)?.value;
const refId = (r: Res | undefined): string | undefined => (typeof r?.reference === 'string' ? r.reference.split('/')[1] : undefined);

/** A name prefix of 3–6 characters, without trailing separators; undefined when too short to search. */
function prefixOf(family: string, len: number): string | undefined {
  const p = cps(family).slice(0, len).join('').replace(/[\s'’-]+$/u, '');
  return normalize(p).replace(/ /g, '').length >= 3 ? p : undefined;
}

export interface Samples {
  Practitioner: Res[];
  PractitionerRole: Res[];
  Organization: Res[];
}

/** Every class but `deep`, whose paths come from walking the next links of a running server. */
export function buildClasses(s: Samples, seed: number): Map<ClassName, QueryClass> {
  const rng = new Rng(seed, 950);
  const none: [string, string] = ['_total', 'none'];
  const named = s.Practitioner.filter((p) => p.active !== false && typeof p.name?.[0]?.family === 'string');
  const families = named.map((p) => p.name[0].family as string);
  const out = new Map<ClassName, QueryClass>();
  const add = (name: ClassName, description: string, paths: string[], opts: { c?: number[]; totalNone?: boolean } = {}) => {
    out.set(name, { name, description, paths: uniq(paths), concurrency: opts.c ?? [1, 16], totalNone: opts.totalNone ?? true });
  };

  add('identifier', 'Practitioner?identifier=<RPPS> (11-digit RPPS of a sampled practitioner)',
    s.Practitioner.map(rppsOf).filter((v): v is string => !!v).map((v) => searchPath('Practitioner', [['identifier', v], none])));

  const ids: string[] = [];
  for (const t of ['Practitioner', 'Organization', 'PractitionerRole'] as const) {
    for (const r of s[t].slice(0, 700)) ids.push(searchPath(t, [['_id', r.id as string], none]));
  }
  add('id', '<Type>?_id=<id> over Practitioner, Organization and PractitionerRole', ids);

  const plain: string[] = [];
  const accented: string[] = [];
  for (const f of families) {
    const head = cps(f).slice(0, 6);
    const firstAccent = head.findIndex((c) => NON_ASCII.test(c));
    if (firstAccent < 0) {
      const p = prefixOf(f, rng.range(3, 6));
      if (p) plain.push(p);
    } else {
      const p = prefixOf(f, rng.range(Math.max(3, firstAccent + 1), 6));
      if (p && NON_ASCII.test(p)) accented.push(p);
    }
  }
  add('name-prefix', 'Practitioner?name=<first 3–6 characters of an ASCII family name>',
    plain.map((p) => searchPath('Practitioner', [['name', p], none])));
  add('name-prefix-accented', 'Practitioner?name=<first 3–6 characters of a family name, accented letter kept>',
    accented.map((p) => searchPath('Practitioner', [['name', p], none])));
  add('default-total', 'name-prefix paths without _total=none: a full first page also runs the count (TOTAL_BUDGET_MS)',
    plain.map((p) => searchPath('Practitioner', [['name', p]])), { totalNone: false });

  add('name-family-given', 'Practitioner?name:family=<family>&name:given=<first 3–5 characters of the given name>',
    named.filter((p) => typeof p.name[0].given?.[0] === 'string').map((p) => {
      const given = cps(p.name[0].given[0] as string).slice(0, rng.range(3, 5)).join('');
      return searchPath('Practitioner', [['name:family', p.name[0].family], ['name:given', given], none]);
    }));

  const inner: string[] = [];
  for (const f of families) {
    const c = cps(f);
    if (c.length < 5) continue;
    const start = rng.range(1, c.length - 4);
    const sub = c.slice(start, start + rng.range(3, Math.min(5, c.length - start))).join('');
    if (/^\p{L}{3,}$/u.test(sub)) inner.push(sub);
  }
  add('contains', 'Practitioner?name:contains=<3–5 letters from inside a family name>',
    inner.map((v) => searchPath('Practitioner', [['name:contains', v], none])));

  const orgs = s.Organization.filter((o) => o.address?.[0]?.postalCode && o.address?.[0]?.city);
  add('postalcode-city', 'Organization?address-postalcode=<2–5 leading digits>&address-city=<city as stored>',
    orgs.map((o) => {
      const a = o.address[0];
      return searchPath('Organization', [['address-postalcode', String(a.postalCode).slice(0, rng.range(2, 5))], ['address-city', a.city], none]);
    }));

  add('org-type', 'Organization?type=<a type code of a sampled organization>',
    s.Organization.map((o) => codes(o.type)).filter((c) => c.length).map((c) => searchPath('Organization', [['type', rng.pick(c)], none])));

  add('qualification', 'Practitioner?qualification-code=<a qualification code of a sampled practitioner>',
    s.Practitioner.map((p) => codes((p.qualification ?? []).map((q: Res) => q.code))).filter((c) => c.length)
      .map((c) => searchPath('Practitioner', [['qualification-code', rng.pick(c)], none])));

  add('role', 'PractitionerRole?role=<a code of a sampled role>',
    s.PractitionerRole.map((r) => codes(r.code)).filter((c) => c.length).map((c) => searchPath('PractitionerRole', [['role', rng.pick(c)], none])));

  const dated: [ResourceType, string][] = [];
  for (const t of ['Practitioner', 'Organization', 'PractitionerRole'] as const) {
    for (const r of s[t]) if (typeof r.meta?.lastUpdated === 'string') dated.push([t, r.meta.lastUpdated]);
  }
  add('last-updated', '<Type>?_lastUpdated=ge<day of a sampled lastUpdated>&_lastUpdated=lt<that day + 1–7 days>',
    dated.map(([t, lu]) => {
      const day = new Date(lu);
      const from = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()));
      const to = new Date(from.getTime() + rng.range(1, 7) * 86400_000);
      const d = (x: Date) => x.toISOString().slice(0, 10);
      return searchPath(t, [['_lastUpdated', `ge${d(from)}`], ['_lastUpdated', `lt${d(to)}`], none]);
    }));

  add('reference', 'PractitionerRole?practitioner=<id of the practitioner of a sampled role>',
    s.PractitionerRole.map((r) => refId(r.practitioner)).filter((v): v is string => !!v)
      .map((id) => searchPath('PractitionerRole', [['practitioner', id], none])));

  add('chained', 'PractitionerRole?practitioner.identifier=<RPPS>',
    s.Practitioner.map(rppsOf).filter((v): v is string => !!v).map((v) => searchPath('PractitionerRole', [['practitioner.identifier', v], none])));

  add('include', 'PractitionerRole?organization=<org of a sampled role>&_include=PractitionerRole:practitioner&_count=50',
    s.PractitionerRole.map((r) => refId(r.organization)).filter((v): v is string => !!v).map((id) =>
      searchPath('PractitionerRole', [['organization', id], ['_include', 'PractitionerRole:practitioner'], ['_count', '50'], none])));

  add('revinclude', 'Practitioner?family=<family name>&_revinclude=PractitionerRole:practitioner&_count=50',
    families.map((f) => searchPath('Practitioner', [['family', f], ['_revinclude', 'PractitionerRole:practitioner'], ['_count', '50'], none])));

  add('total-accurate', 'Practitioner?active=true&_total=accurate (one query: broad count, concurrency 1 only)',
    [searchPath('Practitioner', [['active', 'true'], ['_total', 'accurate']])], { c: [1], totalNone: false });
  return out;
}
