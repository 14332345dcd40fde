/**
 * Every example request of the seed (fixtures/seed/api-seed.md), replayed as a client writes it:
 * §4.3 (every include row), §4.4–4.7 (every parameter row, with the rules' own example shapes),
 * §4.8 (every query shape) and §9 (the v1 and v2 names), with no `_count` (the default page size,
 * 50), through fhir-kit-client against a listening server: the first page as the URL the seed
 * writes (its %7C, %2C and %3A kept as written, sent by `client.request`), a representative subset
 * also as a POST form (`client.search` with `postSearch`), then `client.nextPage` until it returns
 * undefined.
 *
 * The data is the project's generator's (a few thousand practitioners, so that whatever can have
 * many matches spans several pages) plus fixtures/directory, the only data with the elements the
 * generator never writes (address use, state and country, endpoint). Every value is drawn from
 * that data. For each example: every page 200, each match once over all pages, full pages of 50,
 * `total` (when given) equal to the matches, the included resources of each page those its matches
 * reference or are referenced by; and the matches equal to an expectation computed here from the
 * data files, by a small predicate written from the seed's meaning and FHIR R4's search rules.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, type FhirResource, type SearchParams } from 'fhir-kit-client';
import t from 'tap';
import { generate } from '../../src/generate/index.ts';
import { FIXTURES, load, testApp } from '../helpers/app.ts';
import { API_KEY, idsOf, refsOf, type A, type Entry } from '../helpers/search.ts';

// ---- data ------------------------------------------------------------------------------------

/** A resource as the data files hold it: only what the predicates below read is typed. */
type Res = { resourceType: string; id: string; [element: string]: any };
type Type = 'Practitioner' | 'Organization' | 'PractitionerRole' | 'Location' | 'Device' | 'HealthcareService';

const dir = mkdtempSync(path.join(tmpdir(), 'seed-examples-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
await generate({ scale: 0.002, seed: 25, outDir: dir });
const DIRECTORY = path.join(FIXTURES, 'directory');

/** Every resource of the generated NDJSON files and of the directory's Bundles, by type. */
function readData(): Record<Type, Res[]> {
  const out: Record<Type, Res[]> = { Practitioner: [], Organization: [], PractitionerRole: [], Location: [], Device: [], HealthcareService: [] };
  const add = (r: Res) => out[r.resourceType as Type].push(r);
  for (const f of readdirSync(dir)) readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).forEach((l) => add(JSON.parse(l) as Res));
  for (const f of readdirSync(DIRECTORY)) (JSON.parse(readFileSync(path.join(DIRECTORY, f), 'utf8')) as { entry: { resource: Res }[] }).entry.forEach((e) => add(e.resource));
  return out;
}
const data = readData();
const practitioners = data.Practitioner;
const organizations = data.Organization;
const roles = data.PractitionerRole;

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY, PUBLIC_BASE_URL: '' } });
const loaded = await load(db, [dir, DIRECTORY]);
await app.listen({ port: 0, host: '127.0.0.1' });
const ROOT = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const clients = {
  v1: new Client({ baseUrl: `${ROOT}/fhir/v1`, customHeaders: { 'SERVICE-API-KEY': API_KEY } }),
  v2: new Client({ baseUrl: `${ROOT}/fhir/v2`, customHeaders: { 'SERVICE-API-KEY': API_KEY } }),
};

// ---- the elements the seed's parameters search, read as FHIR R4 defines them -----------------------

/** A national terminology's system URI ({terminology_url}/NOS/TRE_<name>/FHIR/TRE-<name>). */
const tre = (name: string) => `https://mos.esante.gouv.fr/NOS/TRE_${name}/FHIR/TRE-${name}`;
const SYSTEM = {
  G15: tre('G15-ProfessionSante'),
  R38: tre('R38-SpecialiteOrdinale'),
  R09: tre('R09-CategorieProfessionnelle'),
  orgType: 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307',
  R75: tre('R75-InseeNAFrev2Niveau5'),
  R72: tre('R72-FinessStatutJuridique'),
  R02: tre('R02-SecteurActivite'),
  R66: tre('R66-CategorieEtablissement'),
  R73: tre('R73-ESPIC'),
  /** §4.6 lists it for `role` as {interop_url}/fhir/CodeSystem/fr-v2-3307 */
  roleOrgType: 'http://interopsante.org/fhir/CodeSystem/fr-v2-3307',
  R21: tre('R21-Fonction'),
  R85: tre('R85-RolePriseCharge'),
  R96: tre('R96-AutreFonctionSanitaire'),
  R22: tre('R22-GenreActivite'),
  R23: tre('R23-ModeExercice'),
  R06: tre('R06-SectionTableauCNOP'),
  G05: tre('G05-SousSectionTableauCNOP'),
  R60: tre('R60-AutoriteEnregistrement'),
  FINESS: 'https://finess.esante.gouv.fr',
  RPPS: 'https://rpps.esante.gouv.fr',
};
/**
 * The system URIs a v1 request writes (§4.7: FINESS as {finess_system_url}, the organization type
 * as {interop_url}/fhir/CodeSystem/fr-v2-3307), with the one the data holds for each.
 */
const V1_SYSTEMS = {
  FINESS: ['http://finess.sante.gouv.fr', SYSTEM.FINESS],
  RPPS: ['http://rpps.fr', SYSTEM.RPPS],
  orgType: ['http://interopsante.org/fhir/CodeSystem/fr-v2-3307', SYSTEM.orgType],
  identifierType: ['http://interopsante.org/CodeSystem/v2-0203', 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203'],
  identifierTypeFr: ['http://interopsante.org/CodeSystem/fr-v2-0203', 'https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203'],
} as const;
const DATA_TRACE = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-ext-data-trace';
const SMARTCARD = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-ext-smartcard';
const PHARMACY_LICENCE = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-ext-organization-pharmacy-licence';
const EMAIL_TYPE = 'https://hl7.fr/ig/fhir/core/StructureDefinition/fr-core-contact-point-email-type';

interface Coding { system?: string; code?: string }
const codings = (concepts: unknown): Coding[] => ((concepts as { coding?: Coding[] }[] | undefined) ?? []).flatMap((c) => c?.coding ?? []);
const traceOf = (r: Res, url: string): Res[] =>
  (r.meta?.extension ?? []).filter((e: Res) => e.url === DATA_TRACE).flatMap((e: Res) => e.extension ?? []).filter((e: Res) => e.url === url);
/** The token values of each parameter, as codings (identifiers: system + value). */
const tokens = {
  active: (r: Res): Coding[] => (typeof r.active === 'boolean' ? [{ code: String(r.active) }] : []),
  informationSystem: (r: Res): Coding[] => traceOf(r, 'systeme-information').map((e) => ({ code: e.valueCode })),
  registrationAuthority: (r: Res): Coding[] => traceOf(r, 'autorite-enregistrement').flatMap((e) => codings([e.valueCodeableConcept])),
  identifier: (r: Res): Coding[] => (r.identifier ?? []).map((i: Res) => ({ system: i.system, code: i.value })),
  identifierType: (r: Res): Coding[] => codings((r.identifier ?? []).map((i: Res) => i.type)),
  qualification: (r: Res): Coding[] => codings((r.qualification ?? []).map((q: Res) => q.code)),
  type: (r: Res): Coding[] => codings(r.type),
  role: (r: Res): Coding[] => codings(r.code),
  addressUse: (r: Res): Coding[] => (r.address ?? []).filter((a: Res) => a.use).map((a: Res) => ({ code: a.use })),
};
/** The string values of each parameter. */
const strings = {
  family: (r: Res): string[] => (r.name ?? []).map((n: Res) => n.family).filter(Boolean),
  given: (r: Res): string[] => (r.name ?? []).flatMap((n: Res) => n.given ?? []),
  /** Practitioner.name: any part of a HumanName (the seed: with the civility prefix and suffix). */
  name: (r: Res): string[] => (r.name ?? []).flatMap((n: Res) => [n.family, ...(n.given ?? []), ...(n.prefix ?? []), ...(n.suffix ?? []), n.text]).filter(Boolean),
  /** Organization.name: the name or an alias. */
  orgName: (r: Res): string[] => [r.name, ...(r.alias ?? [])].filter(Boolean),
  mailbox: (r: Res): string[] =>
    (r.telecom ?? []).filter((c: Res) => (c.extension ?? []).some((e: Res) => e.url === EMAIL_TYPE && e.valueCoding?.code === 'MSSANTE')).map((c: Res) => c.value),
  smartcard: (r: Res): string[] =>
    (r.extension ?? []).filter((e: Res) => e.url === SMARTCARD).flatMap((e: Res) => (e.extension ?? []).filter((x: Res) => x.url === 'number').map((x: Res) => x.valueString)),
  address: (r: Res): string[] =>
    (r.address ?? []).flatMap((a: Res) => [...(a.line ?? []), a.city, a.district, a.state, a.postalCode, a.country, a.text]).filter(Boolean),
  city: (r: Res): string[] => (r.address ?? []).map((a: Res) => a.city).filter(Boolean),
  postalCode: (r: Res): string[] => (r.address ?? []).map((a: Res) => a.postalCode).filter(Boolean),
  country: (r: Res): string[] => (r.address ?? []).map((a: Res) => a.country).filter(Boolean),
  state: (r: Res): string[] => (r.address ?? []).map((a: Res) => a.state).filter(Boolean),
  licence: (r: Res): string[] => (r.extension ?? []).filter((e: Res) => e.url === PHARMACY_LICENCE).map((e: Res) => e.valueString),
};
/** The `Type/id` each reference element points at. */
const refs = {
  partof: (r: Res): string[] => [r.partOf?.reference].filter(Boolean),
  endpoint: (r: Res): string[] => (r.endpoint ?? []).map((e: Res) => e.reference),
  practitioner: (r: Res): string[] => [r.practitioner?.reference].filter(Boolean),
  organization: (r: Res): string[] => [r.organization?.reference].filter(Boolean),
  deviceOwner: (r: Res): string[] => [r.owner?.reference].filter(Boolean),
  providedBy: (r: Res): string[] => [r.providedBy?.reference].filter(Boolean),
  location: (r: Res): string[] => (r.location ?? []).map((l: { reference: string }) => l.reference),
  managingOrganization: (r: Res): string[] => [r.managingOrganization?.reference].filter(Boolean),
};
const lastUpdated = (r: Res) => Date.parse(r.meta.lastUpdated);
const refOf = (r: Res) => `${r.resourceType}/${r.id}`;

// ---- FHIR R4 search rules, as predicates -------------------------------------------------------

type Pred = (r: Res) => boolean;
/** Case, accents and punctuation folded away (the seed: case-insensitive; FHIR: accents ignored). */
const fold = (s: string) =>
  s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
    .replace(/œ/g, 'oe').replace(/æ/g, 'ae').replace(/ß/g, 'ss').replace(/ø/g, 'o').replace(/ł/g, 'l')
    .replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
/** A comma-separated value: alternatives (OR). */
const anyOf = (value: string, one: (v: string) => boolean) => value.split(',').some(one);
/** Token: `code`, `system|code`, `|code` (no system) or `system|`. */
const token = (values: (r: Res) => Coding[], value: string): Pred => (r) =>
  anyOf(value, (v) => {
    const bar = v.indexOf('|');
    if (bar < 0) return values(r).some((c) => c.code === v);
    const [system, code] = [v.slice(0, bar), v.slice(bar + 1)];
    return values(r).some((c) => (system === '' ? c.system === undefined : c.system === system) && (code === '' || c.code === code));
  });
/** String: starts with (folded); `:exact` equal as written; `:contains` anywhere (folded). */
const string = (values: (r: Res) => string[], value: string, modifier: '' | 'exact' | 'contains' = ''): Pred => (r) =>
  anyOf(value, (v) =>
    values(r).some((s) => (modifier === 'exact' ? s === v : modifier === 'contains' ? fold(s).includes(fold(v)) : fold(s).startsWith(fold(v)))));
/** Reference: `id` or `Type/id`. */
const reference = (values: (r: Res) => string[], type: string, value: string): Pred => (r) =>
  anyOf(value, (v) => values(r).includes(v.includes('/') ? v : `${type}/${v}`));
const idIs = (id: string): Pred => token((r) => [{ code: r.id }], id);
const and = (...ps: Pred[]): Pred => (r) => ps.every((p) => p(r));

/** The [low, high) instants of a date or date-time of the seed's forms; no zone is UTC. */
function dateRange(value: string): [number, number] {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?$/.exec(value);
  if (!m) throw new Error(`not a seed date: ${value}`);
  const low = Date.parse(m[4] === undefined ? `${value}T00:00:00Z` : `${value}Z`);
  return [low, low + (m[4] === undefined ? 86_400_000 : 1000)];
}
/** `_lastUpdated=<prefix><value>` on an instant (a point): FHIR R4 date prefixes. */
function updated(prefix: 'eq' | 'ne' | 'gt' | 'lt' | 'ge' | 'le', value: string): Pred {
  const [low, high] = dateRange(value);
  const within: Record<typeof prefix, (x: number) => boolean> = {
    eq: (x) => x >= low && x < high, ne: (x) => x < low || x >= high,
    gt: (x) => x >= high, lt: (x) => x < low, ge: (x) => x >= low, le: (x) => x < high,
  };
  return (r) => within[prefix](lastUpdated(r));
}
/** `ap`: approximately — at least `eq`; at most the value widened by 10 % of its distance to now, and a day. */
function approximately(value: string): { matches: Pred; atMost: Pred } {
  const [low, high] = dateRange(value);
  const slack = 0.1 * Math.abs(Date.now() - low) + 86_400_000;
  return { matches: updated('eq', value), atMost: (r) => lastUpdated(r) >= low - slack && lastUpdated(r) < high + slack };
}
/** Reverse chaining: resources some `type` resource references through `via` while matching `where`. */
function referencedBy(from: Res[], via: (r: Res) => string[], where: Pred): Pred {
  const targets = new Set(from.filter(where).flatMap(via));
  return (r) => targets.has(refOf(r));
}

// ---- what each include row adds ------------------------------------------------------------------

/** `Type/id` → resources of `from` that reference it through `via`. */
function referrers(from: Res[], via: (r: Res) => string[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const r of from) for (const target of via(r)) m.set(target, [...(m.get(target) ?? []), refOf(r)]);
  return m;
}
const rolesOfPractitioner = referrers(roles, refs.practitioner);
const rolesOfOrganization = referrers(roles, refs.organization);
const devicesOf = referrers(data.Device, refs.deviceOwner);
const servicesOf = referrers(data.HealthcareService, refs.providedBy);
const locationsOf = referrers(data.Location, refs.managingOrganization);
/** For one match, the `Type/id` of the resources an include row adds. */
type Adds = (match: Res) => string[];
const adds = {
  rolesOfPractitioner: (m: Res) => rolesOfPractitioner.get(refOf(m)) ?? [],
  parent: refs.partof,
  devices: (m: Res) => devicesOf.get(refOf(m)) ?? [],
  services: (m: Res) => servicesOf.get(refOf(m)) ?? [],
  locations: (m: Res) => locationsOf.get(refOf(m)) ?? [],
  location: refs.location,
  rolesOfOrganization: (m: Res) => rolesOfOrganization.get(refOf(m)) ?? [],
  practitioner: refs.practitioner,
  organization: refs.organization,
} satisfies Record<string, Adds>;
const union = (...fs: Adds[]): Adds => (m) => fs.flatMap((f) => f(m));

// ---- values drawn from the data ----------------------------------------------------------------------

/** The distinct values, most frequent first (ties: code point order). */
function byFrequency(values: (string | undefined)[]): string[] {
  const n = new Map<string, number>();
  for (const v of values) if (v) n.set(v, (n.get(v) ?? 0) + 1);
  return [...n].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([v]) => v);
}
function mostCommon(values: (string | undefined)[]): string {
  const [best] = byFrequency(values);
  if (best === undefined) throw new Error('no value in the data');
  return best;
}
const codeIn = (rs: Res[], values: (r: Res) => Coding[], system: string) => mostCommon(rs.flatMap(values).filter((c) => c.system === system).map((c) => c.code));
/** The UTC instant at a quantile of the resources' lastUpdated: its day (YYYY-MM-DD) or second (YYYY-MM-DDThh:mm:ss). */
const updatedAt = (rs: Res[], q: number, precision: 'day' | 'second') =>
  new Date(rs.map(lastUpdated).sort((a, b) => a - b)[Math.floor(q * (rs.length - 1))]).toISOString().slice(0, precision === 'day' ? 10 : 19);
const enc = encodeURIComponent;
const idOf = (reference: string) => reference.slice(reference.indexOf('/') + 1);
const localPart = (mailbox: string) => mailbox.split(/[.@]/)[0];

const named = practitioners.filter((p) => p.name?.[0]?.family && p.name[0].given?.length);
const someone = named[Math.floor(named.length / 3)];
const rpps = (p: Res) => p.identifier.find((i: Res) => i.system === SYSTEM.RPPS).value as string;
const withRpps = practitioners.filter((p) => (p.identifier ?? []).some((i: Res) => i.system === SYSTEM.RPPS));
const idnps = (p: Res) => p.identifier.find((i: Res) => i.system === 'urn:oid:1.2.250.1.71.4.2.1').value as string;
const finessOrgs = organizations.filter((o) => (o.identifier ?? []).some((i: Res) => i.system === SYSTEM.FINESS));
const finess = (o: Res) => o.identifier.find((i: Res) => i.system === SYSTEM.FINESS).value as string;
const orgWithAddress = organizations.filter((o) => o.address?.[0]?.postalCode && o.address[0].city);
const [postal1, postal2] = byFrequency(organizations.flatMap(strings.postalCode));
const place = mostCommon(orgWithAddress.map((o) => `${o.address[0].postalCode}|${o.address[0].city}`)).split('|');
const nameWords = byFrequency(organizations.flatMap(strings.orgName).flatMap((n) => n.split(/[^\p{L}]+/u).slice(1)).filter((w) => w.length >= 6));
const roleMailbox = mostCommon(roles.flatMap(strings.mailbox));
const busiestOrganization = idOf(mostCommon(roles.flatMap(refs.organization)));
const busiestPractitioner = idOf(mostCommon(roles.flatMap(refs.practitioner)));
const legalEntityWithMostSites = idOf(mostCommon(organizations.flatMap(refs.partof)));
const aRole = roles[Math.floor(roles.length / 2)];
const anOrganization = organizations[Math.floor(organizations.length / 2)];
const licence = mostCommon(organizations.flatMap(strings.licence));
const commonCode = mostCommon(roles.flatMap(tokens.role).map((c) => c.code));
const hasRoleCodes = (system: string) => roles.flatMap(tokens.role).some((c) => c.system === system);
/** A role code of `system` in the data, or else the most common role code (then of another system: no match). */
const roleCode = (system: string) => (hasRoleCodes(system) ? codeIn(roles, tokens.role, system) : commonCode);

// ---- the examples ------------------------------------------------------------------------------------

interface Example {
  /** Where the seed shows it. */
  seed: string;
  version: 'v1' | 'v2';
  type: 'Practitioner' | 'Organization' | 'PractitionerRole';
  /** The query string as the seed writes it ('' for none). */
  query: string;
  /** The resources it matches (with `atMost`: at least these). */
  matches: Pred;
  /** `ap`: at most these. */
  atMost?: Pred;
  /** What an include row adds for each match. */
  adds?: Adds;
  /** Also as a POST form. */
  post?: boolean;
  /** The data gives it several pages at the default page size. */
  several?: boolean;
  /** `_total=none`: no total; `estimate`: a total that may differ from the count; `accurate`: the count on every page. */
  total?: 'absent' | 'estimate' | 'accurate';
  /** Why the data holds no match (otherwise an example whose data holds no match fails). */
  empty?: string;
}
const all: Pred = () => true;
const isActive = token(tokens.active, 'true');
const v2 = (type: Example['type'], query: string, matches: Pred, seed: string, more: Partial<Example> = {}): Example => ({ seed, version: 'v2', type, query, matches, ...more });
const v1 = (query: string, matches: Pred, seed: string, more: Partial<Example> = {}): Example => ({ seed, version: 'v1', type: 'Organization', query, matches, ...more });
const several = { several: true };

const INCLUDES: Example[] = [
  v2('Practitioner', '_revinclude=PractitionerRole:practitioner', all, '§4.3 Practitioner', { adds: adds.rolesOfPractitioner, post: true, ...several }),
  v2('Organization', '_include=Organization:partof', all, '§4.3 Organization (v2)', { adds: adds.parent, ...several }),
  v1('_include=Organization:partof', all, '§4.3 Organization (v1)', { adds: adds.parent, post: true, ...several }),
  v2('Organization', '_revinclude=Device:organization', all, '§4.3 Organization', { adds: adds.devices, ...several }),
  v2('Organization', '_revinclude=HealthcareService:organization', all, '§4.3 Organization', { adds: adds.services, ...several }),
  v2('Organization', '_revinclude=PractitionerRole:organization', all, '§4.3 Organization', { adds: adds.rolesOfOrganization, post: true, ...several }),
  v2('Organization', '_include=*', all, '§4.3 Organization (the referencing Location, Device, PractitionerRole, HealthcareService; and the partof parent, as FHIR reads *)', {
    adds: union(adds.parent, adds.locations, adds.devices, adds.rolesOfOrganization, adds.services), ...several }),
  v2('PractitionerRole', '_include=PractitionerRole:organization', all, '§4.3 PractitionerRole', { adds: adds.organization, ...several }),
  v2('PractitionerRole', '_include=PractitionerRole:practitioner', all, '§4.3 PractitionerRole', { adds: adds.practitioner, ...several }),
  v2('PractitionerRole', '_include=*', all, '§4.3 PractitionerRole', { adds: union(adds.practitioner, adds.organization, adds.location), post: true, ...several }),
];

const pDay = updatedAt(practitioners, 0.75, 'day');
const pSecond = updatedAt(practitioners, 0.8, 'second');
const family = mostCommon(practitioners.flatMap(strings.family));
const given = mostCommon(practitioners.flatMap(strings.given));
const mailbox = mostCommon(practitioners.flatMap(strings.mailbox).map(localPart));
const suffix = mostCommon(practitioners.flatMap((p) => (p.name ?? []).flatMap((n: Res) => n.suffix ?? [])));
const card = mostCommon(practitioners.flatMap(strings.smartcard));
const cardPrefix = mostCommon(practitioners.flatMap(strings.smartcard).map((c) => c.slice(0, 4)));
const [p1, p2] = [withRpps[7], withRpps[withRpps.length - 9]];
const profession = codeIn(practitioners, tokens.qualification, SYSTEM.G15);
const specialty = codeIn(practitioners, tokens.qualification, SYSTEM.R38);
const category = codeIn(practitioners, tokens.qualification, SYSTEM.R09);
const PRACTITIONER: Example[] = [
  v2('Practitioner', '', all, '§4.4 rule 3, §4.8 all resources', { post: true, ...several }),
  v2('Practitioner', `_id=${practitioners[practitioners.length >> 1].id}`, idIs(practitioners[practitioners.length >> 1].id), '§4.4 _id, §4.8 by technical identifier'),
  v2('Practitioner', `_lastUpdated=ge${pDay}`, updated('ge', pDay), '§4.4 rule 4, §4.8 by update date (date)', { post: true, ...several }),
  v2('Practitioner', `_lastUpdated=ge${pSecond}`, updated('ge', pSecond), '§4.8 by update date (date-time)', several),
  v2('Practitioner', `_lastUpdated=ge${pSecond.replace(/:/g, '%3A')}`, updated('ge', pSecond), '§4.8 by update date (date-time, colons as %3A, §4.1 rule 5)', several),
  v2('Practitioner', 'active=true', isActive, '§4.4 active, §4.8 active only', { post: true, ...several }),
  v2('Practitioner', 'active=false', token(tokens.active, 'false'), '§4.4 active (closed)', several),
  ...['RPPS', 'FINESS', 'MSS', 'CG'].map((si) =>
    v2('Practitioner', `data-information-system=${si}`, token(tokens.informationSystem, si), `§4.4 data-information-system (${si}, §1.7)`,
      si === 'RPPS' ? several : si === 'FINESS' ? { empty: 'no practitioner comes from FINESS (§1.7 lists the value for the service)' } : {})),
  v2('Practitioner', `family=${enc(family.slice(0, 3))}`, string(strings.family, family.slice(0, 3)), '§4.4 family (a prefix)', several),
  v2('Practitioner', `family=${enc(family)}`, string(strings.family, family), '§4.4 family'),
  v2('Practitioner', `given=${enc(given)}`, string(strings.given, given), '§4.4 given', { post: true, ...several }),
  v2('Practitioner', `identifier=${rpps(p1)},${rpps(p2)}`, token(tokens.identifier, `${rpps(p1)},${rpps(p2)}`), '§4.4 identifier, §4.8 by business identifier <id1>,<id2>', { post: true }),
  v2('Practitioner', `identifier=${rpps(p1)}%2C${idnps(p2)}`, token(tokens.identifier, `${rpps(p1)},${idnps(p2)}`), '§4.4 identifier RPPS and IDNPS, comma as %2C (§4.1 rule 5)'),
  v2('Practitioner', `identifier=${SYSTEM.RPPS}%7C${rpps(p1)}`, token(tokens.identifier, `${SYSTEM.RPPS}|${rpps(p1)}`), '§4.1 rule 5 <system_uri>%7C<code>'),
  ...['RPPS', 'IDNPS'].map((kind) => v2('Practitioner', `identifier-type=${kind}`, token(tokens.identifierType, kind), `§4.4 identifier-type (${kind})`, several)),
  v2('Practitioner', `mailbox-mss=${enc(mailbox)}`, string(strings.mailbox, mailbox), '§4.4 mailbox-mss'),
  v2('Practitioner', `name=${enc(family.slice(0, 3))}`, string(strings.name, family.slice(0, 3)), '§4.4 name', several),
  v2('Practitioner', `name=${enc(suffix)}`, string(strings.name, suffix), '§4.4 name (the exercise-civility suffix)', several),
  v2('Practitioner', `name:family=${enc(someone.name[0].family)}&name:given=${enc(someone.name[0].given[0])}`,
    and(string(strings.family, someone.name[0].family), string(strings.given, someone.name[0].given[0])),
    '§4.4 rule 1 name:family=<family>&name:given=<given>', { post: true }),
  v2('Practitioner', `number-smartcard=${card}`, string(strings.smartcard, card), '§4.4 number-smartcard'),
  v2('Practitioner', `number-smartcard=${cardPrefix}`, string(strings.smartcard, cardPrefix), '§4.4 number-smartcard (a prefix)'),
  v2('Practitioner', `qualification-code=${profession}`, token(tokens.qualification, profession), '§4.4 rule 3 qualification-code=<code>', several),
  v2('Practitioner', `qualification-code=${SYSTEM.G15}%7C${profession}`, token(tokens.qualification, `${SYSTEM.G15}|${profession}`), '§4.4 rule 2 profession system', { post: true, ...several }),
  v2('Practitioner', `qualification-code=${SYSTEM.R38}%7C${specialty}`, token(tokens.qualification, `${SYSTEM.R38}|${specialty}`), '§4.4 rule 2 specialty system', several),
  v2('Practitioner', `qualification-code=${SYSTEM.R09}%7C${category}`, token(tokens.qualification, `${SYSTEM.R09}|${category}`), '§4.4 rule 2 professional category system', several),
];

const oDay = updatedAt(organizations, 0.7, 'day');
const city = mostCommon(organizations.flatMap(strings.city));
const department = mostCommon(organizations.flatMap(strings.postalCode).map((c) => c.slice(0, 2)));
const [o1, o2] = [finessOrgs[3], finessOrgs[finessOrgs.length - 4]];
const idnst = (o: Res) => o.identifier.find((i: Res) => i.type?.coding?.[0]?.code === 'IDNST').value as string;
const identifierKind = mostCommon(organizations.flatMap(tokens.identifierType).map((c) => c.code));
const orgMailbox = mostCommon(organizations.flatMap(strings.mailbox).map(localPart));
const namePrefix = mostCommon(organizations.flatMap(strings.orgName).map((n) => n.split(' ')[0]));
const [wordA, wordB] = [nameWords[0].toLowerCase(), nameWords[3].toLowerCase()];
const orgTypeSystems: [keyof typeof SYSTEM, string][] = [['orgType', 'organization type'], ['R75', 'APE/NAF'], ['R72', 'legal category'], ['R02', 'activity sector'], ['R66', 'establishment category'], ['R73', 'SPH']];
const ORGANIZATION: Example[] = [
  v2('Organization', '', all, '§4.8 all resources', several),
  v2('Organization', `_id=${anOrganization.id}`, idIs(anOrganization.id), '§4.5 _id, §4.8 by technical identifier'),
  v2('Organization', `_lastUpdated=ge${oDay}`, updated('ge', oDay), '§4.5 _lastUpdated, §4.8 by update date', several),
  v2('Organization', 'active=true', isActive, '§4.5 active, §4.8 active only', several),
  v2('Organization', `address=${enc(city)}`, string(strings.address, city), '§4.5 address', several),
  v2('Organization', `address-city=${enc(city)}`, string(strings.city, city), '§4.5 address-city', { post: true, ...several }),
  v2('Organization', `address-postalcode=${department}`, string(strings.postalCode, department), '§4.1 rule 7 address-postalcode=<two_digits>', several),
  v2('Organization', `address-postalcode:exact=${postal1},${postal2}`, string(strings.postalCode, `${postal1},${postal2}`, 'exact'), '§4.1 rule 7 address-postalcode:exact=<a>,<b>'),
  v2('Organization', `address-postalcode=${place[0]}&address-city=${enc(place[1])}`, and(string(strings.postalCode, place[0]), string(strings.city, place[1])), '§4.8 by postal code and city', { post: true }),
  ...['RPPS', 'FINESS'].map((si) => v2('Organization', `data-information-system=${si}`, token(tokens.informationSystem, si), `§4.5 data-information-system, §4.8 by source system (${si})`, several)),
  v2('Organization', `identifier=${finess(o1)}`, token(tokens.identifier, finess(o1)), '§4.5 identifier'),
  v2('Organization', `identifier=${SYSTEM.FINESS}%7C${finess(o1)}`, token(tokens.identifier, `${SYSTEM.FINESS}|${finess(o1)}`), '§4.5 identifier <system_uri>|<value> (FINESS)', { post: true }),
  v2('Organization', `identifier=${enc(SYSTEM.FINESS)}%7C${finess(o2)}`, token(tokens.identifier, `${SYSTEM.FINESS}|${finess(o2)}`), '§4.5 identifier, the system URI with %3A (§4.1 rule 5)'),
  v2('Organization', `identifier=${idnst(o1)},${idnst(o2)}`, token(tokens.identifier, `${idnst(o1)},${idnst(o2)}`), '§4.1 rule 4 identifier=<v1>,<v2>'),
  v2('Organization', `identifier-type=${identifierKind}`, token(tokens.identifierType, identifierKind), '§4.5 identifier-type', several),
  v2('Organization', `mailbox-mss=${enc(orgMailbox)}`, string(strings.mailbox, orgMailbox), '§4.5 mailbox-mss'),
  v2('Organization', `name=${enc(namePrefix)}`, string(strings.orgName, namePrefix), '§4.5 name', several),
  v2('Organization', `name:contains=${enc(wordA)},${enc(wordB)}`, string(strings.orgName, `${wordA},${wordB}`, 'contains'), '§4.5 name:contains=<a>,<b>', { post: true, ...several }),
  v2('Organization', `name%3Acontains=${enc(wordA)}%2C${enc(wordB)}`, string(strings.orgName, `${wordA},${wordB}`, 'contains'), '§4.5 name:contains=<a>,<b>, colon and comma as %3A and %2C (§4.1 rule 5)', several),
  v2('Organization', `partof=${legalEntityWithMostSites}`, reference(refs.partof, 'Organization', legalEntityWithMostSites), '§4.5 partof'),
  v2('Organization', `pharmacy-licence=${enc(licence)}`, string(strings.licence, licence), '§4.5 pharmacy-licence'),
  v2('Organization', `pharmacy-licence=${licence.slice(0, 2)}`, string(strings.licence, licence.slice(0, 2)), '§4.5 pharmacy-licence (a prefix)'),
  ...['GEOGRAPHICAL-ENTITY', 'LEGAL-ENTITY'].map((code) => v2('Organization', `type=${code}`, token(tokens.type, code), `§4.1 rule 8, §4.5 type=${code} (bare code)`, several)),
  ...orgTypeSystems.map(([s, what]) => {
    const code = codeIn(organizations, tokens.type, SYSTEM[s]);
    return v2('Organization', `type=${SYSTEM[s]}%7C${enc(code)}`, token(tokens.type, `${SYSTEM[s]}|${code}`), `§4.5 type=<system_uri>%7C<code> (${what})`, s === 'orgType' ? { post: true, ...several } : {});
  }),
];

const rDay = updatedAt(roles, 0.75, 'day');
const rAuthority = mostCommon(roles.flatMap(tokens.registrationAuthority).map((c) => c.code));
const rAuthority2 = byFrequency(roles.flatMap(tokens.registrationAuthority).map((c) => c.code!))[1];
const fragment = roleMailbox.split('@')[1].split('.')[0];
const roleSystems: [keyof typeof SYSTEM, string][] = [
  ['roleOrgType', 'organization type'], ['R21', 'function'], ['R85', 'care-taking role'], ['R96', 'other health function'],
  ['R22', 'activity kind'], ['R23', 'exercise mode'], ['R06', 'pharmacist register section'], ['G05', 'pharmacist register sub-section'],
];
const ROLE: Example[] = [
  v2('PractitionerRole', '', all, '§4.8 all resources', { post: true, ...several }),
  v2('PractitionerRole', `_id=${aRole.id}`, idIs(aRole.id), '§4.6 _id, §4.8 by technical identifier'),
  v2('PractitionerRole', `_lastUpdated=ge${rDay}`, updated('ge', rDay), '§4.6 _lastUpdated, §4.8 by update date', several),
  v2('PractitionerRole', 'active=true', isActive, '§4.6 active, §4.8 active only', several),
  ...['RPPS', 'FINESS', 'MSS', 'CG'].map((si) =>
    v2('PractitionerRole', `data-information-system=${si}`, token(tokens.informationSystem, si), `§4.6 data-information-system (${si})`, si === 'RPPS' ? several : {})),
  v2('PractitionerRole', `data-registration-authority=${rAuthority}`, token(tokens.registrationAuthority, rAuthority), '§4.6 data-registration-authority', several),
  v2('PractitionerRole', `data-registration-authority=${SYSTEM.R60}%7C${rAuthority2}`, token(tokens.registrationAuthority, `${SYSTEM.R60}|${rAuthority2}`), '§4.6 data-registration-authority <system_uri>%7C<code>', { post: true }),
  v2('PractitionerRole', `identifier=${aRole.identifier[0].value}`, token(tokens.identifier, aRole.identifier[0].value), '§4.6 identifier, §4.8 by activity', { post: true }),
  v2('PractitionerRole', `mailbox-mss=${enc(localPart(roleMailbox))}`, string(strings.mailbox, localPart(roleMailbox)), '§4.6 mailbox-mss'),
  v2('PractitionerRole', `mailbox-mss:contains=${enc(fragment)}`, string(strings.mailbox, fragment, 'contains'), '§4.6 mailbox-mss:contains, §4.8 by MSS fragment', { post: true }),
  v2('PractitionerRole', `organization=${busiestOrganization}`, reference(refs.organization, 'Organization', busiestOrganization), '§4.6 organization'),
  v2('PractitionerRole', `practitioner=${busiestPractitioner}`, reference(refs.practitioner, 'Practitioner', busiestPractitioner), '§4.6 practitioner'),
  v2('PractitionerRole', `role=${commonCode}`, token(tokens.role, commonCode), '§4.6 role (bare code)', several),
  ...roleSystems.map(([s, what]) => {
    const code = roleCode(SYSTEM[s]);
    return v2('PractitionerRole', `role=${SYSTEM[s]}%7C${code}`, token(tokens.role, `${SYSTEM[s]}|${code}`), `§4.6 role=<system_uri>%7C<code> (${what})`, {
      ...(s === 'R23' ? { post: true, ...several } : {}),
      ...(hasRoleCodes(SYSTEM[s]) ? {} : { empty: `no role has a code of this system: ${code}, a code of another system, must not match` }),
    });
  }),
];

const v1Day = updatedAt(organizations, 0.5, 'day');
const v1Since = updatedAt(organizations, 0.6, 'second');
const oAuthority = mostCommon(organizations.flatMap(tokens.registrationAuthority).map((c) => c.code));
const roleFunction = codeIn(roles, tokens.role, SYSTEM.R21);
const roleHolder = withRpps.find((p) => rolesOfPractitioner.has(refOf(p)) && roles.some((r) => refs.practitioner(r).includes(refOf(p)) && r.organization))!;
const country = mostCommon(organizations.flatMap(strings.country));
const state = mostCommon(organizations.flatMap(strings.state));
const use = mostCommon(organizations.flatMap(tokens.addressUse).map((c) => c.code));
const endpoint = idOf(mostCommon(organizations.flatMap(refs.endpoint)));
const [legalV1, legalV2] = V1_SYSTEMS.orgType;
const sector = codeIn(organizations, tokens.type, SYSTEM.R02);
const finessKind = mostCommon(finessOrgs.flatMap((o) => o.identifier.filter((i: Res) => i.system === SYSTEM.FINESS).flatMap((i: Res) => codings([i.type]).map((c) => c.code))));
const holders = new Set(practitioners.filter(token(tokens.identifier, `${SYSTEM.RPPS}|${rpps(roleHolder)}`)).map(refOf));
const V1: Example[] = [
  v1('', all, '§4.8 all resources (v1)', { post: true, ...several }),
  v1(`_has:PractitionerRole:organization:role=${roleFunction}`, referencedBy(roles, refs.organization, token(tokens.role, roleFunction)), '§4.7 _has', several),
  v1(`_has:PractitionerRole:organization:practitioner.identifier=${V1_SYSTEMS.RPPS[0]}%7C${rpps(roleHolder)}`,
    referencedBy(roles, refs.organization, (r) => refs.practitioner(r).some((ref) => holders.has(ref))), '§4.7 _has with a chain and the v1 RPPS system', { post: true }),
  v1(`_id=${anOrganization.id}`, idIs(anOrganization.id), '§4.7 _id, §4.8 by technical identifier (v1)'),
  ...(['eq', 'ne', 'gt', 'lt', 'ge', 'le'] as const).map((prefix) =>
    v1(`_lastUpdated=${prefix}${v1Day}`, updated(prefix, v1Day), `§4.7 _lastUpdated (${prefix})`, prefix === 'eq' ? {} : several)),
  v1(`_lastUpdated=ap${v1Day}`, approximately(v1Day).matches, '§4.7 _lastUpdated (ap)', { atMost: approximately(v1Day).atMost }),
  v1(`_lastUpdated=ge${v1Since}`, updated('ge', v1Since), '§4.7 _lastUpdated (date-time), §4.8 by update date', { post: true, ...several }),
  v1(`_since=${v1Day}`, updated('ge', v1Day), '§4.7 _since (a date)', several),
  v1(`_since=${v1Since.replace(/:/g, '%3A')}`, updated('ge', v1Since), '§4.7 _since (a date-time, colons as %3A)', several),
  v1('_total=accurate&type=LEGAL-ENTITY', token(tokens.type, 'LEGAL-ENTITY'), '§4.7 _total (accurate)', { total: 'accurate', post: true, ...several }),
  v1('_total=none&type=LEGAL-ENTITY', token(tokens.type, 'LEGAL-ENTITY'), '§4.7 _total (none)', { total: 'absent', ...several }),
  v1('_total=estimate&type=LEGAL-ENTITY', token(tokens.type, 'LEGAL-ENTITY'), '§4.7 _total (estimate)', { total: 'estimate', ...several }),
  v1('active=true', isActive, '§4.7 active, §4.8 active only (v1)', several),
  v1(`address=${enc(city)}`, string(strings.address, city), '§4.7 address', several),
  v1(`address-city=${enc(city)}`, string(strings.city, city), '§4.7 address-city', several),
  v1(`address-country=${enc(country)}`, string(strings.country, country), '§4.7 address-country'),
  v1(`address-postalcode=${department}`, string(strings.postalCode, department), '§4.7 address-postalcode', several),
  v1(`address-postalcode:exact=${postal1},${postal2}`, string(strings.postalCode, `${postal1},${postal2}`, 'exact'), '§4.7 address-postalcode:exact=<a>,<b>', { post: true }),
  v1(`address-postalcode=${place[0]}&address-city=${enc(place[1])}`, and(string(strings.postalCode, place[0]), string(strings.city, place[1])), '§4.8 by postal code and city (v1)'),
  v1(`address-state=${enc(state)}`, string(strings.state, state), '§4.7 address-state'),
  v1(`address-use=${use}`, token(tokens.addressUse, use), '§4.7 address-use'),
  ...['RPPS', 'FINESS'].map((si) =>
    v1(`as-sp-data-information-system=${si}`, token(tokens.informationSystem, si), `§4.7 as-sp-data-information-system, §9 (v2: data-information-system) (${si})`, several)),
  v1(`as-sp-data-registration-authority=${oAuthority}`, token(tokens.registrationAuthority, oAuthority), '§4.7 as-sp-data-registration-authority, §9'),
  v1(`endpoint=${endpoint}`, reference(refs.endpoint, 'Endpoint', endpoint), '§4.7 endpoint'),
  v1(`identifier=${finess(o1)},${finess(o2)}`, token(tokens.identifier, `${finess(o1)},${finess(o2)}`), '§4.7 identifier=<v1>,<v2>'),
  v1(`identifier=${V1_SYSTEMS.FINESS[0]}%7C${finess(o1)}`, token(tokens.identifier, `${SYSTEM.FINESS}|${finess(o1)}`), '§4.7 identifier with the v1 FINESS system {finess_system_url}', { post: true }),
  v1(`identifier-type=${identifierKind}`, token(tokens.identifierType, identifierKind), '§4.7 identifier-type', several),
  ...[V1_SYSTEMS.identifierType, V1_SYSTEMS.identifierTypeFr].map(([system, stored]) =>
    v1(`identifier-type=${system}%7C${finessKind}`, token(tokens.identifierType, `${stored}|${finessKind}`), `§4.7 identifier-type with the v1 system ${system}`)),
  v1(`mailbox-mss=${enc(orgMailbox)}`, string(strings.mailbox, orgMailbox), '§4.7 mailbox-mss'),
  v1(`name=${enc(namePrefix)}`, string(strings.orgName, namePrefix), '§4.7 name', several),
  v1(`name:contains=${enc(wordA)},${enc(wordB)}`, string(strings.orgName, `${wordA},${wordB}`, 'contains'), '§4.7 name:contains', several),
  v1(`partof=${legalEntityWithMostSites}`, reference(refs.partof, 'Organization', legalEntityWithMostSites), '§4.7 partof'),
  v1(`pharmacy-licence=${enc(licence)}`, string(strings.licence, licence), '§4.7 pharmacy-licence'),
  ...['GEOGRAPHICAL-ENTITY', 'LEGAL-ENTITY'].map((code) =>
    v1(`type=${legalV1}%7C${code}`, token(tokens.type, `${legalV2}|${code}`), `§4.7 type with the v1 organization-type system (${code})`, { post: code === 'LEGAL-ENTITY', ...several })),
  v1(`type=${SYSTEM.R02}%7C${sector}`, token(tokens.type, `${SYSTEM.R02}|${sector}`), '§4.7 type "as version 2" (activity sector)', several),
];
/** §9: the v2 names of the v1-only spellings, on the same values. */
const NAMES_V2: Example[] = [
  v2('Organization', `data-registration-authority=${oAuthority}`, token(tokens.registrationAuthority, oAuthority), '§9 data-registration-authority (v1: as-sp-data-registration-authority)'),
  v2('Organization', `identifier-type=${V1_SYSTEMS.identifierType[1]}%7C${finessKind}`, token(tokens.identifierType, `${V1_SYSTEMS.identifierType[1]}|${finessKind}`), '§9 identifier-type with the v2 system'),
  v2('Organization', `type=${legalV2}%7CLEGAL-ENTITY`, token(tokens.type, `${legalV2}|LEGAL-ENTITY`), '§9 type with the v2 organization-type system', several),
];

// ---- replaying -------------------------------------------------------------------------------------

/** A searchset as fhir-kit-client returns it. */
interface Page extends FhirResource { total?: number; link: { relation: string; url: string }[]; entry?: Entry[] }
interface HttpError { message: string; response?: { status: number; data: unknown } }
interface Walk { pages: Page[]; failure?: string }

/** The query string as form parameters (a name given twice: its values in order). */
function formOf(query: string): SearchParams {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(query)) out[k] = k in out ? [...[out[k]].flat(), v] : v;
  return out;
}

/** The first page (GET: the URL as written; POST: a form to [type]/_search), then nextPage to the end. */
async function walk(ex: Example, method: 'GET' | 'POST'): Promise<Walk> {
  const client = clients[ex.version];
  const pages: Page[] = [];
  try {
    let page: Page | undefined = (method === 'GET'
      ? await client.request(ex.query ? `${ex.type}?${ex.query}` : ex.type)
      : await client.search({ resourceType: ex.type, searchParams: formOf(ex.query), options: { postSearch: true } })) as Page;
    while (page) {
      pages.push(page);
      if (pages.length > 200) return { pages, failure: 'more than 200 pages' };
      page = (await client.nextPage({ bundle: page })) as Page | undefined;
    }
  } catch (err) {
    const e = err as HttpError;
    return { pages, failure: `page ${pages.length + 1}: HTTP ${e.response?.status ?? '?'} ${JSON.stringify(e.response?.data ?? e.message).slice(0, 600)}` };
  }
  return { pages };
}

const PAGE_SIZE = 50;
/** At most 5 of a list, and how many there are. */
const few = (xs: string[]) => (xs.length <= 5 ? xs : [...xs.slice(0, 5), `… ${xs.length} in all`]);
const minus = (a: Iterable<string>, b: Set<string>) => [...a].filter((x) => !b.has(x));
const resourcesById = Object.fromEntries(Object.entries(data).map(([type, rs]) => [type, new Map(rs.map((r) => [r.id, r]))])) as Record<Type, Map<string, Res>>;

/** What one replay shows, against what it should show (one assertion per example and method). */
function verdict(ex: Example, w: Walk) {
  const ids = w.pages.flatMap((p) => idsOf(p, 'match'));
  const got = new Set(ids);
  const lower = new Set(data[ex.type].filter(ex.matches).map((r) => r.id));
  const upper = ex.atMost ? new Set(data[ex.type].filter(ex.atMost).map((r) => r.id)) : lower;
  const includes: { missing: string[]; unexpected: string[] } = { missing: [], unexpected: [] };
  for (const page of w.pages) {
    const matches = idsOf(page, 'match').map((id) => resourcesById[ex.type].get(id)).filter((r): r is Res => r !== undefined);
    const own = new Set(matches.map(refOf));
    const want = new Set(ex.adds ? matches.flatMap(ex.adds).filter((ref) => !own.has(ref)) : []);
    const have = new Set(refsOf(page, 'include'));
    includes.missing.push(...minus(want, have));
    includes.unexpected.push(...minus(have, want));
  }
  const totals = w.pages.map((p) => p.total);
  return {
    failure: w.failure ?? 'none',
    'matched more than once': few(ids.filter((id, i) => ids.indexOf(id) !== i)),
    'pages not of 50 matches before the last': w.pages.slice(0, -1).map((p, i) => [i + 1, idsOf(p, 'match').length]).filter(([, n]) => n !== PAGE_SIZE).map(String),
    total:
      ex.total === 'absent' ? totals.filter((n) => n !== undefined).map((n) => `total ${n} with _total=none`)
      : ex.total === 'estimate' ? []
      : totals.filter((n) => (n !== undefined || ex.total === 'accurate') && n !== ids.length).map((n) => `total ${n}, ${ids.length} matches`),
    'the data holds matches': lower.size > 0,
    'expected, not matched': few(minus(lower, got)),
    'matched, not expected': few(minus(got, upper)),
    'includes missing': few(includes.missing),
    'includes not expected': few(includes.unexpected),
    ...(ex.several ? { 'several pages': w.pages.length >= 3 } : {}),
  };
}
const clean = (ex: Example) => ({
  failure: 'none', 'matched more than once': [], 'pages not of 50 matches before the last': [], total: [], 'the data holds matches': ex.empty === undefined,
  'expected, not matched': [], 'matched, not expected': [], 'includes missing': [], 'includes not expected': [],
  ...(ex.several ? { 'several pages': true } : {}),
});

async function replay(tt: A, examples: Example[]) {
  for (const ex of examples) {
    for (const method of ex.post ? (['GET', 'POST'] as const) : (['GET'] as const)) {
      const w = await walk(ex, method);
      const n = w.pages.reduce((s, p) => s + idsOf(p, 'match').length, 0);
      const what = method === 'GET' ? `GET [base ${ex.version}]/${ex.type}${ex.query ? `?${ex.query}` : ''}` : `POST [base ${ex.version}]/${ex.type}/_search ${new URLSearchParams(ex.query)}`;
      tt.same(verdict(ex, w), clean(ex), `${what} — ${ex.seed}: ${n} matches in ${w.pages.length} pages`);
    }
  }
}

t.test('the data: generated, with the directory, every page size of the seed examples reachable', async (t) => {
  t.same(loaded.rejects, [], 'loads without a reject');
  t.ok(practitioners.length > 2000 && roles.length > 2000 && organizations.length > 500, `${practitioners.length} practitioners, ${organizations.length} organizations, ${roles.length} roles`);
});
t.test('§4.3 include parameters', (t) => replay(t, INCLUDES));
t.test('§4.4 Practitioner (v2)', (t) => replay(t, PRACTITIONER));
t.test('§4.5 Organization (v2)', (t) => replay(t, ORGANIZATION));
t.test('§4.6 PractitionerRole (v2)', (t) => replay(t, ROLE));
t.test('§4.7 Organization (v1), §9 v1 names', (t) => replay(t, V1));
t.test('§9 the v2 names of the same searches', (t) => replay(t, NAMES_V2));
