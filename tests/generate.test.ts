import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import t from 'tap';
import { parseCli } from '../src/cli/generate.ts';
import { shippedCodeRows } from '../src/terminology.ts';
import { codesOf, EXTRA_CODE_SYSTEMS } from '../src/vocabulary/codes.ts';
import { CODE_SYSTEMS, COMMUNE_SYSTEM, type SystemKey } from '../src/vocabulary/systems.ts';
import { fileName, generate, plannedCounts, RESOURCE_TYPES, type ResourceType } from '../src/generate/index.ts';
import { CITIES } from '../src/generate/places.ts';
import { userNode } from './helpers/command.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');

const SCALE = 0.002; // 3,600 practitioners, 4,400 roles, 1,000 organizations
const SEED = 2;

type Resource = Record<string, any>;

function tmpDir(t: { teardown(fn: () => void): void }, label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gen-${label}-`));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function readAll(dir: string): Record<ResourceType, Resource[]> {
  const out = {} as Record<ResourceType, Resource[]>;
  for (const type of RESOURCE_TYPES) {
    const text = fs.readFileSync(path.join(dir, fileName(type, false)), 'utf8');
    if (!text.endsWith('\n')) throw new Error(`${type}: missing final newline`);
    out[type] = text.slice(0, -1).split('\n').map((line, i) => {
      try {
        return JSON.parse(line) as Resource;
      } catch (e) {
        throw new Error(`${type} line ${i + 1} is not JSON: ${(e as Error).message}`);
      }
    });
  }
  return out;
}

/** Independent Luhn check (not the generator's implementation). */
function luhn(value: string): boolean {
  if (!/^\d+$/.test(value)) return false;
  let sum = 0;
  for (let i = 0; i < value.length; i++) {
    let d = Number(value[value.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}


/** Every object with string `system` and `code` keys, i.e. every Coding. */
function codings(value: unknown, out: { system: string; code: string; display?: string }[] = []) {
  if (Array.isArray(value)) for (const v of value) codings(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.system === 'string' && typeof o.code === 'string') out.push(o as { system: string; code: string; display?: string });
    for (const v of Object.values(o)) codings(v, out);
  }
  return out;
}

const ext = (r: Resource | undefined, suffix: string): Resource[] =>
  (r?.extension ?? []).filter((e: Resource) => typeof e.url === 'string' && e.url.endsWith(suffix));
const isMss = (tel: Resource) => ext(tel, 'fr-core-contact-point-email-type').length > 0;
const ident = (r: Resource, type: string) => r.identifier?.find((i: Resource) => i.type?.coding?.[0]?.code === type)?.value as string | undefined;

t.test('planned counts scale linearly, round, and never drop below 1', async (t) => {
  t.same(plannedCounts(1), { Organization: 500_000, Practitioner: 1_800_000, PractitionerRole: 2_200_000, Device: 3_300, HealthcareService: 11_000 });
  t.same(plannedCounts(0.001), { Organization: 500, Practitioner: 1_800, PractitionerRole: 2_200, Device: 3, HealthcareService: 11 });
  t.same(plannedCounts(0.0001), { Organization: 50, Practitioner: 180, PractitionerRole: 220, Device: 1, HealthcareService: 1 });
  t.same(plannedCounts(1e-9), { Organization: 1, Practitioner: 1, PractitionerRole: 1, Device: 1, HealthcareService: 1 });
  t.throws(() => plannedCounts(0));
  t.throws(() => plannedCounts(-1));
  t.throws(() => plannedCounts(1000));
});

t.test('generated data set', async (t) => {
  const dirA = tmpDir(t, 'a');
  const dirB = tmpDir(t, 'b');
  const dirC = tmpDir(t, 'c');
  const summary = await generate({ scale: SCALE, seed: SEED, outDir: dirA });
  await generate({ scale: SCALE, seed: SEED, outDir: dirB });
  await generate({ scale: SCALE, seed: SEED + 1, outDir: dirC });
  const expected = plannedCounts(SCALE);
  const data = readAll(dirA);

  t.test('determinism: same seed ⇒ identical bytes, other seed ⇒ different', async (t) => {
    for (const type of RESOURCE_TYPES) {
      const a = fs.readFileSync(path.join(dirA, fileName(type, false)));
      const b = fs.readFileSync(path.join(dirB, fileName(type, false)));
      const c = fs.readFileSync(path.join(dirC, fileName(type, false)));
      t.ok(a.equals(b), `${type} identical for the same seed`);
      t.notOk(a.equals(c), `${type} differs for another seed`);
    }
  });

  t.test('counts, resourceType, ids', async (t) => {
    const allIds = new Set<string>();
    for (const type of RESOURCE_TYPES) {
      const rows = data[type];
      // A Location is one per geographical entity with a point: its count is not planned.
      const count = type === 'Location' ? data.Organization.filter((o) => ext(o.address?.[0], 'geolocation').length).length : expected[type];
      t.equal(rows.length, count, `${type} count`);
      t.equal(summary.files.find((f) => f.type === type)?.count, count, `${type} summary count`);
      const ids = new Set<string>();
      for (const r of rows) {
        if (r.resourceType !== type || typeof r.id !== 'string' || r.id === '') {
          t.fail(`${type}: bad resourceType/id ${JSON.stringify(r).slice(0, 120)}`);
          return;
        }
        ids.add(r.id);
        allIds.add(`${type}/${r.id}`);
        if ('text' in r) t.fail(`${type}/${r.id} has a narrative`);
      }
      t.equal(ids.size, rows.length, `${type} ids are unique`);
    }
    t.match(data.Practitioner[0].id, /^003-\d+-\d+$/);
    t.match(data.PractitionerRole[0].id, /^005-\d+-\d+$/);
    t.match(data.Organization[0].id, /^001-\d{2}-\d+$/);
    t.match(data.Device[0].id, /^002-\d+$/);
  });

  t.test('every reference resolves', async (t) => {
    const practitioners = new Set(data.Practitioner.map((r) => `Practitioner/${r.id}`));
    const organizations = new Set(data.Organization.map((r) => `Organization/${r.id}`));
    let checked = 0;
    let bad = 0;
    const check = (ref: Resource | undefined, set: Set<string>, required: boolean) => {
      if (!ref) {
        if (required) bad++;
        return;
      }
      checked++;
      if (!set.has(ref.reference)) bad++;
    };
    for (const r of data.PractitionerRole) {
      check(r.practitioner, practitioners, true);
      check(r.organization, organizations, false);
    }
    for (const r of data.Organization) check(r.partOf, organizations, false);
    const locations = new Set(data.Location.map((r) => `Location/${r.id}`));
    for (const r of data.PractitionerRole) for (const l of r.location ?? []) check(l, locations, true);
    for (const r of data.Location) check(r.managingOrganization, organizations, true);
    for (const r of data.Device) check(r.owner, organizations, true);
    for (const r of data.HealthcareService) check(r.providedBy, organizations, true);
    t.equal(bad, 0, `${checked} references checked`);
    t.ok(data.Organization.some((r) => r.partOf), 'some geographical entities have partOf');
    const withOrg = data.PractitionerRole.filter((r) => r.organization).length;
    t.ok(withOrg / data.PractitionerRole.length > 0.95, 'almost every role has an organization');
  });

  t.test('practitioner proportions', async (t) => {
    const all = data.Practitioner;
    const n = all.length;
    const inactive = all.filter((r) => r.active === false);
    const mss = all.filter((r) => (r.telecom ?? []).some(isMss));
    const cards = all.filter((r) => ext(r, 'as-ext-smartcard').length > 0);
    t.ok(Math.abs(inactive.length / n - 0.05) < 0.02, `inactive ${(inactive.length / n).toFixed(3)} ≈ 0.05`);
    t.ok(Math.abs(mss.length / n - 0.4) < 0.04, `MSS ${(mss.length / n).toFixed(3)} ≈ 0.40`);
    t.ok(Math.abs(cards.length / n - 0.3) < 0.04, `smartcard ${(cards.length / n).toFixed(3)} ≈ 0.30`);
    for (const r of inactive) {
      t.same(Object.keys(r).sort(), ['active', 'id', 'identifier', 'meta', 'resourceType'], 'inactive stub keys');
      break;
    }
    t.notOk(inactive.some((r) => Object.keys(r).some((k) => !['active', 'id', 'identifier', 'meta', 'resourceType'].includes(k))), 'every stub is minimal');
    const roleOfInactive = new Set(inactive.map((r) => `Practitioner/${r.id}`));
    const rolesOfInactive = data.PractitionerRole.filter((r) => roleOfInactive.has(r.practitioner.reference));
    t.ok(rolesOfInactive.filter((r) => r.active === false).length / rolesOfInactive.length > 0.7, "inactive practitioners' roles are mostly inactive");
    t.ok(rolesOfInactive.some((r) => r.active === true), 'some active roles point at inactive practitioners');
    const perPractitioner = new Map<string, number>();
    for (const r of data.PractitionerRole) perPractitioner.set(r.practitioner.reference, (perPractitioner.get(r.practitioner.reference) ?? 0) + 1);
    t.equal(perPractitioner.size, n, 'every practitioner has at least one role');
    t.ok([...perPractitioner.values()].every((c) => c >= 1 && c <= 3), '1 to 3 roles per practitioner');
  });

  t.test('practitioner shapes: identifiers, names, MSS, smartcards, qualifications', async (t) => {
    const rpps = new Set<string>();
    let badId = 0;
    for (const r of data.Practitioner) {
      const idnps = ident(r, 'IDNPS');
      const rp = ident(r, 'RPPS');
      if (!rp || !/^\d{11}$/.test(rp) || !luhn(rp) || idnps !== `8${rp}`) badId++;
      if (r.identifier.find((i: Resource) => i.type.coding[0].code === 'RPPS').system !== 'https://rpps.esante.gouv.fr') badId++;
      if (r.identifier.find((i: Resource) => i.type.coding[0].code === 'IDNPS').system !== 'urn:oid:1.2.250.1.71.4.2.1') badId++;
      if (rp) rpps.add(rp);
    }
    t.equal(badId, 0, 'IDNPS = "8" + RPPS; RPPS has 11 digits, Luhn key, right systems');
    t.equal(rpps.size, data.Practitioner.length, 'RPPS numbers are unique');

    const active = data.Practitioner.filter((r) => r.active);
    t.ok(active.every((r) => r.language === 'fr' && r.meta.source === 'https://annuaire.sante.fr'), 'language and meta.source');
    t.ok(active.every((r) => r.name?.[0]?.family && r.name[0].given?.length === 1 && ['M', 'MME'].includes(r.name[0].prefix[0])), 'names have family/given/prefix');
    t.ok(active.every((r) => r.name[0].text === `${r.name[0].family} ${r.name[0].given[0]}`), 'name.text = family given');
    const families = new Set(active.map((r) => r.name[0].family.toLowerCase()));
    t.ok(families.size > 300, `${families.size} distinct family names`);
    t.ok(active.some((r) => /[^\x00-\x7f]/.test(r.name[0].family)), 'some family names have diacritics');
    t.ok(active.some((r) => r.name[0].suffix?.[0] === 'DR'), 'some DR suffixes');

    let badMss = 0;
    let plainEmails = 0;
    for (const r of active) {
      for (const tel of r.telecom ?? []) {
        if (isMss(tel)) {
          const typeExt = ext(tel, 'fr-core-contact-point-email-type')[0];
          const md = ext(tel, 'as-ext-mailbox-mss-metadata')[0];
          const balType = md?.extension?.find((e: Resource) => e.url === 'type')?.valueCodeableConcept?.coding?.[0]?.code;
          if (tel.system !== 'email' || typeExt.valueCoding.code !== 'MSSANTE' || !['PER', 'CAB'].includes(balType)) badMss++;
          if (!/^[a-z0-9.-]+@[a-z0-9.-]+\.mssante\.fr$/.test(tel.value)) badMss++;
        } else {
          plainEmails++;
          if (tel.system !== 'email' || tel.value.endsWith('mssante.fr') || tel.extension) badMss++;
        }
      }
    }
    t.equal(badMss, 0, 'MSS telecoms have the MSSANTE + metadata shape; plain e-mails are not MSS');
    t.ok(plainEmails > 0, 'some practitioners have an ordinary e-mail');

    let badCard = 0;
    const cardNumbers = new Set<string>();
    for (const r of active) {
      for (const card of ext(r, 'as-ext-smartcard')) {
        const sub = (u: string) => card.extension.find((e: Resource) => e.url === u);
        const type = sub('type')?.valueCodeableConcept?.coding?.[0]?.code;
        const number = sub('number')?.valueString;
        const period = sub('period')?.valuePeriod;
        if (!['CPS', 'CPF', 'CPE', 'CPA'].includes(type) || !/^\d{10}$/.test(number) || !period?.start || !period?.end) badCard++;
        if (cardNumbers.has(number)) badCard++;
        cardNumbers.add(number);
      }
    }
    t.equal(badCard, 0, 'smartcards: TRE_R87 type, unique 10-digit number, period');

    const professions = new Map<string, number>();
    for (const r of active) {
      const all = r.qualification.flatMap((q: Resource) => q.code.coding);
      const g15 = all.find((c: Resource) => c.system.includes('TRE_G15'));
      const r09 = all.find((c: Resource) => c.system.includes('TRE_R09'));
      if (!g15 || !r09) t.fail(`${r.id}: exercicePro needs G15 + R09`);
      professions.set(g15.code, (professions.get(g15.code) ?? 0) + 1);
    }
    const share = (code: string) => (professions.get(code) ?? 0) / active.length;
    t.ok(share('60') > 0.28 && share('60') < 0.42, 'nurses ≈ 35 %');
    t.ok(share('10') > 0.18 && share('10') < 0.29, 'doctors ≈ 23 %');
    const gp = active.filter((r) => r.qualification.some((q: Resource) => q.code.coding.some((c: Resource) => c.code === 'SM54')));
    t.ok(gp.length / active.length > 0.05, 'general practice (SM54) is frequent');
  });

  t.test('role identifiers and codes', async (t) => {
    const numbers = new Set(data.PractitionerRole.map((r) => r.identifier[0].value));
    t.equal(numbers.size, data.PractitionerRole.length, 'role identifiers are unique');
    t.ok([...numbers].every((v) => /^\d{10}$/.test(v)), 'role identifiers have 10 digits');
    t.ok(data.PractitionerRole.every((r) => r.identifier[0].system === 'https://rpps.esante.gouv.fr'), 'role identifier system');
    const active = data.PractitionerRole.filter((r) => r.active);
    t.ok(active.every((r) => r.code.length === 3), 'active roles carry R22 + R23 + R21');
    const genr01 = active.filter((r) => r.code[0].coding[0].code === 'GENR01').length;
    t.ok(genr01 / active.length > 0.8, 'GENR01 dominates');
  });

  t.test('organization identifiers', async (t) => {
    const byId = new Map(data.Organization.map((o) => [`Organization/${o.id}`, o]));
    const seen = new Map<string, Set<string>>();
    let bad = 0;
    for (const o of data.Organization) {
      for (const i of o.identifier) {
        const type = i.type.coding[0].code as string;
        if (!seen.has(type)) seen.set(type, new Set());
        if (seen.get(type)!.has(i.value)) bad++;
        seen.get(type)!.add(i.value);
      }
      const finess = ident(o, 'FINEJ') ?? ident(o, 'FINEG');
      const siren = ident(o, 'SIREN');
      const siret = ident(o, 'SIRET');
      const idnst = ident(o, 'IDNST')!;
      if (finess && !(/^\d{9}$/.test(finess) && luhn(finess) && idnst === `1${finess}`)) bad++;
      if (siren && !(/^\d{9}$/.test(siren) && luhn(siren))) bad++;
      if (!finess && siren && idnst !== `2${siren}`) bad++;
      if (!finess && !siren && !/^4\d{14}$/.test(idnst)) bad++;
      if (siret) {
        if (!/^\d{14}$/.test(siret) || !luhn(siret)) bad++;
        const parent = o.partOf ? byId.get(o.partOf.reference) : undefined;
        const parentSiren = parent ? ident(parent, 'SIREN') : undefined;
        if (parentSiren && !siret.startsWith(parentSiren)) bad++;
      }
    }
    t.equal(bad, 0, 'FINESS 9 digits + Luhn, SIREN/SIRET Luhn, SIRET = parent SIREN + NIC, IDNST prefixes, no duplicates');
    for (const type of ['IDNST', 'FINEJ', 'FINEG', 'SIREN', 'SIRET', 'RPPSRG']) t.ok(seen.get(type)?.size, `some ${type}`);
  });

  t.test('organization shapes', async (t) => {
    const active = data.Organization.filter((o) => o.active);
    t.ok(active.every((o) => o.type[0].extension[0].valueCode === 'organizationType'), 'organizationType slice first');
    t.ok(active.every((o) => o.type.every((ty: Resource) => ty.coding[0].system.includes('TRE_R66') ? !ty.extension : ty.extension?.[0]?.url?.endsWith('as-ext-organization-types'))), 'every type slice but R66 carries as-ext-organization-types');
    t.ok(active.filter((o) => o.address).every((o) => /^\d{5}$/.test(o.address[0].postalCode) && o.address[0].city && ext(o.address[0], 'fr-core-address-insee-code').length === 1), 'addresses have postal code, city, INSEE code');
    const pharmacies = active.filter((o) => o.type.some((ty: Resource) => ty.coding[0].code === 'SA33'));
    t.ok(pharmacies.length > 0 && pharmacies.every((o) => ext(o, 'as-ext-organization-pharmacy-licence').length === 1), 'pharmacies carry a licence');
    t.ok(active.some((o) => (o.telecom ?? []).some(isMss)), 'some organizations have MSS mailboxes');
    t.ok(data.Organization.some((o) => o.active === false && o.name && !o.type), 'inactive organizations are tombstones with a name');
  });

  t.test('Locations: the geographical entities with a point, near their city; roles at them refer to them', async (t) => {
    const byId = new Map(data.Organization.map((o) => [o.id, o]));
    const cities = new Map(CITIES.map((c) => [c.insee, c]));
    const entities = data.Organization.filter((o) => o.active && o.address && ident(o, 'FINEG'));
    const share = data.Location.length / entities.length;
    t.ok(share > 0.65 && share < 0.85, `${(share * 100).toFixed(1)} % of the active geographical entities with an address have a point (≈ 75 %)`);
    let bad = 0;
    for (const l of data.Location) {
      const o = byId.get(l.id);
      const city = cities.get(o?.address[0].extension[0].valueCoding.code);
      const geo = ext(o?.address[0], 'geolocation')[0]?.extension;
      if (!o || !city || l.status !== 'active' || l.mode !== 'instance' || l.name !== o.name) bad++;
      else if (JSON.stringify(l.address) !== JSON.stringify(o.address[0]) || JSON.stringify(l.identifier) !== JSON.stringify(o.identifier.slice(0, 2))) bad++;
      else if (geo[0].valueDecimal !== l.position.latitude || geo[1].valueDecimal !== l.position.longitude) bad++;
      else if (Math.abs(l.position.latitude - city.latitude) > 0.021 || Math.abs(l.position.longitude - city.longitude) > 0.031) bad++;
      if (!['housenumber', 'street', 'commune'].includes(ext(l.position, 'position-precision')[0]?.valueCode)) bad++;
    }
    t.equal(bad, 0, 'a Location has its Organization\'s id, identifiers, name, address and point, within ~2 km of its city\'s centre, and a precision');
    const located = new Set(data.Location.map((l) => `Organization/${l.id}`));
    const active = data.PractitionerRole.filter((r) => r.active);
    const wrong = active.filter((r) => (r.location?.[0].reference ?? null) !== (located.has(r.organization?.reference) ? r.organization.reference.replace('Organization/', 'Location/') : null));
    t.equal(wrong.length, 0, 'an active role has location exactly when its organization has a Location');
    t.ok(active.some((r) => r.location), 'some roles have one');
  });

  t.test('every code exists in the shipped terminology (or the documented extra systems)', async (t) => {
    const csvSystems = new Map<string, Map<string, string>>();
    for (const { system_url: url, code, display } of shippedCodeRows()) {
      if (!csvSystems.has(url)) csvSystems.set(url, new Map());
      csvSystems.get(url)!.set(code, display);
    }
    const extra = new Map<string, Map<string, string>>();
    for (const [key, codes] of Object.entries(EXTRA_CODE_SYSTEMS)) extra.set(CODE_SYSTEMS[key as SystemKey], new Map(codes.map(([c, d]) => [c, d])));
    extra.set(COMMUNE_SYSTEM, new Map(CITIES.map((c) => [c.insee, c.name])));

    const problems = new Set<string>();
    let count = 0;
    for (const type of RESOURCE_TYPES) {
      for (const r of data[type]) {
        for (const c of codings(r)) {
          count++;
          const table = csvSystems.get(c.system) ?? extra.get(c.system);
          if (!table) problems.add(`unknown system ${c.system}`);
          else if (!table.has(c.code)) problems.add(`unknown code ${c.system}|${c.code}`);
          else if (c.display !== undefined && c.system !== COMMUNE_SYSTEM && table.get(c.code) !== c.display) problems.add(`wrong display ${c.system}|${c.code}`);
        }
        for (const trace of ext(r.meta, 'as-ext-data-trace')) {
          const si = trace.extension.find((e: Resource) => e.url === 'systeme-information')?.valueCode;
          if (!['RPPS', 'FINESS', 'CG', 'MSS'].includes(si)) problems.add(`systeme-information ${si}`);
        }
      }
    }
    t.same([...problems], [], `${count} codings checked`);
    const slices = new Set(data.Organization.flatMap((o) => (o.type ?? []).flatMap((ty: Resource) => (ty.extension ?? []).map((e: Resource) => e.valueCode))));
    const allowed = new Set([...codesOf('as-cs-organization-types'), 'activiteINSEE']);
    t.ok([...slices].every((s) => allowed.has(s)), `organization type slices ${[...slices].join(', ')}`);
  });

  t.test('meta.lastUpdated', async (t) => {
    const re = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|\+0[12]:00)$/;
    const lower = Date.parse('2023-10-31T00:00:00Z');
    const upper = Date.parse('2026-11-01T00:00:00Z');
    let bad = 0;
    const offsets = new Set<string>();
    for (const type of RESOURCE_TYPES) {
      for (const r of data[type]) {
        const v = r.meta.lastUpdated as string;
        const ms = Date.parse(v);
        if (!re.test(v) || !(ms > lower && ms < upper)) bad++;
        offsets.add(v.endsWith('Z') ? 'Z' : v.slice(-6));
      }
    }
    t.equal(bad, 0, 'FHIR instants within the three years before 2026-11-01');
    t.same([...offsets].sort(), ['+01:00', '+02:00', 'Z'], 'various offsets');
  });

  t.test('Device and HealthcareService', async (t) => {
    t.ok(data.Device.every((d) => d.status && d.type?.coding?.[0]?.code && d.owner?.reference?.startsWith('Organization/')), 'Device has status, type, owner');
    t.ok(data.HealthcareService.every((h) => typeof h.active === 'boolean' && h.providedBy?.reference && h.type?.[0]?.coding && h.name), 'HealthcareService has active, providedBy, type, name');
  });
});

t.test('gzip output decompresses to the plain output', async (t) => {
  const plain = tmpDir(t, 'plain');
  const gz = tmpDir(t, 'gz');
  await generate({ scale: 0.0005, seed: 3, outDir: plain });
  const summary = await generate({ scale: 0.0005, seed: 3, outDir: gz, gzip: true });
  t.ok(summary.gzip);
  for (const type of RESOURCE_TYPES) {
    const a = fs.readFileSync(path.join(plain, fileName(type, false)));
    const b = zlib.gunzipSync(fs.readFileSync(path.join(gz, fileName(type, true))));
    t.ok(a.equals(b), `${type}.ndjson.gz`);
  }
});

t.test('CLI arguments', async (t) => {
  t.same(parseCli(['--scale', '0.01', '--out', 'x']), { format: 'ndjson', scale: 0.01, out: 'x', seed: 1, gzip: false });
  t.same(parseCli(['--scale', '1e-4', '--out', 'x', '--seed', '42', '--gzip']), { format: 'ndjson', scale: 0.0001, out: 'x', seed: 42, gzip: true });
  t.equal(parseCli(['--help']), 'help');
  for (const bad of [
    ['--out', 'x'], ['--scale', '1'], ['--scale', 'abc', '--out', 'x'], ['--scale', '0', '--out', 'x'],
    ['--scale', '-1', '--out', 'x'], ['--scale', '1000', '--out', 'x'], ['--scale', '1', '--out', 'x', '--seed', '1.5'],
    ['--scale', '1', '--out', 'x', '--seed', '99999999999'], ['--scale', '1', '--out', 'x', '--nope'], ['extra'],
  ]) {
    t.throws(() => parseCli(bad), { name: 'UsageError' }, bad.join(' '));
  }

  const out = tmpDir(t, 'cli');
  const bad = spawnSync(...userNode(['--import', 'tsx', path.join(repo, 'src/cli/generate.ts'), '--scale', 'abc', '--out', out]), { cwd: repo, encoding: 'utf8' });
  t.equal(bad.status, 2, 'exit code 2 on a bad argument');
  t.match(bad.stderr, /error: --scale must be a number/);
  t.match(bad.stderr, /Usage:/);

  const ok = spawnSync(...userNode(['--import', 'tsx', path.join(repo, 'src/cli/generate.ts'), '--scale', '0.0001', '--out', out, '--seed', '5']), { cwd: repo, encoding: 'utf8' });
  t.equal(ok.status, 0, 'exit code 0');
  t.match(ok.stderr, /Practitioner\s+180/);
  t.match(ok.stderr, /resources\/s/);
  t.ok(fs.existsSync(path.join(out, 'HealthcareService.ndjson')));
});
