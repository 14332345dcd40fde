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
