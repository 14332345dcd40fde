import { PARAMS, V1_SYSTEM_ALIASES } from './params.ts';
import { RESOURCE_TYPES, type BoundParam, type ResourceType, type SearchParamDef, type Version } from './types.ts';

export * from './types.ts';
export { PARAMS, V1_SYSTEM_ALIASES } from './params.ts';

/**
 * Stable parameter identity: FNV-1a of "<ResourceType>.<code>" as a signed 32-bit integer. It
 * depends on nothing but the name, so adding or reordering entries never changes a stored row.
 */
export function paramId(resourceType: string, code: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(`${resourceType}.${code}`, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** A parameter read from one element that does not repeat: each resource has at most one value of it. */
export function singleValued(param: SearchParamDef): boolean {
  const repeats = (step: SearchParamDef['paths'][number][number]) => (typeof step !== 'string' ? 'ext' in step : step.endsWith('[]'));
  return param.paths.length === 1 && !param.paths[0].some(repeats);
}

export interface Registry {
  /** every parameter of a type, searchable or not (the extractors index them all). */
  forType(type: ResourceType): readonly BoundParam[];
  /** the parameter a search name means in one version, with the prefix an alias implies. */
  lookup(version: Version, type: ResourceType, name: string): { param: BoundParam; prefix?: string } | undefined;
  /** the parameter of a type by canonical code (any version), e.g. for _include and chains. */
  byCode(type: ResourceType, code: string): BoundParam | undefined;
  /** the names a version accepts on a type, with their parameter. */
  names(version: Version, type: ResourceType): ReadonlyMap<string, { param: BoundParam; prefix?: string }>;
  all: readonly BoundParam[];
  systemAliases(version: Version): Readonly<Record<string, string>>;
}

export function buildRegistry(defs: readonly SearchParamDef[] = PARAMS): Registry {
  const all: BoundParam[] = [];
  const byType = new Map<ResourceType, BoundParam[]>(RESOURCE_TYPES.map((t) => [t, []]));
  const ids = new Map<number, string>();
  for (const def of defs) {
    for (const resourceType of def.base) {
      const key = `${resourceType}.${def.code}`;
      const id = paramId(resourceType, def.code);
      if (ids.has(id)) throw new Error(`search parameter ${key} collides with ${ids.get(id)} (same identity ${id})`);
      ids.set(id, key);
      const bound: BoundParam = { ...def, resourceType, id };
      all.push(bound);
      byType.get(resourceType)!.push(bound);
    }
  }
  const names = new Map<string, Map<string, { param: BoundParam; prefix?: string }>>();
  for (const p of all) {
    const entries: [Version, string, string | undefined][] = [
      ...p.versions.map((v): [Version, string, undefined] => [v, p.code, undefined]),
      ...(p.aliases ?? []).flatMap((a) => a.versions.map((v): [Version, string, string | undefined] => [v, a.name, a.prefix])),
    ];
    for (const [version, name, prefix] of entries) {
      const k = `${version}/${p.resourceType}`;
      if (!names.has(k)) names.set(k, new Map());
      const m = names.get(k)!;
      if (m.has(name)) throw new Error(`search parameter name ${name} is defined twice for ${k}`);
      m.set(name, { param: p, prefix });
    }
  }
  const empty = new Map<string, { param: BoundParam; prefix?: string }>();
  return {
    all,
    forType: (type) => byType.get(type) ?? [],
    lookup: (version, type, name) => names.get(`${version}/${type}`)?.get(name),
    byCode: (type, code) => byType.get(type)?.find((p) => p.code === code),
    names: (version, type) => names.get(`${version}/${type}`) ?? empty,
    systemAliases: (version) => (version === 'v1' ? V1_SYSTEM_ALIASES : {}),
  };
}

export const registry = buildRegistry();
