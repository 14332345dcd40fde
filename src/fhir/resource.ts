import { createHash } from 'node:crypto';
import { RESOURCE_TYPES, type ResourceType } from '../registry/index.ts';
import { isInstant } from './date.ts';
import { ID_RE } from './reference.ts';

export class InvalidResource extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The checks every stored resource passes (full FHIR validation is not the job of a directory loader). */
export function checkResource(value: unknown): { type: ResourceType; id: string; resource: Record<string, unknown> } {
  if (!isObject(value)) throw new InvalidResource('not a JSON object');
  const rt = value.resourceType;
  if (rt === undefined) throw new InvalidResource('missing resourceType');
  if (typeof rt !== 'string' || !(RESOURCE_TYPES as readonly string[]).includes(rt)) {
    throw new InvalidResource(`unknown resourceType ${JSON.stringify(rt)} (accepted: ${RESOURCE_TYPES.join(', ')})`);
  }
  const id = value.id;
  if (id === undefined) throw new InvalidResource('missing id');
  if (typeof id !== 'string' || !ID_RE.test(id)) throw new InvalidResource(`invalid id ${JSON.stringify(id)} (1–64 of A-Z a-z 0-9 - .)`);
  const meta = value.meta;
  if (meta !== undefined && !isObject(meta)) throw new InvalidResource('meta must be an object');
  if (isObject(meta) && meta.lastUpdated !== undefined && (typeof meta.lastUpdated !== 'string' || !isInstant(meta.lastUpdated))) {
    throw new InvalidResource(`meta.lastUpdated is not a FHIR instant: ${JSON.stringify(meta.lastUpdated)}`);
  }
  return { type: rt as ResourceType, id, resource: value };
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Digest of the content that counts for change detection: everything but meta.versionId and
 * meta.lastUpdated, with object keys sorted (JSONB reorders keys, the input may too).
 */
export function contentHash(resource: Record<string, unknown>): string {
  const meta = isObject(resource.meta) ? { ...resource.meta } : undefined;
  if (meta) {
    delete meta.versionId;
    delete meta.lastUpdated;
  }
  const copy = { ...resource, meta: meta && Object.keys(meta).length > 0 ? meta : undefined };
  return createHash('sha1').update(stable(copy)).digest('hex');
}
