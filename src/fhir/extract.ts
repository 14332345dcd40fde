import type { BoundParam, Path, Registry, ResourceType, Step } from '../registry/index.ts';
import { parseFhirDate } from './date.ts';
import { normalize } from './normalize.ts';
import { parseReference } from './reference.ts';

/**
 * Extractors derived from the registry: a resource in, its index rows out. A value of the wrong JSON
 * type where the registry reads (an `identifier` that is not an array of objects, a `family` that is
 * not a string…) is an ExtractError naming the element, so the loader can reject the entry.
 */
export interface TokenRow { param: number; system: string | null; code: string }
export interface StringRow { param: number; norm: string; exact: string }
export interface DateRow { param: number; low: number; high: number }
export interface ReferenceRow { param: number; targetType: string; targetId: string }
export interface IndexRows {
  token: TokenRow[];
  string: StringRow[];
  date: DateRow[];
  reference: ReferenceRow[];
}

export class ExtractError extends Error {
  constructor(readonly element: string, message: string) {
    super(`${element}: ${message}`);
  }
}

/** A value and where it sits; the element path is only spelled out for an error message. */
class Node {
  constructor(
    readonly value: unknown,
    private readonly parent?: Node,
    private readonly key?: string | number,
  ) {}

  get at(): string {
    if (!this.parent) return '';
    const up = this.parent.at;
    return typeof this.key === 'number' ? `${up}[${this.key}]` : up ? `${up}.${this.key}` : String(this.key);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown) => (Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

function field(nodes: Node[], name: string, many: boolean): Node[] {
  const out: Node[] = [];
  for (const n of nodes) {
    if (!isObject(n.value)) throw new ExtractError(n.at, `must be an object, found ${kind(n.value)}`);
    const v = n.value[name];
    if (v === undefined || v === null) continue;
    if (many) {
      if (!Array.isArray(v)) throw new ExtractError(new Node(v, n, name).at, `must be an array, found ${kind(v)}`);
      const holder = new Node(v, n, name);
      for (let i = 0; i < v.length; i++) if (v[i] !== null) out.push(new Node(v[i], holder, i));
    } else {
      if (Array.isArray(v)) throw new ExtractError(new Node(v, n, name).at, 'must be a single value, found an array');
      out.push(new Node(v, n, name));
    }
  }
  return out;
}

function step(nodes: Node[], s: Step): Node[] {
  if (nodes.length === 0) return nodes;
  if (typeof s === 'string') {
    if (s === 'value[x]') {
      return nodes.flatMap((n) => {
        if (!isObject(n.value)) throw new ExtractError(n.at, `must be an object, found ${kind(n.value)}`);
        const key = Object.keys(n.value).find((k) => k.startsWith('value'));
        return key ? [new Node(n.value[key], n, key)] : [];
      });
    }
    return s.endsWith('[]') ? field(nodes, s.slice(0, -2), true) : field(nodes, s, false);
  }
  if ('ext' in s) {
    return field(nodes, 'extension', true).filter((n) => {
      if (!isObject(n.value)) throw new ExtractError(n.at, `must be an object, found ${kind(n.value)}`);
      return n.value.url === s.ext;
    });
  }
  return nodes.filter((n) => evaluate([n], s.where).some((m) => m.value === s.is));
}

function evaluate(nodes: Node[], path: Path): Node[] {
  return path.reduce(step, nodes);
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string') throw new ExtractError(at, `must be a string, found ${kind(v)}`);
  return v;
}

function optStr(o: Record<string, unknown>, key: string, at: string): string | undefined {
  const v = o[key];
  return v === undefined || v === null ? undefined : str(v, `${at}.${key}`);
}

/** Token values of one element: boolean, code, Coding, CodeableConcept or Identifier. */
function tokens(n: Node, out: (system: string | null, code: string) => void): void {
  const v = n.value;
  if (typeof v === 'boolean') return out(null, String(v));
  if (typeof v === 'string') return out(null, v);
  if (!isObject(v)) throw new ExtractError(n.at, `must be a code, Coding, CodeableConcept or Identifier, found ${kind(v)}`);
  if ('coding' in v) {
    for (const c of field([n], 'coding', true)) tokens(c, out);
    return;
  }
  const system = optStr(v, 'system', n.at) ?? null;
  const code = 'code' in v ? optStr(v, 'code', n.at) : optStr(v, 'value', n.at);
  if (code !== undefined && code !== '') out(system, code);
}

export function extract(resource: Record<string, unknown>, params: readonly BoundParam[]): IndexRows {
  const rows: IndexRows = { token: [], string: [], date: [], reference: [] };
  const root: Node[] = [new Node(resource)];
  for (const p of params) {
    if (p.column) continue;
    const seen = new Set<string>();
    const once = (key: string) => (seen.has(key) ? false : (seen.add(key), true));
    for (const path of p.paths) {
      for (const n of evaluate(root, path)) {
        switch (p.type) {
          case 'token':
            if (p.boolean && typeof n.value !== 'boolean') throw new ExtractError(n.at, `must be a boolean, found ${kind(n.value)}`);
            tokens(n, (system, code) => {
              if (once(`${system}|${code}`)) rows.token.push({ param: p.id, system, code });
            });
            break;
          case 'string': {
            const exact = str(n.value, n.at);
            if (exact.trim() === '') break;
            const norm = normalize(exact);
            if (once(`${norm}\u0000${exact}`)) rows.string.push({ param: p.id, norm, exact });
            break;
          }
          case 'date': {
            const range = parseFhirDate(str(n.value, n.at));
            if (!range) throw new ExtractError(n.at, `is not a valid FHIR date: "${String(n.value)}"`);
            if (once(`${range.low}/${range.high}`)) rows.date.push({ param: p.id, ...range });
            break;
          }
          case 'reference': {
            if (!isObject(n.value)) throw new ExtractError(n.at, `must be a Reference object, found ${kind(n.value)}`);
            const ref = optStr(n.value, 'reference', n.at);
            const target = ref === undefined ? undefined : parseReference(ref);
            if (target && once(`${target.type}/${target.id}`)) {
              rows.reference.push({ param: p.id, targetType: target.type, targetId: target.id });
            }
            break;
          }
        }
      }
    }
  }
  return rows;
}

export function extractFor(registry: Registry, type: ResourceType, resource: Record<string, unknown>): IndexRows {
  return extract(resource, registry.forType(type));
}
