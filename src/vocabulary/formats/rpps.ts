import { MAILBOX_COLUMNS, MSS_COLUMNS, MSS_SHARED_TEXTS } from './mssante.ts';

/**
 * The catalogue of the line-based open-data extracts: the RPPS's three kinds of file
 * ("PS_LibreAcces") and the MSSanté extraction (src/vocabulary/formats/mssante.ts), their
 * columns, and how a header line is recognised. A column has a stable key (what the rest of the
 * code reads) and the header texts it is known by; the first text is the one the generator writes.
 *
 * Files are recognised by meaning, never by name or position: header texts are folded (case,
 * accents, apostrophes, hyphens, spacing, the ` (coord. structure)` suffix), columns may come in
 * any order, and columns the catalogue does not know are ignored.
 */

/** Every column of any kind, by key. Texts are as seen in third-party readers of the real files. */
const COLUMNS = {
  typeIdentifiant: ["Type d'identifiant PP", ...MSS_SHARED_TEXTS.typeIdentifiant],
  identifiantPP: ['Identifiant PP'],
  idnps: ['Identification nationale PP'],
  codeCiviliteExercice: ["Code civilité d'exercice"],
  libelleCiviliteExercice: ['Libellé civilité exercice', "Libellé civilité d'exercice"],
  codeCivilite: ['Code civilité'],
  libelleCivilite: ['Libellé civilité'],
  nomExercice: ["Nom d'exercice"],
  prenomExercice: ["Prénom d'exercice"],
  codeProfession: ['Code profession'],
  libelleProfession: ['Libellé profession'],
  codeCategorie: ['Code catégorie professionnelle'],
  libelleCategorie: ['Libellé catégorie professionnelle'],
  codeTypeSavoirFaire: ['Code type savoir-faire'],
  libelleTypeSavoirFaire: ['Libellé type savoir-faire'],
  codeSavoirFaire: ['Code savoir-faire'],
  libelleSavoirFaire: ['Libellé savoir-faire'],
  codeModeExercice: ['Code mode exercice'],
  libelleModeExercice: ['Libellé mode exercice'],
  siret: ['Numéro SIRET site'],
  siren: ['Numéro SIREN site'],
  finessSite: ['Numéro FINESS site'],
  finessJuridique: ['Numéro FINESS établissement juridique'],
  structureId: ['Identifiant technique de la structure'],
  raisonSociale: ['Raison sociale site'],
  enseigne: ['Enseigne commerciale site'],
  complementDestinataire: ['Complément destinataire (coord. structure)'],
  complementPointGeographique: ['Complément point géographique (coord. structure)'],
  numeroVoie: ['Numéro Voie (coord. structure)'],
  indiceRepetitionVoie: ['Indice répétition voie (coord. structure)'],
  codeTypeVoie: ['Code type de voie (coord. structure)'],
  libelleTypeVoie: ['Libellé type de voie (coord. structure)'],
  libelleVoie: ['Libellé Voie (coord. structure)'],
  mentionDistribution: ['Mention distribution (coord. structure)'],
  bureauCedex: ['Bureau cedex (coord. structure)'],
  codePostal: ['Code postal (coord. structure)', ...MSS_SHARED_TEXTS.codePostal],
  codeCommune: ['Code commune (coord. structure)'],
  libelleCommune: ['Libellé commune (coord. structure)'],
  codePays: ['Code pays (coord. structure)'],
  libellePays: ['Libellé pays (coord. structure)'],
  telephone: ['Téléphone (coord. structure)'],
  telephone2: ['Téléphone 2 (coord. structure)'],
  telecopie: ['Télécopie (coord. structure)'],
  email: ['Adresse e-mail (coord. structure)'],
  codeDepartement: ['Code Département (structure)'],
  libelleDepartement: ['Libellé Département (structure)'],
  ancienIdentifiantStructure: ['Ancien identifiant de la structure'],
  autoriteEnregistrement: ["Autorité d'enregistrement"],
  codeSecteurActivite: ["Code secteur d'activité"],
  libelleSecteurActivite: ["Libellé secteur d'activité"],
  codeSectionPharmacien: ['Code section tableau pharmaciens'],
  libelleSectionPharmacien: ['Libellé section tableau pharmaciens'],
  codeFonction: ['Code fonction', 'Code rôle'],
  libelleFonction: ['Libellé fonction', 'Libellé rôle'],
  codeGenreActivite: ["Code genre d'activité", 'Code genre activité'],
  libelleGenreActivite: ["Libellé genre d'activité", 'Libellé genre activité'],
  codeTypeDiplome: ['Code type diplôme obtenu'],
  libelleTypeDiplome: ['Libellé type diplôme obtenu'],
  codeDiplome: ['Code diplôme obtenu'],
  libelleDiplome: ['Libellé diplôme obtenu'],
  codeTypeAutorisation: ['Code type autorisation'],
  libelleTypeAutorisation: ['Libellé type autorisation'],
  codeDisciplineAutorisation: ['Code discipline autorisation'],
  libelleDisciplineAutorisation: ['Libellé discipline autorisation'],
  ...MSS_COLUMNS,
} as const satisfies Record<string, readonly [string, ...string[]]>;

export type ColumnKey = keyof typeof COLUMNS;

const IDENTITY = ['typeIdentifiant', 'identifiantPP', 'idnps'] as const;
const PROFESSION = ['codeProfession', 'libelleProfession', 'codeCategorie', 'libelleCategorie'] as const;
const SAVOIR_FAIRE = ['codeTypeSavoirFaire', 'libelleTypeSavoirFaire', 'codeSavoirFaire', 'libelleSavoirFaire'] as const;

/**
 * The kinds, each with its columns in the order of the real file. `optional` columns may be absent:
 * the 52-column Personne_activite has no fonction nor genre d'activité, and the savoir-faire columns
 * are allowed to leave it for the SavoirFaire file (a third-party reader anticipates that). Every
 * other column is required, so that a renamed header fails loudly instead of importing empty values.
 */
export const KINDS = {
  activity: {
    file: 'Personne_activite',
    columns: [
      ...IDENTITY, 'codeCiviliteExercice', 'libelleCiviliteExercice', 'codeCivilite', 'libelleCivilite', 'nomExercice',
      'prenomExercice', ...PROFESSION, ...SAVOIR_FAIRE, 'codeModeExercice', 'libelleModeExercice', 'siret', 'siren',
      'finessSite', 'finessJuridique', 'structureId', 'raisonSociale', 'enseigne', 'complementDestinataire',
      'complementPointGeographique', 'numeroVoie', 'indiceRepetitionVoie', 'codeTypeVoie', 'libelleTypeVoie', 'libelleVoie',
      'mentionDistribution', 'bureauCedex', 'codePostal', 'codeCommune', 'libelleCommune', 'codePays', 'libellePays',
      'telephone', 'telephone2', 'telecopie', 'email', 'codeDepartement', 'libelleDepartement', 'ancienIdentifiantStructure',
      'autoriteEnregistrement', 'codeSecteurActivite', 'libelleSecteurActivite', 'codeSectionPharmacien',
      'libelleSectionPharmacien', 'codeFonction', 'libelleFonction', 'codeGenreActivite', 'libelleGenreActivite',
    ],
    optional: [...SAVOIR_FAIRE, 'codeFonction', 'libelleFonction', 'codeGenreActivite', 'libelleGenreActivite'],
  },
  savoirFaire: {
    file: 'SavoirFaire',
    columns: [...IDENTITY, 'nomExercice', 'prenomExercice', ...PROFESSION, ...SAVOIR_FAIRE],
    optional: [],
  },
  diploma: {
    file: 'Dipl_AutExerc',
    columns: [
      ...IDENTITY, 'nomExercice', 'prenomExercice', 'codeTypeDiplome', 'libelleTypeDiplome', 'codeDiplome', 'libelleDiplome',
      'codeTypeAutorisation', 'libelleTypeAutorisation', 'codeDisciplineAutorisation', 'libelleDisciplineAutorisation',
    ],
    optional: [],
  },
  mailbox: {
    file: 'Extraction_Correspondance_MSSante',
    columns: MAILBOX_COLUMNS,
    optional: [],
  },
} as const satisfies Record<string, { file: string; columns: readonly ColumnKey[]; optional: readonly ColumnKey[] }>;

export type FileKind = keyof typeof KINDS;
/** The RPPS's own kinds of file: the lines of persons and their activities. */
export type RppsKind = Exclude<FileKind, 'mailbox'>;
export const RPPS_KINDS: readonly RppsKind[] = ['activity', 'savoirFaire', 'diploma'];
export type KeyOf<K extends FileKind> = (typeof KINDS)[K]['columns'][number];
/** The values of one line, by column key (an absent optional column reads as ''). */
export type FieldsOf<K extends FileKind> = Record<KeyOf<K>, string>;

/** Columns of the 52-column Personne_activite (the older form, without fonction and genre d'activité). */
export const ACTIVITY_COLUMNS_52 = KINDS.activity.columns.slice(0, 52) as readonly KeyOf<'activity'>[];

/** The header text of a column that the generator writes. */
export function headerText(key: ColumnKey): string {
  return COLUMNS[key][0];
}

/**
 * A header text reduced to what it means: lower case, no accents, apostrophes and hyphens as spaces,
 * spacing collapsed, and the ` (coord. structure)` or ` (structure)` suffix dropped.
 */
export function foldHeader(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\s*\(\s*(coord\.?\s*)?structure\s*\)\s*$/, '')
    .replace(/['’‘ʼ`´-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const FOLDED = new Map<string, ColumnKey>();
for (const [key, texts] of Object.entries(COLUMNS) as [ColumnKey, readonly string[]][]) {
  for (const t of texts) {
    const f = foldHeader(t);
    const other = FOLDED.get(f);
    if (other !== undefined && other !== key) throw new Error(`header text "${t}" means both ${other} and ${key}`);
    FOLDED.set(f, key);
  }
}

export interface Recognised<K extends FileKind = FileKind> {
  kind: K;
  /** column key → field position; an optional column the header lacks has no entry. */
  index: Partial<Record<KeyOf<K>, number>>;
  /** the number of fields of the header, which every line must have. */
  width: number;
  /** whether the header line ends with `|`, as the RPPS files' lines do (set by the reader). */
  bar?: boolean;
}

const ALL_KINDS = Object.keys(KINDS) as FileKind[];
/** Per kind, the columns only other kinds have: a header with one of them is not of this kind. */
const FOREIGN = {} as Record<FileKind, ReadonlySet<ColumnKey>>;
for (const kind of ALL_KINDS) {
  const own = new Set<ColumnKey>(KINDS[kind].columns);
  FOREIGN[kind] = new Set(ALL_KINDS.flatMap((k) => KINDS[k].columns).filter((c) => !own.has(c)));
}

/** The field positions of each known column of a header. */
function positionsOf(headerFields: readonly string[]): Map<ColumnKey, number[]> {
  const positions = new Map<ColumnKey, number[]>();
  headerFields.forEach((text, i) => {
    const key = FOLDED.get(foldHeader(text));
    if (key !== undefined) positions.set(key, [...(positions.get(key) ?? []), i]);
  });
  return positions;
}

/** What keeps a header from being of a kind: required columns missing, columns named twice or foreign. */
function problems(kind: FileKind, positions: Map<ColumnKey, number[]>): { missing: ColumnKey[]; twice: ColumnKey[]; foreign: ColumnKey[] } {
  const { columns, optional } = KINDS[kind];
  return {
    missing: columns.filter((c) => !positions.has(c) && !(optional as readonly ColumnKey[]).includes(c)),
    twice: columns.filter((c) => (positions.get(c)?.length ?? 0) > 1),
    foreign: [...positions.keys()].filter((c) => FOREIGN[kind].has(c)),
  };
}

/**
 * The kind of file a header line announces, or undefined. A header is of a kind when it has every
 * required column of it, each once, and no column that only another kind has: so a Personne_activite
 * header (which holds every SavoirFaire column) that lost a column is not taken for a SavoirFaire one.
 */
export function recognise(headerFields: readonly string[]): Recognised | undefined {
  const positions = positionsOf(headerFields);
  for (const kind of ALL_KINDS) {
    const p = problems(kind, positions);
    if (p.missing.length || p.twice.length || p.foreign.length) continue;
    const index: Partial<Record<ColumnKey, number>> = {};
    for (const key of KINDS[kind].columns) if (positions.has(key)) index[key] = positions.get(key)![0];
    return { kind, index, width: headerFields.length };
  }
  return undefined;
}

/** Why a header is of no kind, told for the kind it comes closest to (for the report of a skipped file). */
export function whyUnrecognised(headerFields: readonly string[]): string {
  const positions = positionsOf(headerFields);
  const [kind] = ALL_KINDS.map((k) => [k, KINDS[k].columns.filter((c) => positions.has(c)).length] as const).sort((a, b) => b[1] - a[1])[0];
  if (!KINDS[kind].columns.some((c) => positions.has(c))) return 'no column of Personne_activite, SavoirFaire or Dipl_AutExerc';
  const p = problems(kind, positions);
  const list = (keys: ColumnKey[]) => keys.map((k) => `"${headerText(k)}"`).join(', ');
  const parts = [
    p.missing.length ? `without ${list(p.missing)}` : '',
    p.twice.length ? `with ${list(p.twice)} twice` : '',
    p.foreign.length ? `with ${list(p.foreign)}` : '',
  ].filter(Boolean);
  return `a ${KINDS[kind].file} header ${parts.join(', ')}`;
}
