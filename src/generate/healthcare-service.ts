// HealthcareServices: regulated care activities (authorisations d'activités de soins) of
// geographical entities. `providedBy` is the reference indexed by HealthcareService:organization.

import { displayOf } from '../vocabulary/codes.ts';
import { EXT } from '../vocabulary/extensions.ts';
import { conceptJson, meta, str } from './fhir-common.ts';
import { healthcareServiceId } from './ids.ts';
import { orgRef, type OrgIndex } from './organization.ts';
import { Rng, skewedIndex, Weighted } from './prng.ts';
import { POOL, type Pool } from './professions.ts';
import { addYears, dateWithin, isoDate, lastUpdated } from './time.ts';

export const HEALTHCARE_SERVICE_INACTIVE_SHARE = 0.05;

/** Activity (TRE_R274) → plausible modalities (TRE_R275) and forms (TRE_R276), with a weight. */
const ACTIVITIES: ReadonlyArray<readonly [activity: string, modalities: readonly string[], forms: readonly string[], weight: number]> = [
  ['01', ['09', '10', '00'], ['01', '03', '05'], 25],
  ['02', ['09', '10', '76'], ['01', '07'], 15],
  ['03', ['01', '02', '03'], ['01'], 6],
  ['04', ['06', '07'], ['01', '02', '03'], 12],
  ['07', ['00'], ['01'], 5],
  ['14', ['22', '23', '26'], ['00', '15'], 8],
  ['15', ['09', '10'], ['01'], 3],
  ['16', ['40', '42', '43', '46'], ['00', '14'], 6],
  ['18', ['67', '68'], ['00', '01', '03'], 6],
  ['50', ['09', '10', '76'], ['01', '03'], 10],
  ['R4', ['N1', 'N4'], ['01', '28'], 4],
];
const ACTIVITY_DIST = new Weighted(ACTIVITIES.map((a) => [a, a[3]] as const));
const PROVIDER_POOLS = new Weighted<Pool>([[POOL.hospital, 75], [POOL.medicoSocial, 15], [POOL.healthCentre, 10]]);
const REGIONS = ['11', '24', '27', '28', '32', '44', '52', '53', '75', '76', '84', '93', '01', '02', '03', '04', '06'];

function provider(rng: Rng, orgs: OrgIndex): number {
  const members = orgs.pools[PROVIDER_POOLS.sample(rng)];
  if (members.length > 0) return members[skewedIndex(rng, members.length, 1.8)];
  const hospitals = orgs.pools[POOL.hospital];
  return hospitals.length > 0 ? hospitals[rng.int(hospitals.length)] : rng.int(orgs.count);
}

export function* healthcareServices(seed: number, count: number, orgs: OrgIndex): Generator<string> {
  const rng = new Rng(seed, 5);
  for (let k = 0; k < count; k++) {
    const [activity, modalities, forms] = ACTIVITY_DIST.sample(rng);
    const modality = rng.pick(modalities);
    const form = rng.pick(forms);
    const region = rng.pick(REGIONS);
    const arhgos = `${region}-${region}-${20000 + k}`;
    const start = dateWithin(rng, 15);
    const updated = lastUpdated(rng);
    const active = !rng.chance(HEALTHCARE_SERVICE_INACTIVE_SHARE);
    const provider_ = orgRef(orgs, provider(rng, orgs));
    const name = `${displayOf('TRE_R274-ActiviteSanitaireRegulee', activity)} - ${displayOf('TRE_R275-ModaliteActivite', modality)}`;
    yield `{"resourceType":"HealthcareService","id":"${healthcareServiceId(k)}","meta":${meta('HealthcareService', updated, 'FINESS', null)},"language":"fr"` +
      `,"extension":[{"url":"${EXT.hcsArhgos}","valueString":"${arhgos}"},{"url":"${EXT.hcsImplementationPeriod}","valuePeriod":{"start":"${isoDate(start)}","end":"${isoDate(addYears(start, 7))}"}}]` +
      `,"identifier":[{"value":"${arhgos}"}],"active":${active},"providedBy":${provider_}` +
      `,"category":[${conceptJson('TRE_R275-ModaliteActivite', modality, true)}]` +
      `,"type":[${conceptJson('TRE_R274-ActiviteSanitaireRegulee', activity, true)}]` +
      `,"characteristic":[${conceptJson('TRE_R276-FormeActivite', form, true)}]` +
      `,"name":${str(name)}}`;
  }
}
