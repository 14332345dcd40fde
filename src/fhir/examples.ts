import { RESOURCE_TYPES, type BoundParam, type Registry, type ResourceType } from '../registry/index.ts';
import { compileExtractor, type IndexRows } from './extract.ts';
import { indexKind, searchType } from './types/index.ts';

/**
 * Example values for the OpenAPI documents, read from the demo data by the registry's own paths
 * and extractors: an example is a value some demo resource really has, so running it finds it.
 */
export interface DemoExamples {
  /** a search value of a parameter (without the prefix an alias implies), or undefined. */
  value(param: BoundParam): string | undefined;
  /** the first demo resource of a type. */
  resource(type: ResourceType): Record<string, unknown> | undefined;
}

/** The rows' values as search values of their parameter's type. */
function searchValue(param: BoundParam, rows: IndexRows): string[] {
  const kind = indexKind(param)!;
  const of = searchType(param).rowsOf!.searchValue as (row: unknown) => string;
  return (rows[kind] as unknown[]).map(of);
}

/**
 * The value most demo resources of the type share (the first met among equals), on the first of
 * the parameter's paths that has any: `name` gives a family name, not a civility.
 */
function mostCommon(param: BoundParam, resources: readonly Record<string, unknown>[]): string | undefined {
  if (param.column === 'id') return resources.find((r) => typeof r.id === 'string')?.id as string | undefined;
  for (const path of param.paths) {
    const extract = compileExtractor([{ ...param, paths: [path] }]);
    const counts = new Map<string, number>();
    for (const r of resources) {
      let values: string[];
      try {
        values = searchValue(param, extract(r));
      } catch {
        continue; // a value the loader would reject: not an example
      }
      for (const v of new Set(values)) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    let best: string | undefined;
    for (const [v, n] of counts) if (best === undefined || n > counts.get(best)!) best = v;
    if (best !== undefined) return best;
  }
  return undefined;
}

export function demoExamples(registry: Registry, resources: readonly Record<string, unknown>[]): DemoExamples {
  const byType = new Map<ResourceType, Record<string, unknown>[]>(RESOURCE_TYPES.map((t) => [t, []]));
  for (const r of resources) byType.get(r.resourceType as ResourceType)?.push(r);
  const values = new Map<BoundParam, string | undefined>();
  for (const p of registry.all) values.set(p, mostCommon(p, byType.get(p.resourceType)!));
  return {
    value: (param) => values.get(param),
    resource: (type) => byType.get(type)?.[0],
  };
}

/** The resources of parsed JSON files: a resource, or a Bundle's entries. */
export function resourcesOf(documents: readonly unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const d of documents) {
    if (typeof d !== 'object' || d === null) continue;
    const doc = d as { resourceType?: unknown; entry?: { resource?: Record<string, unknown> }[] };
    if (doc.resourceType === 'Bundle') for (const e of doc.entry ?? []) if (e.resource) out.push(e.resource);
    else out.push(doc as Record<string, unknown>);
  }
  return out;
}
