import t from 'tap';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { soundOf, withinOneTypo } from '../src/fhir/phonetic.ts';
import { generate } from '../src/generate/index.ts';
import { shippedTerminology } from '../src/terminology.ts';
import { load, testApp } from './helpers/app.ts';

/**
 * Search results against an oracle: an evaluator written apart from the registry and the SQL, from
 * FHIR's rules (../shared/docs/fhir-search.md) and the README's choices (strings fold case, accents
 * and punctuation; a date without a zone is UTC), over generated data held in memory. Random
 * searches in the forms clients send — no `_count`, values taken from the data, a comma for OR, a
 * second parameter for AND, includes, sorts; GET or a POSTed form; v2, or v1 for Organization — each
 * followed over HTTP through every `next` link:
 * every match exactly once and nothing else, `total` the number of matches, each page's included
 * resources exactly those its matches reference (or are referenced by), sorted matches in order,
 * phonetic matches ranked (spelled alike, then sounding alike, then one typo away). The French
 * phonetic key is the server's (tested on its published examples in tests/phonetic.test.ts); the
 * typo rule is checked by a direct comparison, and labels of `:text` are the shipped terminology's
 * and every display the data carries.
 * ORACLE_RUNS (default 150) and ORACLE_SEED replay a run.
 */
const RUNS = Number(process.env.ORACLE_RUNS ?? 150);
const SEED = Number(process.env.ORACLE_SEED ?? Date.now() % 100_000);
const KEY = 'oracle-key-0123456789abcdef';

type R = {
  resourceType: string;
  id: string;
  meta: { lastUpdated: string; extension?: Ext[] };
  [k: string]: unknown;
};
type Ext = { url: string; extension?: Ext[]; valueCode?: string; valueString?: string; valueCodeableConcept?: { coding?: Coding[] } };
type Coding = { system?: string; code?: string; display?: string };
type Tok = { system?: string; code: string; label?: string };
type Kind = 'string' | 'token' | 'reference' | 'date' | 'phonetic' | 'near';

// ---- the oracle: what each parameter reads, written from the FHIR expressions ---------------------

const arr = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
const strs = (...xs: unknown[]): string[] => xs.flat(Infinity as 1).filter((x): x is string => typeof x === 'string' && x.length > 0);
const codings = (ccs: unknown): Tok[] =>
  arr(ccs as { coding?: Coding[]; text?: string }[]).flatMap((cc) =>
    arr(cc?.coding).filter((c) => c.code).map((c) => ({ system: c.system, code: c.code!, label: c.display ?? cc.text })));
type Name = { family?: string; given?: string[]; prefix?: string[]; suffix?: string[]; text?: string };
type Address = { line?: string[]; city?: string; district?: string; state?: string; postalCode?: string; country?: string; text?: string };
const names = (r: R) => arr(r.name as Name[]);
const addresses = (r: R) => arr(r.address as Address[]);
const DATA_TRACE = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-ext-data-trace';
const SYSTEM_INFO = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem/as-cs-type-systeme-information';

interface Param {
  kind: Kind;
  strings?: (r: R) => string[];
  tokens?: (r: R) => Tok[];
  /** references as Type/id */
  refs?: (r: R) => string[];
  /** near: the positions, [latitude, longitude] in degrees */
  points?: (r: R) => [number, number][];
}

const common: Record<string, Param> = {
  _id: { kind: 'token', tokens: (r) => [{ code: r.id }] },
  _lastUpdated: { kind: 'date' },
  active: { kind: 'token', tokens: (r) => (typeof r.active === 'boolean' ? [{ code: String(r.active) }] : []) },
  identifier: { kind: 'token', tokens: (r) => arr(r.identifier as { system?: string; value?: string }[]).filter((i) => i.value).map((i) => ({ system: i.system, code: i.value! })) },
  'data-information-system': {
    kind: 'token',
    tokens: (r) =>
      arr(r.meta.extension).filter((e) => e.url === DATA_TRACE).flatMap((e) => arr(e.extension)).filter((e) => e.url === 'systeme-information' && e.valueCode).map((e) => ({ system: SYSTEM_INFO, code: e.valueCode! })),
  },
};

const ORACLE: Record<string, Record<string, Param>> = {
  Practitioner: {
    ...common,
    family: { kind: 'string', strings: (r) => strs(names(r).map((n) => n.family)) },
    given: { kind: 'string', strings: (r) => strs(names(r).map((n) => n.given)) },
    phonetic: { kind: 'phonetic', strings: (r) => strs(names(r).map((n) => [n.family, n.given])) },
    name: { kind: 'string', strings: (r) => strs(names(r).map((n) => [n.family, n.given, n.prefix, n.suffix, n.text])) },
    'identifier-type': { kind: 'token', tokens: (r) => arr(r.identifier as { type?: unknown }[]).flatMap((i) => codings(i.type)) },
    'qualification-code': { kind: 'token', tokens: (r) => arr(r.qualification as { code?: unknown }[]).flatMap((q) => codings(q.code)) },
  },
  Organization: {
    ...common,
    name: { kind: 'string', strings: (r) => strs(r.name, r.alias) },
    phonetic: { kind: 'phonetic', strings: (r) => strs(r.name, r.alias) },
    address: { kind: 'string', strings: (r) => strs(addresses(r).map((a) => [a.line, a.city, a.district, a.state, a.postalCode, a.country, a.text])) },
    'address-city': { kind: 'string', strings: (r) => strs(addresses(r).map((a) => a.city)) },
    'address-postalcode': { kind: 'string', strings: (r) => strs(addresses(r).map((a) => a.postalCode)) },
    'address-line': { kind: 'string', strings: (r) => strs(addresses(r).map((a) => a.line)) },
    type: { kind: 'token', tokens: (r) => codings(r.type) },
    'identifier-type': { kind: 'token', tokens: (r) => arr(r.identifier as { type?: unknown }[]).flatMap((i) => codings(i.type)) },
    partof: { kind: 'reference', refs: (r) => strs((r.partOf as { reference?: string } | undefined)?.reference) },
  },
  Location: {
    _id: common._id,
    _lastUpdated: common._lastUpdated,
    identifier: common.identifier,
    'data-information-system': common['data-information-system'],
    name: { kind: 'string', strings: (r) => strs(r.name, r.alias) },
    status: { kind: 'token', tokens: (r) => strs(r.status).map((code) => ({ system: 'http://hl7.org/fhir/location-status', code })) },
    organization: { kind: 'reference', refs: (r) => strs((r.managingOrganization as { reference?: string } | undefined)?.reference) },
    address: { kind: 'string', strings: (r) => strs(addresses(r).map((a) => [a.line, a.city, a.district, a.state, a.postalCode, a.country, a.text])) },
    'address-city': { kind: 'string', strings: (r) => strs(addresses(r).map((a) => a.city)) },
    'address-postalcode': { kind: 'string', strings: (r) => strs(addresses(r).map((a) => a.postalCode)) },
    near: {
      kind: 'near',
      points: (r) => {
        const p = r.position as { latitude?: unknown; longitude?: unknown } | undefined;
        return typeof p?.latitude === 'number' && typeof p.longitude === 'number' ? [[p.latitude, p.longitude]] : [];
      },
    },
  },
  PractitionerRole: {
    ...common,
    role: { kind: 'token', tokens: (r) => codings(r.code) },
    practitioner: { kind: 'reference', refs: (r) => strs((r.practitioner as { reference?: string } | undefined)?.reference) },
    organization: { kind: 'reference', refs: (r) => strs((r.organization as { reference?: string } | undefined)?.reference) },
    location: { kind: 'reference', refs: (r) => strs(arr(r.location as { reference?: string }[]).map((l) => l.reference)) },
  },
};

/** FHIR's near: the great-circle distance on the Earth's mean radius (haversine), in km; units as FHIR R4 names them (UCUM). */
const EARTH_KM = 6371.0088;
const UNIT_KM: Record<string, number> = { km: 1, m: 0.001, mi: 1.609344, '[mi_i]': 1.609344 };
function greatCircleKm([lat1, lon1]: [number, number], [lat2, lon2]: [number, number]): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}
/** A near value's centre and radius in km (the README: 5 km when the distance is left out). */
function nearValue(value: string): { centre: [number, number]; km: number } {
  const [lat, lon, distance, unit] = value.split('|');
  return { centre: [Number(lat), Number(lon)], km: distance ? Number(distance) * UNIT_KM[unit || 'km'] : 5 };
}
/** The least distance of a resource's positions to a near value's centre, km. */
const distanceTo = (r: R, code: string, value: string) =>
  Math.min(...ORACLE[r.resourceType][code].points!(r).map((p) => greatCircleKm(nearValue(value).centre, p)));

/** Letters without a decomposition, folded as the README says (œ as oe, ł as l, like PostgreSQL's unaccent). */
const LETTERS: Record<string, string> = { æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', ß: 'ss', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't', ŋ: 'n' };
/** Case, accents and punctuation folded (README: "Strings match a prefix after folding case, accents and punctuation"). */
const fold = (s: string) =>
  s.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[æœøłßđðþıħŧŋ]/gu, (c) => LETTERS[c])
    .replace(/[\p{P}\p{S}\p{C}]+/gu, ' ').replace(/\s+/gu, ' ').trim();

/** A query value's range [lo, hi) in ms, FHIR's implicit precision. */
function range(value: string): [number, number] {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/.exec(value)!;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const offset = !zone || zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4))) * 60_000;
  const at = (yy: number, mm = 0, dd = 1, hh = 0, mn = 0, ss = 0, ms = 0) => Date.UTC(yy, mm, dd, hh, mn, ss, ms) - offset;
  const Y = Number(y);
  if (!mo) return [at(Y), at(Y + 1)];
  if (!d) return [at(Y, Number(mo) - 1), at(Y, Number(mo))];
  if (!h) return [at(Y, Number(mo) - 1, Number(d)), at(Y, Number(mo) - 1, Number(d) + 1)];
  const base = [Y, Number(mo) - 1, Number(d), Number(h), Number(mi)] as const;
  if (!s) return [at(...base), at(...base) + 60_000];
  if (!frac) return [at(...base, Number(s)), at(...base, Number(s)) + 1000];
  const digits = frac.slice(1);
  const unit = 10 ** (3 - digits.length);
  const lo = at(...base, Number(s)) + Number(digits) * unit;
  return [lo, lo + unit];
}

const DATE_TEST: Record<string, (t: number, lo: number, hi: number) => boolean> = {
  eq: (x, lo, hi) => lo <= x && x < hi,
  ne: (x, lo, hi) => x < lo || x >= hi,
  gt: (x, _lo, hi) => x >= hi,
  lt: (x, lo) => x < lo,
  ge: (x, lo) => x >= lo,
  le: (x, _lo, hi) => x < hi,
  sa: (x, _lo, hi) => x >= hi,
  eb: (x, lo) => x < lo,
};

/** The words of a value, folded. */
const wordsOf = (s: string) => fold(s).split(/[^a-z0-9]+/).filter(Boolean);

/**
 * How a `phonetic` value matches a resource: 0 every word spelled alike, 1 sounding alike, 2 one
 * typo away (words of 5 letters or more); its words joined may match one word instead. undefined:
 * no match. A stored value of several words also offers its words joined.
 */
function phoneticLevel(r: R, code: string, value: string): number | undefined {
  const stored = ORACLE[r.resourceType][code].strings!(r).flatMap((v) => {
    const ws = wordsOf(v);
    return ws.length > 1 ? [...ws, ws.join('')] : ws;
  });
  const level = (w: string): number | undefined => {
    if (stored.includes(w)) return 0;
    if (stored.some((s) => soundOf(s) === soundOf(w))) return 1;
    if (w.length >= 5 && stored.some((s) => withinOneTypo(s, w))) return 2;
    return undefined;
  };
  const ws = wordsOf(value);
  const each = ws.map(level);
  const all = each.every((l) => l !== undefined) ? Math.max(...(each as number[])) : undefined;
  const joined = ws.length > 1 ? level(ws.join('')) : undefined;
  if (all === undefined) return joined;
  return joined === undefined ? all : Math.min(all, joined);
}

/** Labels of codes: the shipped terminology's and every display or text of the data's codings (filled below). */
const LABELS = new Map<string, Set<string>>();
const labelKey = (system: string | undefined, code: string) => `${system ?? ''}|${code}`;
function learn(system: string | undefined, code: string, label: string | undefined): void {
  if (label === undefined || label.trim() === '') return;
  const k = labelKey(system, code);
  (LABELS.get(k) ?? LABELS.set(k, new Set()).get(k)!).add(label);
}
/** A label has, for each word of the value, a word starting with it. */
const labelMatches = (label: string, value: string) => {
  const ws = fold(label).split(' ');
  return fold(value).split(' ').filter(Boolean).every((q) => ws.some((w) => w.startsWith(q)));
};

/** One value of a search parameter (one of a comma's alternatives) against a resource. */
function matchesValue(r: R, code: string, modifier: string | undefined, value: string): boolean {
  const p = ORACLE[r.resourceType][code];
  if (p.kind === 'phonetic') return phoneticLevel(r, code, value) !== undefined;
  if (p.kind === 'near') return distanceTo(r, code, value) <= nearValue(value).km;
  if (modifier === 'text') {
    // A code of data-information-system is stored without its implied system: labelled either way.
    return p.tokens!(r).some((x) => [labelKey(x.system, x.code), ...(x.system === SYSTEM_INFO ? [labelKey(undefined, x.code)] : [])]
      .some((k) => [...(LABELS.get(k) ?? [])].some((l) => labelMatches(l, value))));
  }
  if (p.kind === 'string') {
    const vs = p.strings!(r);
    if (modifier === 'exact') return vs.includes(value);
    if (modifier === 'contains') return vs.some((v) => fold(v).includes(fold(value)));
    return vs.some((v) => fold(v).startsWith(fold(value)));
  }
  if (p.kind === 'token') {
    const toks = p.tokens!(r);
    const bar = value.indexOf('|');
    if (bar < 0) return toks.some((x) => x.code === value);
    const system = value.slice(0, bar);
    const c = value.slice(bar + 1);
    if (system === '') return toks.some((x) => x.system === undefined && x.code === c);
    if (c === '') return toks.some((x) => x.system === system);
    return toks.some((x) => x.system === system && x.code === c);
  }
  if (p.kind === 'reference') {
    const refs = p.refs!(r);
    return value.includes('/') ? refs.includes(value.replace(/^.*\/fhir\/v2\//, '')) : refs.some((x) => x.split('/')[1] === value);
  }
  const prefix = /^[a-z]{2}/.test(value) ? value.slice(0, 2) : 'eq';
  const [lo, hi] = range(prefix === 'eq' && !/^[a-z]{2}/.test(value) ? value : value.slice(2));
  return DATE_TEST[prefix](Date.parse(r.meta.lastUpdated), lo, hi);
}

interface Condition {
  code: string;
  modifier?: string;
  values: string[];
  /** a chain: the reference parameter followed to the resource `code` is read on. */
  chain?: string;
  /** a reverse chain: resources of `source` whose `ref` points here satisfy the condition. */
  has?: { source: string; ref: string };
}

/** Whether a resource has a value for a parameter (:missing). */
function hasValue(r: R, code: string): boolean {
  const p = ORACLE[r.resourceType][code];
  if (p.kind === 'date') return true;
  return (p.strings ?? p.tokens ?? p.refs ?? p.points)!(r).length > 0;
}

function matches(r: R, c: Condition): boolean {
  if (c.has) {
    const inner = { ...c, has: undefined };
    return (referrers(c.has.source, c.has.ref).get(`${r.resourceType}/${r.id}`) ?? []).some((s) => matches(s, inner));
  }
  if (c.chain) {
    const inner = { ...c, chain: undefined };
    return ORACLE[r.resourceType][c.chain].refs!(r).some((ref) => byKey.has(ref) && matches(byKey.get(ref)!, inner));
  }
  if (c.modifier === 'missing') return hasValue(r, c.code) === (c.values[0] === 'false');
  if (c.modifier === 'not') return !c.values.some((v) => matchesValue(r, c.code, undefined, v));
  return c.values.some((v) => matchesValue(r, c.code, c.modifier, v));
}

const referring = new Map<string, Map<string, R[]>>();
/** The resources of `source` by the Type/id their reference parameter `ref` points to. */
function referrers(source: string, ref: string): Map<string, R[]> {
  let by = referring.get(`${source}:${ref}`);
  if (!by) {
    referring.set(`${source}:${ref}`, (by = new Map()));
    for (const s of data[source]) for (const to of ORACLE[source][ref].refs!(s)) by.set(to, [...(by.get(to) ?? []), s]);
  }
  return by;
}

/** Chains and reverse chains drawn from: [type, reference or _has source:reference, the parameters read there]. */
const CHAINS: [string, string, string[]][] = [
  ['PractitionerRole', 'practitioner', ['identifier', 'family', 'name', 'active']],
  ['PractitionerRole', 'organization', ['identifier', 'name', 'address-city', 'type']],
  ['Organization', 'partof', ['identifier', 'name']],
  ['PractitionerRole', 'location', ['near', 'status', 'address-city']],
  ['Location', 'organization', ['identifier', 'name', 'type']],
];
const HAS: [string, string, string, string[]][] = [
  ['Practitioner', 'PractitionerRole', 'practitioner', ['role', 'active', 'identifier']],
  ['Organization', 'PractitionerRole', 'organization', ['role', 'active']],
  ['Organization', 'Location', 'organization', ['near', 'status']],
];

// ---- random searches drawn from the data ---------------------------------------------------------

function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The Organization parameters the deprecated v1 API takes under the same names. */
const V1_ORGANIZATION = ['_id', '_lastUpdated', 'active', 'identifier', 'identifier-type', 'name', 'phonetic', 'address', 'address-city', 'address-postalcode', 'type', 'partof'];

const INCLUDES: Record<string, string[]> = {
  Practitioner: ['_revinclude=PractitionerRole:practitioner'],
  Organization: ['_revinclude=PractitionerRole:organization', '_include=Organization:partof', '_revinclude=Location:organization'],
  PractitionerRole: ['_include=PractitionerRole:organization', '_include=PractitionerRole:practitioner', '_include=*'],
  Location: ['_include=Location:organization', '_revinclude=PractitionerRole:location'],
};
const SORTS: Record<string, string[]> = {
  Practitioner: ['family', 'given', 'name', '_id', '_lastUpdated'],
  Organization: ['name', 'address-city', 'address-postalcode', '_lastUpdated'],
  PractitionerRole: ['_id', '_lastUpdated'],
  Location: ['name', 'address-city', '_id', '_lastUpdated'],
};

function drawSearch(rand: () => number, data: Record<string, R[]>) {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const type = pick(Object.keys(ORACLE));
  const rows = data[type];
  const conditions: Condition[] = [];
  const valueOf = (code: string, p: Param, r: R = pick(rows)): { modifier?: string; value: string } | undefined => {
    if (p.kind === 'date') {
      const t = Date.parse(r.meta.lastUpdated);
      const iso = new Date(t).toISOString();
      const forms = [iso.slice(0, 4), iso.slice(0, 7), iso.slice(0, 10), `${iso.slice(0, 16)}Z`, `${iso.slice(0, 19)}Z`, iso.slice(0, 19), iso,
        `${new Date(t + 3600_000).toISOString().slice(0, 19)}+01:00`];
      return { value: `${pick(['', 'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb'])}${pick(forms)}` };
    }
    if (p.kind === 'string') {
      const v = pick(p.strings!(r));
      if (!v) return undefined;
      const mode = rand();
      if (mode < 0.15) return { modifier: 'exact', value: v };
      if (mode < 0.3 && v.length >= 4) {
        const at = Math.floor(rand() * (v.length - 3));
        return { modifier: 'contains', value: v.slice(at, at + 3) };
      }
      const cut = v.slice(0, 1 + Math.floor(rand() * Math.min(v.length, 6)));
      return fold(cut) ? { value: cut } : undefined;
    }
    if (p.kind === 'near') {
      // Around a place (a resource's position moved by up to 20 km), 0.5 to 60 km in one of the units.
      const point = pick(p.points!(r));
      if (!point) return undefined;
      const at = (x: number, spread: number) => (x + (rand() - 0.5) * spread).toFixed(5);
      const km = 0.5 + rand() * 59.5;
      const unit = pick(['', 'km', 'm', 'mi', '[mi_i]']);
      const distance = unit === '' && rand() < 0.3 ? '' : String(+(km / UNIT_KM[unit || 'km']).toFixed(3));
      return { value: [at(point[0], 0.36), at(point[1], 0.5), distance, distance ? unit : ''].join('|').replace(/\|+$/, '') };
    }
    if (p.kind === 'phonetic') {
      const words = wordsOf(pick(p.strings!(r)) ?? '');
      if (!words.length) return undefined;
      const at = Math.floor(rand() * words.length);
      const two = words.slice(at, at + 2);
      const form = rand();
      if (form < 0.2) return { value: two.join(' ') };
      if (form < 0.3) return { value: two.join('') };
      return { value: misspell(words[at], rand) };
    }
    if (p.kind === 'token') {
      const tok = pick(p.tokens!(r));
      if (!tok) return undefined;
      const labels = [...(LABELS.get(labelKey(tok.system, tok.code)) ?? [])];
      if (labels.length && rand() < 0.15) {
        const ws = fold(pick(labels)).split(' ');
        const at = Math.floor(rand() * ws.length);
        const cut = (w: string) => w.slice(0, 1 + Math.floor(rand() * w.length));
        return { modifier: 'text', value: ws.slice(at, at + (rand() < 0.3 ? 2 : 1)).map(cut).join(' ') };
      }
      const forms = [tok.code, ...(tok.system ? [`${tok.system}|${tok.code}`, `${tok.system}|`] : [`|${tok.code}`])];
      return { modifier: code !== '_id' && rand() < 0.1 ? 'not' : undefined, value: pick(forms) };
    }
    const ref = pick(p.refs!(r));
    if (!ref) return undefined;
    return { value: rand() < 0.5 ? ref : ref.split('/')[1] };
  };
  const params = Object.entries(ORACLE[type]);
  const n = rand() < 0.3 ? 2 : 1;
  // A window of _lastUpdated, as a change feed asks for it: two conditions on one instant (the
  // server reads them as one interval), from a resource's time to a later one's.
  if (n === 2 && ORACLE[type]._lastUpdated && rand() < 0.25) {
    const [from, to] = [pick(rows), pick(rows)].sort((a, b) => Date.parse(a.meta.lastUpdated) - Date.parse(b.meta.lastUpdated));
    const bare = (r: R) => valueOf('_lastUpdated', ORACLE[type]._lastUpdated, r)!.value.replace(/^[a-z]{2}/, '');
    conditions.push({ code: '_lastUpdated', values: [`${pick(['ge', 'gt', 'sa'])}${bare(from)}`] }, { code: '_lastUpdated', values: [`${pick(['lt', 'le', 'eb'])}${bare(to)}`] });
  }
  for (let i = 0; i < 20 && conditions.length < n; i++) {
    const form = rand();
    const chains = CHAINS.filter(([t]) => t === type);
    const has = HAS.filter(([t]) => t === type);
    if (form < 0.1 && chains.length) {
      // a chain: a value read on the resource a random one of this type references
      const [, ref, codes] = pick(chains);
      const target = byKey.get(pick(ORACLE[type][ref].refs!(pick(rows))) ?? '');
      const code = pick(codes);
      const v = target && valueOf(code, ORACLE[target.resourceType][code], target);
      if (v && v.modifier !== 'not') conditions.push({ code, modifier: v.modifier, values: [v.value], chain: ref });
      continue;
    }
    if (form < 0.2 && has.length) {
      // a reverse chain: a value read on a random resource that references one of this type
      const [, source, ref, codes] = pick(has);
      const code = pick(codes);
      const v = valueOf(code, ORACLE[source][code], pick(data[source]));
      if (v && v.modifier !== 'not') conditions.push({ code, modifier: v.modifier, values: [v.value], has: { source, ref } });
      continue;
    }
    const [code, p] = pick(params);
    if (form < 0.27 && p.kind !== 'date') {
      conditions.push({ code, modifier: 'missing', values: [rand() < 0.5 ? 'true' : 'false'] });
      continue;
    }
    const first = valueOf(code, p);
    if (!first) continue;
    const c: Condition = { code, modifier: first.modifier, values: [first.value] };
    if (p.kind !== 'date' && p.kind !== 'near' && rand() < 0.25) {
      const second = valueOf(code, p);
      if (second && second.modifier === first.modifier) c.values.push(second.value);
    }
    conditions.push(c);
  }
  const extra: string[] = [];
  if (rand() < 0.25) extra.push(pick(INCLUDES[type]));
  let sort: string[] = [];
  if (rand() < 0.25) {
    sort = [pick(SORTS[type])];
    if (rand() < 0.3) sort.push(pick(SORTS[type]));
    sort = [...new Set(sort)].map((s) => (rand() < 0.4 ? `-${s}` : s));
    extra.push(`_sort=${sort.join(',')}`);
  }
  const escape = (v: string) => v.replace(/[\\,$]/g, (c) => `\\${c}`);
  const query = [
    ...conditions.map((c) => {
      const name = c.has ? `_has:${c.has.source}:${c.has.ref}:${c.code}` : c.chain ? `${c.chain}.${c.code}` : c.code;
      return `${name}${c.modifier ? `:${c.modifier}` : ''}=${encodeURIComponent(c.values.map(escape).join(',')).replace(/%7C/g, '|')}`;
    }),
    ...extra,
  ].join('&');
  return { type, conditions, query, sort };
}

/** A word as someone may type it: as it is, sounding alike (a French spelling changed), or with a typo. */
function misspell(w: string, rand: () => number): string {
  const form = rand();
  if (form < 0.3) return w;
  if (form < 0.65) {
    const SOUNDS: [RegExp, string][] = [[/ph/, 'f'], [/eau/, 'o'], [/au/, 'o'], [/([bcdfglmnprst])\1/, '$1'], [/([lnrt])([aeiou])/, '$1$1$2'], [/c([aou])/, 'k$1'], [/qu/, 'k'], [/y/, 'i'], [/e$/, ''], [/t$/, 'd'], [/d$/, 't']];
    const [re, to] = SOUNDS[Math.floor(rand() * SOUNDS.length)];
    return w.replace(re, to) || w;
  }
  if (w.length < 5) return w;
  const i = Math.floor(rand() * (w.length - 1));
  const letter = 'abcdefghijklmnopqrstuvwxyz'[Math.floor(rand() * 26)];
  switch (Math.floor(rand() * 4)) {
    case 0: return w.slice(0, i) + w.slice(i + 1);
    case 1: return w.slice(0, i) + letter + w.slice(i);
    case 2: return w.slice(0, i) + letter + w.slice(i + 1);
    default: return w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
  }
}

/** The sort key of a resource for one `_sort` entry (lowest folded value ascending, highest descending; none last). */
function sortKey(r: R, entry: string): string | number | undefined {
  const desc = entry.startsWith('-');
  const code = desc ? entry.slice(1) : entry;
  if (code === '_id') return r.id;
  if (code === '_lastUpdated') return Date.parse(r.meta.lastUpdated);
  const vs = ORACLE[r.resourceType][code].strings!(r).map(fold).sort();
  return vs.length === 0 ? undefined : desc ? vs.at(-1) : vs[0];
}

function compareBy(a: R, b: R, sort: string[]): number {
  for (const entry of sort) {
    const ka = sortKey(a, entry);
    const kb = sortKey(b, entry);
    if (ka === kb) continue;
    if (ka === undefined) return 1;
    if (kb === undefined) return -1;
    const c = ka < kb ? -1 : 1;
    return entry.startsWith('-') ? -c : c;
  }
  return 0;
}

// ---- the run -------------------------------------------------------------------------------------

const dir = await mkdtemp(path.join(os.tmpdir(), 'oracle-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await generate({ scale: 0.002, seed: 11, outDir: dir });
const data: Record<string, R[]> = {};
const byKey = new Map<string, R>();
for (const file of await readdir(dir)) {
  for (const line of (await readFile(path.join(dir, file), 'utf8')).split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as R;
    (data[r.resourceType] ??= []).push(r);
    byKey.set(`${r.resourceType}/${r.id}`, r);
  }
}
for (const l of shippedTerminology().labels) learn(l.system, l.code, l.label);
for (const [type, params] of Object.entries(ORACLE)) {
  for (const r of data[type]) for (const p of Object.values(params)) for (const tok of p.tokens?.(r) ?? []) learn(tok.system, tok.code, tok.label);
}

/** The resources a page's matches reference (`_include`) or are referenced by (`_revinclude`), never one of them. */
function included(spec: string, type: string, page: R[]): Set<string> {
  const out = new Set<string>();
  const [kind, what] = spec.split('=');
  const refsOf = (r: R, code?: string) =>
    Object.entries(ORACLE[r.resourceType]).filter(([c, p]) => p.kind === 'reference' && (code === undefined || c === code)).flatMap(([, p]) => p.refs!(r));
  if (kind === '_include') {
    for (const r of page) for (const ref of refsOf(r, what === '*' ? undefined : what.split(':')[1])) if (byKey.has(ref)) out.add(ref);
  } else {
    const [source, code] = what.split(':');
    const ids = new Set(page.map((r) => `${type}/${r.id}`));
    for (const r of data[source]) if (refsOf(r, code).some((ref) => ids.has(ref))) out.add(`${source}/${r.id}`);
  }
  for (const r of page) out.delete(`${r.resourceType}/${r.id}`);
  return out;
}

t.test(`searches against the oracle (ORACLE_SEED=${SEED}, ${RUNS} searches)`, async (t) => {
  const { app, db } = await testApp(t, { env: { API_KEYS: KEY, PUBLIC_BASE_URL: '' } });
  await load(db, [dir], { bulk: true });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/fhir/v2`;
  const baseV1 = base.replace(/v2$/, 'v1');
  const rand = prng(SEED);
  let pages = 0;
  let totals = 0;
  let nonEmpty = 0;
  const forms: Record<string, number> = { POST: 0, v1: 0, plain: 0, exact: 0, contains: 0, not: 0, text: 0, phonetic: 0, near: 0, missing: 0, chain: 0, _has: 0, _include: 0, _sort: 0 };
  for (let run = 0; run < RUNS; run++) {
    const s = drawSearch(rand, data);
    for (const c of s.conditions) {
      const kind = ORACLE[s.type][c.code]?.kind;
      forms[c.has ? '_has' : c.chain ? 'chain' : kind === 'phonetic' || (kind === 'near' && c.modifier !== 'missing') ? kind : (c.modifier ?? 'plain')]++;
    }
    if (s.sort.length) forms._sort++;
    if (/_(rev)?include=/.test(s.query)) forms._include++;
    const expected = data[s.type].filter((r) => s.conditions.every((c) => matches(r, c)));
    const seen: R[] = [];
    /** each match's distance in its entry's search.extension (near), [id, km]. */
    const distances: [string, number][] = [];
    const problems: string[] = [];
    // A quarter of the searches are POSTed as a form; an Organization search the deprecated v1
    // answers goes there a third of the time. Next pages are always the GET of the `next` link.
    const root = s.type === 'Organization' && s.sort.length === 0 && !/_(rev)?include=/.test(s.query) &&
      s.conditions.every((c) => !c.chain && !c.has && V1_ORGANIZATION.includes(c.code)) && rand() < 0.33 ? baseV1 : base;
    const post = rand() < 0.25;
    let url: string | undefined = post ? `${root}/${s.type}/_search` : `${root}/${s.type}${s.query ? `?${s.query}` : ''}`;
    for (let page = 0; url && page < 500; page++) {
      const headers = { 'service-api-key': KEY, accept: 'application/fhir+json' };
      const res = await (page === 0 && post
        ? fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: s.query })
        : fetch(url, { headers }));
      pages++;
      if (res.status !== 200) {
        problems.push(`page ${page + 1}: ${res.status} ${(await res.text()).slice(0, 300)}`);
        break;
      }
      const bundle = (await res.json()) as { total?: number; link?: { relation: string; url: string }[]; entry?: { resource: R; search?: { mode?: string } }[] };
      if (bundle.total !== undefined) {
        totals++;
        if (bundle.total !== expected.length) problems.push(`page ${page + 1}: total ${bundle.total}, expected ${expected.length}`);
      }
      const matched = (bundle.entry ?? []).filter((e) => e.search?.mode === 'match');
      const mine = matched.map((e) => e.resource);
      seen.push(...mine);
      for (const e of matched) {
        const d = (e.search as { extension?: { url: string; valueDistance?: { value: number; code: string } }[] }).extension
          ?.find((x) => x.url === 'http://hl7.org/fhir/StructureDefinition/location-distance')?.valueDistance;
        if (d && d.code === 'km') distances.push([e.resource.id, d.value]);
      }
      const spec = s.query.split('&').find((q) => q.startsWith('_include=') || q.startsWith('_revinclude='));
      if (spec) {
        const got = new Set((bundle.entry ?? []).filter((e) => e.search?.mode === 'include').map((e) => `${e.resource.resourceType}/${e.resource.id}`));
        const want = included(spec, s.type, mine.map((r) => byKey.get(`${r.resourceType}/${r.id}`)!));
        const missing = [...want].filter((k) => !got.has(k));
        const extra = [...got].filter((k) => !want.has(k));
        // Past INCLUDE_CAP (1000 by default) a page gives the first 1000 and says so in a warning entry.
        const capped = (bundle.entry ?? []).some((e) => e.resource.resourceType === 'OperationOutcome' && /only the first 1000/.test(JSON.stringify(e.resource)));
        if (capped ? extra.length || got.size !== 1000 || want.size <= 1000 : missing.length || extra.length) {
          problems.push(`page ${page + 1} includes${capped ? ' (capped)' : ''}: missing ${missing.slice(0, 5)}, extra ${extra.slice(0, 5)}`);
        }
      }
      url = bundle.link?.find((l) => l.relation === 'next')?.url;
    }
    const ids = seen.map((r) => r.id);
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    const want = new Set(expected.map((r) => r.id));
    const missing = [...want].filter((id) => !ids.includes(id));
    const extra = ids.filter((id) => !want.has(id));
    if (dup.length) problems.push(`given twice: ${dup.slice(0, 5)}`);
    if (missing.length || extra.length) problems.push(`${ids.length} matches for ${want.size} expected: missing ${missing.slice(0, 5)}, extra ${extra.slice(0, 5)}`);
    const ranking = s.sort.length ? undefined : s.conditions.find((c) => !c.chain && !c.has && ORACLE[s.type][c.code].kind === 'phonetic');
    if (ranking) {
      const level = (r: R) => Math.min(...ranking.values.map((v) => phoneticLevel(byKey.get(`${r.resourceType}/${r.id}`)!, ranking.code, v) ?? 9));
      const at = seen.findIndex((r, i) => i > 0 && level(seen[i - 1]) > level(r));
      if (at > 0) problems.push(`ranked out of order at match ${at + 1}: ${seen[at - 1].id} (${level(seen[at - 1])}) before ${seen[at].id} (${level(seen[at])})`);
    }
    // Without _sort, a near search on its own type is nearest first, each match carrying its distance.
    const measured = s.conditions.find((c) => !c.chain && !c.has && c.modifier !== 'missing' && ORACLE[s.type][c.code].kind === 'near');
    if (measured) {
      const km = (r: R) => distanceTo(byKey.get(`${r.resourceType}/${r.id}`)!, measured.code, measured.values[0]);
      const at = s.sort.length ? -1 : seen.findIndex((r, i) => i > 0 && km(seen[i - 1]) > km(r) + 1e-9);
      if (at > 0) problems.push(`not nearest first at match ${at + 1}: ${seen[at - 1].id} (${km(seen[at - 1])} km) before ${seen[at].id} (${km(seen[at])} km)`);
      const off = distances.find(([id, d]) => Math.abs(d - km(byKey.get(`${s.type}/${id}`)!)) > 0.0006);
      if (off || distances.length !== seen.length) problems.push(`distances in search.extension: ${distances.length} for ${seen.length} matches${off ? `, ${off[0]} at ${off[1]} km` : ''}`);
    }
    if (s.sort.length) {
      const stored = seen.map((r) => byKey.get(`${r.resourceType}/${r.id}`)!);
      const at = stored.findIndex((r, i) => i > 0 && compareBy(stored[i - 1], r, s.sort) > 0);
      if (at > 0) problems.push(`out of order at match ${at + 1}: ${stored[at - 1].id} before ${stored[at].id}`);
    }
    if (expected.length) nonEmpty++;
    if (problems.length) t.fail(`${post ? 'POST ' : ''}${root === baseV1 ? 'v1 ' : ''}${s.type}?${s.query}`, { problems });
    if (post) forms.POST++;
    if (root === baseV1) forms.v1++;
  }
  t.pass(`${RUNS} searches (${nonEmpty} with matches), ${pages} pages, ${totals} totals checked; ${JSON.stringify(forms)}`);
});
