import { RESOURCE_TYPES, type Registry, type ResourceType } from '../registry/index.ts';
import { isInstant } from './date.ts';
import { extractorFor, type IndexRows } from './extract.ts';
import { ID_RE } from './reference.ts';

/**
 * What is stored of a resource, decided here once for every way in (the loaders, the mirror, the
 * open-data import): the checks a resource passes, the text stored and its index rows — validate,
 * then extract. Pure: the write path (src/store/write.ts) and the COPY encoders take it from here.
 */
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

/** A validated resource: the JSON text to store and its index rows. */
export interface PreparedResource {
  type: ResourceType;
  id: string;
  lastUpdated: string;
  text: string;
  /** `text` is the entry's own JSON text (its NDJSON line), unchanged. */
  asIs: boolean;
  rows: IndexRows;
}

/**
 * Longest token code, token system and folded string that is indexed (characters). A btree entry
 * holds at most 2,704 bytes: a longer value would fail the whole batch (a bulk load, at its index
 * build), so the entry is refused instead, with the parameter named.
 */
export const MAX_INDEXED_LENGTH = 512;

/**
 * Deepest nesting of JSON objects and arrays a resource may have: far above any FHIR resource, far
 * below what its recursive walks (JSON.stringify, PostgreSQL's jsonb input) survive.
 */
export const MAX_DEPTH = 64;
export const TOO_DEEP = `nested deeper than ${MAX_DEPTH}`;

/** A parsed value no deeper than MAX_DEPTH, checked without recursion (JSON.parse has no limit). */
function assertDepth(value: unknown): void {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const d = depths.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d === MAX_DEPTH) throw new InvalidResource(TOO_DEEP);
    for (const x of Array.isArray(v) ? v : Object.values(v)) {
      values.push(x);
      depths.push(d + 1);
    }
  }
}

/** An exponent of 3 digits or more: the number may be beyond a double (JSON.parse gives ±Infinity). */
const LONG_EXPONENT = /\d[eE][+-]?\d{3}/;

function assertFinite(v: unknown): void {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new InvalidResource('contains a number too large to be stored exactly (beyond ±1.8e308)');
  } else if (Array.isArray(v)) {
    for (const x of v) assertFinite(x);
  } else if (typeof v === 'object' && v !== null) {
    for (const k in v) assertFinite((v as Record<string, unknown>)[k]);
  }
}

/** PostgreSQL's jsonb holds neither U+0000 nor an unpaired UTF-16 surrogate, in a value or a key. */
function assertStorableText(v: string): void {
  if (v.includes('\u0000')) throw new InvalidResource('contains a NUL character (\\u0000), which cannot be stored');
  if (!(v as string & { isWellFormed(): boolean }).isWellFormed()) throw new InvalidResource('contains an unpaired UTF-16 surrogate (\\uD800–\\uDFFF), which cannot be stored');
}

function assertStorable(v: unknown): void {
  if (typeof v === 'string') assertStorableText(v);
  else if (Array.isArray(v)) for (const x of v) assertStorable(x);
  else if (typeof v === 'object' && v !== null) {
    for (const k in v) {
      assertStorableText(k);
      assertStorable((v as Record<string, unknown>)[k]);
    }
  }
}

/**
 * The JSON text stored for a resource. An NDJSON line that is already what is stored (meta.versionId
 * "1" and a lastUpdated) is kept as it is — no second serialisation — when PostgreSQL's jsonb is
 * sure to take it: no \u escape (jsonb refuses NUL and unpaired surrogates) and no long exponent
 * (numeric's range). Anything else is serialised from the parsed value, after the checks that jsonb
 * would otherwise fail on (numbers beyond a double are refused rather than written as null).
 */
function storedText(content: Record<string, unknown>, raw: string | undefined, asIs: boolean): string {
  const longExponent = raw === undefined || LONG_EXPONENT.test(raw);
  if (asIs && !longExponent && raw!.indexOf('\\u') < 0) return raw!;
  if (longExponent) assertFinite(content);
  const text = JSON.stringify(content);
  // JSON.stringify writes U+0000 and unpaired surrogates as \u escapes: only then can there be one.
  if (text.indexOf('\\u') >= 0 && /\\u(0000|d[89a-f])/i.test(text)) assertStorable(content);
  return text;
}

function assertIndexable(rows: IndexRows, registry: Registry, type: ResourceType): void {
  const tooLong = (param: number, what: string, n: number) => {
    const code = registry.forType(type).find((p) => p.id === param)?.code ?? String(param);
    return new InvalidResource(`a ${what} of search parameter ${code} is too long to index (${n} characters, at most ${MAX_INDEXED_LENGTH})`);
  };
  for (const r of rows.token) {
    if (r.code.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'code', r.code.length);
    if (r.system !== null && r.system.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'system', r.system.length);
  }
  for (const r of rows.string) if (r.norm.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'value', r.norm.length);
  for (const r of rows.phonetic) if (r.word.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'word', r.word.length);
}

/**
 * Validates a resource and prepares what is stored: its JSON text and index rows (throws
 * InvalidResource or ExtractError on bad input). `raw` is the entry's own JSON text when it has
 * one (a whole NDJSON line), already found no deeper than MAX_DEPTH (src/load/sources.ts
 * tooDeepAt); a value without it is checked here, before anything walks it.
 */
export function prepareResource(registry: Registry, value: unknown, now = new Date(), raw?: string): PreparedResource {
  if (raw === undefined) assertDepth(value);
  const { type, id, resource } = checkResource(value);
  const meta = (resource.meta ?? {}) as Record<string, unknown>;
  const asIs = meta.versionId === '1' && typeof meta.lastUpdated === 'string';
  const lastUpdated = typeof meta.lastUpdated === 'string' ? meta.lastUpdated : now.toISOString();
  const content = asIs ? resource : { ...resource, meta: { ...meta, versionId: '1', lastUpdated } };
  // Extracted from what is stored (meta.lastUpdated included), exactly as a re-index would.
  const rows = extractorFor(registry, type)(content);
  assertIndexable(rows, registry, type);
  const text = storedText(content, raw, asIs);
  return { type, id, lastUpdated, text, asIs: text === raw, rows };
}
