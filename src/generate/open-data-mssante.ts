// The MSSanté extraction (Extraction_Correspondance_MSSante_YYYYMMDDhhmm.txt) of the synthetic
// directory: UTF-8, `|`-separated, one header line, 31 columns (docs: shared finess-mssante.md).
// PER mailboxes for ~45 % of the persons of the RPPS lines, with the structure of one of their
// activities; ORG mailboxes for FINESS establishments in service. A mailbox is a pure function of
// (seed, person or structure, its version): a change of the day is one mailbox gone and another new.

import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { FieldsOf } from '../vocabulary/formats/rpps.ts';
import { rppsNumber, sirenNumber, siretNumber } from './ids.ts';
import { FEMALE_DIST, familyName, foldAscii } from './names.ts';
import { extraCounts, extraEge, strHash } from './open-data-finess.ts';
import { version, type OpenDataModel, type StructureFields } from './open-data.ts';
import { hash32, Rng } from './prng.ts';

export const MSS_COLUMNS = [
  'Type de BAL', 'Adresse BAL', 'Type Identifiant PP', 'Identifiant PP', 'Identification nationale PP', 'Type identifiant structure',
  'Identification Structure', 'Service de rattachement', "Civilité d'exercice", "Nom d'exercice", "Prénom d'exercice", 'Catégorie profession',
  'Libellé de catégorie profession', 'Code Profession', 'Libellé Profession', 'Code savoir-faire', 'Libellé savoir-faire', 'Dématérialisation',
  'Raison Sociale structure BAL', 'Enseigne commerciale structure BAL', 'L2COMPLEMENTLOCALISATION', 'L3COMPLEMENTDISTRIBUTION',
  'L4NUMEROVOIE', 'L4COMPLEMENTNUMEROVOIE', 'NL4TYPEVOIE', 'L4LIBELLEVOIE', 'L5LIEUDITMENTION', 'L6LIGNEACHEMINEMENT', 'Code postal',
  'Département', 'Pays',
] as const;
/** The published copy's variant names the address columns (from L2COMPLEMENTLOCALISATION on) with this suffix. */
export const MSS_SUFFIX = ' structure BAL';
const FIRST_ADDRESS_COLUMN = MSS_COLUMNS.indexOf('L2COMPLEMENTLOCALISATION');
export type MssHeaderVariant = 'plain' | 'suffixed';
export const MSS_ZIP = 'Extraction_Correspondance_MSSante.zip';

/** Shares of mailboxes (of persons; of FINESS establishments in service: ~80,000 ORG at scale 1). */
const PER_SHARE = 0.45;
const ORG_SHARE = 0.75;
/** Shares of the file's traps, per line; each also occurs once, on an early line, so that tiny files have them all. */
const TRAP_SHARE = { duplicate: 0.0002, sameAddress: 0.0003, unknownPerson: 0.0002, unknownStructure: 0.0002, bad: 0.0002 } as const;
type MssTrap = keyof typeof TRAP_SHARE;
const TRAPS = Object.keys(TRAP_SHARE) as MssTrap[];
/** Share of structure identifiers written raw (the FINESS number alone) instead of the national id `1` + FINESS. */
const RAW_FINESS_SHARE = 0.1;
const STREAM = { per: 90, org: 91, trap: 92, header: 93 } as const;
const CHANGE = { per: 21, org: 22 } as const;
const SERVICES = ['SECRETARIAT', 'URGENCES', 'CARDIOLOGIE', 'PEDIATRIE', 'RADIOLOGIE', 'ACCUEIL', 'PHARMACIE', 'DIRECTION'];

export interface MssSummary {
  name: string;
  header: MssHeaderVariant;
  /** data lines written, traps included. */
  lines: number;
  per: number;
  org: number;
  traps: Record<MssTrap, number>;
  bytes: number;
}

export function mssFileName(stamp: string): string {
  return `Extraction_Correspondance_MSSante_${stamp}.txt`;
}

/** The header form of a day when none is asked for: the suffixed one about one day in four. */
export function mssHeaderOf(seed: number, day: number): MssHeaderVariant {
  return hash32(seed, STREAM.header, day) % 4 === 0 ? 'suffixed' : 'plain';
}

export function mssHeader(variant: MssHeaderVariant): string {
  return MSS_COLUMNS.map((c, i) => (variant === 'suffixed' && i >= FIRST_ADDRESS_COLUMN ? c + MSS_SUFFIX : c)).join('|');
}

const slug = (s: string) => foldAscii(s).replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 30);
const DOMAIN: Record<string, string> = { '10': 'medecin', '21': 'pharmacien', '60': 'infirmier', '40': 'chirurgien-dentiste', '50': 'sage-femme' };

/** The structure columns: the national structure id (1+FINESS, 3+SIRET, 4+rang) or, now and then, the FINESS number alone. */
function structureColumns(f: Pick<StructureFields, 'ancienIdentifiantStructure' | 'finessSite'>, r: Rng): [string, string] {
  const id = f.ancienIdentifiantStructure;
  if (!id) return ['', ''];
  return [id[0], f.finessSite && r.chance(RAW_FINESS_SHARE) ? f.finessSite : id];
}

type AddressFields = Pick<StructureFields, 'raisonSociale' | 'enseigne' | 'complementDestinataire' | 'complementPointGeographique' | 'numeroVoie'
  | 'indiceRepetitionVoie' | 'codeTypeVoie' | 'libelleVoie' | 'mentionDistribution' | 'bureauCedex' | 'codePostal' | 'libelleCommune' | 'codeDepartement' | 'libellePays'>;

function addressColumns(f: AddressFields): string[] {
  const town = f.libelleCommune ? `${f.codePostal} ${foldAscii(f.libelleCommune).replace(/-/g, ' ').toUpperCase()}` : '';
  return [
    f.raisonSociale, f.enseigne, f.complementDestinataire, f.complementPointGeographique, f.numeroVoie, f.indiceRepetitionVoie, f.codeTypeVoie,
    f.libelleVoie, f.mentionDistribution, f.bureauCedex || town, f.codePostal, f.codeDepartement, f.libellePays,
  ];
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(Buffer.from(text, 'utf8'))) await once(out, 'drain');
}

/** Writes the day's MSSanté extraction into `out`; same model and variant, same bytes. */
export async function writeMss(model: OpenDataModel, out: Writable, name: string, variant = mssHeaderOf(model.seed, model.day)): Promise<MssSummary> {
  const { seed, day, rate } = model;
  const summary: MssSummary = { name, header: variant, lines: 0, per: 0, org: 0, traps: { duplicate: 0, sameAddress: 0, unknownPerson: 0, unknownStructure: 0, bad: 0 }, bytes: 0 };
  const quirks = new Rng(seed, STREAM.trap, day);
  let batch = `${mssHeader(variant)}\n`;
  const push = (values: string[]) => {
    batch += `${values.join('|')}\n`;
    summary.lines++;
  };
  /** One mailbox line, then the traps drawn (or due) after it. */
  const emit = async (values: string[], strangers: () => string[][]) => {
    push(values);
    const mailboxes = summary.per + summary.org;
    for (const [t, trap] of TRAPS.entries()) {
      if (!(quirks.chance(TRAP_SHARE[trap]) || mailboxes === 3 * (t + 1))) continue;
      summary.traps[trap]++;
      if (trap === 'duplicate') push(values);
      // The same address on another line: the mailbox declared again with another service and dématérialisation.
      else if (trap === 'sameAddress') push(values.map((v, i) => (i === 7 ? SERVICES[(SERVICES.indexOf(v) + 2) % SERVICES.length] : i === 17 ? (v === 'True' ? 'False' : 'True') : v)));
      else if (trap === 'bad') push(quirks.chance(0.5) ? values.slice(0, -1) : [...values, '']);
      else push(strangers()[trap === 'unknownPerson' ? 0 : 1]);
    }
    if (batch.length >= 1 << 18) {
      summary.bytes += Buffer.byteLength(batch);
      await write(out, batch);
      batch = '';
    }
  };
  // A person no RPPS line names, and a structure no source names (its SIRET starts with 9, which no generated SIREN does).
  const strangers = (template: string[]) => () => {
    const n = quirks.int(1_000_000);
    const family = familyName(quirks).toUpperCase();
    const given = FEMALE_DIST.sample(quirks).toUpperCase();
    const rpps = rppsNumber(90_000_000 + n);
    const person = [...template];
    person.splice(0, 7, 'PER', `${foldAscii(given)}.${foldAscii(family)}@medecin.mssante.fr`, '8', rpps, `8${rpps}`, '', '');
    person.splice(9, 2, family, given);
    const siret = siretNumber(sirenNumber(9, n), 0);
    const structure = [...template];
    structure.splice(0, 7, 'ORG', `secretariat@${n.toString(36)}.mssante.fr`, '', '', '', '3', `3${siret}`);
    return [person, structure];
  };

  // PER: the lines of one person come together; the mailbox names the structure of one of them.
  let current: FieldsOf<'activity'>[] = [];
  const person = async () => {
    const first = current[0];
    const entity = strHash(first.idnps);
    const v = version(seed, CHANGE.per, entity, day, rate);
    const r = new Rng(hash32(seed, STREAM.per, v), STREAM.per, entity);
    if (!r.chance(PER_SHARE)) return;
    const a = current[r.int(current.length)];
    const hospital = a.finessSite && r.chance(0.5);
    const domain = hospital ? `${slug(a.raisonSociale)}.mssante.fr` : `${DOMAIN[a.codeProfession] ?? 'pro'}.mssante.fr`;
    const local = `${foldAscii(a.prenomExercice)}.${foldAscii(a.nomExercice)}${v ? `.${v}` : ''}.${a.identifiantPP.slice(-3)}`;
    const values = [
      'PER', `${local}@${domain}`, a.typeIdentifiant, a.identifiantPP, a.idnps, ...structureColumns(a, r), hospital && r.chance(0.4) ? r.pick(SERVICES) : '',
      a.codeCiviliteExercice, a.nomExercice, a.prenomExercice, a.codeCategorie, a.libelleCategorie, a.codeProfession, a.libelleProfession,
      a.codeSavoirFaire, a.libelleSavoirFaire, r.chance(0.7) ? 'True' : 'False', ...addressColumns(a),
    ];
    summary.per++;
    await emit(values, strangers(values));
  };
  for (const line of model.activityLines()) {
    if (current.length && current[0].idnps !== line.idnps) {
      await person();
      current = [];
    }
    current.push(line);
  }
  if (current.length) await person();

  // ORG: the model's FINESS structures, then the establishments in service that only FINESS names.
  const org = async (entity: number, f: AddressFields & Pick<StructureFields, 'ancienIdentifiantStructure' | 'finessSite'>) => {
    const v = version(seed, CHANGE.org, entity, day, rate);
    const r = new Rng(hash32(seed, STREAM.org, v), STREAM.org, entity);
    if (!r.chance(ORG_SHARE)) return;
    const service = r.chance(0.5) ? r.pick(SERVICES) : '';
    const address = `${slug(service || 'contact')}.${entity.toString(36)}${v ? `.${v}` : ''}@${slug(f.raisonSociale)}.mssante.fr`;
    const values = ['ORG', address, '', '', '', ...structureColumns(f, r), service, '', '', '', '', '', '', '', '', '', r.chance(0.3) ? 'True' : 'False', ...addressColumns(f)];
    summary.org++;
    await emit(values, strangers(values));
  };
  for (let j = 0; j < model.structureCount; j++) if (model.isFiness(j)) await org(j, model.structureOn(j).fields);
  const extras = extraCounts(model);
  for (let k = 0; k < extras.total; k++) {
    const e = extraEge(model, k, extras.base);
    if (e.closed !== undefined) continue;
    const p = e.place;
    await org(model.structureCount + k, {
      raisonSociale: e.name, enseigne: '', complementDestinataire: '', complementPointGeographique: '', numeroVoie: p.numeroVoie ?? '',
      indiceRepetitionVoie: '', codeTypeVoie: p.typeVoie ?? '', libelleVoie: p.libelleVoie ?? '', mentionDistribution: p.lieuDit ?? '', bureauCedex: '',
      codePostal: p.codePostal, libelleCommune: p.city.name, codeDepartement: p.city.dept, libellePays: '',
      ancienIdentifiantStructure: `1${e.finess}`, finessSite: e.finess,
    });
  }
  summary.bytes += Buffer.byteLength(batch);
  await write(out, batch);
  return summary;
}
