import { RESOURCE_TYPES, type BoundParam, type ResourceType } from '../../registry/index.ts';
import { unescape } from '../escape.ts';
import { badRequest, notSupported } from '../outcome.ts';
import { ID_RE, parseReference } from '../reference.ts';
import type { Condition, ParseContext, RefValue } from '../search-request.ts';
import { join, stmt, type Statement } from '../statement.ts';
import { copyText } from './copy.ts';
import { describe, isObject, optionalString, type SearchType } from './search-type.ts';

/**
 * Reference: an id, `Type/id` or an absolute URL of this server, a `:Type` modifier. Indexed from
 * literal references into reference_idx (param, target_type, target_id). Chains and `_has`, which
 * join through this table, are the compiler's (src/fhir/compile.ts).
 */
export interface ReferenceRow {
  param: number;
  targetType: string;
  targetId: string;
}

type ReferenceCondition = Extract<Condition, { kind: 'reference' }>;

export const isResourceType = (t: string): t is ResourceType => (RESOURCE_TYPES as readonly string[]).includes(t);

/** undefined: a reference that cannot be stored here (another server, another target type). */
function parseValue(p: BoundParam, raw: string, name: string, ctx: ParseContext, typeModifier?: string): RefValue | undefined {
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

export const reference: SearchType<ReferenceCondition, ReferenceRow> = {
  table: { name: 'reference_idx', alias: 'x', columns: 'target_type, target_id' },

  parse(param, modifier, raws, name, ctx) {
    if (modifier !== undefined && !(isResourceType(modifier) && (!param.target?.length || param.target.includes(modifier)))) {
      throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on reference parameter ${param.code}`, name);
    }
    const values = raws.map((r) => parseValue(param, r, name, ctx, modifier)).filter((v): v is RefValue => v !== undefined);
    return values.length ? { kind: 'reference', param, values } : { kind: 'none' };
  },

  modifiers: (param) => [...(param.target ?? [])],

  match(c) {
    const typed = c.values.filter((v) => v.type !== undefined);
    const untyped = c.values.filter((v) => v.type === undefined).map((v) => v.id);
    const parts: Statement[] = [];
    for (const t of new Set(typed.map((v) => v.type!))) {
      const ids = typed.filter((v) => v.type === t).map((v) => v.id);
      parts.push(ids.length === 1 ? stmt`(x.target_type = ${t} and x.target_id = ${ids[0]})` : stmt`(x.target_type = ${t} and x.target_id = any(${ids}::text[]))`);
    }
    if (untyped.length) parts.push(stmt`x.target_id = any(${untyped}::text[])`);
    return stmt`(${join(parts, 'or')})`;
  },

  rows: (c, hints) => stmt`select x.rid from reference_idx x where x.param = ${c.param.id} and ${reference.match(c, hints)!}`,

  rowsOf: {
    index(param, value, emit, fail) {
      if (!isObject(value)) fail(`must be a Reference object, found ${describe(value)}`);
      const ref = optionalString(value as Record<string, unknown>, 'reference', fail);
      const target = ref === undefined ? undefined : parseReference(ref);
      if (target) emit({ param: param.id, targetType: target.type, targetId: target.id });
    },

    same: (a, b) => a.targetId === b.targetId && a.targetType === b.targetType,

    copyText: (row) => `${copyText(row.targetType)}\t${copyText(row.targetId)}`,

    searchValue: (row) => `${row.targetType}/${row.targetId}`,
  },
};
