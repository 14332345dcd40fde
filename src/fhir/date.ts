/**
 * FHIR date, dateTime and instant values as half-open ranges [low, high) in epoch milliseconds:
 * the range is the precision of the value (a year, a month, a day, a minute, a second, a
 * millisecond). A value with a time but no zone is read in UTC, the server's declared zone.
 */
export interface DateRange {
  low: number;
  high: number;
}

const RE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

export function parseFhirDate(text: string): DateRange | undefined {
  const m = RE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = mo ? Number(mo) : 1;
  const day = d ? Number(d) : 1;
  if (month < 1 || month > 12) return undefined;
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  if (h !== undefined) {
    if (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59)) return undefined;
  }
  if (zone && zone !== 'Z') {
    const [zh, zm] = zone.slice(1).split(':').map(Number);
    if (zh > 14 || zm > 59) return undefined;
  }
  const offsetMs = !zone || zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60000;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  const low = Date.UTC(year, month - 1, day, h ? Number(h) : 0, mi ? Number(mi) : 0, s ? Number(s) : 0, ms) - offsetMs;
  let high: number;
  if (frac) high = low + 1;
  else if (s !== undefined) high = low + 1000;
  else if (mi !== undefined) high = low + 60000;
  else if (d) high = Date.UTC(year, month - 1, day + 1) - offsetMs;
  else if (mo) high = Date.UTC(year, month, 1);
  else high = Date.UTC(year + 1, 0, 1);
  // Years 0000–0099 would be misread by Date.UTC as 1900–1999.
  if (year < 100) return undefined;
  return { low, high };
}

/** A valid FHIR instant (full precision, with zone), as meta.lastUpdated must be. */
export function isInstant(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) && parseFhirDate(text) !== undefined;
}
