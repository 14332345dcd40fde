// meta.lastUpdated and other dates, all relative to a fixed reference instant (never the clock).

import type { Rng } from './prng.ts';

/** Reference instant: every generated lastUpdated is strictly before it. */
export const REFERENCE_DATE = '2026-11-01T00:00:00Z';
export const REFERENCE_MS = Date.parse(REFERENCE_DATE);

const DAY = 86_400_000;
const YEAR = 365.25 * DAY;

/** The v2 go-live reload: many live records carry a lastUpdated of 2025-04-28 around 18:00-20:00 (+02:00). */
const MIGRATION_START_MS = Date.parse('2025-04-28T15:30:00Z');
const MIGRATION_SPAN_MS = 3 * 3_600_000;

/** Share of resources stamped during the migration burst. */
export const MIGRATION_SHARE = 0.15;
/** Recency skew: age = 3 years × u^RECENCY_POWER (power > 1 favours recent dates). */
export const RECENCY_POWER = 2.2;
/** Share of lastUpdated values written with "Z" (the rest use the French offset of that date). */
export const UTC_SHARE = 0.3;
/** Share written with milliseconds (the rest to the second). */
export const MILLIS_SHARE = 0.85;

function lastSundayUtc(year: number, month: number): number {
  const last = new Date(Date.UTC(year, month + 1, 0));
  return Date.UTC(year, month, last.getUTCDate() - last.getUTCDay(), 1);
}

const dstCache = new Map<number, readonly [number, number]>();

/** Europe/Paris offset in minutes at a UTC instant (EU rule: last Sunday of March/October at 01:00 UTC). */
export function parisOffsetMinutes(ms: number): number {
  const y = new Date(ms).getUTCFullYear();
  let dst = dstCache.get(y);
  if (!dst) {
    dst = [lastSundayUtc(y, 2), lastSundayUtc(y, 9)];
    dstCache.set(y, dst);
  }
  return ms >= dst[0] && ms < dst[1] ? 120 : 60;
}

function p2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function p3(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n);
}

/** Format an instant as a FHIR instant with the given offset (minutes, or null for "Z"). */
export function formatInstant(ms: number, offsetMinutes: number | null, millis: boolean): string {
  const d = new Date(ms + (offsetMinutes ?? 0) * 60_000);
  let s = `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
  if (millis) s += `.${p3(d.getUTCMilliseconds())}`;
  if (offsetMinutes === null) return `${s}Z`;
  return `${s}+${p2(Math.floor(offsetMinutes / 60))}:${p2(offsetMinutes % 60)}`;
}

/** A lastUpdated instant within the three years before the reference date, skewed towards recent. */
export function lastUpdated(rng: Rng): string {
  let ms: number;
  if (rng.chance(MIGRATION_SHARE)) {
    ms = MIGRATION_START_MS + Math.floor(rng.next() * MIGRATION_SPAN_MS);
  } else {
    const age = Math.pow(rng.next(), RECENCY_POWER) * 3 * YEAR;
    ms = REFERENCE_MS - 1000 - Math.floor(age);
  }
  const millis = rng.chance(MILLIS_SHARE);
  if (!millis) ms -= ms % 1000;
  const offset = rng.chance(UTC_SHARE) ? null : parisOffsetMinutes(ms);
  return formatInstant(ms, offset, millis);
}

/** Calendar date (YYYY-MM-DD) of a UTC instant. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A date `yearsBack` years or less before the reference date, uniformly. */
export function dateWithin(rng: Rng, yearsBack: number): number {
  return REFERENCE_MS - Math.floor(rng.next() * yearsBack * YEAR);
}

/** Add whole years to a UTC instant (calendar arithmetic). */
export function addYears(ms: number, years: number): number {
  const d = new Date(ms);
  d.setUTCFullYear(d.getUTCFullYear() + years);
  return d.getTime();
}

export const DAY_MS = DAY;
export const YEAR_MS = YEAR;
