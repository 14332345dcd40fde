/**
 * The MSSanté extraction (`Extraction_Correspondance_MSSante_*.txt`): one `|`-separated line per
 * secure mailbox, 31 columns. Its columns join the RPPS catalogue (src/vocabulary/formats/rpps.ts),
 * which recognises its header by meaning like the RPPS files': the columns both sources name alike
 * (Identifiant PP, Nom d'exercice, Code profession…) share their key.
 *
 * The published copies name the address columns with or without a ` structure BAL` suffix: both
 * texts are listed.
 */

const BAL = ' structure BAL';
const both = (text: string): [string, string] => [text, `${text}${BAL}`];

/** The columns only the MSSanté extraction has, by key: the first text is the one the generator writes. */
export const MSS_COLUMNS = {
  typeBal: ['Type de BAL'],
  adresseBal: ['Adresse BAL'],
  typeIdentifiantStructure: ['Type identifiant structure'],
  identificationStructure: ['Identification Structure'],
  serviceRattachement: ['Service de rattachement'],
  civiliteExercice: ["Civilité d'exercice"],
  categorieProfession: ['Catégorie profession'],
  libelleCategorieProfession: ['Libellé de catégorie profession'],
  dematerialisation: ['Dématérialisation'],
  raisonSocialeBal: ['Raison Sociale structure BAL'],
  enseigneBal: ['Enseigne commerciale structure BAL'],
  l2ComplementLocalisation: both('L2COMPLEMENTLOCALISATION'),
  l3ComplementDistribution: both('L3COMPLEMENTDISTRIBUTION'),
  l4NumeroVoie: both('L4NUMEROVOIE'),
  l4ComplementNumeroVoie: both('L4COMPLEMENTNUMEROVOIE'),
  l4TypeVoie: both('NL4TYPEVOIE'),
  l4LibelleVoie: both('L4LIBELLEVOIE'),
  l5LieuDit: both('L5LIEUDITMENTION'),
  l6LigneAcheminement: both('L6LIGNEACHEMINEMENT'),
  departement: both('Département'),
  pays: both('Pays'),
} as const satisfies Record<string, readonly [string, ...string[]]>;

/** Header texts of the MSSanté extraction for columns the RPPS files also have (added to their keys). */
export const MSS_SHARED_TEXTS = {
  typeIdentifiant: ['Type Identifiant PP'],
  codePostal: [`Code postal${BAL}`],
} as const;

/** The columns of a mailbox line, in the order of the real file. */
export const MAILBOX_COLUMNS = [
  'typeBal', 'adresseBal', 'typeIdentifiant', 'identifiantPP', 'idnps', 'typeIdentifiantStructure', 'identificationStructure',
  'serviceRattachement', 'civiliteExercice', 'nomExercice', 'prenomExercice', 'categorieProfession', 'libelleCategorieProfession',
  'codeProfession', 'libelleProfession', 'codeSavoirFaire', 'libelleSavoirFaire', 'dematerialisation', 'raisonSocialeBal',
  'enseigneBal', 'l2ComplementLocalisation', 'l3ComplementDistribution', 'l4NumeroVoie', 'l4ComplementNumeroVoie', 'l4TypeVoie',
  'l4LibelleVoie', 'l5LieuDit', 'l6LigneAcheminement', 'codePostal', 'departement', 'pays',
] as const;

/** The mailbox types the extraction holds (TRE_R257-TypeBAL): a personal one, an organisation's. */
export const MAILBOX_TYPES = ['PER', 'ORG'] as const;
export type MailboxType = (typeof MAILBOX_TYPES)[number];
