/**
 * Fixture ids of the hand-checked dataset of fixtures/directory (see fixtures/README.md) that more
 * than one test file expects. Written out by hand from the fixtures, never computed through the server.
 */

/** The 30 practitioners of the dataset, in fixture order. */
export const PRACTITIONERS = [
  'pra-helene-lefevre', 'pra-helene-martin', 'pra-helene-dupont', 'pra-jean-lefevre', 'pra-paul-martin',
  'pra-sophie-martinez', 'pra-louis-martineau', 'pra-yann-le-gall', 'pra-anne-legall', 'pra-marie-le-gall',
  'pra-claire-gallet', 'pra-klaus-muller', 'pra-eve-muller', 'pra-lukasz-nowak', 'pra-agnes-coeur',
  'pra-jose-carreno', 'pra-francois-saint-martin', 'pra-eve-durand', 'pra-evelyne-petit', 'pra-severine-roux',
  'pra-anne-marie-dubois', 'pra-ines-obrien', 'pra-bernard-martin', 'pra-closed-10100000024', 'pra-closed-10100000025',
  'pra-chantal-perrin', 'pra-theo-blanc', 'pra-aurelie-francois', 'pra-emma-nguyen', 'pra-olivier-rousseau',
] as const;
/** The 25 organizations of the dataset, in fixture order. */
export const ORGANIZATIONS = [
  'org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin',
  'org-sas-clinique-saint-martin', 'org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc',
  'org-oeuvre-croix-saint-simon', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-cds-louvre', 'org-cabinet-paul-martin',
  'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall', 'org-labo-bio-etoile', 'org-hcl', 'org-hopital-edouard-herriot',
  'org-hopital-croix-rousse', 'org-ap-hm', 'org-hopital-timone', 'org-clinique-muller', 'org-maternite-des-lilas',
  'org-pharmacie-centrale', 'org-ehpad-les-tilleuls',
] as const;
/** The 40 practitioner roles of the dataset, in fixture order. */
export const ROLES = [
  'role-helene-lefevre-nord', 'role-helene-lefevre-bellevue', 'role-helene-martin-herriot', 'role-helene-dupont-cds-oeuvre',
  'role-jean-lefevre-cds-louvre', 'role-paul-martin-cabinet', 'role-paul-martin-remplacant', 'role-sophie-martinez-cabinet',
  'role-louis-martineau-herriot', 'role-louis-martineau-croix-rousse', 'role-yann-le-gall-cabinet', 'role-anne-legall-timone',
  'role-marie-le-gall-diaconesses', 'role-claire-gallet-lefevre', 'role-claire-gallet-faubourg', 'role-klaus-muller-clinique',
  'role-eve-muller-ehpad', 'role-lukasz-nowak-timone', 'role-agnes-coeur-faubourg', 'role-agnes-coeur-centrale',
  'role-jose-carreno-clinique', 'role-francois-saint-martin-diaconesses', 'role-eve-durand-timone', 'role-evelyne-petit-cds-louvre',
  'role-severine-roux-bellevue', 'role-anne-marie-dubois-nord', 'role-ines-obrien-cabinet-martinez', 'role-bernard-martin-cabinet',
  'role-bernard-martin-cds-oeuvre', 'role-closed-1000000030', 'role-closed-24-hcl', 'role-closed-25-lefevre',
  'role-chantal-perrin-ehpad', 'role-theo-blanc-herriot', 'role-aurelie-francois-cabinet', 'role-emma-nguyen-lefevre',
  'role-emma-nguyen-labo', 'role-olivier-rousseau-cabinet', 'role-helene-dupont-remplacement', 'role-evelyne-petit-conseil',
] as const;
/** The 8 organizations of type LEGAL-ENTITY. */
export const LEGAL_ENTITIES = ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall', 'org-hcl', 'org-ap-hm'] as const;
