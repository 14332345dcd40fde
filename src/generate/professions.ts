// Professions (TRE_G15) with their weights and the attributes that depend on them.
// Weights are percentages of all practitioners, roughly the RPPS mix (nurses and doctors dominate).

import { Weighted, zipf } from './prng.ts';
import { codesOf } from '../vocabulary/codes.ts';

/** Role target pools: where a professional of a given profession exercises. */
export const POOL = {
  hospital: 0,
  medicoSocial: 1,
  healthCentre: 2,
  laboratory: 3,
  pharmacy: 4,
  cabinetMedical: 5,
  cabinetDental: 6,
  cabinetNursing: 7,
  cabinetPhysio: 8,
  cabinetMidwife: 9,
  cabinetParamedical: 10,
  company: 11,
  legalEntity: 12,
} as const;
export type Pool = (typeof POOL)[keyof typeof POOL];
export const POOL_COUNT = 13;
export const POOL_NAMES = Object.keys(POOL) as (keyof typeof POOL)[];

export type Profession = {
  readonly code: string;
  /** Share of all practitioners, in percent (normalised at sampling time). */
  readonly weight: number;
  readonly femaleShare: number;
  /** TRE_R60 registration authority of the profession (ordres); null for non-ordinal professions. */
  readonly authority: string | null;
  /** Probability of the exercise civility suffix DR, then PR. */
  readonly drShare: number;
  readonly prShare: number;
  /** TRE_R48 state diploma code and the share of practitioners carrying it. */
  readonly degree: string | null;
  readonly degreeShare: number;
  /** Share of students (TRE_R09 category E). */
  readonly studentShare: number;
  /** Personal MSS domain of the profession (Mailiz-style). */
  readonly mssDomain: string;
  /** Where roles point, as [pool, weight]. Doctors are refined by specialty in practitioner-role.ts. */
  readonly pools: ReadonlyArray<readonly [Pool, number]>;
};

const P = POOL;

export const PROFESSIONS: readonly Profession[] = [
  prof('10', 22, 0.5, 'CNOM', 0.88, 0.03, 'DE05', 0.85, 0.03, 'medecin.mssante.fr', [[P.cabinetMedical, 55], [P.hospital, 28], [P.healthCentre, 6], [P.medicoSocial, 4], [P.company, 5], [P.legalEntity, 2]]),
  prof('21', 5.5, 0.68, 'CNOP', 0.55, 0, 'DE01', 0.85, 0.02, 'pharmacien.mssante.fr', [[P.pharmacy, 68], [P.hospital, 14], [P.laboratory, 10], [P.legalEntity, 3], [P.company, 5]]),
  prof('40', 3, 0.48, 'ONCD', 0.75, 0, null, 0, 0.01, 'chirurgien-dentiste.mssante.fr', [[P.cabinetDental, 82], [P.healthCentre, 10], [P.company, 6], [P.hospital, 2]]),
  prof('50', 1.7, 0.97, 'CNOSF', 0, 0, null, 0, 0.01, 'sage-femme.mssante.fr', [[P.hospital, 70], [P.cabinetMidwife, 25], [P.healthCentre, 5]]),
  prof('60', 33, 0.86, 'ONI', 0, 0, null, 0, 0.005, 'infirmier.mssante.fr', [[P.hospital, 50], [P.medicoSocial, 20], [P.cabinetNursing, 25], [P.healthCentre, 5]]),
  prof('69', 0.2, 0.8, 'ONI', 0, 0, null, 0, 0, 'infirmier.mssante.fr', [[P.hospital, 80], [P.medicoSocial, 20]]),
  prof('70', 6, 0.52, 'CNOMK', 0, 0, 'DE11', 0.6, 0.005, 'masseur-kinesitherapeute.mssante.fr', [[P.cabinetPhysio, 75], [P.hospital, 12], [P.medicoSocial, 8], [P.healthCentre, 5]]),
  prof('80', 1, 0.7, 'CNOPP', 0, 0, null, 0, 0.005, 'pedicure-podologue.mssante.fr', [[P.cabinetParamedical, 90], [P.medicoSocial, 10]]),
  prof('91', 1.6, 0.96, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.cabinetParamedical, 70], [P.hospital, 15], [P.medicoSocial, 15]]),
  prof('92', 0.4, 0.85, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.cabinetParamedical, 60], [P.cabinetMedical, 25], [P.hospital, 15]]),
  prof('94', 1.1, 0.88, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.hospital, 45], [P.medicoSocial, 35], [P.cabinetParamedical, 20]]),
  prof('96', 0.8, 0.87, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.medicoSocial, 50], [P.hospital, 30], [P.cabinetParamedical, 20]]),
  prof('95', 0.8, 0.92, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.hospital, 55], [P.medicoSocial, 20], [P.cabinetParamedical, 25]]),
  prof('26', 0.3, 0.4, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
  prof('28', 2, 0.5, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
  prof('39', 4, 0.85, null, 0, 0, null, 0, 0.01, 'pro.mssante.fr', [[P.pharmacy, 85], [P.hospital, 15]]),
  prof('38', 0.2, 0.85, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.hospital, 100]]),
  prof('86', 2, 0.8, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.laboratory, 70], [P.hospital, 30]]),
  prof('98', 2, 0.7, null, 0, 0, null, 0, 0.005, 'pro.mssante.fr', [[P.hospital, 70], [P.cabinetMedical, 30]]),
  prof('31', 1, 0.95, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetDental, 90], [P.healthCentre, 10]]),
  prof('35', 0.6, 0.9, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.hospital, 50], [P.medicoSocial, 50]]),
  prof('36', 0.5, 0.3, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.medicoSocial, 40], [P.hospital, 60]]),
  prof('37', 0.3, 0.98, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.hospital, 60], [P.medicoSocial, 40]]),
  prof('32', 0.05, 0.4, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.hospital, 100]]),
  prof('81', 0.03, 0.2, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
  prof('82', 0.02, 0.2, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
  prof('83', 0.03, 0.2, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
  prof('84', 0.005, 0.5, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
  prof('85', 0.005, 0.5, null, 0, 0, null, 0, 0, 'pro.mssante.fr', [[P.cabinetParamedical, 100]]),
];

function prof(
  code: string, weight: number, femaleShare: number, authority: string | null, drShare: number, prShare: number,
  degree: string | null, degreeShare: number, studentShare: number, mssDomain: string,
  pools: ReadonlyArray<readonly [Pool, number]>,
): Profession {
  return { code, weight, femaleShare, authority, drShare, prShare, degree, degreeShare, studentShare, mssDomain, pools };
}

export const PROFESSION_DIST = new Weighted(PROFESSIONS.map((p, i) => [i, p.weight] as const));
export const POOL_DIST = PROFESSIONS.map((p) => new Weighted(p.pools));
export const DOCTOR = PROFESSIONS.findIndex((p) => p.code === '10');
export const PHARMACIST = PROFESSIONS.findIndex((p) => p.code === '21');
export const DENTIST = PROFESSIONS.findIndex((p) => p.code === '40');
export const NURSE = PROFESSIONS.findIndex((p) => p.code === '60');

/**
 * Doctors' specialties (TRE_R38, "savoir-faire"): explicit weights for the common ones
 * (general practice ≈ 40 % of doctors), every other SMxx code shares the tail.
 */
const DOCTOR_HEAD: ReadonlyArray<readonly [string, number]> = [
  ['SM54', 40], ['SM26', 6], ['SM53', 4], ['SM42', 4.5], ['SM02', 3.5], ['SM44', 3], ['SM40', 2.8], ['SM04', 2.4],
  ['SM38', 2], ['SM20', 1.8], ['SM25', 1.8], ['SM59', 1.5], ['SM15', 1.3], ['SM24', 1.3], ['SM08', 1.2], ['SM03', 1.2],
  ['SM41', 1], ['SM32', 1], ['SM34', 1], ['SM48', 0.9], ['SM27', 0.8], ['SM18', 0.8], ['SM14', 0.7], ['SM30', 0.6],
  ['SM16', 0.6], ['SM19', 0.6], ['SM29', 0.6], ['SM05', 0.6], ['SM12', 0.5], ['SM01', 0.5], ['SM49', 0.4], ['SM46', 0.4],
  ['SM21', 0.3], ['SM28', 0.3], ['SM45', 0.3], ['SM10', 0.3], ['SM61', 0.3], ['SM31', 0.2], ['SM73', 0.2], ['SM74', 0.2],
];
const headCodes = new Set(DOCTOR_HEAD.map(([c]) => c));
const doctorTail = codesOf('TRE_R38-SpecialiteOrdinale').filter((c) => c.startsWith('SM') && !headCodes.has(c));
export const DOCTOR_SPECIALTIES = new Weighted([...DOCTOR_HEAD, ...doctorTail.map((c) => [c, 0.04] as const)]);
/** General-practice codes (roles of GPs go to cabinets more often than specialists'). */
export const GENERAL_PRACTICE = new Set(['SM54', 'SM26', 'SM53']);
/** Biology specialties: these doctors mostly work in laboratories. */
export const BIOLOGY = new Set(['SM03', 'SM63', 'SM64', 'SM65', 'SM66', 'SM67']);

/** Dentists' specialties (6.5 % of dentists), IPA nurses (0.3 %), pharmacists' SP (1 %). */
export const DENTAL_SPECIALTIES = new Weighted([['SCD01', 4], ['SCD02', 1.5], ['SCD03', 1]] as const);
export const DENTAL_SPECIALTY_SHARE = 0.065;
export const NURSE_SPECIALTIES = zipf(['SI01', 'SI04', 'SI05', 'SI02', 'SI03'], 1, 0);
export const NURSE_SPECIALTY_SHARE = 0.003;
export const PHARMACIST_SPECIALTIES = zipf(['SP02', 'SP01', 'SP03', 'SP04'], 1, 0);
export const PHARMACIST_SPECIALTY_SHARE = 0.01;
/** Share of doctors whose record carries a specialty (students often have none yet). */
export const DOCTOR_SPECIALTY_SHARE = 0.94;

/** Hospital and operator MSS domains (the other personal mailboxes use the profession domain). */
export const OPERATOR_MSS_DOMAINS: readonly string[] = [
  'chu-lyon.mssante.fr', 'chu-bordeaux.mssante.fr', 'chu-lille.mssante.fr', 'ch-dax.mssante.fr', 'aura.mssante.fr',
  'chu-nantes.mssante.fr', 'ap-hm.mssante.fr', 'chru-nancy.mssante.fr', 'chu-toulouse.mssante.fr', 'ch-valence.mssante.fr',
  'louispasteursante.mssante.fr', 'ght-alpes.mssante.fr', 'sante-paca.mssante.fr', 'bretagne.mssante.fr', 'chu-rennes.mssante.fr',
  'ch-annecy-genevois.mssante.fr', 'chu-montpellier.mssante.fr', 'hcl.mssante.fr', 'chu-reims.mssante.fr', 'ght-normandie.mssante.fr',
];

/** Ordinary (non-MSS) mail providers. */
export const PUBLIC_MAIL_DOMAINS = new Weighted([
  ['gmail.com', 30], ['orange.fr', 25], ['wanadoo.fr', 10], ['free.fr', 10], ['sfr.fr', 6], ['laposte.net', 6],
  ['yahoo.fr', 5], ['hotmail.fr', 5], ['outlook.fr', 3],
] as const);
