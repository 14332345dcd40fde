import { ExtractError } from '../fhir/extract.ts';
import { parseReference } from '../fhir/reference.ts';
import { InvalidResource, prepareResource } from '../fhir/resource.ts';
import { RESOURCE_TYPES, type Registry, type ResourceType } from '../registry/index.ts';
import { encodeIndexRows } from '../store/copy-encode.ts';
import type { WriteEntry } from '../store/write.ts';
import { echo } from './echo.ts';
import type { RawEntry } from './sources.ts';

/**
 * An entry of any source (files, a mirrored page, the open-data import) ready to be written:
 * validated and extracted (src/fhir/resource.ts), its index rows encoded (src/store/copy-encode.ts).
 * Pure: it runs in the loader's worker threads as well. Throws InvalidResource or ExtractError on
 * bad input.
 */
export function preparePut(registry: Registry, value: unknown, now = new Date(), raw?: string): WriteEntry {
  const p = prepareResource(registry, value, now, raw);
  return { op: 'put', type: p.type, id: p.id, lastUpdated: p.lastUpdated, text: p.text, index: encodeIndexRows(p.rows) };
}

/** An input entry ready to be written, or the reason it is rejected; `where` is file:line or file#entry[i]. */
export type Prepared = { where: string; entry: WriteEntry; reason?: undefined } | { where: string; entry?: undefined; reason: string };

/** Turns a raw entry into a write entry, or a reason to reject it (pure: no database). */
export function prepare(registry: Registry, raw: RawEntry): Prepared {
  const { where } = raw;
  if (raw.kind === 'invalid') return { where, reason: raw.reason };
  if (raw.kind === 'delete') {
    const ref = typeof raw.url === 'string' ? parseReference(raw.url) : undefined;
    if (!ref || !(RESOURCE_TYPES as readonly string[]).includes(ref.type)) {
      return { where, reason: `DELETE request.url must be <Type>/<id> of a stored type, got ${echo(raw.url)}` };
    }
    return { where, entry: { op: 'delete', type: ref.type as ResourceType, id: ref.id } };
  }
  try {
    return { where, entry: preparePut(registry, raw.value, undefined, raw.text) };
  } catch (err) {
    if (err instanceof InvalidResource || err instanceof ExtractError) return { where, reason: err.message };
    throw err;
  }
}
