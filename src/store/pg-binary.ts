import { parseFhirDate } from '../fhir/date.ts';

/**
 * PostgreSQL's binary COPY format (https://www.postgresql.org/docs/current/sql-copy.html, "Binary
 * Format"), as far as the bulk load writes it (src/load/copy-encode.ts COPY_BINARY): a header, then
 * per row a 16-bit field count and each field as a 32-bit byte length and the bytes (big-endian,
 * the types' binary send forms: int4, int8, text as UTF-8, jsonb as version 1 and its text,
 * timestamptz as microseconds since 2000-01-01 UTC), then a trailer.
 */

/** Signature, flags (no OIDs), header extension length 0. */
export const BINARY_HEADER = Uint8Array.from([...Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), 0, 0, 0, 0, 0, 0, 0, 0]);
/** A field count of -1 ends the data. */
export const BINARY_TRAILER = Uint8Array.of(0xff, 0xff);

/** 2000-01-01T00:00:00Z, PostgreSQL's epoch of timestamps, in Unix seconds. */
const PG_EPOCH_S = 946_684_800;

/** A timestamptz in epoch milliseconds (an integer), as PostgreSQL's microseconds. */
export function pgMicrosOfMs(ms: number): bigint {
  return BigInt(ms - PG_EPOCH_S * 1000) * 1000n;
}

/** Rounds half to even, as C's rint() in the default rounding mode. */
function rint(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * A FHIR instant (validated: src/fhir/date.ts isInstant) as PostgreSQL's microseconds, exactly as
 * its text input reads it: the whole second from parseFhirDate (zone applied), the fraction parsed
 * as a double and rounded to the microsecond with rint (ParseFractionalSecond), so a value with
 * more digits than a microsecond is stored as it would be through COPY text.
 */
export function pgMicrosOfInstant(text: string): bigint {
  const range = parseFhirDate(text);
  if (!range) throw new RangeError(`not a FHIR instant: ${JSON.stringify(text)}`);
  // low is the whole second plus the fraction's first three digits: zones are whole minutes.
  const seconds = Math.floor(range.low / 1000);
  const fraction = /\.(\d+)/.exec(text);
  const micros = fraction ? rint(Number(`0.${fraction[1]}`) * 1e6) : 0;
  return BigInt(seconds - PG_EPOCH_S) * 1_000_000n + BigInt(micros);
}

/**
 * The rows of binary COPY data (tuples only, no header or trailer) whose first field, an int8 key,
 * is not in `keys`; and how many were kept.
 */
export function binaryRowsWithout(data: Uint8Array, keys: Set<string>): { bytes: Uint8Array; rows: number } {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parts: Uint8Array[] = [];
  let rows = 0;
  for (let at = 0; at < b.length; ) {
    const fields = b.readInt16BE(at);
    let end = at + 2;
    for (let f = 0; f < fields; f++) {
      const n = b.readInt32BE(end);
      end += 4 + Math.max(n, 0);
    }
    if (b.readInt32BE(at + 2) !== 8) throw new Error('binary COPY row without an int8 key first');
    const key = b.readBigInt64BE(at + 6).toString();
    if (!keys.has(key)) {
      parts.push(b.subarray(at, end));
      rows++;
    }
    at = end;
  }
  return { bytes: Buffer.concat(parts), rows };
}
