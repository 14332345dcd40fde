// The query classes of the benchmark: request paths whose values are drawn from a seeded sample of
// the generated data (never one hot value), each class with the targets that apply to it.

import { normalize } from '../src/fhir/normalize.ts';
import type { ResourceType } from '../src/generate/index.ts';
import { Rng } from '../src/generate/prng.ts';

export interface QueryClass {
  name: string;
  description: string;
  /** request paths (`/fhir/v2/...?...`), drawn at random for every request; a path listed twice is drawn twice as often. */
  paths: string[];
  concurrency: number[];
  /** true when the HTTP requests carry `_total=none` (no count statement after a full page). */
  totalNone: boolean;
}

/** Every query class, `deep` (the three deep-walk classes) and `mixed` (the mixed run), in the order they run. */
export const CLASS_NAMES = [
  'identifier', 'id', 'name-prefix', 'name-prefix-accented', 'name-family-given', 'contains', 'phonetic', 'postalcode', 'postalcode-city',
  'org-type', 'qualification', 'role', 'last-updated', 'last-updated-range', 'reference', 'chained', 'include', 'revinclude', 'near',
  'next-page', 'sorted-first', 'sorted-deep', 'deep', 'total-accurate', 'mixed',
] as const;
export type ClassName = (typeof CLASS_NAMES)[number];

/**
 * The classes of one condition with one value that a client may ask broadly, and some of several
 * conditions: how often their first pages carry a total is measured (`totals` of the report).
 */
export const TOTAL_SOURCES: readonly ClassName[] = ['name-prefix', 'name-prefix-accented', 'postalcode', 'org-type', 'qualification', 'role', 'last-updated', 'name-family-given', 'postalcode-city', 'last-updated-range'];
/** Of TOTAL_SOURCES, those of one condition. */
export const SINGLE_CONDITION: readonly ClassName[] = ['name-prefix', 'name-prefix-accented', 'postalcode', 'org-type', 'qualification', 'role', 'last-updated'];

/** The classes whose first pages give the `next-page` class its paths. */
export const NEXT_PAGE_SOURCES: readonly ClassName[] = ['name-prefix', 'postalcode', 'org-type'];

type Res = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** French spellings of one sound, as a name heard on the phone may be written. */
const SOUND_ALIKE: [RegExp, string][] = [[/ph/, 'f'], [/eau/, 'o'], [/au/, 'o'], [/([bcdfglmnprst])\1/, '$1'], [/c([aou])/, 'k$1'], [/qu/, 'k'], [/y/, 'i'], [/t$/, 'd'], [/d$/, 't'], [/ez$/, 'er']];

const BASE = '/fhir/v2';
const RPPS = 'https://rpps.esante.gouv.fr';
const NON_ASCII = /[^\x00-\x7f]/;

/** A search as a client writes it; the `_total=none` variant appends `_total=none`. */
export function searchPath(type: string, pairs: [string, string][], totalNone = false): string {
  return `${BASE}/${type}?${new URLSearchParams(totalNone ? [...pairs, ['_total', 'none']] : pairs).toString()}`;
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
  /** absent from datasets generated before Locations were. */
  Location?: Res[];
}

/** Most frequent first, ties in order of appearance. */
function byFrequency(xs: string[]): string[] {
  const n = new Map<string, number>();
  for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
  return [...n.keys()].sort((a, b) => n.get(b)! - n.get(a)!);
}

/** The classes a mixed run draws from: every class but the deep walk's and total-accurate (one broad count, not a search users repeat). */
export const inMixedRun = (name: string): boolean => !name.startsWith('deep') && name !== 'total-accurate';

/** One sort of `sorted-first` and `sorted-deep`: a fixed search, or one search per sampled value. */
export interface Sort {
  label: string;
  /** its first pages: one, or one per chosen value of a filtered sort. */
  paths: string[];
}

/** The active practitioners with a family name, and those names. */
function named(s: Samples): { practitioners: Res[]; families: string[] } {
  const practitioners = s.Practitioner.filter((p) => p.active !== false && typeof p.name?.[0]?.family === 'string');
  return { practitioners, families: practitioners.map((p) => p.name[0].family as string) };
}

/** The sorts, a filtered sort's values chosen by `pick` among the sampled ones (in sample order). */
function sorts(s: Samples, totalNone: boolean, pick: (values: string[]) => string[]): Sort[] {
  const fixed = (type: string, key: string): Sort => ({ label: `${type}?_sort=${key}`, paths: [searchPath(type, [['_sort', key]], totalNone)] });
  const cities = s.Organization.map((o) => o.address?.[0]?.city).filter((c): c is string => typeof c === 'string');
  return [
    fixed('Practitioner', 'family'),
    fixed('Practitioner', '-family'),
    fixed('Practitioner', 'given'),
    fixed('Practitioner', '-_lastUpdated'),
    fixed('Organization', 'name'),
    {
      label: 'Organization?address-city=<city>&_sort=name',
      paths: pick(cities).map((c) => searchPath('Organization', [['address-city', c], ['_sort', 'name']], totalNone)),
    },
    {
      label: 'Practitioner?family=<family>&_sort=given',
      paths: pick(named(s).families).map((f) => searchPath('Practitioner', [['family', f], ['_sort', 'given']], totalNone)),
    },
  ];
}

/**
 * Where the `sorted-deep` walks start: per sort, its first pages; a filtered sort's are its most
 * frequent values in the sample, which have the most matches.
 */
export function sortedDeepStarts(s: Samples, totalNone: boolean, perSort = 3): Sort[] {
  return sorts(s, totalNone, (values) => byFrequency(values).slice(0, perSort));
}

/** Each group repeated to the length of the longest, so every group is drawn as often. */
export function balanced(groups: string[][]): string[] {
  const n = Math.max(0, ...groups.map((g) => g.length));
  return groups.filter((g) => g.length).flatMap((g) => Array.from({ length: n }, (_, i) => g[i % g.length]));
}

/**
 * Every class but `deep`, `next-page` and `sorted-deep`, whose paths come from the next links of a
 * running server. Paths are written as a client writes them (no `_total`, no `_count`); with
 * `totalNone`, every one but total-accurate's also carries `_total=none`.
 */
export function buildClasses(s: Samples, seed: number, totalNone = false): Map<ClassName, QueryClass> {
  const rng = new Rng(seed, 950);
  const path = (type: string, pairs: [string, string][]) => searchPath(type, pairs, totalNone);
  const { practitioners, families } = named(s);
  const out = new Map<ClassName, QueryClass>();
  const add = (name: ClassName, description: string, paths: string[], opts: { c?: number[]; repeats?: boolean; variant?: boolean } = {}) => {
    out.set(name, { name, description, paths: opts.repeats ? paths : uniq(paths), concurrency: opts.c ?? [1, 16], totalNone: totalNone && opts.variant !== false });
  };

  add('identifier', 'Practitioner?identifier=<RPPS> (11-digit RPPS of a sampled practitioner)',
    s.Practitioner.map(rppsOf).filter((v): v is string => !!v).map((v) => path('Practitioner', [['identifier', v]])));

  const ids: string[] = [];
  for (const t of ['Practitioner', 'Organization', 'PractitionerRole'] as const) {
    for (const r of s[t].slice(0, 700)) ids.push(path(t, [['_id', r.id as string]]));
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
    plain.map((p) => path('Practitioner', [['name', p]])));
  add('name-prefix-accented', 'Practitioner?name=<first 3–6 characters of a family name, accented letter kept>',
    accented.map((p) => path('Practitioner', [['name', p]])));

  add('name-family-given', 'Practitioner?name:family=<family>&name:given=<first 3–5 characters of the given name>',
    practitioners.filter((p) => typeof p.name[0].given?.[0] === 'string').map((p) => {
      const given = cps(p.name[0].given[0] as string).slice(0, rng.range(3, 5)).join('');
      return path('Practitioner', [['name:family', p.name[0].family], ['name:given', given]]);
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
    inner.map((v) => path('Practitioner', [['name:contains', v]])));

  // A family name as someone who heard it may type it: as it is, a French spelling changed (same
  // sound), or one letter off (from 5 letters).
  const misspelt = families.map((f) => {
    const word = f.toLowerCase();
    const form = rng.range(0, 2);
    if (form === 0) return f;
    if (form === 1) {
      const [from, to] = rng.pick(SOUND_ALIKE.filter(([re]) => re.test(word)).concat([[/$/, '']]));
      return word.replace(from, to);
    }
    if (cps(word).length < 5) return f;
    const at = rng.range(1, cps(word).length - 2);
    return cps(word).filter((_, i) => i !== at).join('');
  });
  add('phonetic', 'Practitioner?phonetic=<a family name as it is, spelt otherwise with the same sound, or one letter dropped>',
    misspelt.map((v) => path('Practitioner', [['phonetic', v]])));

  const orgs = s.Organization.filter((o) => o.address?.[0]?.postalCode && o.address?.[0]?.city);
  const postal = (o: Res) => String(o.address[0].postalCode).slice(0, rng.range(2, 5));
  add('postalcode', 'Organization?address-postalcode=<2–5 leading digits>',
    orgs.map((o) => path('Organization', [['address-postalcode', postal(o)]])));
  add('postalcode-city', 'Organization?address-postalcode=<2–5 leading digits>&address-city=<city as stored>',
    orgs.map((o) => path('Organization', [['address-postalcode', postal(o)], ['address-city', o.address[0].city]])));

  add('org-type', 'Organization?type=<a type code of a sampled organization>',
    s.Organization.map((o) => codes(o.type)).filter((c) => c.length).map((c) => path('Organization', [['type', rng.pick(c)]])));

  add('qualification', 'Practitioner?qualification-code=<a qualification code of a sampled practitioner>',
    s.Practitioner.map((p) => codes((p.qualification ?? []).map((q: Res) => q.code))).filter((c) => c.length)
      .map((c) => path('Practitioner', [['qualification-code', rng.pick(c)]])));

  add('role', 'PractitionerRole?role=<a code of a sampled role>',
    s.PractitionerRole.map((r) => codes(r.code)).filter((c) => c.length).map((c) => path('PractitionerRole', [['role', rng.pick(c)]])));

  const days: [ResourceType, Date][] = [];
  for (const t of ['Practitioner', 'Organization', 'PractitionerRole'] as const) {
    for (const r of s[t]) {
      if (typeof r.meta?.lastUpdated !== 'string') continue;
      const at = new Date(r.meta.lastUpdated);
      days.push([t, new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))]);
    }
  }
  const day = (x: Date) => x.toISOString().slice(0, 10);
  add('last-updated', '<Type>?_lastUpdated=<day of a sampled lastUpdated> (the whole day)',
    days.map(([t, from]) => path(t, [['_lastUpdated', day(from)]])));
  add('last-updated-range', '<Type>?_lastUpdated=ge<day of a sampled lastUpdated>&_lastUpdated=lt<that day + 1–7 days>',
    days.map(([t, from]) => {
      const to = new Date(from.getTime() + rng.range(1, 7) * 86400_000);
      return path(t, [['_lastUpdated', `ge${day(from)}`], ['_lastUpdated', `lt${day(to)}`]]);
    }));

  add('reference', 'PractitionerRole?practitioner=<id of the practitioner of a sampled role>',
    s.PractitionerRole.map((r) => refId(r.practitioner)).filter((v): v is string => !!v)
      .map((id) => path('PractitionerRole', [['practitioner', id]])));

  add('chained', 'PractitionerRole?practitioner.identifier=<RPPS>',
    s.Practitioner.map(rppsOf).filter((v): v is string => !!v).map((v) => path('PractitionerRole', [['practitioner.identifier', v]])));

  add('include', 'PractitionerRole?organization=<org of a sampled role>&_include=PractitionerRole:practitioner',
    s.PractitionerRole.map((r) => refId(r.organization)).filter((v): v is string => !!v).map((id) =>
      path('PractitionerRole', [['organization', id], ['_include', 'PractitionerRole:practitioner']])));

  add('revinclude', 'Practitioner?family=<family name>&_revinclude=PractitionerRole:practitioner',
    families.map((f) => path('Practitioner', [['family', f], ['_revinclude', 'PractitionerRole:practitioner']])));

  // Where people are: around a sampled establishment, moved by up to 3 km in any direction.
  const positions = (s.Location ?? []).map((l) => l.position).filter((p): p is { latitude: number; longitude: number } =>
    typeof p?.latitude === 'number' && typeof p?.longitude === 'number');
  add('near', 'Location?near=<lat>|<lon>|<1–20>|km around a sampled establishment\'s position moved by up to 3 km (nearest first, distances in the entries)',
    positions.map((p) => {
      const km = 3 * Math.sqrt(rng.next());
      const bearing = 2 * Math.PI * rng.next();
      const lat = p.latitude + (km / 111.2) * Math.cos(bearing);
      const lon = p.longitude + (km / (111.2 * Math.cos((p.latitude * Math.PI) / 180))) * Math.sin(bearing);
      return path('Location', [['near', `${lat.toFixed(5)}|${lon.toFixed(5)}|${rng.range(1, 20)}|km`]]);
    }));

  const sorted = sorts(s, totalNone, (values) => uniq(values).slice(0, 20));
  add('sorted-first', `sorted first pages, each sort drawn as often: ${sorted.map((x) => x.label).join(', ')}`,
    balanced(sorted.map((x) => x.paths)), { repeats: true });

  add('total-accurate', 'Practitioner?active=true&_total=accurate (one query: broad count, concurrency 1 only)',
    [searchPath('Practitioner', [['active', 'true'], ['_total', 'accurate']])], { c: [1], variant: false });
  return out;
}
