// Practitioners (profile as-dp-practitioner). The profession, specialty and a few flags of each
// practitioner are kept in compact typed arrays for the role phase; names and mailboxes are
// re-derived from (seed, index) instead of being stored.

import { codesOf } from '../vocabulary/codes.ts';
import { EXT, type InformationSystem } from '../vocabulary/extensions.ts';
import { SYSTEM } from '../vocabulary/systems.ts';
import { codingJson, conceptJson, meta, mssTelecom, officialIdentifier, str, type MailboxType } from './fhir-common.ts';
import { idnps, practitionerId, rppsNumber, smartcardNumber } from './ids.ts';
import { FEMALE_DIST, familyName, foldAscii, MALE_DIST } from './names.ts';
import { Rng, Weighted } from './prng.ts';
import {
  DENTAL_SPECIALTIES, DENTAL_SPECIALTY_SHARE, DENTIST, DOCTOR, DOCTOR_SPECIALTIES, DOCTOR_SPECIALTY_SHARE, NURSE,
  NURSE_SPECIALTIES, NURSE_SPECIALTY_SHARE, OPERATOR_MSS_DOMAINS, PHARMACIST, PHARMACIST_SPECIALTIES,
  PHARMACIST_SPECIALTY_SHARE, PROFESSION_DIST, PROFESSIONS, PUBLIC_MAIL_DOMAINS,
} from './professions.ts';
import { addYears, dateWithin, isoDate, lastUpdated, YEAR_MS } from './time.ts';

// ---- Distributions (documented in docs/generator.md) --------------------------------------------

export const PRACTITIONER_INACTIVE_SHARE = 0.05;
/** Among active practitioners; × 0.95 gives ≈ 40 % of all practitioners. */
export const MSS_SHARE_OF_ACTIVE = 0.42;
/** Among active practitioners; × 0.95 gives ≈ 30 % of all practitioners. */
export const SMARTCARD_SHARE_OF_ACTIVE = 0.315;
export const SECOND_SMARTCARD_SHARE = 0.03;
export const PUBLIC_EMAIL_SHARE_OF_ACTIVE = 0.08;
export const UPPERCASE_FAMILY_SHARE = 0.15;
export const CAB_MAILBOX_SHARE = 0.1;
export const OPERATOR_DOMAIN_SHARE = 0.3;
export const MILITARY_SHARE = 0.007;
export const CIVIL_SERVANT_SHARE = 0.02;

const INFO_SYSTEM = new Weighted<InformationSystem>([['RPPS', 90], ['CG', 7], ['MSS', 3]]);
const ARS = new Weighted([['ARS-11', 5], ['ARS-84', 3], ['ARS-93', 2]] as const);
const CARD_TYPE = new Weighted([['CPS', 88], ['CPF', 8], ['CPE', 4]] as const);
const CARD_FIRST_DIGIT: Record<string, number> = { CPS: 3, CPF: 2, CPE: 1 };

const R38_CODES = codesOf('TRE_R38-SpecialiteOrdinale');
const R38_INDEX = new Map(R38_CODES.map((c, i) => [c, i]));
export const NO_SPECIALTY = 255;

export const FLAG = { active: 1, female: 2, mailbox: 4, military: 8 } as const;

/** What the role phase needs to know about each practitioner. */
export type PractitionerIndex = {
  count: number;
  /** Index into PROFESSIONS. */
  profession: Uint8Array;
  /** Index into the TRE_R38 code list, or NO_SPECIALTY. */
  specialty: Uint8Array;
  /** FLAG bits. */
  flags: Uint8Array;
};

export function newPractitionerIndex(count: number): PractitionerIndex {
  return { count, profession: new Uint8Array(count), specialty: new Uint8Array(count), flags: new Uint8Array(count) };
}

export function specialtyCode(index: PractitionerIndex, i: number): string | null {
  const s = index.specialty[i];
  return s === NO_SPECIALTY ? null : R38_CODES[s];
}

// ---- Identity: a pure function of (seed, index, profession) -------------------------------------

export type Identity = {
  family: string;
  given: string;
  female: boolean;
  mailbox: { value: string; type: MailboxType };
  email: string;
};

const STREAM_IDENTITY = 20;

/** Names and mail addresses of practitioner i; the role phase calls it again to copy the mailbox. */
export function identity(seed: number, i: number, professionIndex: number): Identity {
  const rng = new Rng(seed, STREAM_IDENTITY, i);
  const prof = PROFESSIONS[professionIndex];
  const female = rng.chance(prof.femaleShare);
  const given = (female ? FEMALE_DIST : MALE_DIST).sample(rng);
  const rawFamily = familyName(rng);
  const family = rng.chance(UPPERCASE_FAMILY_SHARE) ? rawFamily.toUpperCase() : rawFamily;
  const g = foldAscii(given);
  const f = foldAscii(rawFamily);
  const suffix = rng.chance(0.2) ? String(rng.range(2, 99)) : '';
  const type: MailboxType = rng.chance(CAB_MAILBOX_SHARE) ? 'CAB' : 'PER';
  const domain = type === 'PER' && rng.chance(OPERATOR_DOMAIN_SHARE) ? rng.pick(OPERATOR_MSS_DOMAINS) : prof.mssDomain;
  const local = type === 'CAB' ? `cabinet.${f}${suffix}` : `${g}.${f}${suffix}`;
  const emailLocal = rng.chance(0.5) ? `${g}.${f}` : `${g.charAt(0)}${f}${rng.range(1, 99)}`;
  return {
    family,
    given,
    female,
    mailbox: { value: `${local}@${domain}`, type },
    email: `${emailLocal}@${PUBLIC_MAIL_DOMAINS.sample(rng)}`,
  };
}

// ---- Builders (JSON text, see fhir-common.ts) ----------------------------------------------------

function identifiers(i: number): string {
  const rpps = rppsNumber(i);
  return `[${officialIdentifier('IDNPS', SYSTEM.idnps, idnps(rpps))},${officialIdentifier('RPPS', SYSTEM.rpps, rpps)}]`;
}

function smartcard(type: string, number: string, startMs: number): string {
  return `{"extension":[{"url":"type","valueCodeableConcept":${conceptJson('TRE_R87-TypeCarte', type)}},` +
    `{"url":"number","valueString":"${number}"},` +
    `{"url":"period","valuePeriod":{"start":"${isoDate(startMs)}","end":"${isoDate(addYears(startMs, 3))}"}}],"url":"${EXT.smartcard}"}`;
}

const DEGREE_DE = codingJson('TRE_R14-TypeDiplome', 'DE');

/** A TRE_R38 savoir-faire for a practitioner of this profession, or null (distributions in professions.ts). */
export function drawSpecialty(rng: Rng, professionIndex: number, student: boolean): string | null {
  if (professionIndex === DOCTOR) return !student && rng.chance(DOCTOR_SPECIALTY_SHARE) ? DOCTOR_SPECIALTIES.sample(rng) : null;
  if (professionIndex === DENTIST) return rng.chance(DENTAL_SPECIALTY_SHARE) ? DENTAL_SPECIALTIES.sample(rng) : null;
  if (professionIndex === NURSE) return rng.chance(NURSE_SPECIALTY_SHARE) ? NURSE_SPECIALTIES.sample(rng) : null;
  if (professionIndex === PHARMACIST) return rng.chance(PHARMACIST_SPECIALTY_SHARE) ? PHARMACIST_SPECIALTIES.sample(rng) : null;
  return null;
}

/** Stream of practitioners (one JSON line each). Fills `index` as it goes. */
export function* practitioners(seed: number, count: number, index: PractitionerIndex): Generator<string> {
  const rng = new Rng(seed, 2);
  for (let i = 0; i < count; i++) {
    const p = PROFESSION_DIST.index(rng);
    const prof = PROFESSIONS[p];
    const active = !rng.chance(PRACTITIONER_INACTIVE_SHARE);
    const updated = lastUpdated(rng);
    const military = rng.chance(MILITARY_SHARE);
    const student = !military && rng.chance(prof.studentShare);
    const civilServant = !military && !student && rng.chance(CIVIL_SERVANT_SHARE);
    let authority: string | null = null;
    if (military) authority = 'SSA';
    else if (prof.authority) authority = rng.chance(0.85) ? prof.authority : null;
    else if (rng.chance(0.45)) authority = ARS.sample(rng);
    const head = `{"resourceType":"Practitioner","id":"${practitionerId(i)}","meta":`;
    index.profession[i] = p;
    index.specialty[i] = NO_SPECIALTY;
    index.flags[i] = (active ? FLAG.active : 0) | (military ? FLAG.military : 0);

    if (!active) {
      // Tombstone: only id, meta, identifier, active.
      yield `${head}${meta('Practitioner', updated, rng.chance(0.9) ? 'RPPS' : 'CG', authority)},"identifier":${identifiers(i)},"active":false}`;
      continue;
    }

    const who = identity(seed, i, p);
    if (who.female) index.flags[i] |= FLAG.female;
    const hasMailbox = rng.chance(MSS_SHARE_OF_ACTIVE);
    const hasEmail = rng.chance(PUBLIC_EMAIL_SHARE_OF_ACTIVE);
    const hasCard = rng.chance(SMARTCARD_SHARE_OF_ACTIVE);
    let system = INFO_SYSTEM.sample(rng);
    if (system === 'MSS' && !hasMailbox) system = 'RPPS';

    let out = `${head}${meta('Practitioner', updated, system, authority)},"language":"fr"`;
    if (hasCard) {
      const type = student ? 'CPF' : CARD_TYPE.sample(rng);
      const start = dateWithin(rng, 3);
      out += `,"extension":[${smartcard(type, smartcardNumber(i, CARD_FIRST_DIGIT[type]), start)}`;
      if (rng.chance(SECOND_SMARTCARD_SHARE)) {
        out += `,${smartcard('CPF', smartcardNumber(i + 500_000_000, CARD_FIRST_DIGIT.CPF), start - 3 * YEAR_MS)}`;
      }
      out += ']';
    }
    out += `,"identifier":${identifiers(i)},"active":true`;
    const family = str(who.family);
    const given = str(who.given);
    out += `,"name":[{"text":${str(`${who.family} ${who.given}`)},"family":${family},"given":[${given}],"prefix":["${who.female ? 'MME' : 'M'}"]`;
    if (!student) {
      const x = rng.next();
      if (x < prof.prShare) out += ',"suffix":["PR"]';
      else if (x < prof.prShare + prof.drShare) out += ',"suffix":["DR"]';
    }
    out += '}]';
    if (hasMailbox || hasEmail) {
      const telecom: string[] = [];
      if (hasMailbox) {
        index.flags[i] |= FLAG.mailbox;
        telecom.push(mssTelecom(who.mailbox.value, who.mailbox.type, { digitization: rng.chance(0.6) ? rng.chance(0.2) : undefined }));
      }
      if (hasEmail) telecom.push(`{"system":"email","value":${str(who.email)}}`);
      out += `,"telecom":[${telecom.join(',')}]`;
    }

    out += ',"qualification":[';
    if (prof.degree && rng.chance(prof.degreeShare)) {
      out += `{"code":{"coding":[${DEGREE_DE},${codingJson('TRE_R48-DiplomeEtatFrancais', prof.degree)}]}},`;
    }
    const category = military ? 'M' : student ? 'E' : civilServant ? 'F' : 'C';
    out += `{"code":{"coding":[${codingJson('TRE_R09-CategorieProfessionnelle', category)},${codingJson('TRE_G15-ProfessionSante', prof.code)}]}}`;
    const specialty = drawSpecialty(rng, p, student);
    if (specialty) {
      index.specialty[i] = R38_INDEX.get(specialty)!;
      out += `,{"code":${conceptJson('TRE_R38-SpecialiteOrdinale', specialty)}}`;
    }
    yield `${out}]}`;
  }
}
