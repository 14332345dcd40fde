import { VERSION_TYPES, RESOURCE_TYPES, type BoundParam, type Registry, type ResourceType, type Version } from '../registry/index.ts';
import { parseFhirDate } from './date.ts';
import { normalize } from './normalize.ts';
import { badRequest, FhirError, notSupported } from './outcome.ts';
import { ID_RE } from './reference.ts';
import type { Condition, DateValue, RefValue, SearchRequest, SummaryMode, TokenValue, TotalMode } from './search-request.ts';
import { sortable } from './sort.ts';

/**
 * Query string → SearchRequest. Pure: no database, no HTTP. Every name is resolved through the
 * registry; every value is validated here so that the compiler only ever sees well-formed data.
 */
export interface ParseContext {
  version: Version;
  type: ResourceType;
  registry: Registry;
  /** Prefer: handling=strict — unknown parameters are errors instead of being ignored. */
  strict: boolean;
  /** absolute base URLs of this server (…/fhir/v1, …/fhir/v2): references to them are local. */
  bases: string[];
  now: number;
  defaultCount: number;
  maxCount: number;
  maxValuesPerParam: number;
  maxParams: number;
}

const DATE_PREFIXES = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap'] as const;
const RESULT_PARAMS = new Set(['_count', '_total', '_summary', '_elements', '_include', '_revinclude', '_cursor', '_format', '_pretty', '_sort', '_contained', '_containedType', '_query']);

/** Splits on `sep` where it is not escaped by a backslash (escapes are kept for `unescape`). */
export function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

/** `\,` `\|` `\$` `\\` → the character; any other backslash is illegal (400). */
export function unescape(s: string, name: string): string {
  return s.replace(/\\(.?)/gs, (_, c: string) => {
    if (c === ',' || c === '|' || c === '$' || c === '\\') return c;
    throw badRequest(`parameter ${name}: illegal escape "\\${c}" in "${s}" (only \\, \\| \\$ \\\\ are allowed)`, name);
  });
}

const isType = (t: string): t is ResourceType => (RESOURCE_TYPES as readonly string[]).includes(t);

/** Names of the version for the types it serves; a chain or _has into another type uses v2's names. */
function lookupAny(ctx: ParseContext, type: ResourceType, name: string) {
  const version = VERSION_TYPES[ctx.version].includes(type) ? ctx.version : 'v2';
  return ctx.registry.lookup(version, type, name);
}

class Unknown extends Error {}

function parseToken(p: BoundParam, raw: string, name: string, ctx: ParseContext): TokenValue {
  if (p.column === 'id') return { code: unescape(raw, name) };
  const parts = splitUnescaped(raw, '|');
  if (parts.length > 2) throw badRequest(`parameter ${name}: "${raw}" has more than one unescaped "|"`, name);
  if (parts.length === 1) {
    const code = unescape(parts[0], name);
    if (p.boolean && code !== 'true' && code !== 'false') {
      throw badRequest(`parameter ${name}: "${code}" is not a boolean (true or false)`, name);
    }
    return { code };
  }
  if (p.boolean) throw badRequest(`parameter ${name}: "${raw}" — a boolean takes true or false without a system`, name);
  const [sys, code] = parts.map((x) => unescape(x, name));
  if (sys === '' && code === '') throw badRequest(`parameter ${name}: "|" needs a system or a code`, name);
  const aliases = ctx.registry.systemAliases(ctx.version);
  const system = sys === '' ? null : (aliases[sys] ?? sys);
  return code === '' ? { system } : { system, code };
}

/**
 * A token on a `code` element, whose codes are stored without their implied system: that system
 * with a code is the bare code, that system alone is any value, `|code` (no system) is nothing.
 */
function impliedSystemCondition(param: BoundParam, implied: string, not: boolean, values: TokenValue[]): Condition {
  if (values.some((v) => v.system === implied && v.code === undefined)) return { kind: 'missing', param, missing: not };
  const kept = values.filter((v) => v.system !== null).map((v) => (v.system === implied ? { code: v.code } : v));
  if (kept.length === 0 && !not) return { kind: 'none' };
  return { kind: 'token', param, not, values: kept };
}

function parseDate(raw: string, name: string, ctx: ParseContext, impliedPrefix?: string): DateValue {
  const m = /^([a-z]{2})?(.*)$/s.exec(raw)!;
  let prefix = m[1];
  let text = m[2];
  if (prefix && !(DATE_PREFIXES as readonly string[]).includes(prefix)) {
    throw badRequest(`parameter ${name}: unknown date prefix "${prefix}" in "${raw}" (eq ne gt lt ge le sa eb ap)`, name);
  }
  if (impliedPrefix) {
    if (prefix) throw badRequest(`parameter ${name}: takes an instant without a prefix, got "${raw}"`, name);
    prefix = impliedPrefix;
  }
  // A raw "+" in a query string decodes to a space: "…T10:00:00 01:00" means +01:00.
  text = text.replace(/ (\d{2}:\d{2})$/, '+$1');
  const range = parseFhirDate(text);
  if (!range) {
    throw badRequest(`parameter ${name}: "${raw}" is not a FHIR date (YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.sss]][Z|±hh:mm])`, name);
  }
  let { low, high } = range;
  const p = (prefix ?? 'eq') as DateValue['prefix'];
  if (p === 'ap') {
    // ±10 % of the distance between now and the value (at least the value's own precision).
    const slack = Math.ceil(0.1 * Math.abs(ctx.now - low));
    low -= slack;
    high += slack;
  }
  return { prefix: p, low, high };
}

function parseRef(p: BoundParam, raw: string, name: string, ctx: ParseContext, typeModifier?: string): RefValue | undefined {
  const v = unescape(raw, name);
  let rest = v;
  if (/^https?:\/\//.test(v)) {
    const base = ctx.bases.find((b) => v.startsWith(`${b}/`));
    if (!base) return undefined; // another server's resource: matches nothing here
    rest = v.slice(base.length + 1);
  }
  const segs = rest.split('/');
  let type: string | undefined;
  let id: string;
  if (segs.length === 1) {
    id = segs[0];
    type = typeModifier ?? (p.target?.length === 1 ? p.target[0] : undefined);
  } else if (segs.length === 2 || (segs.length === 4 && segs[2] === '_history')) {
    [type, id] = segs;
    if (typeModifier && typeModifier !== type) return undefined;
    if (p.target && p.target.length > 0 && !p.target.includes(type as ResourceType)) return undefined;
  } else {
    throw badRequest(`parameter ${name}: "${v}" is not an id, Type/id or an absolute URL of this server`, name);
  }
  if (!ID_RE.test(id)) throw badRequest(`parameter ${name}: "${id}" is not a valid resource id`, name);
  return { type, id };
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
    if (!isType(refType)) throw new Unknown(`_has type ${refType}`);
    const param = ctx.registry.byCode(refType, refCode);
    if (!param || param.type !== 'reference') throw new Unknown(`${refType}:${refCode}`);
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
    if (!param) throw new Unknown(head);
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
  if (!found) throw new Unknown(code);
  let { param } = found;
  const raws = splitUnescaped(value, ',');
  if (raws.length > ctx.maxValuesPerParam) {
    throw badRequest(`parameter ${full}: ${raws.length} values, at most ${ctx.maxValuesPerParam} are accepted`, full);
  }
  if (modifier === 'missing') return { kind: 'missing', param, missing: parseMissing(value, full) };
  const unsupported = () =>
    notSupported(`parameter ${full}: the modifier ":${modifier}" is not supported on ${param.type} parameter ${code}`, full);
  switch (param.type) {
    case 'token': {
      if (modifier !== undefined && modifier !== 'not') throw unsupported();
      const values = raws.map((r) => parseToken(param, r, full, ctx));
      return param.impliedSystem === undefined
        ? { kind: 'token', param, not: modifier === 'not', values }
        : impliedSystemCondition(param, param.impliedSystem, modifier === 'not', values);
    }
    case 'string': {
      let mode: 'prefix' | 'exact' | 'contains' = 'prefix';
      if (modifier === 'exact' || modifier === 'contains') mode = modifier;
      else if (modifier !== undefined && param.parts?.[modifier]) {
        const sub = ctx.registry.byCode(type, param.parts[modifier]);
        if (!sub) throw unsupported();
        param = sub;
      } else if (modifier !== undefined) throw unsupported();
      const values = raws.map((r) => unescape(r, full));
      if (mode !== 'exact' && values.some((v) => normalize(v) === '' && v !== '')) {
        throw badRequest(`parameter ${full}: "${value}" has no letter or digit to search for`, full);
      }
      return { kind: 'string', param, mode, values };
    }
    case 'date': {
      if (modifier !== undefined) throw unsupported();
      return { kind: 'date', param, values: raws.map((r) => parseDate(r, full, ctx, found.prefix)) };
    }
    case 'reference': {
      if (modifier !== undefined && !(isType(modifier) && (!param.target?.length || param.target.includes(modifier)))) {
        throw unsupported();
      }
      const values = raws.map((r) => parseRef(param, r, full, ctx, modifier)).filter((v): v is RefValue => v !== undefined);
      return values.length ? { kind: 'reference', param, values } : { kind: 'none' };
    }
  }
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

const SUMMARY: SummaryMode[] = ['true', 'text', 'data', 'count', 'false'];
const TOTAL: TotalMode[] = ['none', 'estimate', 'accurate'];

export function parseSearch(pairs: [string, string][], ctx: ParseContext): SearchRequest {
  if (!VERSION_TYPES[ctx.version].includes(ctx.type)) throw new FhirError(404, 'not-found', `${ctx.type} is not served by ${ctx.version}`);
  if (pairs.length > ctx.maxParams) throw badRequest(`${pairs.length} parameters, at most ${ctx.maxParams} are accepted`);
  const req: SearchRequest = {
    version: ctx.version, type: ctx.type, conditions: [], count: ctx.defaultCount,
    include: [], revinclude: [], sort: [], pretty: false, applied: [], criteria: [], warnings: [],
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
      if (ctx.strict) throw notSupported(`unknown search parameter ${name} for ${ctx.type} in ${ctx.version} (${err.message})`, name);
    }
  }
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
      case '_format': {
        const v = single(name, values).toLowerCase().replace(/ /g, '+');
        if (!['json', 'application/json', 'application/fhir+json'].includes(v.split(';')[0].trim())) {
          throw new FhirError(406, 'not-supported', `_format=${values[0]}: only JSON (application/fhir+json) is served`);
        }
        keep();
        break;
      }
      case '_pretty':
        req.pretty = single(name, values) === 'true';
        keep();
        break;
      case '_contained':
        if (single(name, values) !== 'false' && ctx.strict) throw notSupported(`_contained=${values[0]} is not supported`, name);
        break;
      case '_query':
        throw notSupported(`_query=${values[0]}: no named queries are defined`, name);
      default:
        // _containedType: not supported — ignored, or refused under handling=strict
        if (name.startsWith('_include') || name.startsWith('_revinclude')) throw notSupported(`parameter ${name}: unknown modifier`, name);
        if (ctx.strict) throw notSupported(`parameter ${name} is not supported`, name);
    }
  }
  if (req.summary === 'text' && (req.include.length || req.revinclude.length)) {
    throw badRequest('_summary=text cannot be combined with _include or _revinclude');
  }
  return req;
}
