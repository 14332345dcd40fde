// The FINESS+ daily feed (finess-structures-journalier-YYYYMMDD.json.gz) of the synthetic directory,
// in the shape of the ANS's real file (docs: shared finess-mssante.md): legal entities (`pmej`) with
// their establishments (`ege`), and the traps of the real file at realistic shares.
// The model's FINESS structures come first, one legal entity each, with the name, address and SIRET
// of their RPPS lines; then establishments no RPPS line names, most of them closed. Every record is a
// pure function of (seed, index, day), written one legal entity at a time into a gzip stream.

import fs from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { finessNumber, sirenNumber, siretNumber } from './ids.ts';
import { familyName } from './names.ts';
import { CITY_DIST, drawn, type OpenDataModel, type StructureKind, type StructureOfDay } from './open-data.ts';
import { phonePrefix, STREET_NAMES, STREET_TYPES, type City } from './places.ts';
import { hash32, Rng, Weighted } from './prng.ts';
import { REFERENCE_MS } from './time.ts';

/** At scale 1, beside the model's ~68,000 FINESS structures: the national ~175,000 ege and ~98,000 pmej. */
export const FINESS_NATIONAL = { extraEge: 106_600, extraPmej: 29_800 } as const;
/** Share of the extra establishments closed on day 0: with the model's (all open), ~60 % in service. */
const EXTRA_CLOSED_SHARE = 0.66;
/** Per day and per unit of change rate, openings as a share of the extra establishments. */
const OPENING_SHARE = 0.1;
const STREAM = { extra: 80, pmej: 81, trap: 82, change: 83, stamp: 84 } as const;
const FINESS_CHANGE = 11; // the change kind of an extra establishment (the model's kinds are 1..5)

type Category = readonly [code: string, name: string, ape: string, statut: string, tarif: string];
const BY_KIND: Partial<Record<StructureKind, Category>> = {
  hospital: ['355', 'CENTRE HOSPITALIER', '86.10Z', '13', '03'], clinic: ['365', 'CLINIQUE', '86.10Z', '73', '07'],
  elderly: ['500', 'EHPAD', '87.10A', '21', '45'], laboratory: ['611', 'LABORATOIRE', '86.90B', '72', '99'],
  pharmacy: ['620', 'PHARMACIE', '47.73Z', '85', '99'],
};
const EXTRA_CATEGORIES = new Weighted<Category>([
  [BY_KIND.pharmacy!, 22], [BY_KIND.laboratory!, 5], [BY_KIND.elderly!, 12], [['124', 'CENTRE DE SANTE', '86.21Z', '60', '99'], 7],
  [BY_KIND.hospital!, 3], [BY_KIND.clinic!, 2], [['354', 'SSIAD', '88.10A', '60', '34'], 8], [['202', 'RESIDENCE AUTONOMIE', '87.30A', '21', '20'], 8],
  [['183', 'IME', '87.20A', '60', '57'], 8], [['437', 'FOYER D ACCUEIL MEDICALISE', '87.20A', '60', '41'], 6], [['156', 'CMP', '86.10Z', '13', '03'], 6],
]);
/** Pharmacies, laboratories and EHPAD are the least geolocated (~25 % of establishments in service have no coordinates). */
const NO_COORDINATES = (cat: string) => (['620', '611', '500'].includes(cat) ? 0.35 : 0.18);
const STREET_TYPE_DIST = new Weighted(STREET_TYPES.map((t) => [t, t[2]] as const));
/** Overseas departments: the UTM zone of the projected pair (central meridian, south). */
const OVERSEAS: Record<string, readonly [meridian: number, south: boolean]> = {
  '971': [-63, false], '972': [-63, false], '973': [-51, false], '974': [57, true], '976': [45, true],
};
const OVERSEAS_CITIES = Object.keys(OVERSEAS).map((d) => CITY_DIST.items.find((c) => c.dept === d)!);

/** The traps of the real file, each drawn per establishment; the first extra establishments carry one each. */
const TRAPS = ['noCategory', 'geographicNotFirst', 'lambertInXY', 'swappedXY', 'banCommune', 'padded', 'nulls', 'doublePhone'] as const;
type Trap = (typeof TRAPS)[number] | 'wgs84InXY' | 'overseas' | 'noCoordinates' | 'banStreet' | 'banHouse' | 'noSiret' | 'pmejNoSiren';
const TRAP_SHARE: Record<(typeof TRAPS)[number], number> = {
  noCategory: 0.00003, geographicNotFirst: 0.022, lambertInXY: 0.26, swappedXY: 0.7, banCommune: 0.0025, padded: 0.08, nulls: 0.03, doublePhone: 0.01,
};
const FORCED = TRAPS.length + OVERSEAS_CITIES.length;

export interface FinessSummary {
  name: string;
  /** compressed bytes. */
  bytes: number;
  pmej: number;
  ege: number;
  active: number;
  closed: number;
  /** establishments (or legal entities, for pmejNoSiren) showing each trap. */
  traps: Record<Trap, number>;
}

// ---- dates, coordinates -------------------------------------------------------------------------

const DAY_MS = 86_400_000;
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** `YYYY-MM-DD hh:mm:ss`, no time zone, as the real file. */
const dateTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const pastDate = (rng: Rng, fromYear: number, toYear: number) => Date.UTC(rng.range(fromYear, toYear), rng.int(12), rng.range(1, 28));
/** The day a change made on day d is registered: the evening before the extraction. */
const changeMs = (d: number, rng: Rng) => REFERENCE_MS + (d - 1) * DAY_MS + rng.range(17, 22) * 3_600_000 + rng.int(3_600) * 1_000;

/** Lambert-93 (EPSG:2154) of WGS84 degrees: the conic projection's closed form on GRS80. */
function lambert93(lat: number, lon: number): [x: number, y: number] {
  const e = 0.0818191910428158;
  const n = 0.725607765053267;
  const c = 11_754_255.426096;
  const phi = (lat * Math.PI) / 180;
  const s = Math.sin(phi);
  const iso = Math.log(Math.tan(Math.PI / 4 + phi / 2) * Math.pow((1 - e * s) / (1 + e * s), e / 2));
  const r = c * Math.exp(-n * iso);
  const g = n * (((lon - 3) * Math.PI) / 180);
  return [700_000 + r * Math.sin(g), 12_655_612.049876 - r * Math.cos(g)];
}

/** UTM metres on a sphere: a few hundred metres off the ellipsoid, enough to be told from degrees by range. */
function utm(lat: number, lon: number, meridian: number, south: boolean): [x: number, y: number] {
  const k = 0.9996 * 6_371_000;
  const phi = (lat * Math.PI) / 180;
  const dl = ((lon - meridian) * Math.PI) / 180;
  return [500_000 + k * Math.atanh(Math.cos(phi) * Math.sin(dl)), k * Math.atan2(Math.tan(phi), Math.cos(dl)) + (south ? 10_000_000 : 0)];
}


// ---- records ---------------------------------------------------------------------------------------

interface Place {
  city: City;
  numeroVoie?: string;
  typeVoie?: string;
  libelleVoie?: string;
  complementVoie?: string;
  lieuDit?: string;
  codePostal: string;
}

/** FNV-1a of a string. */
export function strHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const upper = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase();
const TYPE_LABEL = new Map(STREET_TYPES.map(([code, label]) => [code, label]));
const pad = (s: string | undefined, width: number, on: boolean) => (on && s !== undefined ? s.padEnd(width) : s);

/** An address object; the coordinates and their traps drawn by `rng`, counted in `traps`. */
function address(usage: string, p: Place, rng: Rng, traps: Set<Trap>, coordinates: number): Record<string, unknown> {
  const town = upper(p.city.name).replace(/[-']/g, ' ');
  const ligneQuatre = [p.numeroVoie, p.complementVoie, p.typeVoie && TYPE_LABEL.get(p.typeVoie), p.libelleVoie].filter(Boolean).join(' ') || undefined;
  let geo: Record<string, string> | undefined;
  if (rng.next() >= coordinates) {
    // The point and the BAN key are functions of the address: one address, one point, in either source.
    const [lat0, lon0] = [p.city.latitude, p.city.longitude];
    const banCommune = traps.has('banCommune');
    const h = new Rng(strHash(`${p.city.insee}|${p.libelleVoie}|${p.numeroVoie}`), STREAM.stamp);
    const [lat, lon] = banCommune ? [lat0, lon0] : [lat0 + (h.next() - 0.5) * 0.04, lon0 + (h.next() - 0.5) * 0.06];
    const o = OVERSEAS[p.city.dept];
    const [x, y] = o ? utm(lat, lon, o[0], o[1]) : lambert93(lat, lon);
    const street = `${p.city.insee}_${String(strHash(p.libelleVoie ?? '') % 10_000).padStart(4, '0')}`;
    const key = banCommune ? p.city.insee : p.numeroVoie && /^\d+$/.test(p.numeroVoie) ? `${street}_${p.numeroVoie.padStart(5, '0')}` : street;
    traps.add(banCommune ? 'banCommune' : key.length > 11 ? 'banHouse' : 'banStreet');
    const deg = [lon.toFixed(6).replace(/0+$/, ''), lat.toFixed(6).replace(/0+$/, '')];
    const metres = [x.toFixed(2), y.toFixed(2)];
    // The pair in coordonneeX/Y is WGS84 for ~74 %; else projected, and then often northing first (as in the ANS sample).
    let xy = deg;
    let dir = metres;
    if (traps.has('lambertInXY')) {
      [xy, dir] = [traps.has('swappedXY') ? [metres[1], metres[0]] : metres, deg];
    } else traps.add('wgs84InXY');
    if (o) traps.add('overseas');
    geo = {
      coordonneeX: xy[0], coordonneeY: xy[1],
      // direction* hold degrees (latitude, longitude) or metres (northing, easting).
      directionLatitude: dir === deg ? deg[1] : metres[1], directionLongitude: dir === deg ? deg[0] : metres[0],
      cleInInteropBAN: key, scoreBAN: String(0.5 + h.next() / 2),
    };
  } else traps.add('noCoordinates');
  const padded = traps.has('padded');
  return {
    usageAdresse: usage, numeroVoie: p.numeroVoie, typeVoie: pad(p.typeVoie, 4, padded), libelleVoie: pad(p.libelleVoie, 21, padded),
    complementVoie: p.complementVoie, complementPointGeographique: undefined, lieuDit: p.lieuDit, cogCommune: p.city.insee,
    ligneAcheminement: town, ligneUne: undefined, ligneDeux: undefined, ligneTrois: undefined, ligneQuatre, ligneCinq: undefined,
    ligneSix: undefined, codePostal: p.codePostal, coordonneesGeographique: geo,
  };
}

function contact(telephone?: string, telecopie?: string): unknown[] {
  return telephone || telecopie ? [{ typeContact: { roleContact: '01' }, telecom: { telephone, telecopie } }] : [];
}

function event(id: number, objet: string, type: 'EG' | 'PM', code: string, ms: number, registered: number) {
  return {
    evenementId: String(id), dateEnregistrement: dateTime(registered), dateEvenement: isoDate(ms), etatObjet1: code,
    identifiantObjet1: objet, systemeMaitre: '01', typeObjet1: type, codeEvenement: code,
  };
}

/** Explicit nulls where the record would omit a key (some readers met them). */
function nullify(o: unknown): unknown {
  if (Array.isArray(o)) return o.map(nullify);
  if (o && typeof o === 'object') return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === undefined ? null : nullify(v)]));
  return o;
}

export interface Ege {
  egeId: number;
  finess: string;
  category: Category | undefined;
  name: string;
  place: Place;
  siret?: string;
  telephone?: string;
  telecopie?: string;
  opened: number;
  closed?: number;
  updated: number;
  traps: Set<Trap>;
  /** chance of having no coordinates (none for the establishments that carry a forced trap). */
  unlocated: number;
}

function drawTraps(rng: Rng, forced: number): Set<Trap> {
  const traps = new Set<Trap>();
  for (const [i, t] of TRAPS.entries()) if (forced === i || (t === 'swappedXY' ? traps.has('lambertInXY') : true) && rng.chance(TRAP_SHARE[t])) traps.add(t);
  if (forced === TRAPS.indexOf('swappedXY')) traps.add('lambertInXY');
  if (forced === TRAPS.indexOf('lambertInXY')) traps.delete('swappedXY'); // one projected pair the right way round
  return traps;
}

function egeJson(e: Ege, rng: Rng): { json: unknown; active: boolean } {
  const { traps } = e;
  const padded = traps.has('padded');
  const active = e.closed === undefined;
  const cat = traps.has('noCategory') ? undefined : e.category;
  const geographic = address('03', e.place, rng, traps, e.unlocated);
  const adresse = [geographic];
  if (traps.has('geographicNotFirst') && active) {
    adresse.unshift({ usageAdresse: rng.pick(['06', '04']), libelleVoie: e.place.libelleVoie, lieuDit: `BP ${rng.range(1, 999)}`, cogCommune: e.place.city.insee, codePostal: e.place.codePostal, ligneAcheminement: geographic.ligneAcheminement });
  } else traps.delete('geographicNotFirst');
  if (!e.siret) traps.add('noSiret');
  const id = String(e.egeId);
  const events = [event(e.egeId * 3, id, 'EG', '003', e.opened, Math.max(e.opened, Date.UTC(2023, 2, 15, 11, 21, 1)))];
  if (!active) events.push(event(e.egeId * 3 + 1, id, 'EG', '005', e.closed!, e.closed! + DAY_MS));
  const espic = rng.chance(0.3) ? undefined : [rng.chance(0.9) ? '0' : '1'];
  const json = {
    informationsGeneralesEGE: {
      egeId: id, dateFermeture: active ? undefined : isoDate(e.closed!), dateOuverture: isoDate(e.opened), datePremiereAutorisation: isoDate(e.opened),
      nomEgeCourt: pad(e.name.slice(0, 38).trimEnd(), 32, padded), nomEgeLong: pad(e.name.slice(0, 80), 60, padded),
      numeroReferenceExterne: cat?.[0] === '620' ? String(hash32(2, e.egeId) % 10_000) : undefined,
      numFinessEge: e.finess, espic, siret: e.siret,
    },
    categorieentiteGeographiqueExercice: cat?.[0], modefixationtarifaire: e.category?.[4], typeBudget: ['01'], adresse,
    contact: contact(e.telephone, e.telecopie), engagement: [], evenement: events, roleEge: [],
    etatObjet: active ? 'A' : 'I', dateDerniereMaj: dateTime(e.updated),
  };
  return { json: traps.has('nulls') ? nullify(json) : json, active };
}

// ---- the model's structures and the extra establishments --------------------------------------------

function modelEge(s: StructureOfDay, seed: number): Ege {
  const f = s.fields;
  const rng = new Rng(seed, STREAM.pmej, s.j);
  // Where the RPPS lines give no SIRET, FINESS often knows one.
  const siret = f.siret || (rng.chance(0.75) ? siretNumber(sirenNumber(rng.range(2, 8), s.j), 0) : undefined);
  const opened = pastDate(rng, 1950, 2020);
  const traps = drawTraps(new Rng(seed, STREAM.trap, s.j), -1);
  traps.delete('noCategory'); // the RPPS lines' establishments keep their category
  if (!f.telephone) traps.delete('doublePhone');
  const telephone = traps.has('doublePhone') ? `${f.telephone}/${phonePrefix(s.city)}${rng.digits(10 - phonePrefix(s.city).length)}` : f.telephone || undefined;
  const updated = s.lastChange > 0 ? changeMs(s.lastChange, new Rng(hash32(seed, STREAM.change, s.lastChange), STREAM.change, -1 - s.j)) : pastDate(rng, 2015, 2025);
  return {
    egeId: s.j + 1, finess: f.finessSite, category: BY_KIND[s.kind], name: f.raisonSociale,
    place: {
      city: s.city, numeroVoie: f.numeroVoie || undefined, typeVoie: f.codeTypeVoie || undefined, libelleVoie: f.libelleVoie || undefined,
      complementVoie: f.indiceRepetitionVoie || undefined, lieuDit: f.mentionDistribution || undefined, codePostal: f.codePostal,
    },
    siret, telephone, telecopie: f.telecopie || undefined, opened, updated, traps, unlocated: NO_COORDINATES(BY_KIND[s.kind]![0]),
  };
}

/** The extra establishment k on the model's day: its changes (name, phone, address, closing) counted day by day. */
export function extraEge(model: OpenDataModel, k: number, base: number): Ege {
  const { seed, day, rate } = model;
  const rng = new Rng(seed, STREAM.extra, k);
  const forced = k < FORCED ? k : -1;
  const city = forced >= TRAPS.length ? OVERSEAS_CITIES[forced - TRAPS.length] : CITY_DIST.sample(rng);
  const category = EXTRA_CATEGORIES.sample(rng);
  const name = category[0] === '620' || category[0] === '611' ? `${category[1]} ${upper(familyName(rng))}` : `${category[1]} DE ${upper(city.name)}`;
  const [typeVoie] = STREET_TYPE_DIST.sample(rng);
  const place = (r: Rng): Place => ({
    city, numeroVoie: r.chance(0.85) ? String(r.range(1, 300)) : undefined, typeVoie, libelleVoie: r.pick(STREET_NAMES),
    lieuDit: r.chance(0.05) ? `BP ${r.range(1, 999)}` : undefined, codePostal: r.pick(city.postalCodes),
  });
  const phone = (r: Rng) => phonePrefix(city) + r.digits(10 - phonePrefix(city).length);
  const opensOn = k < base ? 0 : 1 + Math.floor((k - base) / Math.max(1, Math.round(base * rate * OPENING_SHARE)));
  const e: Ege = {
    egeId: model.structureCount + k + 1, finess: finessNumber(city.dept.slice(0, 2), model.structureCount + k), category, name, place: place(rng),
    siret: rng.chance(0.2) ? undefined : siretNumber(sirenNumber(rng.range(2, 8), model.structureCount + k), rng.int(5)),
    telephone: rng.chance(0.85) || forced === TRAPS.indexOf('doublePhone') ? phone(rng) : undefined, telecopie: rng.chance(0.3) ? phone(rng) : undefined,
    opened: opensOn > 0 ? REFERENCE_MS + (opensOn - 1) * DAY_MS : pastDate(rng, 1950, 2024), updated: 0,
    traps: drawTraps(new Rng(seed, STREAM.trap, model.structureCount + k), forced), unlocated: forced >= 0 ? 0 : NO_COORDINATES(category[0]),
  };
  e.updated = opensOn > 0 ? changeMs(opensOn, rng) : pastDate(rng, 2015, 2025);
  if (forced < 0 && opensOn === 0 && rng.chance(EXTRA_CLOSED_SHARE)) e.closed = e.updated = Math.max(e.opened + DAY_MS, pastDate(rng, 1990, 2025));
  if (!e.telephone) e.traps.delete('doublePhone');
  else if (e.traps.has('doublePhone')) e.telephone += `/${phone(rng)}`;
  // Each change of days 1..day: about `rate` of the establishments a day; a closed one stays closed.
  for (let d = Math.max(1, opensOn + 1); d <= day && e.closed === undefined; d++) {
    if (!drawn(seed, FINESS_CHANGE, k, d, rate)) continue;
    const c = new Rng(hash32(seed, STREAM.change, d), STREAM.change, k);
    const what = c.next();
    if (what < 0.3) e.name = `${e.name.replace(/ \(.*\)$/, '')} (${upper(familyName(c))})`;
    else if (what < 0.65) e.telephone = phone(c);
    else if (what < 0.85) e.place = place(c);
    else e.closed = changeMs(d, c) - DAY_MS / 2;
    e.updated = changeMs(d, c);
  }
  return e;
}

// ---- the file --------------------------------------------------------------------------------------

export function finessFileName(stamp: string): string {
  return `finess-structures-journalier-${stamp.slice(0, 8)}.json.gz`;
}

/**
 * Extra establishments (and their legal entities) at the model's scale, openings of days 1..day included.
 * Their FINESS serials sit between the model's site and legal-entity serials: unique up to scale ~1.3.
 */
export function extraCounts(model: OpenDataModel): { base: number; total: number; pmej: number } {
  const scale = model.basePersons / 1_000_000;
  const base = Math.max(FORCED + 4, Math.round(FINESS_NATIONAL.extraEge * scale));
  const opened = Math.round(base * model.rate * OPENING_SHARE) * model.day;
  return { base, total: base + opened, pmej: Math.max(4, Math.round(FINESS_NATIONAL.extraPmej * scale)) };
}

/**
 * The real file's layout (Jackson's default pretty printer): `"key" : value`, objects two spaces a
 * level, arrays inline (`[ {`, `}, {`, `[ "01" ]`, `[ ]`); keys whose value is undefined are left out.
 */
function pretty(v: unknown, indent: string): string {
  if (Array.isArray(v)) return v.length ? `[ ${v.map((x) => pretty(x, indent)).join(', ')} ]` : '[ ]';
  if (v && typeof v === 'object') {
    const inner = `${indent}  `;
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    return entries.length ? `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)} : ${pretty(x, inner)}`).join(',\n')}\n${indent}}` : '{ }';
  }
  return JSON.stringify(v);
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(Buffer.from(text, 'utf8'))) await once(out, 'drain');
}

/** Writes the day's FINESS file into `dir`; same model, same bytes (gzip without a time stamp). */
export async function writeFiness(model: OpenDataModel, dir: string, stamp: string): Promise<FinessSummary> {
  const name = finessFileName(stamp);
  const gzip = zlib.createGzip({ level: 6 });
  const file = fs.createWriteStream(path.join(dir, name), { highWaterMark: 1 << 20 });
  const done = pipeline(gzip, file);
  const { seed, day } = model;
  const traps = Object.fromEntries([...TRAPS, 'wgs84InXY', 'overseas', 'noCoordinates', 'banStreet', 'banHouse', 'noSiret', 'pmejNoSiren'].map((t) => [t, 0])) as Record<Trap, number>;
  const summary: FinessSummary = { name, bytes: 0, pmej: 0, ege: 0, active: 0, closed: 0, traps };
  const stampRng = new Rng(seed, STREAM.stamp, day);
  const generatedAt = `${new Date(REFERENCE_MS + stampRng.range(3, 6) * 3_600_000 + stampRng.int(3_600_000)).toISOString().slice(0, 23)}${stampRng.digits(6)}Z`;
  const extras = extraCounts(model);
  const pmejId = (m: number) => String(model.structureCount + m + 1);
  // Co-operation groups: a reader may ignore them but must get past them, before the legal entities as in the real file.
  const gcc = Array.from({ length: Math.max(1, Math.round(extras.pmej / 600)) }, (_, g) => ({
    gccId: String(g + 1), nomGcc: `GROUPEMENT ${g + 1}`, typeGcc: '001', gccIdentifiantExterne: String(27_000 + g), engagement: [], evenement: [],
    pmejDuGcc: [0, 1, 2].map((i) => ({ pmSmsseId: pmejId((g * 3 + i) % extras.pmej), typeRoleEntiteGroupe: i ? 'M' : 'S' })),
    egeDuGcc: [], etatObjet: 'A', dateDerniereMaj: '2025-10-21 19:19:05',
  }));
  const gco = Array.from({ length: Math.max(1, Math.round(extras.pmej / 2000)) }, (_, g) => ({ pmSmsseId: pmejId(g * 7 % extras.pmej), typeGco: '003', pmejDuGco: [], egeDuGco: [] }));
  // The head of the object pretty() would print, the legal entities then streamed into its last array.
  let batch = pretty({ schemaVersion: 'v1.0.0', generatedAt, gcc, gco, pmej: [0] }, '').replace(/0 \]\n\}$/, '');
  const emit = async (pmej: unknown) => {
    batch += `${summary.pmej ? ', ' : ''}${pretty(pmej, '  ')}`;
    summary.pmej++;
    if (batch.length >= 1 << 18) {
      await write(gzip, batch);
      batch = '';
    }
  };
  const count = (e: Ege, active: boolean) => {
    summary.ege++;
    summary[active ? 'active' : 'closed']++;
    for (const t of e.traps) traps[t]++;
  };

  // The model's FINESS structures: one legal entity each (its own FINESS juridique), described as the RPPS lines do.
  for (let j = 0; j < model.structureCount; j++) {
    if (!model.isFiness(j)) continue;
    const s = model.structureOn(j);
    const e = modelEge(s, seed);
    const rng = new Rng(seed, STREAM.pmej, -1 - j);
    const { json, active } = egeJson(e, rng);
    count(e, active);
    const cat = e.category!;
    const siren = e.siret?.slice(0, 9) ?? (rng.chance(0.8) ? sirenNumber(2, j) : undefined);
    await emit(pmejJson(String(j + 1), s.fields.finessJuridique, s.fields.raisonSociale, cat, siren, e, rng, [json], true, e.updated, traps));
  }
  // The establishments no RPPS line names, grouped in legal entities m (ege k with k % pmej === m).
  for (let m = 0; m < extras.pmej; m++) {
    const ege: unknown[] = [];
    let head: Ege | undefined;
    let anyActive = false;
    let updated = 0;
    let closed = 0;
    for (let k = m; k < extras.total; k += extras.pmej) {
      const e = extraEge(model, k, extras.base);
      const { json, active } = egeJson(e, new Rng(seed, STREAM.extra, -1 - k));
      count(e, active);
      ege.push(json);
      head ??= e;
      anyActive ||= active;
      updated = Math.max(updated, e.updated);
      closed = Math.max(closed, e.closed ?? 0);
    }
    if (!head) continue;
    const rng = new Rng(seed, STREAM.pmej, model.structureCount + m);
    const siren = head.siret?.slice(0, 9) ?? sirenNumber(rng.range(3, 8), model.structureCount + m);
    const ejName = ege.length > 1 ? `${head.category?.[1] ?? 'ASSOCIATION'} ${upper(familyName(rng))} GESTION` : head.name;
    const pm = pmejJson(pmejId(m), finessNumber(head.place.city.dept.slice(0, 2), 999_999 - model.structureCount - m), ejName, head.category ?? EXTRA_CATEGORIES.items[0], siren, head, rng, ege, anyActive, updated, traps);
    if (!anyActive) (pm.informationsGeneralesPMEJ as Record<string, unknown>).dateFermeture = isoDate(closed);
    await emit(pm);
  }
  batch += summary.pmej ? ' ]\n}' : ']\n}';
  await write(gzip, batch);
  gzip.end();
  await done;
  summary.bytes = fs.statSync(path.join(dir, name)).size;
  return summary;
}

function pmejJson(id: string, finess: string, name: string, cat: Category, siren: string | undefined, e: Ege, rng: Rng, ege: unknown[], active: boolean, updated: number, traps: Record<Trap, number>) {
  const bare = rng.chance(0.17); // siren and codeApe missing together, for ~17 % of legal entities
  if (bare) traps.pmejNoSiren++;
  const created = Math.min(e.opened, Date.UTC(2001, 0, 1));
  const own = address('02', e.place, rng, new Set(), 0.3);
  return {
    informationsGeneralesPMEJ: {
      pmSmsseId: id, codeApe: bare ? undefined : cat[2], dateCreation: isoDate(created), dateFermeture: undefined as string | undefined,
      denominationLonguePmSmsse: name.slice(0, 98), denominationPm: name.slice(0, 38).trimEnd(), numFinessPm: finess,
      fonctionPublique: cat[3] === '13' || cat[3] === '21' ? '01' : undefined, siren: bare ? undefined : siren, statutJuridique: cat[3], typePersonneMorale: '01',
    },
    adresse: [own], contact: contact(e.telephone?.split('/')[0]), engagement: [],
    evenement: [event(Number(id) * 2, id, 'PM', '001', created, Date.UTC(2025, 9, 21, 18, 36, 29))],
    ege, etatObjet: active ? 'A' : 'I', dateDerniereMaj: dateTime(updated),
  };
}
