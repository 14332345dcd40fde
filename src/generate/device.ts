// Devices: heavy equipment (EML: scanners, MRI, gamma cameras…) owned by geographical entities.
// `owner` is the reference indexed by the search parameter Device:organization.

import { EXT } from '../vocabulary/extensions.ts';
import { conceptJson, meta, str } from './fhir-common.ts';
import { deviceId } from './ids.ts';
import { orgRef, type OrgIndex } from './organization.ts';
import { Rng, skewedIndex, Weighted } from './prng.ts';
import { POOL, type Pool } from './professions.ts';
import { dateWithin, isoDate, lastUpdated } from './time.ts';
import { upperNoAccents } from './names.ts';

export const DEVICE_INACTIVE_SHARE = 0.05;

/** Equipment types (TRE_R272): scanners and MRI dominate. */
const TYPE = new Weighted([
  ['05602', 40], ['06201', 35], ['05701', 15], ['05702', 4], ['05705', 2], ['05706', 2], ['06301', 1], ['44901', 1],
] as const);

/** Plausible manufacturer → models, per equipment family (illustrative only). */
const MODELS: Record<string, ReadonlyArray<readonly [string, readonly string[]]>> = {
  ct: [
    ['GE HEALTHCARE', ['Revolution CT', 'Revolution EVO', 'Optima CT660']],
    ['SIEMENS HEALTHINEERS', ['SOMATOM go.Up', 'SOMATOM Force', 'SOMATOM Definition Edge']],
    ['PHILIPS', ['Incisive CT', 'IQon Spectral CT']],
    ['CANON MEDICAL SYSTEMS', ['Aquilion ONE', 'Aquilion Prime SP']],
  ],
  mri: [
    ['SIEMENS HEALTHINEERS', ['MAGNETOM Vida', 'MAGNETOM Sola', 'MAGNETOM Altea']],
    ['GE HEALTHCARE', ['SIGNA Premier', 'SIGNA Artist', 'SIGNA Explorer']],
    ['PHILIPS', ['Ingenia 1.5T', 'Ingenia Elition 3.0T']],
    ['CANON MEDICAL SYSTEMS', ['Vantage Orian', 'Vantage Galan 3T']],
    ['FUJIFILM', ['ECHELON Smart']],
  ],
  nuclear: [
    ['SIEMENS HEALTHINEERS', ['Symbia Intevo', 'Biograph Vision', 'Biograph mCT']],
    ['GE HEALTHCARE', ['Discovery NM/CT 670', 'Discovery MI', 'Omni Legend']],
    ['PHILIPS', ['Vereos']],
    ['SPECTRUM DYNAMICS', ['VERITON-CT']],
  ],
  cyclotron: [['IBA', ['Cyclone KIUBE']], ['GE HEALTHCARE', ['PETtrace 880']]],
  hyperbaric: [['HAUX', ['HAUX-STARMED']], ['COMEX', ['Caisson multiplace']]],
};
function family(code: string): string {
  if (code === '05602') return 'ct';
  if (code === '06201') return 'mri';
  if (code === '06301') return 'cyclotron';
  if (code === '44901') return 'hyperbaric';
  return 'nuclear';
}

const OWNER_POOLS = new Weighted<Pool>([[POOL.hospital, 90], [POOL.healthCentre, 5], [POOL.cabinetMedical, 5]]);
const REGIONS = ['11', '24', '27', '28', '32', '44', '52', '53', '75', '76', '84', '93', '01', '02', '03', '04', '06'];

function owner(rng: Rng, orgs: OrgIndex): number {
  const members = orgs.pools[OWNER_POOLS.sample(rng)];
  if (members.length > 0) return members[skewedIndex(rng, members.length, 2)];
  const hospitals = orgs.pools[POOL.hospital];
  return hospitals.length > 0 ? hospitals[rng.int(hospitals.length)] : rng.int(orgs.count);
}

export function* devices(seed: number, count: number, orgs: OrgIndex): Generator<string> {
  const rng = new Rng(seed, 4);
  for (let k = 0; k < count; k++) {
    const code = TYPE.sample(rng);
    const [manufacturer, models] = rng.pick(MODELS[family(code)]);
    const model = rng.pick(models);
    const region = rng.pick(REGIONS);
    const arhgos = `${region}-${region}-${1000 + k}`;
    let out = `{"resourceType":"Device","id":"${deviceId(k)}","meta":${meta('Device', lastUpdated(rng), 'FINESS', null)},"language":"fr"` +
      `,"extension":[{"url":"${EXT.deviceArhgos}","valueString":"${arhgos}"},{"url":"${EXT.deviceAuthorizationDate}","valueDate":"${isoDate(dateWithin(rng, 20))}"}]` +
      `,"identifier":[{"value":"${arhgos}"}],"status":"${rng.chance(DEVICE_INACTIVE_SHARE) ? 'inactive' : 'active'}","manufacturer":${str(manufacturer)}`;
    if (rng.chance(0.5)) out += `,"serialNumber":${str(`${upperNoAccents(model)} N ${rng.digits(6)}`)}`;
    out += `,"modelNumber":${str(model)},"type":${conceptJson('TRE_R272-EquipementMaterielLourd', code, true)},"owner":${orgRef(orgs, owner(rng, orgs))}}`;
    yield out;
  }
}
