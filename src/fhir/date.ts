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

const daysInMonth = (year: number, month: number) =>
  month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;

export function parseFhirDate(text: string): DateRange | undefined {
  const m = RE.exec(text);
  if (!m) return undefined;
  const y = m[1], mo = m[2], d = m[3], h = m[4], mi = m[5], s = m[6], frac = m[7], zone = m[8];
  const year = +y;
  // Years 0000–0099 would be misread by Date.UTC as 1900–1999.
  if (year < 100) return undefined;
  const month = mo ? +mo : 1;
  const day = d ? +d : 1;
  if (month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  if (h !== undefined && (+h > 23 || +mi > 59 || (s !== undefined && +s > 59))) return undefined;
  let offsetMs = 0;
  if (zone && zone !== 'Z') {
    const zh = +zone.slice(1, 3);
    const zm = +zone.slice(4, 6);
    if (zh > 14 || zm > 59) return undefined;
    offsetMs = (zone.charCodeAt(0) === 45 ? -1 : 1) * (zh * 60 + zm) * 60000;
  }
  const ms = frac ? +(frac.length >= 3 ? frac.slice(0, 3) : frac.padEnd(3, '0')) : 0;
  const low = Date.UTC(year, month - 1, day, h ? +h : 0, mi ? +mi : 0, s ? +s : 0, ms) - offsetMs;
  let high: number;
  if (frac) high = low + 1;
  else if (s !== undefined) high = low + 1000;
  else if (mi !== undefined) high = low + 60000;
  else if (d) high = Date.UTC(year, month - 1, day + 1) - offsetMs;
  else if (mo) high = Date.UTC(year, month, 1);
  else high = Date.UTC(year + 1, 0, 1);
  return { low, high };
}

/**
 * An instant in epoch milliseconds as PostgreSQL's timestamptz text input takes it: ISO 8601, and a
 * year past 9999 (the `high` of a value in the last millisecond, day or year of 9999) written
 * `10000-…` — toISOString's `+010000-…` is refused ("time zone displacement out of range").
 */
export function pgTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.charCodeAt(0) === 43 ? iso.slice(1).replace(/^0+(?=\d{5})/, '') : iso;
}

/** A valid FHIR instant (full precision, with zone), as meta.lastUpdated must be. */
export function isInstant(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) && parseFhirDate(text) !== undefined;
}
