import type { BoundParam, Path, Registry, ResourceType, Step } from '../registry/index.ts';
import type { DateRow } from './types/date.ts';
import type { NearRow } from './types/near.ts';
import { addPairRows, type PairRow } from './types/pair.ts';
import { describe, INDEX_KINDS, indexKind, isObject, searchType, subPath, type Fail, type IndexKind } from './types/index.ts';
import type { PhoneticRow } from './types/phonetic.ts';
import type { ReferenceRow } from './types/reference.ts';
import type { StringRow } from './types/string.ts';
import type { TokenRow } from './types/token.ts';

/**
 * The extractor: a resource in, its index rows out, for every parameter of its type in the registry.
 * Each parameter's paths are compiled once per type into chains of closures that walk the JSON and
 * hand every element value they reach to the parameter type's `index` (src/fhir/types). A value of
 * the wrong JSON type where the registry reads (an `identifier` that is not an array, a `family`
 * that is not a string…) is an ExtractError naming the element, so the loader can reject the entry.
 *
 * The walk keeps no element path: when something is wrong it stops, and the same walk runs again
 * with its path traced, to name the element.
 */
export type { DateRow, NearRow, PairRow, PhoneticRow, ReferenceRow, StringRow, TokenRow };
/** A resource's index rows, by index table (src/fhir/types INDEXED). */
export interface IndexRows {
  token: TokenRow[];
  string: StringRow[];
  date: DateRow[];
  reference: ReferenceRow[];
  phonetic: PhoneticRow[];
  near: NearRow[];
  pair: PairRow[];
}

export const emptyIndexRows = (): IndexRows => Object.fromEntries(INDEX_KINDS.map((k) => [k, []])) as unknown as IndexRows;

export class ExtractError extends Error {
  constructor(readonly element: string, message: string) {
    super(`${element}: ${message}`);
  }
}

/** Where the walk is: undefined when untraced, else the element path so far. */
type Trail = (string | number)[] | undefined;
type Visit = (v: unknown, trail: Trail) => void;

const BAIL: unique symbol = Symbol('not what the registry reads');

const pathText = (trail: (string | number)[]) =>
  trail.reduce<string>((at, k) => (typeof k === 'number' ? `${at}[${k}]` : at ? `${at}.${k}` : k), '');

/** Stops the walk; traced, with the element's path and what is wrong. */
function fail(trail: Trail, message: string, at?: string): never {
  if (!trail) throw BAIL;
  throw new ExtractError(subPath(pathText(trail) || undefined, at) ?? '', message);
}

/** `next` on an element of `v`, the element's key on the trail while it runs. */
function enter(v: unknown, key: string | number, trail: Trail, next: Visit): void {
  if (trail) {
    trail.push(key);
    next(v, trail);
    trail.pop();
  } else next(v, trail);
}

function field(name: string, many: boolean, next: Visit): Visit {
  return (v, trail) => {
    if (!isObject(v)) return fail(trail, `must be an object, found ${describe(v)}`);
    const x = v[name];
    if (x === undefined || x === null) return;
    if (!many) {
      if (Array.isArray(x)) return enter(x, name, trail, (_, t) => fail(t, 'must be a single value, found an array'));
      return enter(x, name, trail, next);
    }
    if (!Array.isArray(x)) return enter(x, name, trail, (_, t) => fail(t, `must be an array, found ${describe(x)}`));
    trail?.push(name);
    for (let i = 0; i < x.length; i++) if (x[i] !== null) enter(x[i], i, trail, next);
    trail?.pop();
  };
}

function compileStep(s: Step, next: Visit): Visit {
  if (typeof s === 'string') {
    if (s === 'value[x]') {
      return (v, trail) => {
        if (!isObject(v)) return fail(trail, `must be an object, found ${describe(v)}`);
        for (const k of Object.keys(v)) if (k.startsWith('value')) return enter(v[k], k, trail, next);
      };
    }
    return s.endsWith('[]') ? field(s.slice(0, -2), true, next) : field(s, false, next);
  }
  if ('ext' in s) {
    const url = s.ext;
    return field('extension', true, (e, trail) => {
      if (!isObject(e)) return fail(trail, `must be an object, found ${describe(e)}`);
      if (e.url === url) next(e, trail);
    });
  }
  const is = s.is;
  let hit = false;
  const probe = compilePath(s.where, (m) => {
    if (m === is) hit = true;
  });
  return (v, trail) => {
    hit = false;
    probe(v, trail);
    if (hit) next(v, trail);
  };
}

function compilePath(path: Path, last: Visit): Visit {
  let next = last;
  for (let i = path.length - 1; i >= 0; i--) next = compileStep(path[i], next);
  return next;
}

export type Extractor = (resource: Record<string, unknown>) => IndexRows;

/** The extractor of these parameters (a type's, from the registry). */
export function compileExtractor(params: readonly BoundParam[]): Extractor {
  let rows: IndexRows = emptyIndexRows();
  // The rows of the parameter being extracted start here in its table (de-duplication scans from it).
  let start = 0;
  // The trail of the value being indexed, for `fail` (set by its visit; undefined on the fast walk).
  let current: Trail;
  const compiled = params.flatMap((p) => {
    const kind = searchType(p).rowsOf;
    const table: IndexKind | undefined = indexKind(p);
    if (!kind || table === undefined) return []; // a column (_id): no index rows
    // Made once per parameter: the walk allocates nothing per value but its rows.
    const emit = (row: unknown) => {
      const out = rows[table] as unknown[];
      for (let i = start; i < out.length; i++) if (kind.same(out[i], row)) return;
      out.push(row);
    };
    const failHere: Fail = (message, at) => fail(current, message, at);
    const visit: Visit = (v, trail) => {
      current = trail;
      kind.index(p, v, emit, failHere);
    };
    return [{ table, paths: p.paths.map((path) => compilePath(path, visit)) }];
  });
  // A pair's rows follow from its parts' string rows, once they are all extracted.
  const pairs = params.filter((p) => p.special === 'pair').map((p) => {
    const [a, b] = p.pair!.map((code) => params.find((x) => x.code === code && x.type === 'string'));
    if (!a || !b) throw new Error(`pair ${p.resourceType}.${p.code}: its parts ${p.pair!.join(', ')} must be string parameters of the type`);
    return { p, a, b };
  });
  const walk = (resource: Record<string, unknown>, trail: Trail): IndexRows => {
    rows = emptyIndexRows();
    for (const c of compiled) {
      start = rows[c.table].length;
      for (const path of c.paths) path(resource, trail);
    }
    for (const { p, a, b } of pairs) addPairRows(p, a, b, rows.string, rows.pair);
    return rows;
  };
  return (resource) => {
    try {
      return walk(resource, undefined);
    } catch (err) {
      if (err !== BAIL) throw err;
      walk(resource, []); // throws the ExtractError that names the element
      throw new Error('extraction failed untraced but not traced');
    }
  };
}

const extractors = new WeakMap<Registry, Map<ResourceType, Extractor>>();

/** The extractor of a type (made once per registry and type). */
export function extractorFor(registry: Registry, type: ResourceType): Extractor {
  let m = extractors.get(registry);
  if (!m) extractors.set(registry, (m = new Map()));
  let e = m.get(type);
  if (!e) m.set(type, (e = compileExtractor(registry.forType(type))));
  return e;
}
