import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import { constants, createGunzip } from 'node:zlib';
import Assembler from 'stream-json/assembler.js';
import { jsonParser, type Token } from 'stream-json/parser.js';
import {
  ADDRESS, CONTACT, COORDINATES, EGE, EGE_GENERAL, FEED_FIRST_KEYS, GEOGRAPHIC_ADDRESS, isFiness, LEGAL_ADDRESS, PMEJ,
  PMEJ_GENERAL, TOP,
} from '../vocabulary/formats/finess.ts';
import { OpenDataError } from './zip.ts';

/**
 * Reads the FINESS+ JSON feed (finess-structures-*.json[.gz]) as typed records, one legal entity
 * (`pmej[i]`) at a time: memory does not grow with the file (the national one is ~715 MB of
 * JSON, more than a JavaScript string holds). A file is recognised by its content, never by name.
 *
 * Values are trimmed; an absent key, an explicit null and an empty string are the same ('').
 * Rejected (events.reject): a record without a valid FINESS number. Fatal (OpenDataError): a file
 * that is not the feed, invalid JSON, a cut file.
 */

/** How far a file is read to recognise it (decompressed). */
export const SNIFF_BYTES = 64 * 1024;

/** A WGS84 point; `precision` from the BAN key's shape, undefined when there is no readable key. */
export interface GeoPoint {
  latitude: number;
  longitude: number;
  precision?: 'housenumber' | 'street' | 'commune';
}

export interface FinessAddress {
  /** usageAdresse: 03 geographic, 02 a legal entity's own. */
  usage: string;
  number: string;
  /** complementVoie (B, T…: bis, ter). */
  numberSuffix: string;
  /** typeVoie: a code (`R`, `AV`), not a label. */
  streetType: string;
  street: string;
  /** ligneQuatre: the street line as the postal norm writes it (`62 AVENUE DE JASSERON`). */
  streetLine: string;
  placeComplement: string;
  locality: string;
  /** cogCommune: the INSEE commune code. */
  commune: string;
  /** ligneAcheminement: the town, or `<postal code> <TOWN>`. */
  delivery: string;
  postalCode: string;
  point?: GeoPoint;
}

/** The contacts' numbers, distinct, in file order; a `a/b` telephone gives two phones. */
export interface FinessTelecom {
  phones: string[];
  faxes: string[];
  emails: string[];
}

export interface LegalEntity {
  name: string;
  shortName: string;
  siren: string;
  /** codeApe as given (`86.10Z`). */
  ape: string;
  /** statutJuridique (TRE_R72). */
  legalStatus: string;
  /** dates YYYY-MM-DD ('' when absent or not a date). */
  created: string;
  closed: string;
  /** etatObjet: A active, I inactive. */
  state: string;
  /** its own address (usage 02, else its first). */
  address?: FinessAddress;
  telecom: FinessTelecom;
}

export interface Establishment {
  name: string;
  shortName: string;
  nameComplement: string;
  siret: string;
  /** categorieentiteGeographiqueExercice (TRE_R66). */
  category: string;
  /** espic[0] (TRE_R73). */
  espic: string;
  /** modefixationtarifaire: a code without a shipped table. */
  tariffMode: string;
  /** numeroReferenceExterne (a pharmacy's licence, among others). */
  externalRef: string;
  opened: string;
  closed: string;
  state: string;
  /** the geographic address (usage 03) only: a secondary one would place it wrongly. */
  address?: FinessAddress;
  telecom: FinessTelecom;
}

export type FinessRecord =
  | { kind: 'legal'; where: string; finess: string; data: LegalEntity }
  | { kind: 'establishment'; where: string; finess: string; legal: string; data: Establishment };
export type LegalEntityRecord = Extract<FinessRecord, { kind: 'legal' }>;
export type EstablishmentRecord = Extract<FinessRecord, { kind: 'establishment' }>;

export interface FinessEvents {
  /** A record that is not imported: `where` (`file:pmej[i].ege[j]`) and why. */
  reject(where: string, reason: string): void;
  /** Bytes read from disk (compressed when the file is), said as each chunk is taken. */
  bytes?(n: number): void;
}

// ---- recognising a file ----------------------------------------------------------------------------

const GZIP_MAGIC = [0x1f, 0x8b];
const HTML = /^<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i;

/**
 * What the first bytes of a file say (give at most SNIFF_BYTES): `gzip` by its magic (the caller
 * decompresses and asks again: sniffFiness does), `finess` for a JSON object among whose first
 * top-level keys is schemaVersion, generatedAt or pmej, `json` for other JSON, `html` for a web
 * page, undefined for anything else. A BOM and leading white space are skipped.
 */
export function finessKind(head: Buffer): 'finess' | 'gzip' | 'json' | 'html' | undefined {
  if (head.length >= 2 && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]) return 'gzip';
  const text = new TextDecoder('utf-8').decode(head.subarray(0, SNIFF_BYTES)).trimStart();
  if (HTML.test(text)) return 'html';
  if (text.startsWith('[')) return 'json';
  if (!text.startsWith('{')) return undefined;
  return topKeys(text).some((k) => FEED_FIRST_KEYS.includes(k)) ? 'finess' : 'json';
}

/** The top-level keys of the beginning of a JSON object, as far as it parses. */
function topKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  try {
    for (const token of tokensOf(jsonParser(PARSER_OPTIONS), text)) {
      if (token.name === 'startObject' || token.name === 'startArray') depth++;
      else if (token.name === 'endObject' || token.name === 'endArray') depth--;
      else if (token.name === 'keyValue' && depth === 1) keys.push(token.value);
    }
  } catch {
    // Invalid further on: the keys before are still telling.
  }
  return keys;
}

/**
 * Whether a file is the FINESS feed, by content: `finess` (plain or gzipped), `{ notFeed }` for a
 * download that is clearly something else (a web page, JSON of another shape, a gzip file whose
 * content is not the feed), undefined for any other file (e.g. another source's text extract).
 * Reads at most SNIFF_BYTES of the file, and as much decompressed.
 */
export async function sniffFiness(file: string): Promise<'finess' | { notFeed: string } | undefined> {
  const head = await readHead(file);
  const kind = finessKind(head);
  if (kind !== 'gzip') return kind === undefined || kind === 'finess' ? kind : { notFeed: NOT_FEED[kind] };
  let inner: Buffer;
  try {
    inner = await gunzipHead(head);
  } catch (err) {
    return { notFeed: `a gzip file that does not decompress (${(err as Error).message})` };
  }
  const innerKind = finessKind(inner);
  if (innerKind === 'finess') return 'finess';
  return { notFeed: `a gzip file holding ${innerKind === undefined ? 'neither JSON nor a web page' : NOT_FEED[innerKind]}` };
}

const NOT_FEED = {
  html: 'an HTML page, not the FINESS feed (a download that returned an error page?)',
  json: 'JSON of another shape, not the FINESS feed (no schemaVersion, generatedAt or pmej key first)',
  gzip: 'another gzip file',
} as const;

async function readHead(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(head, 0, SNIFF_BYTES, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Up to SNIFF_BYTES of what a gzip file's first bytes decompress to (a cut input is no error). */
async function gunzipHead(head: Buffer): Promise<Buffer> {
  const gunzip = createGunzip({ finishFlush: constants.Z_SYNC_FLUSH });
  gunzip.end(head);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of gunzip) {
    parts.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= SNIFF_BYTES) break;
  }
  return Buffer.concat(parts).subarray(0, SNIFF_BYTES);
}

// ---- reading -------------------------------------------------------------------------------------

/** Keys, strings and numbers as single tokens only: the assembler reads those. */
const PARSER_OPTIONS = { packValues: true, streamValues: false } as const;

/** The tokens a piece of text completes (an array: a generator per token costs a third of the reading). */
function tokensOf(parse: ReturnType<typeof jsonParser>, text: string): Token[] {
  const out = parse(text);
  return typeof out === 'symbol' ? [] : out.values;
}

/**
 * The records of a feed file (gunzipped when it starts like gzip): for each `pmej[i]` its legal
 * entity, then its establishments. Throws OpenDataError for a file that is not the feed, invalid
 * JSON (saying from which legal entity on, and in which characters) and a cut file.
 */
export async function* readFiness(file: string, events: FinessEvents): AsyncGenerator<FinessRecord> {
  const walker = new FeedWalker(file);
  const parse = jsonParser(PARSER_OPTIONS);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  let chars = 0;
  for await (const chunk of jsonBytes(file, events)) {
    if (bytes === 0) checkHead(file, chunk);
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      throw new OpenDataError(`${file}: not UTF-8 text (in the JSON's bytes ${bytes}–${bytes + chunk.length}), so not the FINESS feed`);
    }
    bytes += chunk.length;
    // Small slices: a parse error loses its slice's tokens, so the place it names is a slice's.
    for (let at = 0; at < text.length; at += SLICE) {
      const slice = text.slice(at, at + SLICE);
      try {
        for (const token of tokensOf(parse, slice)) walker.push(token);
      } catch (err) {
        if (err instanceof OpenDataError) throw err;
        const where = `${walker.position(false)} (in the JSON's characters ${chars}–${chars + slice.length})`;
        throw new OpenDataError(`${file}: invalid JSON ${where}: ${(err as Error).message}`);
      }
      chars += slice.length;
    }
    for (const item of walker.take()) yield* itemRecords(file, item.index, item.value, events);
  }
  if (bytes === 0) throw new OpenDataError(`${file}: an empty file, not the FINESS feed`);
  walker.end();
}

/** Characters given to the parser at a time (a 4 KiB slice costs a fifth more than 64 KiB). */
const SLICE = 4096;

/** A first chunk that is not a JSON object or array: a web page, or some other file. */
function checkHead(file: string, chunk: Buffer): void {
  const kind = finessKind(chunk);
  if (kind === 'html') throw new OpenDataError(`${file}: ${NOT_FEED.html}`);
  if (kind === undefined) throw new OpenDataError(`${file}: not JSON, so not the FINESS feed`);
}

/** The file's JSON bytes, gunzipped when it starts with the gzip magic; disk bytes counted. */
async function* jsonBytes(file: string, events: FinessEvents): AsyncGenerator<Buffer> {
  const gzipped = finessKind(await readHead(file)) === 'gzip';
  async function* counted(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      events.bytes?.(chunk.length);
      yield chunk;
    }
  }
  // 64 KiB pieces: the parser appends each to what it has left, so larger ones cost more (×2 at 1 MiB).
  const disk = createReadStream(file, { highWaterMark: 64 * 1024 });
  if (!gzipped) return yield* counted(disk);
  const gunzip = pipeline(disk, counted, createGunzip(), () => {});
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'Z_BUF_ERROR') throw new OpenDataError(`${file}: the file is cut (a truncated download?)`);
    if ((err as NodeJS.ErrnoException).code?.startsWith('Z_')) throw new OpenDataError(`${file}: a damaged gzip file (${(err as Error).message})`);
    throw err;
  }
}

/**
 * Follows the document's tokens: the root must be an object, its `pmej` an array; each `pmej`
 * item is assembled alone (the only part held in memory), the rest (gco, gcc…) is skipped.
 */
class FeedWalker {
  private depth = 0;
  private topKey: string | null = null;
  private inPmej = false;
  private sawPmej = false;
  private ended = false;
  private index = -1;
  private assembler: Assembler | null = null;
  private done: { index: number; value: unknown }[] = [];

  constructor(private readonly file: string) {}

  push(token: Token): void {
    if (this.assembler) return this.assemble(token);
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        return this.open(token);
      case 'endObject':
      case 'endArray':
        this.depth--;
        if (this.depth === 1) this.inPmej = false;
        if (this.depth === 0) this.ended = true;
        return;
      case 'keyValue':
        if (this.depth === 1) this.topKey = token.value;
        return;
      case 'stringValue':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        return this.scalar(token);
    }
  }

  private open(token: Token): void {
    if (this.depth === 0 && token.name === 'startArray') throw this.notFeed('an array at the top, not an object');
    if (this.depth === 1 && this.topKey === TOP.legalEntities) {
      if (token.name !== 'startArray') throw this.notFeed('pmej is not an array');
      this.inPmej = this.sawPmej = true;
    } else if (this.depth === 2 && this.inPmej) {
      this.index++;
      this.assembler = new Assembler();
      this.assembler.consume(token);
      return;
    }
    this.depth++;
  }

  private scalar(token: Token & { value: unknown }): void {
    if (this.depth === 0) throw this.notFeed('a lone value, not an object');
    if (this.depth === 1 && this.topKey === TOP.legalEntities) throw this.notFeed('pmej is not an array');
    if (this.depth === 2 && this.inPmej) this.done.push({ index: ++this.index, value: token.value });
  }

  private assemble(token: Token): void {
    const assembler = this.assembler!;
    assembler.consume(token);
    if (!assembler.done) return;
    this.done.push({ index: this.index, value: assembler.current });
    this.assembler = null;
  }

  private notFeed(what: string): OpenDataError {
    return new OpenDataError(`${this.file}: JSON of another shape (${what}), not the FINESS feed`);
  }

  /** The pmej items completed since the last call. */
  take(): { index: number; value: unknown }[] {
    const out = this.done;
    this.done = [];
    return out;
  }

  /**
   * Where the parse is, for a message. Not `exact`: the tokens of the piece that failed are lost,
   * so the fault is at this place or after it.
   */
  position(exact: boolean): string {
    const on = exact ? '' : ' or after it';
    if (this.index < 0) return this.sawPmej ? `at the start of pmej${on}` : `before pmej${on}`;
    if (this.assembler) return exact ? `inside pmej[${this.index}]` : `from pmej[${this.index}] on`;
    return `after pmej[${this.index}]${on}`;
  }

  /** At the end of the file: the document must be whole and have had its pmej array. */
  end(): void {
    if (!this.ended) throw new OpenDataError(`${this.file}: the JSON ends ${this.position(true)}: the file is cut (a truncated download?)`);
    if (!this.sawPmej) throw this.notFeed('no pmej array');
  }
}

// ---- records -------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objOf = (v: unknown): Obj => (isObj(v) ? v : {});
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A value as trimmed text: null, absent and non-text values are ''. */
function text(v: unknown): string {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number') return String(v);
  return '';
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** A YYYY-MM-DD date, '' otherwise. */
const date = (v: unknown): string => (DATE.test(text(v)) ? text(v) : '');

function whyNotFiness(value: string, key: string): string {
  return value === '' ? `no FINESS number (${key})` : `FINESS number "${value}" is not a department and 7 digits (${key})`;
}

/** The records of `pmej[i]`; records without a valid FINESS number rejected (a legal entity's with its establishments). */
function* itemRecords(file: string, i: number, item: unknown, events: FinessEvents): Generator<FinessRecord> {
  const where = `${file}:pmej[${i}]`;
  if (!isObj(item)) return events.reject(where, 'not an object');
  const finess = text(objOf(item[PMEJ.general])[PMEJ_GENERAL.finess]);
  const establishments = listOf(item[PMEJ.establishments]);
  if (!isFiness(finess)) {
    events.reject(where, whyNotFiness(finess, `${PMEJ.general}.${PMEJ_GENERAL.finess}`));
    for (let j = 0; j < establishments.length; j++) events.reject(`${where}.ege[${j}]`, `its legal entity pmej[${i}] has no valid FINESS number`);
    return;
  }
  yield { kind: 'legal', where, finess, data: legalEntityOfItem(item) };
  for (let j = 0; j < establishments.length; j++) {
    const ege = establishments[j];
    const egeWhere = `${where}.ege[${j}]`;
    if (!isObj(ege)) {
      events.reject(egeWhere, 'not an object');
      continue;
    }
    const egeFiness = text(objOf(ege[EGE.general])[EGE_GENERAL.finess]);
    if (!isFiness(egeFiness)) {
      events.reject(egeWhere, whyNotFiness(egeFiness, `${EGE.general}.${EGE_GENERAL.finess}`));
      continue;
    }
    yield { kind: 'establishment', where: egeWhere, finess: egeFiness, legal: finess, data: establishmentOfItem(ege) };
  }
}

/** The values of `keys` (field → feed key) in `o`, as text (or as dates). */
function fieldsOf<K extends string>(o: Obj, keys: Record<K, string>, as: (v: unknown) => string = text): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const field in keys) out[field] = as(o[keys[field]]);
  return out;
}

function legalEntityOfItem(item: Obj): LegalEntity {
  const g = objOf(item[PMEJ.general]);
  const addresses = listOf(item[PMEJ.addresses]).filter(isObj);
  const own = addresses.find((a) => text(a[ADDRESS.usage]) === LEGAL_ADDRESS) ?? addresses[0];
  const k = PMEJ_GENERAL;
  const data: LegalEntity = {
    ...fieldsOf(g, { name: k.longName, shortName: k.name, siren: k.siren, ape: k.ape, legalStatus: k.legalStatus }),
    ...fieldsOf(g, { created: k.created, closed: k.closed }, date),
    state: text(item[PMEJ.state]),
    telecom: telecomOf(item[PMEJ.contacts]),
  };
  if (own) data.address = addressOf(own);
  return data;
}

function establishmentOfItem(ege: Obj): Establishment {
  const g = objOf(ege[EGE.general]);
  const geographic = listOf(ege[EGE.addresses]).filter(isObj).find((a) => text(a[ADDRESS.usage]) === GEOGRAPHIC_ADDRESS);
  const k = EGE_GENERAL;
  const data: Establishment = {
    ...fieldsOf(g, { name: k.longName, shortName: k.shortName, nameComplement: k.nameComplement, siret: k.siret, externalRef: k.externalRef }),
    ...fieldsOf(g, { opened: k.opened, closed: k.closed }, date),
    ...fieldsOf(ege, { category: EGE.category, tariffMode: EGE.tariffMode, state: EGE.state }),
    espic: text(listOf(g[EGE_GENERAL.espic])[0]),
    telecom: telecomOf(ege[EGE.contacts]),
  };
  if (geographic) data.address = addressOf(geographic);
  return data;
}

function addressOf(a: Obj): FinessAddress {
  const address: FinessAddress = fieldsOf(a, {
    usage: ADDRESS.usage, number: ADDRESS.number, numberSuffix: ADDRESS.streetComplement, streetType: ADDRESS.streetType,
    street: ADDRESS.street, streetLine: ADDRESS.streetLine, placeComplement: ADDRESS.placeComplement, locality: ADDRESS.locality,
    commune: ADDRESS.commune, delivery: ADDRESS.delivery, postalCode: ADDRESS.postalCode,
  });
  const point = wgs84Of(a[ADDRESS.coordinates]);
  if (point) address.point = point;
  return address;
}

/** Distinct non-empty values, in order; `a/b` is two values. */
function distinctParts(values: string[]): string[] {
  return [...new Set(values.flatMap((v) => v.split('/')).map((v) => v.trim()).filter(Boolean))];
}

function telecomOf(contacts: unknown): FinessTelecom {
  const telecoms = listOf(contacts).filter(isObj).map((c) => objOf(c[CONTACT.telecom]));
  const all = (key: string) => distinctParts(telecoms.map((t) => text(t[key])));
  return { phones: all(CONTACT.phone), faxes: all(CONTACT.fax), emails: all(CONTACT.email) };
}

// ---- coordinates ---------------------------------------------------------------------------------

/**
 * France with its overseas departments: a degree pair lies within these; a projected value
 * (Lambert-93, UTM: metres) is far beyond 1000. Pacific collectivities (Wallis-et-Futuna near
 * ±176°) are outside the longitudes, so their points are left out rather than guessed.
 */
const LATITUDES = [-25, 52] as const;
const LONGITUDES = [-65, 60] as const;

const NUMBER = /^[-+]?\d+([.,]\d+)?$/;

function decimal(v: unknown): number | undefined {
  const t = text(v);
  return NUMBER.test(t) ? Number(t.replace(',', '.')) : undefined;
}

function inFrance(latitude: number | undefined, longitude: number | undefined): boolean {
  if (latitude === undefined || longitude === undefined || (latitude === 0 && longitude === 0)) return false;
  return latitude >= LATITUDES[0] && latitude <= LATITUDES[1] && longitude >= LONGITUDES[0] && longitude <= LONGITUDES[1];
}

/**
 * The WGS84 point of a `coordonneesGeographique` object, found by range whichever pair holds it:
 * the named direction pair first, then coordonneeX/Y as longitude/latitude, then the same swapped.
 */
export function wgs84Of(coordinates: unknown): GeoPoint | undefined {
  const c = objOf(coordinates);
  const x = decimal(c[COORDINATES.x]);
  const y = decimal(c[COORDINATES.y]);
  const candidates: [number | undefined, number | undefined][] = [
    [decimal(c[COORDINATES.latitude]), decimal(c[COORDINATES.longitude])],
    [y, x],
    [x, y],
  ];
  const found = candidates.find(([lat, lon]) => inFrance(lat, lon));
  if (!found) return undefined;
  const point: GeoPoint = { latitude: found[0]!, longitude: found[1]! };
  const precision = banPrecision(text(c[COORDINATES.banKey]));
  if (precision) point.precision = precision;
  return point;
}

const COMMUNE = '(\\d{2}|2[AB])\\d{3}';
const BAN = [
  [new RegExp(`^${COMMUNE}_[0-9A-Za-z]{4}_\\d{5}(_[0-9A-Za-z]+)?$`), 'housenumber'],
  [new RegExp(`^${COMMUNE}_[0-9A-Za-z]{4}$`), 'street'],
  [new RegExp(`^${COMMUNE}$`), 'commune'],
] as const;

/** What a BAN interoperability key designates: `01053_1950_00062`, `01053_1950` or `01053`. */
export function banPrecision(key: string): GeoPoint['precision'] {
  return BAN.find(([shape]) => shape.test(key))?.[1];
}
