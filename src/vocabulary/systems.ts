/**
 * The URIs of the directory's data: meta.source, identifier systems and code systems. Code
 * systems have a key: a NOS terminology's is its NOS key, from which its URL follows (nosUrl).
 */

/** meta.source of every resource of the directory. */
export const SOURCE = 'https://annuaire.sante.fr';

/** Identifier.system of the directory's identifiers. */
export const SYSTEM = {
  idnps: 'urn:oid:1.2.250.1.71.4.2.1',
  idnst: 'urn:oid:1.2.250.1.71.4.2.2',
  rpps: 'https://rpps.esante.gouv.fr',
  adeli: 'https://adeli.esante.gouv.fr',
  finess: 'https://finess.esante.gouv.fr',
  sirene: 'https://sirene.fr',
  rppsRang: 'https://rppsrang.esante.gouv.fr',
} as const;

/** The URL of a NOS terminology from its key: `https://mos.esante.gouv.fr/NOS/<key>/FHIR/<key with - for _>`. */
export function nosUrl(key: string): string {
  return `https://mos.esante.gouv.fr/NOS/${key}/FHIR/${key.replace(/_/g, '-')}`;
}

const nos = <K extends string>(...keys: K[]) => Object.fromEntries(keys.map((k) => [k, nosUrl(k)])) as Record<K, string>;
const FR_CORE_CS = 'https://hl7.fr/ig/fhir/core/CodeSystem';
const AS_CS = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem';

/** The code systems of the code tables (codes.ts), by key. */
export const CODE_SYSTEMS = {
  ...nos(
    'TRE_G15-ProfessionSante', 'TRE_R02-SecteurActivite', 'TRE_R09-CategorieProfessionnelle', 'TRE_R14-TypeDiplome',
    'TRE_R21-Fonction', 'TRE_R22-GenreActivite', 'TRE_R23-ModeExercice', 'TRE_R256-TypeMessagerie', 'TRE_R257-TypeBAL',
    'TRE_R38-SpecialiteOrdinale', 'TRE_R48-DiplomeEtatFrancais', 'TRE_R60-AutoriteEnregistrement',
    'TRE_R66-CategorieEtablissement', 'TRE_R72-FinessStatutJuridique', 'TRE_R73-ESPIC', 'TRE_R75-InseeNAFrev2Niveau5',
    'TRE_R87-TypeCarte', 'TRE_R272-EquipementMaterielLourd', 'TRE_R274-ActiviteSanitaireRegulee',
    'TRE_R275-ModaliteActivite', 'TRE_R276-FormeActivite',
  ),
  'fr-core-cs-v2-0203': `${FR_CORE_CS}/fr-core-cs-v2-0203`,
  'fr-core-cs-v2-3307': `${FR_CORE_CS}/fr-core-cs-v2-3307`,
  'as-cs-organization-types': `${AS_CS}/as-cs-organization-types`,
  'as-cs-type-etablissement': `${AS_CS}/as-cs-type-etablissement`,
  'as-cs-type-systeme-information': `${AS_CS}/as-cs-type-systeme-information`,
} as const;
export type SystemKey = keyof typeof CODE_SYSTEMS;

/** UCUM, the system of units (a Distance's `system`). */
export const UCUM = 'http://unitsofmeasure.org';

/** INSEE commune codes (TRE_R13): a system without a code table here. */
export const COMMUNE_SYSTEM = nosUrl('TRE_R13-Commune');

/** Frequently used code system URLs. */
export const URL = {
  idType: CODE_SYSTEMS['fr-core-cs-v2-0203'],
  r48: CODE_SYSTEMS['TRE_R48-DiplomeEtatFrancais'],
  r60: CODE_SYSTEMS['TRE_R60-AutoriteEnregistrement'],
  r256: CODE_SYSTEMS['TRE_R256-TypeMessagerie'],
} as const;
