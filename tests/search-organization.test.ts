/**
 * Organization search, v2 (seed §4.5) and v1 (seed §4.7, deprecated), on the hand-checked dataset of
 * fixtures/directory (see fixtures/README.md). Expected ids are written out by hand.
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { LEGAL_ENTITIES, ORGANIZATIONS } from './helpers/directory-ids.ts';
import { API_KEY, searchHelpers, type A, type Bundle } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
await load(db, [path.join(FIXTURES, 'directory')]);
const { get, matchIds, expectIds, table, expect400, expectEntries } = searchHelpers(app, { key: API_KEY });
const v2 = (tt: A, rows: [string, string[]][]) => table(tt, rows, '/fhir/v2/Organization?');
const v1 = (tt: A, rows: [string, string[]][]) => table(tt, rows, '/fhir/v1/Organization?');

const ALL: string[] = [...ORGANIZATIONS];
const except = (...ids: string[]) => ALL.filter((id) => !ids.includes(id));
const PARIS = ['org-pharmacie-faubourg-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-cds-louvre', 'org-cabinet-paul-martin', 'org-labo-bio-etoile', 'org-pharmacie-centrale'];
const LEGAL: string[] = [...LEGAL_ENTITIES];
const GEO = [
  'org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin', 'org-pharmacie-faubourg-saint-martin',
  'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-cds-louvre', 'org-labo-bio-etoile',
  'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone', 'org-clinique-muller', 'org-pharmacie-centrale',
  'org-ehpad-les-tilleuls',
];
const R02 = 'https://mos.esante.gouv.fr/NOS/TRE_R02-SecteurActivite/FHIR/TRE-R02-SecteurActivite';
const R66 = 'https://mos.esante.gouv.fr/NOS/TRE_R66-CategorieEtablissement/FHIR/TRE-R66-CategorieEtablissement';
const R72 = 'https://mos.esante.gouv.fr/NOS/TRE_R72-FinessStatutJuridique/FHIR/TRE-R72-FinessStatutJuridique';
const R73 = 'https://mos.esante.gouv.fr/NOS/TRE_R73-ESPIC/FHIR/TRE-R73-ESPIC';
const R75 = 'https://mos.esante.gouv.fr/NOS/TRE_R75-InseeNAFrev2Niveau5/FHIR/TRE-R75-InseeNAFrev2Niveau5';

t.test('all organizations', async (t) => {
  t.equal(ALL.length, 25);
  t.same([...LEGAL, ...GEO, 'org-maternite-des-lilas'].sort(), [...ALL].sort(), 'legal + geographical + the tombstone');
  await expectIds(t, '/fhir/v2/Organization', ALL);
  await expectIds(t, '/fhir/v1/Organization', ALL);
});

t.test('name: corporate name and alias, folded starts-with, :contains, :exact', (t) =>
  v2(t, [
    ['name=hopital', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-diaconesses', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    ['name=hôpital', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-diaconesses', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    ['name=HÔPITAL', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-diaconesses', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    ['name=hopital de la', ['org-hopital-croix-rousse', 'org-hopital-timone']],
    ['name=hopital de la croix', ['org-hopital-croix-rousse']],
    ['name=chu', ['org-chu-saint-etienne']], // alias "CHU DE SAINT-ÉTIENNE"; "HÔPITAL NORD - CHU …" does not start with it
    ['name=centre', ['org-chu-saint-etienne', 'org-cds-oeuvre', 'org-cds-louvre']],
    ['name=centre de sante', ['org-cds-oeuvre', 'org-cds-louvre']],
    ['name=oeuvre', ['org-oeuvre-croix-saint-simon']],
    ['name=œuvre', ['org-oeuvre-croix-saint-simon']],
    ['name=ŒUVRE', ['org-oeuvre-croix-saint-simon']],
    ['name:contains=oeuvre', ['org-oeuvre-croix-saint-simon', 'org-cds-oeuvre']],
    ['name:contains=œuvre', ['org-oeuvre-croix-saint-simon', 'org-cds-oeuvre']],
    ['name:exact=ŒUVRE DE LA CROIX SAINT-SIMON', ['org-oeuvre-croix-saint-simon']],
    ['name:exact=Œuvre de la Croix Saint-Simon', []],
    ['name:exact=OEUVRE DE LA CROIX SAINT-SIMON', []],
    ["name:exact=Centre de santé de l'Œuvre", ['org-cds-oeuvre']],
    ['name=pharmacie', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale']],
    ['name=pharmacie,clinique', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale', 'org-clinique-saint-martin', 'org-clinique-muller']],
    ['name=pharmacie&active=true', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc']],
    ['name=saint', []],
    ['name:contains=saint', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-clinique-saint-martin', 'org-sas-clinique-saint-martin', 'org-pharmacie-faubourg-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hopital-diaconesses']],
    ['name:contains=saint-martin', ['org-clinique-saint-martin', 'org-sas-clinique-saint-martin', 'org-pharmacie-faubourg-saint-martin']],
    ['name:contains=martin', ['org-clinique-saint-martin', 'org-sas-clinique-saint-martin', 'org-pharmacie-faubourg-saint-martin', 'org-cabinet-paul-martin', 'org-cabinet-martinez']],
    ['name:contains=marseille,lyon', ['org-hcl', 'org-ap-hm']],
    ['name=ap-hm', ['org-ap-hm']],
    ['name=ap hm', ['org-ap-hm']],
    ['name=aphm', []],
    ['name=hcl', ['org-hcl']],
    ['name=clinique', ['org-clinique-saint-martin', 'org-clinique-muller']],
    ['name=muller', []], // "CLINIQUE MÜLLER" starts with "clinique"
    ['name:contains=muller', ['org-clinique-muller']],
    ['name:contains=müller', ['org-clinique-muller']],
    ['name=clinique muller', ['org-clinique-muller']],
    ['name:exact=CLINIQUE MÜLLER', ['org-clinique-muller']],
    ['name:exact=CLINIQUE MULLER', []],
    ['name=maternite', ['org-maternite-des-lilas']], // a tombstone keeps its name
    ['name=lefevre', ['org-pharmacie-lefevre']],
    ['name=lefevre gallet', ['org-pharmacie-lefevre']],
    ['name:exact=LEFÈVRE\\, GALLET ET ASSOCIÉS', ['org-pharmacie-lefevre']], // escaped comma: one value
    ['name:exact=LEFÈVRE, GALLET ET ASSOCIÉS', []], // unescaped: "LEFÈVRE" OR " GALLET ET ASSOCIÉS"
    ['name:missing=false', ALL],
    ['name:missing=true', []],
  ]));

t.test('address, address-city, address-postalcode, address-line', (t) =>
  v2(t, [
    ['address-city=paris', PARIS],
    ['address-city=PARIS', PARIS],
    ['address-city:exact=Paris', ['org-cds-oeuvre']],
    ['address-city:exact=PARIS', PARIS.filter((id) => id !== 'org-cds-oeuvre')],
    ['address-city=lyon', ['org-pharmacie-lefevre', 'org-cabinet-martinez', 'org-hcl', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['address-city=lyon cedex', ['org-hcl']],
    ['address-city=marseille', ['org-pharmacie-du-parc', 'org-cabinet-dentaire-le-gall', 'org-ap-hm', 'org-hopital-timone']],
    ['address-city=saint-etienne', ['org-chu-saint-etienne', 'org-hopital-bellevue']],
    ['address-city=saint étienne', ['org-chu-saint-etienne', 'org-hopital-bellevue']],
    ['address-city=SAINT-ÉTIENNE', ['org-chu-saint-etienne', 'org-hopital-bellevue']],
    ['address-city=st-etienne', ['org-ehpad-les-tilleuls']],
    ['address-city=st', ['org-ehpad-les-tilleuls', 'org-clinique-muller']], // ST-ÉTIENNE, STRASBOURG
    ['address-city=saint', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin', 'org-sas-clinique-saint-martin']],
    ['address-city=saint-martin', ['org-clinique-saint-martin', 'org-sas-clinique-saint-martin']],
    ["address-city=saint-martin-d'heres", ['org-clinique-saint-martin', 'org-sas-clinique-saint-martin']],
    ['address-city=saint martin d heres', ['org-clinique-saint-martin', 'org-sas-clinique-saint-martin']],
    ['address-city:exact=Saint-Étienne', ['org-hopital-bellevue']],
    ['address-city:exact=SAINT-ÉTIENNE', ['org-chu-saint-etienne']],
    ['address-city:exact=saint-etienne', []],
    ['address-city:contains=etienne', ['org-chu-saint-etienne', 'org-hopital-bellevue', 'org-ehpad-les-tilleuls']],
    ['address-city:missing=true', ['org-maternite-des-lilas']],
    ['address-postalcode=75', PARIS],
    ['address-postalcode=7500', ['org-cds-louvre', 'org-cabinet-paul-martin']],
    ['address-postalcode=7501', ['org-pharmacie-faubourg-saint-martin', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-labo-bio-etoile', 'org-pharmacie-centrale']],
    ['address-postalcode=75014', ['org-cds-oeuvre', 'org-pharmacie-centrale']],
    ['address-postalcode:exact=75014', ['org-cds-oeuvre', 'org-pharmacie-centrale']],
    ['address-postalcode:exact=7501', []],
    ['address-postalcode:exact=75001,69003', ['org-cds-louvre', 'org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-postalcode=69', ['org-pharmacie-lefevre', 'org-cabinet-martinez', 'org-hcl', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['address-postalcode=69003', ['org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-postalcode=69424', ['org-hcl']], // second address of the HCL
    ['address-postalcode=13', ['org-pharmacie-du-parc', 'org-cabinet-dentaire-le-gall', 'org-ap-hm', 'org-hopital-timone']],
    ['address-postalcode=13001', ['org-pharmacie-du-parc']],
    ['address-postalcode=42', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-ehpad-les-tilleuls']],
    ['address-postalcode=420', ['org-chu-saint-etienne', 'org-ehpad-les-tilleuls']],
    ['address-postalcode=4200', ['org-ehpad-les-tilleuls']],
    ['address-postalcode:contains=001', ['org-pharmacie-du-parc', 'org-cds-louvre']],
    ['address-postalcode=75014&address-city=paris', ['org-cds-oeuvre', 'org-pharmacie-centrale']],
    ['address-postalcode=69003&address-city=lyon', ['org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-postalcode=42&address-city=saint-etienne', ['org-chu-saint-etienne', 'org-hopital-bellevue']],
    ['address=paris', PARIS],
    ['address=75014', ['org-cds-oeuvre', 'org-pharmacie-centrale']],
    ['address=france', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne']],
    ['address=auvergne', ['org-chu-saint-etienne', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address=12 rue', ['org-pharmacie-faubourg-saint-martin']],
    ['address=faubourg', []],
    ['address:contains=faubourg', ['org-pharmacie-faubourg-saint-martin']],
    ['address:contains=croix', ['org-oeuvre-croix-saint-simon', 'org-hopital-croix-rousse']],
    ['address=cs 33569', ['org-hcl']],
    ['address=work', []], // use is not part of the address string search
    ['address:exact=BATIMENT A\\, 25 BOULEVARD PASTEUR', ['org-hopital-bellevue']],
    ['address:exact=BATIMENT A, 25 BOULEVARD PASTEUR', []],
    ['address-line=12 rue du faubourg', ['org-pharmacie-faubourg-saint-martin']],
  ]));

t.test('identifier and identifier-type: FINESS, SIREN, SIRET, IDNST, RPPS-rang', (t) =>
  v2(t, [
    ['identifier=420784878', ['org-chu-saint-etienne']],
    ['identifier=https://finess.esante.gouv.fr|420784878', ['org-chu-saint-etienne']],
    ['identifier=https%3A%2F%2Ffiness.esante.gouv.fr%7C420784878', ['org-chu-saint-etienne']],
    ['identifier=https://sirene.fr|420784878', []],
    ['identifier=http://finess.sante.gouv.fr|420784878', []], // the v1 system means nothing in v2
    ['identifier=1420784878', ['org-chu-saint-etienne']],
    ['identifier=264200543', ['org-chu-saint-etienne']],
    ['identifier=26420054300011', ['org-hopital-nord-saint-etienne']],
    ['identifier=42078487', []],
    ['identifier=420784878,690781810', ['org-chu-saint-etienne', 'org-hcl']],
    ['identifier=420784878\\,690781810', []],
    ['identifier=https://sirene.fr|', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hopital-diaconesses', 'org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-labo-bio-etoile', 'org-hcl', 'org-ap-hm']],
    ['identifier=https://rppsrang.esante.gouv.fr|', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']],
    ['identifier=https://rppsrang.esante.gouv.fr|10100000005001', ['org-cabinet-paul-martin']],
    ['identifier=urn:oid:1.2.250.1.71.4.2.2|410100000008001', ['org-cabinet-dentaire-le-gall']],
    ['identifier=750000123', ['org-maternite-des-lilas']],
    ['identifier-type=FINEJ', ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm']],
    ['identifier-type=FINEG', [...GEO, 'org-maternite-des-lilas']],
    ['identifier-type=SIREN', ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-cabinet-martinez', 'org-hcl', 'org-ap-hm']],
    ['identifier-type=SIRET', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-diaconesses', 'org-cabinet-paul-martin', 'org-labo-bio-etoile']],
    ['identifier-type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-0203|RPPSRG', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']],
    ['identifier-type=IDNST', ALL],
    ['identifier-type=FINEJ,RPPSRG', ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm', 'org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']],
    ['identifier-type=SIREN&identifier-type=FINEJ', ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm']],
    ['identifier-type:not=FINEG', LEGAL],
  ]));

t.test('active, _id', (t) =>
  v2(t, [
    ['active=false', ['org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['active=true', except('org-maternite-des-lilas', 'org-pharmacie-centrale')],
    ['active:not=true', ['org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['_id=org-hcl', ['org-hcl']],
    ['_id=org-hcl,org-ap-hm', ['org-hcl', 'org-ap-hm']],
    ['_id=ORG-HCL', []],
  ]));

t.test('type: organization type, sector, category, legal status, SPH, NAF, establishment type', (t) =>
  v2(t, [
    ['type=GEOGRAPHICAL-ENTITY', GEO],
    ['type=LEGAL-ENTITY', LEGAL],
    ['type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307|LEGAL-ENTITY', LEGAL],
    ['type=https://hl7.fr/ig/fhir/core/CodeSystem/fr-core-cs-v2-3307%7CGEOGRAPHICAL-ENTITY', GEO],
    ['type=http://interopsante.org/fhir/CodeSystem/fr-v2-3307|LEGAL-ENTITY', []],
    ['type=geographical-entity', []],
    ['type=|GEOGRAPHICAL-ENTITY', []], // every type coding has a system
    ['type:not=GEOGRAPHICAL-ENTITY', [...LEGAL, 'org-maternite-des-lilas']],
    ['type:missing=true', ['org-maternite-des-lilas']],
    ['type=SA01', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    [`type=${R02}|SA33`, ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale']],
    ['type=SA05,SA07', ['org-cds-oeuvre', 'org-cds-louvre', 'org-cabinet-paul-martin', 'org-cabinet-dentaire-le-gall']],
    [`type=${R02}|`, except('org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm', 'org-maternite-des-lilas')],
    ['type=101', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone', 'org-cabinet-martinez']],
    [`type=${R66}|101`, ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    [`type=${R72}|101`, ['org-cabinet-martinez']],
    [`type=${R72}|13`, ['org-chu-saint-etienne', 'org-hcl', 'org-ap-hm']],
    ['type=13', ['org-chu-saint-etienne', 'org-hcl', 'org-ap-hm']],
    [`type=${R73}|6`, ['org-hopital-diaconesses']],
    [`type=${R73}|1`, ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    [`type=${R73}|0`, ['org-clinique-saint-martin', 'org-clinique-muller']],
    ['type=86.10Z', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin', 'org-hopital-diaconesses', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone', 'org-clinique-muller']],
    [`type=${R75}|47.73Z`, ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale']],
    ['type=86.21Z', ['org-cds-oeuvre', 'org-cds-louvre', 'org-cabinet-paul-martin']],
    ['type=P', ['org-hopital-nord-saint-etienne', 'org-hopital-edouard-herriot']],
    ['type=https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem/as-cs-type-etablissement|S', ['org-hopital-bellevue', 'org-hopital-croix-rousse']],
    ['type=SA01&type=P', ['org-hopital-nord-saint-etienne', 'org-hopital-edouard-herriot']],
    ['type=SA33&active=true', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc']],
    ['type=LEGAL-ENTITY&address-city=lyon', ['org-cabinet-martinez', 'org-hcl']],
  ]));

t.test('partof: id, Type/id, absolute URL of this server, :Organization, chains', (t) =>
  v2(t, [
    ['partof=org-chu-saint-etienne', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue']],
    ['partof=Organization/org-hcl', ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['partof=http://fhir.test/fhir/v2/Organization/org-chu-saint-etienne', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue']],
    ['partof=http%3A%2F%2Ffhir.test%2Ffhir%2Fv2%2FOrganization%2Forg-hcl', ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['partof=http://other.example/fhir/Organization/org-chu-saint-etienne', []],
    ['partof:Organization=org-ap-hm', ['org-hopital-timone']],
    ['partof=org-chu-saint-etienne,org-oeuvre-croix-saint-simon', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-diaconesses', 'org-cds-oeuvre']],
    ['partof=Practitioner/pra-paul-martin', []],
    ['partof=org-hopital-nord-saint-etienne', []],
    ['partof:missing=false', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
    ['partof:missing=true', except('org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone')],
    ['partof.identifier=420784878', ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue']],
    ['partof.identifier=https://finess.esante.gouv.fr|690781810', ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['partof.name=hospices', ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['partof.name=oeuvre', ['org-hopital-diaconesses', 'org-cds-oeuvre']],
    [`partof.type=${R72}|61`, ['org-hopital-diaconesses', 'org-cds-oeuvre']],
    ['partof:Organization.identifier=130786049', ['org-hopital-timone']],
    ['partof.identifier=420784878&type=P', ['org-hopital-nord-saint-etienne']],
  ]));

t.test('data-information-system, data-registration-authority', (t) =>
  v2(t, [
    ['data-information-system=FINESS', except('org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall', 'org-labo-bio-etoile', 'org-clinique-muller')],
    ['data-information-system=RPPS', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']],
    ['data-information-system=CG', ['org-labo-bio-etoile']],
    ['data-information-system=RPPS,CG', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall', 'org-labo-bio-etoile']],
    ['data-information-system:missing=true', ['org-clinique-muller']],
    ['data-registration-authority=ARS-84', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-clinique-saint-martin', 'org-sas-clinique-saint-martin', 'org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-ehpad-les-tilleuls']],
    ['data-registration-authority=ARS-11', ['org-pharmacie-faubourg-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-cds-louvre', 'org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['data-registration-authority=https://mos.esante.gouv.fr/NOS/TRE_R60-AutoriteEnregistrement/FHIR/TRE-R60-AutoriteEnregistrement|ARS-93', ['org-pharmacie-du-parc', 'org-ap-hm', 'org-hopital-timone']],
    ['data-registration-authority=CNOMK', ['org-cabinet-martinez']],
  ]));

t.test('mailbox-mss (MSS only; plain contact e-mails are not mailboxes), pharmacy-licence', (t) =>
  v2(t, [
    ['mailbox-mss=accueil', ['org-cds-louvre']], // accueil@pharmacie-lefevre.fr is a plain e-mail
    ['mailbox-mss=contact', []],
    ['mailbox-mss=direction', ['org-chu-saint-etienne']],
    ['mailbox-mss=secretariat', ['org-hopital-edouard-herriot']],
    ['mailbox-mss:contains=chu', ['org-chu-saint-etienne', 'org-hopital-edouard-herriot']],
    ['mailbox-mss:contains=lefevre', []],
    ['mailbox-mss:exact=accueil@cds-louvre.mssante.fr', ['org-cds-louvre']],
    ['mailbox-mss:missing=false', ['org-chu-saint-etienne', 'org-pharmacie-faubourg-saint-martin', 'org-cds-louvre', 'org-cabinet-paul-martin', 'org-hopital-edouard-herriot']],
    ['pharmacy-licence=75', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-centrale']],
    ['pharmacy-licence=75%23001234', ['org-pharmacie-faubourg-saint-martin']],
    ['pharmacy-licence=75 001234', ['org-pharmacie-faubourg-saint-martin']],
    ['pharmacy-licence:exact=75%23001234', ['org-pharmacie-faubourg-saint-martin']],
    ['pharmacy-licence:exact=75 001234', []],
    ['pharmacy-licence=69%23000815', ['org-pharmacie-lefevre']],
    ['pharmacy-licence:contains=000', ['org-pharmacie-lefevre', 'org-pharmacie-centrale']],
    ['pharmacy-licence:missing=false', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale']],
    ['pharmacy-licence=75&active=true', ['org-pharmacie-faubourg-saint-martin']],
  ]));

t.test('_lastUpdated on Organization', (t) =>
  v2(t, [
    ['_lastUpdated=2024-03-15', ['org-chu-saint-etienne', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['_lastUpdated=2024-03-14', []],
    ['_lastUpdated=2024-03-16', ['org-hopital-nord-saint-etienne']],
    ['_lastUpdated=ge2025-01-01', ['org-cds-louvre', 'org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['_lastUpdated=2024-11-02', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc']],
    ['_lastUpdated=eq2024-11-02T10:00:00Z', ['org-pharmacie-lefevre']],
    ['_lastUpdated=2024-11-02T10:00:00%2B01:00', ['org-pharmacie-faubourg-saint-martin']],
    ['_lastUpdated=2024-06', ['org-cabinet-martinez']],
    ['_lastUpdated=2024-07', ['org-cabinet-dentaire-le-gall']],
    ['_lastUpdated=lt2022', ['org-hcl', 'org-ap-hm', 'org-clinique-muller']],
    ['_lastUpdated=2021', ['org-hcl', 'org-ap-hm']],
    ['_lastUpdated=2020-02-29', ['org-clinique-muller']],
  ]));

t.test('_has:PractitionerRole:organization:…', (t) =>
  v2(t, [
    ['_has:PractitionerRole:organization:role=FON-03', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-centrale']],
    ['_has:PractitionerRole:organization:active=false', ['org-pharmacie-faubourg-saint-martin', 'org-cds-louvre', 'org-cabinet-paul-martin', 'org-hcl', 'org-pharmacie-centrale']],
    ['_has:PractitionerRole:organization:role=FON-01&_has:PractitionerRole:organization:active=false', ['org-cabinet-paul-martin']],
    ['_has:PractitionerRole:organization:practitioner=pra-paul-martin', ['org-cds-louvre', 'org-cabinet-paul-martin']],
    ['_has:PractitionerRole:organization:practitioner.family=martin', ['org-cds-oeuvre', 'org-cds-louvre', 'org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['_has:PractitionerRole:organization:role=FON-40', ['org-labo-bio-etoile']],
    ['_has:PractitionerRole:organization:role=FON-03,FON-40&active=true', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-labo-bio-etoile']],
  ]));

t.test('_include / _revinclude on Organization', async (t) => {
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-nord-saint-etienne&_include=Organization:partof', ['org-hopital-nord-saint-etienne'], ['Organization/org-chu-saint-etienne']);
  await expectEntries(t, '/fhir/v2/Organization?partof=org-hcl&_include=Organization:partof', ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse'], ['Organization/org-hcl']);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hcl,org-hopital-edouard-herriot&_include=Organization:partof', ['org-hcl', 'org-hopital-edouard-herriot'], []);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hcl&_include=Organization:partof', ['org-hcl'], []);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-edouard-herriot&_revinclude=PractitionerRole:organization', ['org-hopital-edouard-herriot'],
    ['PractitionerRole/role-helene-martin-herriot', 'PractitionerRole/role-louis-martineau-herriot', 'PractitionerRole/role-theo-blanc-herriot']);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-edouard-herriot&_revinclude=Device:organization', ['org-hopital-edouard-herriot'], ['Device/dev-irm-herriot']);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-edouard-herriot&_revinclude=HealthcareService:organization', ['org-hopital-edouard-herriot'], ['HealthcareService/hs-dialyse-herriot']);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-edouard-herriot&_revinclude=Device:organization&_revinclude=HealthcareService:organization&_include=Organization:partof',
    ['org-hopital-edouard-herriot'], ['Device/dev-irm-herriot', 'HealthcareService/hs-dialyse-herriot', 'Organization/org-hcl']);
  // _include=*: the partof parent and every PractitionerRole, Device, HealthcareService and Location referencing the match
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-nord-saint-etienne&_include=*', ['org-hopital-nord-saint-etienne'], [
    'Organization/org-chu-saint-etienne', 'PractitionerRole/role-helene-lefevre-nord', 'PractitionerRole/role-anne-marie-dubois-nord',
    'Device/dev-scanner-nord', 'HealthcareService/hs-urgences-nord']);
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hopital-edouard-herriot&_include=*', ['org-hopital-edouard-herriot'], [
    'Organization/org-hcl', 'PractitionerRole/role-helene-martin-herriot', 'PractitionerRole/role-louis-martineau-herriot',
    'PractitionerRole/role-theo-blanc-herriot', 'Device/dev-irm-herriot', 'HealthcareService/hs-dialyse-herriot', 'Location/loc-hopital-edouard-herriot']);
  // …but not the geographical entities that are part of the match (they reference it through partOf, they are not referenced by it)
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hcl&_include=*', ['org-hcl'], ['PractitionerRole/role-closed-24-hcl']);
  // the children, explicitly
  await expectEntries(t, '/fhir/v2/Organization?_id=org-hcl&_revinclude=Organization:partof', ['org-hcl'], ['Organization/org-hopital-edouard-herriot', 'Organization/org-hopital-croix-rousse']);
  await expectEntries(t, '/fhir/v2/Organization?name=pharmacie&_revinclude=PractitionerRole:organization', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-du-parc', 'org-pharmacie-centrale'], [
    'PractitionerRole/role-claire-gallet-lefevre', 'PractitionerRole/role-claire-gallet-faubourg', 'PractitionerRole/role-agnes-coeur-faubourg',
    'PractitionerRole/role-agnes-coeur-centrale', 'PractitionerRole/role-closed-25-lefevre', 'PractitionerRole/role-emma-nguyen-lefevre']);
  const res = await get('/fhir/v2/Organization?_id=org-hopital-nord-saint-etienne&_include=Organization:partof');
  const inc = (res.json() as Bundle).entry!.find((e) => e.search.mode === 'include')!;
  t.equal(inc.fullUrl, 'http://fhir.test/fhir/v2/Organization/org-chu-saint-etienne');
  const self = (res.json() as Bundle).link.find((l) => l.relation === 'self')!.url;
  t.same([...new URL(self).searchParams], [['_id', 'org-hopital-nord-saint-etienne'], ['_include', 'Organization:partof']], 'the include is in self');
});

t.test('bad include values → 400', async (t) => {
  await expect400(t, '/fhir/v2/Organization?_include=Organization:foo', '_include');
  await expect400(t, '/fhir/v2/Organization?_include=PractitionerRole:organization', '_include');
  await expect400(t, '/fhir/v2/Organization?_revinclude=PractitionerRole:practitioner', '_revinclude');
  await expect400(t, '/fhir/v2/Organization?_revinclude=Patient:organization', '_revinclude');
  await expect400(t, '/fhir/v2/Organization?_include=Organization:partof:Practitioner', '_include');
  await expect400(t, '/fhir/v2/Organization?_include:iterate=Organization:partof', '_include:iterate');
  await expect400(t, '/fhir/v2/Organization?partof:Practitioner=x', 'partof:Practitioner');
  await expect400(t, '/fhir/v2/Organization?partof=a/b/c', 'partof');
  await expect400(t, '/fhir/v2/Organization?_has:PractitionerRole:practitioner:role=FON-01', '_has:PractitionerRole:practitioner:role');
  await expect400(t, '/fhir/v2/Organization?_has:PractitionerRole:organization=x', '_has:PractitionerRole:organization');
  await expect400(t, '/fhir/v2/Organization?name.foo=x', 'name.foo');
});

// ------------------------------------------------------------------------------------------------
// version 1 (deprecated)

t.test('v1: Deprecation and Link successor-version headers', async (t) => {
  for (const url of ['/fhir/v1/Organization?name=hcl', '/fhir/v1/Organization/org-hcl', '/fhir/v1/metadata']) {
    const res = await get(url);
    t.equal(res.statusCode, 200, url);
    t.ok(res.headers.deprecation, `${url}: Deprecation header`);
    t.match(String(res.headers.link), /<http:\/\/fhir\.test\/fhir\/v2\/[A-Za-z]+>; *rel="successor-version"/, `${url}: Link rel=successor-version`);
  }
  const search = await get('/fhir/v1/Organization?name=hcl');
  t.equal(search.headers.link, '<http://fhir.test/fhir/v2/Organization>; rel="successor-version"');
  const b = search.json() as Bundle;
  t.same(b.entry?.map((e) => e.fullUrl), ['http://fhir.test/fhir/v1/Organization/org-hcl']);
  t.match(b.link.find((l) => l.relation === 'self')?.url, /^http:\/\/fhir\.test\/fhir\/v1\/Organization\?/);
  const v2res = await get('/fhir/v2/Organization?name=hcl');
  t.notOk(v2res.headers.deprecation, 'v2 is not deprecated');
  for (const type of ['Practitioner', 'PractitionerRole']) {
    const res = await get(`/fhir/v1/${type}`);
    t.equal(res.statusCode, 404, `v1 does not serve ${type}`);
    t.equal(res.json().resourceType, 'OperationOutcome');
  }
});

t.test('v1 parameter names', (t) =>
  v1(t, [
    ['as-sp-data-information-system=RPPS', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']],
    ['as-sp-data-information-system=CG,RPPS', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall', 'org-labo-bio-etoile']],
    ['as-sp-data-registration-authority=ARS-93', ['org-pharmacie-du-parc', 'org-ap-hm', 'org-hopital-timone']],
    ['address-country=france', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne']],
    ['address-country=fra', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne']],
    ['address-state=auvergne', ['org-chu-saint-etienne', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-state=AUVERGNE-RHÔNE-ALPES', ['org-chu-saint-etienne', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-use=billing', ['org-hcl']],
    ['address-use=work', ['org-chu-saint-etienne', 'org-hopital-nord-saint-etienne', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-use=home', []],
    ['endpoint=ep-cds-louvre-mss', ['org-cds-louvre']],
    ['endpoint=Endpoint/ep-cds-louvre-mss', ['org-cds-louvre']],
    ['endpoint:missing=false', ['org-cds-louvre']],
    ['_since=2025-01-01', ['org-cds-louvre', 'org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['_since=2025-01-06T07:45:00Z', ['org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['_since=2025-01-06T07:45:00%2B01:00', ['org-cds-louvre', 'org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['_lastUpdated=ge2025-01-01', ['org-cds-louvre', 'org-cabinet-paul-martin', 'org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['_lastUpdated=2024-03-15', ['org-chu-saint-etienne', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['_has:PractitionerRole:organization:role=FON-03', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-lefevre', 'org-pharmacie-centrale']],
    ['_has:PractitionerRole:organization:practitioner.identifier=http://rpps.fr|10100000005', ['org-cds-louvre', 'org-cabinet-paul-martin']],
    ['_id=org-hcl', ['org-hcl']],
    ['active=false', ['org-maternite-des-lilas', 'org-pharmacie-centrale']],
    ['address=cs 33569', ['org-hcl']],
    ['address-city=saint-etienne', ['org-chu-saint-etienne', 'org-hopital-bellevue']],
    ['address-postalcode:exact=75001,69003', ['org-cds-louvre', 'org-pharmacie-lefevre', 'org-hcl', 'org-hopital-edouard-herriot']],
    ['address-postalcode=75014&address-city=paris', ['org-cds-oeuvre', 'org-pharmacie-centrale']],
    ['identifier=420784878,690781810', ['org-chu-saint-etienne', 'org-hcl']],
    ['identifier=http://finess.sante.gouv.fr|420784878', ['org-chu-saint-etienne']],
    ['identifier=https://finess.esante.gouv.fr|420784878', ['org-chu-saint-etienne']],
    ['identifier-type=http://interopsante.org/CodeSystem/v2-0203|FINEJ', ['org-chu-saint-etienne', 'org-sas-clinique-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hcl', 'org-ap-hm']],
    ['identifier-type=RPPSRG', ['org-cabinet-paul-martin', 'org-cabinet-martinez', 'org-cabinet-dentaire-le-gall']],
    ['mailbox-mss=accueil', ['org-cds-louvre']],
    ['name:contains=oeuvre', ['org-oeuvre-croix-saint-simon', 'org-cds-oeuvre']],
    ['name=hopital de la', ['org-hopital-croix-rousse', 'org-hopital-timone']],
    ['partof=org-hcl', ['org-hopital-edouard-herriot', 'org-hopital-croix-rousse']],
    ['pharmacy-licence=75', ['org-pharmacie-faubourg-saint-martin', 'org-pharmacie-centrale']],
    ['type=http://interopsante.org/fhir/CodeSystem/fr-v2-3307|LEGAL-ENTITY', LEGAL],
    ['type=http://interopsante.org/fhir/CodeSystem/fr-v2-3307|GEOGRAPHICAL-ENTITY', GEO],
    ['type=GEOGRAPHICAL-ENTITY', GEO],
    [`type=${R02}|SA01`, ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone']],
  ]));

t.test('v1: _total, _include, paging base; v2 ignores the v1-only names', async (t) => {
  const acc = (await get('/fhir/v1/Organization?_total=accurate&_count=5')).json() as Bundle;
  t.equal(acc.total, 25, '_total=accurate');
  t.equal(matchIds(acc).length, 5);
  t.match(acc.link.find((l) => l.relation === 'next')?.url, /^http:\/\/fhir\.test\/fhir\/v1\/Organization\?/, 'next link on the v1 base');
  const none = (await get('/fhir/v1/Organization?_total=none&_count=5')).json() as Bundle;
  t.equal(none.total, undefined, '_total=none');
  await expect400(t, '/fhir/v1/Organization?_total=maybe', '_total');
  await expect400(t, '/fhir/v1/Organization?_since=ge2025-01-01', '_since');
  await expect400(t, '/fhir/v1/Organization?_since=yesterday', '_since');
  await expectEntries(t, '/fhir/v1/Organization?_id=org-hopital-nord-saint-etienne&_include=Organization:partof', ['org-hopital-nord-saint-etienne'], ['Organization/org-chu-saint-etienne']);
  const inc = (await get('/fhir/v1/Organization?_id=org-hopital-nord-saint-etienne&_include=Organization:partof')).json() as Bundle;
  t.same(inc.entry?.map((e) => e.fullUrl), ['http://fhir.test/fhir/v1/Organization/org-hopital-nord-saint-etienne', 'http://fhir.test/fhir/v1/Organization/org-chu-saint-etienne']);
  // v1-only names in v2: unknown, so ignored (and absent from self), refused under strict handling
  for (const q of ['as-sp-data-information-system=RPPS', 'address-use=billing', 'address-country=france', 'address-state=auvergne', '_since=2025-01-01', 'endpoint=ep-cds-louvre-mss']) {
    const res = await get(`/fhir/v2/Organization?${q}`);
    const b = res.json() as Bundle;
    t.same({ status: res.statusCode, n: matchIds(b).length, self: [...new URL(b.link[0].url).searchParams] }, { status: 200, n: 25, self: [] }, `v2 ignores ${q}`);
    await expect400(t, `/fhir/v2/Organization?${q}`, q.split('=')[0], { Prefer: 'handling=strict' });
  }
});
