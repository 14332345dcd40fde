// Technical ids and business identifiers. Every value is a pure function of an index, so a
// PractitionerRole can reference Practitioner n or Organization m without any lookup table.

/** Luhn check digit to append to `body` (digits only). */
export function luhnCheckDigit(body: string): number {
  let sum = 0;
  // The check digit will sit at the right; starting from the rightmost body digit, double every other one.
  for (let i = body.length - 1, dbl = true; i >= 0; i--, dbl = !dbl) {
    let d = body.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isLuhnValid(value: string): boolean {
  if (!/^\d+$/.test(value) || value.length < 2) return false;
  return luhnCheckDigit(value.slice(0, -1)) === value.charCodeAt(value.length - 1) - 48;
}

/**
 * Scramble i in [0, modulus) bijectively: (i * mult + add) mod modulus with gcd(mult, modulus) = 1.
 * Uses BigInt-free arithmetic split to stay exact beyond 2^53.
 */
export function scramble(i: number, mult: number, add: number, modulus: number): number {
  // (i * mult) mod modulus without overflow: split mult into 16-bit halves.
  const hi = Math.floor(mult / 65536);
  const lo = mult % 65536;
  const a = ((i * hi) % modulus) * 65536 % modulus;
  const b = (i * lo) % modulus;
  return (a + b + add) % modulus;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

// ---- Technical ids (formats of the live v2 API) -----------------------------------------------

/** Practitioner id, e.g. 003-1000042-1083311: unique by its first number. */
export function practitionerId(i: number): string {
  const a = 1_000_000 + i;
  return `003-${a}-${a + (scramble(i, 40_503, 7, 190_000) + 10_000)}`;
}

/** PractitionerRole id, e.g. 005-69329-7187020: unique by its second number. */
export function practitionerRoleId(j: number): string {
  return `005-${10_000 + scramble(j, 7_919, 13, 90_000)}-${5_000_000 + j}`;
}

/** Organization partitions seen in ids: 01 FINESS structures, 02 RPPS cabinets, 03 SIREN-only companies. */
export const ORG_PART = { finess: 1, cabinet: 2, company: 3 } as const;

/** Organization id, e.g. 001-01-104268: unique by its last number. */
export function organizationId(i: number, part: number): string {
  return `001-${pad(part, 2)}-${100_000 + i}`;
}

/** Device id, e.g. 002-3635099. */
export function deviceId(k: number): string {
  return `002-${3_000_000 + k}`;
}

/** HealthcareService id (prefix assumed by analogy: the public docs show no example). */
export function healthcareServiceId(k: number): string {
  return `004-${2_000_000 + k}`;
}

// ---- Business identifiers ----------------------------------------------------------------------

/** RPPS number: "10" + 8 digits + Luhn key (11 digits), unique for i < 10^8. */
export function rppsNumber(i: number): string {
  const body = `10${pad(scramble(i, 2_654_435_761 % 100_000_000, 1_357_911, 100_000_000), 8)}`;
  return body + luhnCheckDigit(body);
}

/** IDNPS = "8" + RPPS. */
export function idnps(rpps: string): string {
  return `8${rpps}`;
}

/** RPPS activity number (idSituationExercice): 10 digits starting with 10, unique for j < 10^8. */
export function roleNumber(j: number): string {
  return `10${pad(scramble(j, 48_271, 24_680, 100_000_000), 8)}`;
}

/** FINESS number: department (2 digits) + 6-digit serial + Luhn key. Unique per serial k < 10^6 within a department. */
export function finessNumber(dept2: string, k: number): string {
  const body = `${dept2}${pad(scramble(k, 69_069, 4_321, 1_000_000), 6)}`;
  return body + luhnCheckDigit(body);
}

/** SIREN: first digit (2 public bodies, 7/8 associations, 3-5 companies) + 7 digits + Luhn key. */
export function sirenNumber(first: number, k: number): string {
  const body = `${first}${pad(scramble(k, 1_103_517, 98_765, 10_000_000), 7)}`;
  return body + luhnCheckDigit(body);
}

/** SIRET: SIREN + 4-digit establishment serial + key making all 14 digits Luhn-valid. */
export function siretNumber(siren: string, site: number): string {
  const body = `${siren}${pad(site + 1, 4)}`;
  return body + luhnCheckDigit(body);
}

/** Smartcard (CPS) number: 10 digits, unique for i < 10^9. */
export function smartcardNumber(i: number, first: number): string {
  return `${first}${pad(scramble(i, 9_973, 55_555, 1_000_000_000), 9)}`;
}
