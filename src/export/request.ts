import { badRequest, FhirError, notSupported } from '../fhir/outcome.ts';
import { isInstant, parseFhirDate } from '../fhir/date.ts';
import { RESOURCE_TYPES, type ResourceType } from '../registry/index.ts';

/**
 * The parameters of a system-level `$export` kick-off (FHIR Bulk Data Access), from the query
 * string or a Parameters body: pure, no database.
 */
export interface ExportRequest {
  /** the types to export, in the order given (default: every type the server stores). */
  types: ResourceType[];
  /** only resources whose meta.lastUpdated is after this instant. */
  since?: Date;
}

/** The NDJSON format and its short forms (the IG's required `_outputFormat` values). */
export const OUTPUT_FORMATS: readonly string[] = ['application/fhir+ndjson', 'application/ndjson', 'ndjson'];

/** Bulk Data parameters this server does not implement: refused by name, not ignored. */
const UNSUPPORTED = new Set(['_elements', '_typeFilter', 'patient', 'includeAssociatedData', 'organizeOutputBy', 'allowPartialManifests']);

/**
 * Every bad or unknown parameter is a 400 naming it; with `lenient` (Prefer: handling=lenient, as
 * the IG allows) unknown and unsupported ones are ignored instead.
 */
export function parseExportParams(pairs: [string, string][], lenient: boolean): ExportRequest {
  const types: ResourceType[] = [];
  let since: Date | undefined;
  let format = false;
  for (const [name, raw] of pairs) {
    if (name === '_type') {
      for (const t of raw.split(',').map((s) => s.trim())) {
        if (!(RESOURCE_TYPES as readonly string[]).includes(t)) {
          throw badRequest(`_type=${raw}: "${t}" is not a type this server holds (${RESOURCE_TYPES.join(', ')})`, '_type');
        }
        if (!types.includes(t as ResourceType)) types.push(t as ResourceType);
      }
    } else if (name === '_since') {
      if (since) throw badRequest('_since is given more than once', '_since');
      // A `+` of an unencoded time zone arrives as a space.
      const v = raw.trim().replace(/ (?=\d{2}:\d{2}$)/, '+');
      if (!isInstant(v)) throw badRequest(`_since=${raw}: not a FHIR instant (e.g. 2025-01-31T00:00:00Z)`, '_since');
      since = new Date(parseFhirDate(v)!.low);
    } else if (name === '_outputFormat') {
      if (format) throw badRequest('_outputFormat is given more than once', '_outputFormat');
      if (!OUTPUT_FORMATS.includes(raw.trim().toLowerCase())) {
        throw badRequest(`_outputFormat=${raw}: this server writes ${OUTPUT_FORMATS.join(', ')} only`, '_outputFormat');
      }
      format = true;
    } else if (!lenient) {
      throw UNSUPPORTED.has(name)
        ? notSupported(`${name} is not supported by this server's $export`, name)
        : badRequest(`Unknown $export parameter ${name} (accepted: _type, _since, _outputFormat)`, name);
    }
  }
  return { types: types.length ? types : [...RESOURCE_TYPES], ...(since ? { since } : {}) };
}

/** The name/value pairs of a Parameters resource (a POST kick-off's body). */
export function parametersPairs(body: unknown): [string, string][] {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      throw badRequest('The $export body is not JSON: send a Parameters resource');
    }
  }
  const p = value as { resourceType?: unknown; parameter?: unknown } | null;
  if (!p || typeof p !== 'object' || p.resourceType !== 'Parameters') throw badRequest('The $export body must be a Parameters resource');
  if (p.parameter === undefined) return [];
  if (!Array.isArray(p.parameter)) throw badRequest('Parameters.parameter must be an array');
  return p.parameter.map((x: unknown, i: number): [string, string] => {
    const e = x as Record<string, unknown> | null;
    const name = e?.name;
    if (typeof name !== 'string') throw badRequest(`Parameters.parameter[${i}] has no name`);
    const key = Object.keys(e!).find((k) => k.startsWith('value'));
    const v = key === undefined ? undefined : e![key];
    if (typeof v !== 'string') throw badRequest(`Parameters.parameter[${i}] (${name}) needs a string value (valueString, valueInstant …)`, name);
    return [name, v];
  });
}

/** The kick-off's Prefer must ask for the asynchronous pattern (the IG: 400 otherwise). */
export function checkPrefer(prefer: string | undefined): { lenient: boolean } {
  const tokens = String(prefer ?? '').split(/[,;]/).map((s) => s.trim().toLowerCase().replace(/\s+/g, ''));
  if (!tokens.includes('respond-async')) throw new FhirError(400, 'invalid', '$export needs the header Prefer: respond-async', {}, ['Prefer']);
  return { lenient: tokens.includes('handling=lenient') };
}
