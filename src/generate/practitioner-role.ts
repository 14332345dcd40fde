// PractitionerRoles (profile as-dp-practitionerrole): 1 to 3 per practitioner, exact total.
// Each role points at its practitioner and at an organization drawn from the pool that fits the
// profession (pharmacists → pharmacies, GPs → medical cabinets, nurses → hospitals…); an active
// role at an organization with a Location refers to it too.

import type { InformationSystem } from '../vocabulary/extensions.ts';
import { SYSTEM } from '../vocabulary/systems.ts';
import { conceptJson, meta, mssTelecom, reference } from './fhir-common.ts';
import { practitionerId, practitionerRoleId, roleNumber } from './ids.ts';
import { orgRef, type OrgIndex } from './organization.ts';
import { FLAG, identity, specialtyCode, type PractitionerIndex } from './practitioner.ts';
import { Rng, skewedIndex, Weighted } from './prng.ts';
import { BIOLOGY, DENTIST, DOCTOR, GENERAL_PRACTICE, NURSE, PHARMACIST, POOL, POOL_DIST, PROFESSIONS, type Pool } from './professions.ts';
import { lastUpdated } from './time.ts';

// ---- Distributions (documented in docs/generator.md) --------------------------------------------

/** Roles of active practitioners that are closed. */
export const ROLE_INACTIVE_SHARE_ACTIVE_PRACTITIONER = 0.04;
/** Roles of inactive practitioners that are still active (a known inconsistency of the live data). */
export const ROLE_ACTIVE_SHARE_INACTIVE_PRACTITIONER = 0.15;
/** Active roles carrying an MSS mailbox. */
export const ROLE_MAILBOX_SHARE = 0.15;

const GENRE = new Weighted([
  ['GENR01', 88], ['GENR02', 3.5], ['GENR03', 2.5], ['GENR04', 2], ['GENR05', 0.5], ['GENR07', 1.5],
  ['GENR08', 0.5], ['GENR13', 1], ['GENR99', 0.5],
] as const);

const GP_POOLS = new Weighted<Pool>([[POOL.cabinetMedical, 62], [POOL.healthCentre, 8], [POOL.hospital, 18], [POOL.medicoSocial, 5], [POOL.company, 5], [POOL.legalEntity, 2]]);
const SPECIALIST_POOLS = new Weighted<Pool>([[POOL.cabinetMedical, 40], [POOL.hospital, 45], [POOL.healthCentre, 4], [POOL.company, 8], [POOL.legalEntity, 3]]);
const BIOLOGIST_POOLS = new Weighted<Pool>([[POOL.laboratory, 70], [POOL.hospital, 25], [POOL.company, 5]]);

/** How concentrated roles are inside a pool: > 1 sends most roles to the first (bigger) members. */
const POOL_SKEW: Record<Pool, number> = {
  [POOL.hospital]: 1.8, [POOL.medicoSocial]: 1.3, [POOL.healthCentre]: 1.3, [POOL.laboratory]: 1.6, [POOL.pharmacy]: 1,
  [POOL.cabinetMedical]: 1, [POOL.cabinetDental]: 1, [POOL.cabinetNursing]: 1, [POOL.cabinetPhysio]: 1,
  [POOL.cabinetMidwife]: 1, [POOL.cabinetParamedical]: 1, [POOL.company]: 1, [POOL.legalEntity]: 1.2,
};

type Mode = 'L' | 'S' | 'B';
const MODE_BY_POOL: Record<Pool, Weighted<Mode>> = {} as Record<Pool, Weighted<Mode>>;
for (const pool of Object.values(POOL)) {
  const w: [Mode, number][] =
    pool >= POOL.cabinetMedical && pool <= POOL.cabinetParamedical ? [['L', 93], ['S', 6], ['B', 1]]
    : pool === POOL.company ? [['L', 90], ['S', 10]]
    : pool === POOL.hospital ? [['S', 92], ['L', 6], ['B', 2]]
    : pool === POOL.medicoSocial ? [['S', 85], ['L', 13], ['B', 2]]
    : pool === POOL.laboratory ? [['S', 70], ['L', 30]]
    : [['S', 95], ['L', 5]];
  MODE_BY_POOL[pool] = new Weighted(w);
}

type Group = 'doctor' | 'pharmacist' | 'dentist' | 'midwife' | 'nurse' | 'other';
function groupOf(p: number): Group {
  if (p === DOCTOR) return 'doctor';
  if (p === PHARMACIST) return 'pharmacist';
  if (p === DENTIST) return 'dentist';
  if (PROFESSIONS[p].code === '50') return 'midwife';
  if (p === NURSE || PROFESSIONS[p].code === '69') return 'nurse';
  return 'other';
}

/** TRE_R21 function weights for a (pool, mode, group). */
function fonctionWeights(pool: Pool, mode: Mode, group: Group): [string, number][] {
  const medical = group === 'doctor' || group === 'pharmacist' || group === 'dentist' || group === 'midwife';
  if (pool >= POOL.cabinetMedical && pool <= POOL.cabinetParamedical) {
    if (mode !== 'L') return [['FON-18', 50], ['FON-AU', 50]];
    const w: [string, number][] = [['FON-01', 55], ['FON-AU', 20], ['FON-17', 8], ['FON-51', 2], ['FON-42', 2], ['FON-55', 1], ['FON-56', 1]];
    if (group === 'doctor') w.push(['FON-32', 1], ['FON-54', 2]);
    return w;
  }
  switch (pool) {
    case POOL.company:
      return [['FON-02', 70], ['FON-01', 10], ['FON-AU', 20]];
    case POOL.hospital: {
      const w: [string, number][] = [['FON-AU', 45], ['FON-33', 20]];
      if (medical) w.push(['FON-35', 4], ['FON-48', 8], ['FON-53', 4], ['FON-57', 3], ['FON-14', 1], ['FON-09', 0.5]);
      if (group === 'doctor') w.push(['FON-24', 0.5], ['FON-12', 0.05], ['FON-13', 0.05]);
      if (group === 'pharmacist') w.push(['FON-37', 3]);
      if (group === 'nurse' || group === 'other') w.push(['FON-43', 6], ['FON-44', 1], ['FON-45', 0.5]);
      if (mode === 'L') w.push(['FON-55', 3], ['FON-56', 1]);
      return w;
    }
    case POOL.medicoSocial: {
      const w: [string, number][] = [['FON-AU', 60], ['FON-33', 30], ['FON-09', 5]];
      if (group === 'nurse') w.push(['FON-43', 5]);
      if (group === 'doctor' || group === 'midwife' || group === 'nurse') w.push(['FON-39', 3], ['FON-38', 1]);
      if (group === 'doctor') w.push(['FON-21', 1], ['FON-28', 1]);
      return w;
    }
    case POOL.healthCentre:
      return [['FON-AU', 50], ['FON-33', 40], ['FON-09', 10]];
    case POOL.laboratory:
      return group === 'doctor' || group === 'pharmacist'
        ? [['FON-41', 45], ['FON-40', 15], ['FON-15', 5], ['FON-16', 5], ['FON-AU', 30]]
        : [['FON-AU', 60], ['FON-33', 40]];
    case POOL.pharmacy:
      return group === 'pharmacist'
        ? [['FON-03', 32], ['FON-05', 55], ['FON-04', 4], ['FON-07', 0.5], ['FON-23', 1], ['FON-47', 1], ['FON-AU', 7.5]]
        : [['FON-AU', 60], ['FON-33', 40]];
    default: {
      const w: [string, number][] = [['FON-09', 20], ['FON-10', 10], ['FON-AU', 70]];
      if (group === 'doctor') w.push(['FON-19', 5], ['FON-29', 5], ['FON-24', 2], ['FON-11', 0.1]);
      if (group === 'pharmacist') w.push(['FON-49', 5], ['FON-50', 5], ['FON-27', 2], ['FON-30', 1]);
      return w;
    }
  }
}

const fonctionCache = new Map<string, Weighted<string>>();
function fonctionDist(pool: Pool, mode: Mode, group: Group): Weighted<string> {
  const key = `${pool}|${mode}|${group}`;
  let d = fonctionCache.get(key);
  if (!d) {
    d = new Weighted(fonctionWeights(pool, mode, group));
    fonctionCache.set(key, d);
  }
  return d;
}


function poolFor(rng: Rng, p: number, specialty: string | null): Pool {
  if (p === DOCTOR) {
    if (specialty && BIOLOGY.has(specialty)) return BIOLOGIST_POOLS.sample(rng);
    if (!specialty || GENERAL_PRACTICE.has(specialty)) return GP_POOLS.sample(rng);
    return SPECIALIST_POOLS.sample(rng);
  }
  return POOL_DIST[p].sample(rng);
}

function pickOrganization(rng: Rng, orgs: OrgIndex, pool: Pool): number {
  const members = orgs.pools[pool];
  if (members.length > 0) return members[skewedIndex(rng, members.length, POOL_SKEW[pool])];
  return rng.int(orgs.count); // tiny scales: the pool may be empty
}

const INFO_SYSTEM = new Weighted<InformationSystem>([['RPPS', 93], ['CG', 4], ['MSS', 3]]);

/**
 * Stream of roles. Which practitioners get a 2nd/3rd role is chosen by selection sampling
 * (Knuth's algorithm S) over 2 extra slots per practitioner, so the total is exactly `count`.
 */
export function* practitionerRoles(seed: number, count: number, pract: PractitionerIndex, orgs: OrgIndex): Generator<string> {
  const rng = new Rng(seed, 3);
  const n = pract.count;
  const totalSlots = 2 * n;
  const extra = Math.max(0, Math.min(totalSlots, count - n));
  let chosen = 0;
  let j = 0;
  for (let i = 0; i < n; i++) {
    let roles = 1;
    for (let s = 0; s < 2; s++) {
      const t = 2 * i + s;
      if ((totalSlots - t) * rng.next() < extra - chosen) {
        chosen++;
        roles++;
      }
    }
    const p = pract.profession[i];
    const prof = PROFESSIONS[p];
    const flags = pract.flags[i];
    const practitionerActive = (flags & FLAG.active) !== 0;
    const specialty = specialtyCode(pract, i);
    const group = groupOf(p);
    const practitioner = reference('Practitioner', practitionerId(i));
    for (let k = 0; k < roles && j < count; k++, j++) {
      const active = practitionerActive
        ? !rng.chance(ROLE_INACTIVE_SHARE_ACTIVE_PRACTITIONER)
        : rng.chance(ROLE_ACTIVE_SHARE_INACTIVE_PRACTITIONER);
      const pool = poolFor(rng, p, specialty);
      let genre: string = GENRE.sample(rng);
      if (genre === 'GENR13' && group !== 'doctor') genre = 'GENR01';
      const withoutOrg = (genre === 'GENR02' || genre === 'GENR03') && rng.chance(0.3);
      const org = pickOrganization(rng, orgs, pool);
      const updated = lastUpdated(rng);
      let authority: string | null = null;
      if ((flags & FLAG.military) !== 0) authority = rng.chance(0.8) ? 'SSA' : null;
      else if (prof.authority && rng.chance(0.8)) authority = prof.authority;

      const head = `{"resourceType":"PractitionerRole","id":"${practitionerRoleId(j)}","meta":`;
      const identifier = `"identifier":[{"use":"official","system":"${SYSTEM.rpps}","value":"${roleNumber(j)}"}]`;
      const organization = withoutOrg ? '' : `,"organization":${orgRef(orgs, org)}`;
      if (!active) {
        // Tombstone: id, meta, identifier, active:false, and the references (kept so _include/_revinclude still work).
        yield `${head}${meta('PractitionerRole', updated, 'RPPS', authority)},${identifier},"active":false,"practitioner":${practitioner}${organization}}`;
        continue;
      }

      let mode: 'L' | 'S' | 'B' = MODE_BY_POOL[pool].sample(rng);
      let fonction = fonctionDist(pool, mode, group).sample(rng);
      if (pool === POOL.pharmacy && group === 'pharmacist') mode = fonction === 'FON-03' || fonction === 'FON-04' || fonction === 'FON-07' ? 'L' : 'S';
      if ((genre === 'GENR02' || genre === 'GENR03' || genre === 'GENR07') && rng.chance(0.6)) fonction = 'FON-22';

      let telecom = '';
      if (rng.chance(ROLE_MAILBOX_SHARE)) {
        const who = identity(seed, i, p);
        const sameAsPractitioner = (flags & FLAG.mailbox) !== 0 && rng.chance(0.7);
        const value = sameAsPractitioner ? who.mailbox.value : who.mailbox.value.replace('@', `.${k + 1}@`);
        telecom = `,"telecom":[${mssTelecom(value, who.mailbox.type, { digitization: rng.chance(0.5) ? rng.chance(0.2) : undefined })}]`;
      }
      let system: InformationSystem = INFO_SYSTEM.sample(rng);
      if (system === 'MSS' && !telecom) system = 'RPPS';

      const location = !withoutOrg && orgs.located[org] ? `,"location":[${orgRef(orgs, org).replace('"Organization/', '"Location/')}]` : '';
      yield `${head}${meta('PractitionerRole', updated, system, authority)},"language":"fr",${identifier},"active":true,"practitioner":${practitioner}${organization}` +
        `,"code":[${conceptJson('TRE_R22-GenreActivite', genre)},${conceptJson('TRE_R23-ModeExercice', mode)},${conceptJson('TRE_R21-Fonction', fonction)}]${location}${telecom}}`;
    }
  }
}
