import { VERSION_TYPES, RESOURCE_TYPES, type ResourceType } from '../registry/index.ts';
import { splitUnescaped } from './escape.ts';
import { badRequest, FhirError, notSupported } from './outcome.ts';
import type { Condition, ParseContext, SearchRequest, SummaryMode, TotalMode } from './search-request.ts';
import { sortable } from './sort.ts';
import { searchType } from './types/index.ts';

/**
 * Query string → SearchRequest. Pure: no database, no HTTP. Every name is resolved through the
 * registry, every value parsed by its parameter's type (src/fhir/types), so that the compiler only
 * ever sees well-formed data.
 */
export type { ParseContext };
const RESULT_PARAMS = new Set(['_count', '_total', '_summary', '_elements', '_include', '_revinclude', '_cursor', '_format', '_pretty', '_sort', '_contained', '_containedType', '_query']);

const isType = (t: string): t is ResourceType => (RESOURCE_TYPES as readonly string[]).includes(t);

/** Names of the version for the types it serves; a chain or _has into another type uses v2's names. */
function lookupAny(ctx: ParseContext, type: ResourceType, name: string) {
  const version = VERSION_TYPES[ctx.version].includes(type) ? ctx.version : 'v2';
  return ctx.registry.lookup(version, type, name);
}

/** A name this server does not know (`subject`, the whole parameter or a part of it): the message says why. */
class Unknown extends Error {
  constructor(readonly subject: string, reason: string) {
    super(`${subject} ${reason}`);
  }
}

/** The accepted name closest to a misspelt one (at most two edits away), if any. */
function closest(name: string, names: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of names) {
    // Levenshtein distance, one row at a time.
    let row = Array.from({ length: candidate.length + 1 }, (_, j) => j);
    for (let i = 1; i <= name.length; i++) {
      const next = [i];
      for (let j = 1; j <= candidate.length; j++) {
        next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (name[i - 1] === candidate[j - 1] ? 0 : 1));
      }
      row = next;
    }
    if (row[candidate.length] < bestDistance) [best, bestDistance] = [candidate, row[candidate.length]];
  }
  return best;
}

/** Why `code` means nothing on `type`, with the name it is likely a misspelling of. */
function unknownParam(ctx: ParseContext, type: ResourceType, code: string): Unknown {
  const version = VERSION_TYPES[ctx.version].includes(type) ? ctx.version : 'v2';
  const guess = closest(code, ctx.registry.names(version, type).keys());
  return new Unknown(code, `is not a search parameter of ${type}${guess ? ` (did you mean ${guess}?)` : ''}`);
}

function parseMissing(raw: string, name: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw badRequest(`parameter ${name}: :missing takes true or false, got "${raw}"`, name);
}

/** One `name=value` on `type` → a condition (recursing through chains and _has). */
function parseCondition(name: string, value: string, type: ResourceType, ctx: ParseContext, depth: number): Condition {
  const full = name;
  if (depth > 3) throw badRequest(`parameter ${full}: chains are limited to 3 levels`, full);
  if (name.startsWith('_has:')) {
    const parts = name.split(':');
    if (parts.length < 4) throw badRequest(`parameter ${full}: _has needs _has:Type:reference:parameter`, full);
    const [, refType, refCode] = parts;
    if (!isType(refType)) throw new Unknown(refType, 'is not a resource type of this server');
    const param = ctx.registry.byCode(refType, refCode);
    if (!param || param.type !== 'reference') throw new Unknown(refCode, `is not a reference parameter of ${refType}`);
    if (param.target && !param.target.includes(type)) {
      throw badRequest(`parameter ${full}: ${refType}.${refCode} does not reference ${type}`, full);
    }
    const inner = parseCondition(parts.slice(3).join(':'), value, refType, ctx, depth + 1);
    return { kind: 'has', param, inner };
  }
  const dot = name.indexOf('.');
  if (dot >= 0) {
    const [head, modifier] = name.slice(0, dot).split(':', 2);
    const param = lookupAny(ctx, type, head)?.param;
    if (!param) throw unknownParam(ctx, type, head);
    if (param.type !== 'reference') throw badRequest(`parameter ${full}: ${head} is not a reference, it cannot be chained`, full);
    let target = modifier;
    if (target === undefined) {
      if (param.target?.length !== 1) throw badRequest(`parameter ${full}: say which type ${head} points at (${head}:Type.…)`, full);
      target = param.target[0];
    }
    if (!isType(target) || (param.target && !param.target.includes(target))) {
      throw badRequest(`parameter ${full}: ${head} cannot point at ${target}`, full);
    }
    const inner = parseCondition(name.slice(dot + 1), value, target, ctx, depth + 1);
    return { kind: 'chain', param, targetType: target, inner };
  }
  const [code, modifier, ...more] = name.split(':');
  if (more.length) throw badRequest(`parameter ${full}: more than one modifier`, full);
  const found = lookupAny(ctx, type, code);
  if (!found) throw unknownParam(ctx, type, code);
  const { param } = found;
  const raws = splitUnescaped(value, ',');
  if (raws.length > ctx.maxValuesPerParam) {
    throw badRequest(`parameter ${full}: ${raws.length} values, at most ${ctx.maxValuesPerParam} are accepted`, full);
  }
  if (modifier === 'missing') return { kind: 'missing', param, missing: parseMissing(value, full) };
  return searchType(param).parse(param, modifier, raws, full, ctx, type, found.prefix);
}

function single(name: string, values: string[]): string {
  if (new Set(values).size > 1) throw badRequest(`parameter ${name} is given more than once with different values`, name);
  return values[0];
}

function parseIncludes(name: string, values: string[], ctx: ParseContext, rev: boolean, req: SearchRequest): void {
  const refs = (t: ResourceType) => ctx.registry.forType(t).filter((p) => p.type === 'reference');
  const referrers = () => RESOURCE_TYPES.flatMap((t) => refs(t).filter((p) => p.target?.includes(ctx.type)));
  for (const v of values) {
    if (v === '*') {
      // `*`: every reference of the type; on Organization, as the seed lists it, also the
      // PractitionerRole, Device and HealthcareService resources that reference it.
      if (!rev) for (const p of refs(ctx.type)) if (p.target?.length) req.include.push({ param: p });
      if (rev) for (const p of referrers()) req.revinclude.push({ param: p });
      else if (ctx.type === 'Organization') for (const p of referrers()) if (p.resourceType !== ctx.type) req.revinclude.push({ param: p });
      continue;
    }
    const [src, code, target, ...more] = v.split(':');
    const bad = () =>
      badRequest(`parameter ${name}: "${v}" is not a valid ${rev ? 'reverse ' : ''}include of ${ctx.type} (see the CapabilityStatement)`, name);
    if (more.length || !src || !code || !isType(src) || (!rev && src !== ctx.type)) throw bad();
    const params = refs(src).filter((p) => code === '*' || p.code === code);
    const usable = params.filter((p) => (rev ? p.target?.includes(ctx.type) : p.target?.length));
    if (params.length === 0 || (code !== '*' && usable.length === 0 && rev)) throw bad();
    for (const p of usable) {
      if (target !== undefined && !(isType(target) && p.target?.includes(target))) throw bad();
      (rev ? req.revinclude : req.include).push({ param: p, targetType: target });
    }
  }
}

/**
 * `_sort=a,-b`: sortable parameters of the type (registry `sortable`), `-` for descending. A key
 * that cannot sort is left out with a warning, or refused under handling=strict; a repeated key is
 * the first one. The self link shows the keys applied.
 */
function parseSort(value: string, ctx: ParseContext, req: SearchRequest): void {
  const refused: string[] = [];
  for (const raw of value.split(',').map((k) => k.trim())) {
    const desc = raw.startsWith('-');
    const name = desc ? raw.slice(1) : raw;
    const found = ctx.registry.lookup(ctx.version, ctx.type, name);
    if (!found || found.prefix !== undefined || !sortable(found.param)) {
      refused.push(raw);
      continue;
    }
    if (!req.sort.some((k) => k.param === found.param)) req.sort.push({ param: found.param, desc });
  }
  if (refused.length) {
    const keys = ctx.registry.forType(ctx.type).filter((p) => sortable(p) && p.versions.includes(ctx.version)).map((p) => p.code);
    const message = `_sort: ${refused.map((r) => `"${r}"`).join(', ')} cannot sort ${ctx.type} (sort keys: ${keys.join(', ')})`;
    if (ctx.strict) throw notSupported(message, '_sort');
    req.warnings.push(`${message}; left out`);
  }
  if (req.sort.length) req.applied.push(['_sort', req.sort.map((k) => `${k.desc ? '-' : ''}${k.param.code}`).join(',')]);
}

/**
 * The conditions with those on one parameter folded into one wherever its type can write them as
 * one (SearchType.conjoin): `_lastUpdated=geX&_lastUpdated=ltY` reads one range of its index
 * instead of intersecting two sets. The request's criteria and links keep what was asked.
 */
function conjoined(conditions: Condition[]): Condition[] {
  const out: Condition[] = [];
  for (const c of conditions) {
    const i = 'param' in c ? out.findIndex((o) => o.kind === c.kind && 'param' in o && o.param.id === c.param.id) : -1;
    const folded = i < 0 || !('param' in c) ? undefined : searchType(c.param).conjoin?.(out[i] as never, c as never);
    if (folded) out[i] = folded;
    else out.push(c);
  }
  return out;
}

/**
 * A prefix condition on each of a pair's two parameters (src/fhir/types/pair.ts) folded into one
 * condition on the pair, whose index holds both: one range read instead of two sets intersected.
 * Not for a sorted search, whose sort walks take their bounds from the conditions on the sort key.
 */
function paired(conditions: Condition[], ctx: ParseContext): Condition[] {
  let out = conditions;
  for (const p of ctx.registry.forType(ctx.type)) {
    if (p.special !== 'pair') continue;
    const [i, j] = p.pair!.map((code) => out.findIndex((c) => c.kind === 'string' && c.mode === 'prefix' && c.param.code === code));
    if (i < 0 || j < 0) continue;
    const [a, b] = [out[i], out[j]] as Extract<Condition, { kind: 'string' }>[];
    const folded: Condition = { kind: 'pair', param: p, a: a.values, b: b.values };
    out = out.flatMap((c, k) => (k === i ? [folded] : k === j ? [] : [c]));
  }
  return out;
}

const SUMMARY: SummaryMode[] = ['true', 'text', 'data', 'count', 'false'];
const TOTAL: TotalMode[] = ['none', 'estimate', 'accurate'];

export function parseSearch(pairs: [string, string][], ctx: ParseContext): SearchRequest {
  if (!VERSION_TYPES[ctx.version].includes(ctx.type)) throw new FhirError(404, 'not-found', `${ctx.type} is not served by ${ctx.version}`);
  if (pairs.length > ctx.maxParams) throw badRequest(`${pairs.length} parameters, at most ${ctx.maxParams} are accepted`);
  const req: SearchRequest = {
    version: ctx.version, type: ctx.type, conditions: [], count: ctx.defaultCount,
    include: [], revinclude: [], sort: [], pretty: false, applied: [], criteria: [], warnings: [],
  };
  /** FHIR's lenient default: what cannot be applied is left out, with a warning; a 400 under handling=strict. */
  const ignore = (message: string, name: string) => {
    if (ctx.strict) throw notSupported(message, name);
    req.warnings.push(`${message}; ignored`);
  };
  const result = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    if (name.includes('\u0000') || value.includes('\u0000')) {
      throw badRequest(`parameter ${name.replace(/\u0000/g, '\\0')}: a NUL character is not allowed in a search`, name.replace(/\u0000/g, ''));
    }
    if (value.trim() === '') continue; // empty parameters are ignored (R4)
    const base = name.split(':')[0];
    if (RESULT_PARAMS.has(base)) {
      const key = name.startsWith('_include') || name.startsWith('_revinclude') ? name : base;
      if (name !== base && !['_include', '_revinclude'].includes(base)) {
        throw notSupported(`parameter ${name}: result parameters take no modifier`, name);
      }
      result.set(key, [...(result.get(key) ?? []), value]);
      continue;
    }
    try {
      req.conditions.push(parseCondition(name, value, ctx.type, ctx, 0));
      req.applied.push([name, value]);
      req.criteria.push([name, value]);
    } catch (err) {
      if (!(err instanceof Unknown)) throw err;
      ignore(err.subject === name ? err.message : `${name}: ${err.message}`, name);
    }
  }
  req.conditions = conjoined(req.conditions);
  for (const [name, values] of result) {
    const keep = () => values.forEach((v) => req.applied.push([name, v]));
    switch (name) {
      case '_count': {
        const v = single(name, values);
        if (!/^\d{1,9}$/.test(v)) throw badRequest(`The _count parameter must be a non-negative integer, got "${v}"`, name);
        req.count = Number(v);
        if (req.count > ctx.maxCount) {
          req.warnings.push(`_count=${v} is above the maximum page size; ${ctx.maxCount} is used`);
          req.count = ctx.maxCount;
        }
        req.applied.push([name, String(req.count)]);
        break;
      }
      case '_total': {
        const v = single(name, values);
        if (!TOTAL.includes(v as TotalMode)) throw badRequest(`Bad value for the _total parameter "${v}". Allowed values are: accurate, none, estimate`, name);
        req.total = v as TotalMode;
        keep();
        break;
      }
      case '_summary': {
        const v = single(name, values);
        if (!SUMMARY.includes(v as SummaryMode)) throw badRequest(`Bad value for _summary "${v}". Allowed values are: true, text, data, count, false`, name);
        req.summary = v as SummaryMode;
        keep();
        break;
      }
      case '_elements': {
        const list = single(name, values).split(',').map((e) => e.trim()).filter(Boolean);
        const bad = list.find((e) => !/^[a-zA-Z][A-Za-z0-9_]{0,63}$/.test(e));
        if (bad) throw badRequest(`parameter _elements: "${bad}" is not an element name`, name);
        req.elements = list;
        keep();
        break;
      }
      case '_include':
      case '_revinclude': {
        parseIncludes(name, values, ctx, name === '_revinclude', req);
        keep();
        break;
      }
      case '_include:iterate':
      case '_revinclude:iterate':
      case '_include:recurse':
      case '_revinclude:recurse':
        throw notSupported(`parameter ${name}: iterative includes are not supported`, name);
      case '_cursor':
        req.cursor = single(name, values);
        break;
      case '_sort':
        parseSort(single(name, values), ctx, req);
        break;
      case '_format':
        // Content negotiation is the route's (src/routes/fhir.ts): here it only carries over to links.
        keep();
        break;
      case '_pretty':
        req.pretty = single(name, values) === 'true';
        keep();
        break;
      case '_contained':
        if (single(name, values) !== 'false') ignore(`_contained=${values[0]} is not supported: contained resources are not searched`, name);
        break;
      case '_query':
        throw notSupported(`_query=${values[0]}: no named queries are defined`, name);
      default:
        if (name.startsWith('_include') || name.startsWith('_revinclude')) throw notSupported(`parameter ${name}: unknown modifier`, name);
        ignore(`parameter ${name} is not supported`, name); // _containedType
    }
  }
  if (req.summary === 'text' && (req.include.length || req.revinclude.length)) {
    throw badRequest('_summary=text cannot be combined with _include or _revinclude');
  }
  if (req.sort.length === 0) req.conditions = paired(req.conditions, ctx);
  return req;
}
