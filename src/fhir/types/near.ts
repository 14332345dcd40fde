import { EXT } from '../../vocabulary/extensions.ts';
import { UCUM } from '../../vocabulary/systems.ts';
import { badRequest, notSupported } from '../outcome.ts';
import type { Condition } from '../search-request.ts';
import { stmt, type Statement } from '../statement.ts';
import { describe, isObject, type Fail, type SearchType } from './search-type.ts';

/**
 * Near (a `special` parameter, `registry.special = 'near'`): `near=[latitude]|[longitude]|[distance]|[units]`
 * selects the resources whose position is within the distance of the point, the great-circle
 * distance on a sphere of EARTH_RADIUS_KM. Each match entry carries its distance, and
 * without `_sort` a search is read nearest first (src/fhir/compile.ts `measuredBy`).
 *
 * Indexed into geo_idx (param, band, lat, lon, x, y, z), B-tree only: `band` is the row's latitude
 * band, floor(lat × BANDS_PER_DEGREE), and the index (param, band, lon) gives a band's rows in a
 * longitude range. A search reads the bands its circle's latitudes cover, in each the longitudes the
 * circle spans at the band's latitude nearest its widest (`bandRanges`), then checks the exact
 * distance by the chord between the two points' unit vectors (x, y, z: stored with the row), which
 * grows with the great-circle distance: arithmetic only, the trigonometry done once per point.
 */
export interface NearRow {
  param: number;
  lat: number;
  lon: number;
}

type NearCondition = Extract<Condition, { kind: 'near' }>;

/** The sphere every distance is measured on: the Earth's mean radius (IUGG), in km. */
export const EARTH_RADIUS_KM = 6371.0088;
/** The distance of a `near` value without one. */
export const DEFAULT_DISTANCE_KM = 5;
/** The largest distance a `near` value may ask for: a circle is read whole for every page. */
export const MAX_DISTANCE_KM = 200;
/** Latitude bands per degree: floor(lat × 16) is exact in binary floating point; a band is about 6.95 km high. */
export const BANDS_PER_DEGREE = 16;
export const NEAR_FORM = 'near=[latitude]|[longitude]|[distance]|[units]';
/** Kilometres per unit of distance (UCUM `[mi_i]`: the international mile; `mi` taken as the same). */
const UNITS: Readonly<Record<string, number>> = { km: 1, m: 0.001, mi: 1.609344, '[mi_i]': 1.609344 };

const RAD = Math.PI / 180;
/**
 * Added to every bound of a band range (degrees, about a tenth of a millimetre): rounding never
 * leaves out a row on the circle itself; the distance check removes what it lets in.
 */
const SLACK = 1e-9;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
/** The shortest distance taken, km (a millimetre). */
const MIN_KM = 1e-6;
/**
 * A page of a wide circle is read from a ring of this width first, at least, or an eighth of the
 * radius: where Locations are dense it holds the page; where they are not, it is small to read.
 */
const NARROW_KM = 1;
/** The widest circle whose search is `local` (src/store/classify.ts): what its page may read when the smaller circle does not fill it. */
const LOCAL_KM = 20;

/**
 * A coordinate within a billionth of a degree of 0 is 0: PostgreSQL fails float8 arithmetic that
 * underflows (the square of the sine of 1e-200°), and would fail every search meeting such a row.
 */
const flushed = (degrees: number): number => (Math.abs(degrees) < 1e-9 ? 0 : degrees);

export const bandOf = (lat: number): number => Math.floor(lat * BANDS_PER_DEGREE);
const haversine = (angle: number) => Math.sin(angle / 2) ** 2;

/** One index range of a search: the rows of `band` whose longitude is in [lo, hi] (degrees). */
export interface BandRange {
  band: number;
  lo: number;
  hi: number;
}

/**
 * The index ranges that hold every point within `km` of (lat, lon). The circle is a spherical cap
 * of angular radius d: it spans latitudes lat ± d, and at latitude φ the longitudes lon ± Δλ(φ),
 * hav Δλ = (hav d − hav(φ − φ0)) / (cos φ cos φ0) (the haversine formula solved for Δλ: exact for
 * circles of a few metres too), widest at the latitude where meridians touch it, sin φT =
 * sin φ0 / cos d. Each band takes its latitude nearest φT. A cap that holds a pole takes whole
 * bands; a range across ±180° is two.
 */
export function bandRanges(lat: number, lon: number, km: number): BandRange[] {
  const d = km / EARTH_RADIUS_KM;
  const south = Math.max(lat - d / RAD - SLACK, -90);
  const north = Math.min(lat + d / RAD + SLACK, 90);
  const polar = north === 90 || south === -90;
  const phi0 = lat * RAD;
  const widest = polar ? 0 : Math.asin(Math.sin(phi0) / Math.cos(d));
  const out: BandRange[] = [];
  for (let band = bandOf(south); band <= bandOf(north); band++) {
    let half = 180;
    if (!polar) {
      const phi = Math.min(Math.max(widest, Math.max(band / BANDS_PER_DEGREE, south) * RAD), Math.min((band + 1) / BANDS_PER_DEGREE, north) * RAD);
      const hav = (haversine(d) - haversine(phi - phi0)) / (Math.cos(phi) * Math.cos(phi0));
      half = (2 * Math.asin(Math.sqrt(Math.min(1, Math.max(0, hav))))) / RAD + SLACK;
    }
    const lo = lon - half;
    const hi = lon + half;
    if (half >= 180) out.push({ band, lo: -180, hi: 180 });
    else if (lo < -180) out.push({ band, lo: lo + 360, hi: 180 }, { band, lo: -180, hi });
    else if (hi > 180) out.push({ band, lo, hi: 180 }, { band, lo: -180, hi: hi - 360 });
    else out.push({ band, lo, hi });
  }
  return out;
}

/** The unit vector of a point of the sphere (degrees): what a row stores beside its latitude and longitude. */
export function unitVector(lat: number, lon: number): [number, number, number] {
  const phi = lat * RAD;
  const lambda = lon * RAD;
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)];
}

/** The squared chord from the point of `c` to the row `g`, as SQL: 4 sin²(θ / 2) for their central angle θ. */
function chord(c: NearCondition): Statement {
  const [x, y, z] = unitVector(c.lat, c.lon);
  return stmt`((g.x - ${x}::float8) * (g.x - ${x}::float8) + (g.y - ${y}::float8) * (g.y - ${y}::float8) + (g.z - ${z}::float8) * (g.z - ${z}::float8))`;
}

/** The squared chord of a great-circle distance of `km`. */
const chordOf = (km: number) => (2 * Math.sin(km / EARTH_RADIUS_KM / 2)) ** 2;

/** The great-circle distance in km of a squared chord, as SQL. */
const distanceOf = (chord2: Statement): Statement => stmt`2 * ${EARTH_RADIUS_KM}::float8 * asin(least(1, sqrt(${chord2}) / 2))`;

/** The rows (rid, c2) of the circle of `c`, c2 their squared chord: its index ranges (the (param, band, lon) index), each row checked. */
function circle(c: NearCondition): Statement {
  const r = bandRanges(c.lat, c.lon, c.km);
  return stmt`(select g.rid, g.c2 from (select g.rid, ${chord(c)} as c2
    from unnest(${r.map((x) => x.band)}::int[], ${r.map((x) => x.lo)}::float8[], ${r.map((x) => x.hi)}::float8[]) b(band, lo, hi)
    join geo_idx g on g.param = ${c.param.id} and g.band = b.band and g.lon >= b.lo and g.lon <= b.hi) g
    where g.c2 <= ${chordOf(c.km)}::float8) g`;
}

/** A number of the value, or undefined when the part is empty; `what` names it in the error. */
function part(raw: string | undefined, what: string, fail: (why: string) => never): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!DECIMAL.test(raw)) fail(`its ${what} "${raw}" is not a decimal number`);
  return Number(raw);
}

function parseValue(raw: string, name: string): { lat: number; lon: number; km: number } {
  const fail = (why: string): never => {
    throw badRequest(
      `parameter ${name}: "${raw}": ${why}; the form is ${NEAR_FORM} (latitude -90 to 90, longitude -180 to 180, WGS84 degrees; ` +
        `distance from 1 mm to ${MAX_DISTANCE_KM} km, ${DEFAULT_DISTANCE_KM} km when left out; units ${Object.keys(UNITS).join(', ')}, km when left out), e.g. near=48.8534|2.3488|2|km`,
      name,
    );
  };
  const parts = raw.split('|');
  if (parts.length < 2 || parts.length > 4) fail('does not have 2 to 4 parts separated by |');
  const lat = part(parts[0], 'latitude', fail);
  const lon = part(parts[1], 'longitude', fail);
  if (lat === undefined || lon === undefined) fail('needs a latitude and a longitude');
  if (Math.abs(lat!) > 90) fail(`its latitude ${lat} is outside -90 to 90`);
  if (Math.abs(lon!) > 180) fail(`its longitude ${lon} is outside -180 to 180`);
  const unit = parts[3] === undefined || parts[3] === '' ? 'km' : parts[3];
  if (!Object.hasOwn(UNITS, unit)) fail(`its unit "${unit}" is not one of ${Object.keys(UNITS).join(', ')}`);
  const distance = part(parts[2], 'distance', fail);
  const km = distance === undefined ? DEFAULT_DISTANCE_KM : distance * UNITS[unit];
  if (!(km >= MIN_KM)) fail(`its distance ${parts[2]} ${unit} is not above 0 (a millimetre at least)`);
  if (km > MAX_DISTANCE_KM) fail(`its distance ${parts[2]} ${unit} is above the maximum, ${MAX_DISTANCE_KM} km`);
  return { lat: flushed(lat!), lon: flushed(lon!), km };
}

/** A coordinate of a position: a JSON number within ±`limit`. */
function coordinate(position: Record<string, unknown>, key: string, limit: number, fail: Fail): number {
  const v = position[key];
  if (v === undefined || v === null) fail(`is missing (a number from -${limit} to ${limit})`, key);
  if (typeof v !== 'number' || !(Math.abs(v) <= limit)) fail(`must be a number from -${limit} to ${limit}, found ${typeof v === 'number' ? v : describe(v)}`, key);
  return flushed(v as number);
}

const EXTENSION_OPEN = `[{"url":${JSON.stringify(EXT.locationDistance)},"valueDistance":{"value":`;
const EXTENSION_CLOSE = `,"unit":"km","system":${JSON.stringify(UCUM)},"code":"km"}}]`;

export const near: SearchType<NearCondition, NearRow> = {
  table: { name: 'geo_idx', alias: 'g', columns: 'band, lat, lon, x, y, z' },

  parse(param, modifier, raws, name) {
    if (modifier !== undefined) throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on ${param.code} (${NEAR_FORM})`, name);
    if (raws.length > 1) {
      throw badRequest(`parameter ${name}: one point per ${param.code} (${NEAR_FORM}); to be within several circles, give ${param.code} once per circle`, name);
    }
    return { kind: 'near', param, ...parseValue(raws[0], name) };
  },

  modifiers: () => [],

  match: (c) => stmt`${chord(c)} <= ${chordOf(c.km)}::float8`,

  rows: (c) => stmt`select g.rid from ${circle(c)}`,

  measure: {
    rows: (c) => stmt`select g.rid, ${distanceOf(stmt`g.c2`)} as m from ${circle(c)}`,
    of: (c, rid) => stmt`(select ${distanceOf(stmt`min(${chord(c)})`)} from geo_idx g where g.param = ${c.param.id} and g.rid = ${rid})`,
    // km to the metre: trailing zeros trimmed (3.1, not 3.100).
    extension: (m) => stmt`${EXTENSION_OPEN}::text || trim_scale(round(${m}::numeric, 3))::text || ${EXTENSION_CLOSE}::text`,
    narrowed(c, from) {
      const km = (from ?? 0) + Math.max(NARROW_KM, c.km / 8);
      // The circle's rows are chosen by chord, measured by arc: a margin far above the rounding between them.
      return km < c.km ? { c: { ...c, km }, bound: km * (1 - 1e-9) } : undefined;
    },
    local: (c) => c.km <= LOCAL_KM,
  },

  rowsOf: {
    index(param, value, emit, fail) {
      if (!isObject(value)) fail(`must be an object with a latitude and a longitude, found ${describe(value)}`);
      const position = value as Record<string, unknown>;
      emit({ param: param.id, lat: coordinate(position, 'latitude', 90, fail), lon: coordinate(position, 'longitude', 180, fail) });
    },

    same: (a, b) => a.lat === b.lat && a.lon === b.lon,

    // JavaScript's shortest round-trip text: PostgreSQL reads back the same double.
    copyText: (row) => `${bandOf(row.lat)}\t${row.lat}\t${row.lon}\t${unitVector(row.lat, row.lon).join('\t')}`,

    // The point itself, at the default distance.
    searchValue: (row) => `${row.lat}|${row.lon}`,
  },
};
