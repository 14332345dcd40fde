// Real French communes: name, INSEE code (TRE_R13), postal codes, and a weight roughly equal to
// the population in tens of thousands (Paris, Lyon and Marseille are split by arrondissement).
// Corsica is left out because its FINESS numbers start with 2A/2B (not 9 digits).

export type City = {
  readonly name: string;
  readonly insee: string;
  readonly postalCodes: readonly string[];
  readonly weight: number;
  /** Department code: first two characters of the INSEE code, three for overseas (971…976). */
  readonly dept: string;
  /** INSEE region code (11 Île-de-France, 84 Auvergne-Rhône-Alpes, …). */
  readonly region: string;
};

type Row = readonly [name: string, insee: string, postal: string, weight: number];

const PARIS: Row[] = [1.6, 2.1, 3.4, 2.8, 5.8, 4.1, 5.0, 3.6, 5.9, 8.6, 14.5, 14.0, 17.8, 13.6, 23.0, 16.5, 16.5, 19.5, 18.4, 19.2].map(
  (w, i) => {
    const n = String(i + 1).padStart(2, '0');
    const postal = i === 15 ? '75016 75116' : `750${n}`;
    return ['Paris', `751${n}`, postal, w * 1.5] as const;
  },
);
const MARSEILLE: Row[] = [4.0, 2.4, 4.6, 4.8, 4.6, 4.3, 3.5, 8.2, 7.6, 5.7, 5.9, 6.1, 9.2, 6.1, 7.8, 1.6].map(
  (w, i) => ['Marseille', `132${String(i + 1).padStart(2, '0')}`, `130${String(i + 1).padStart(2, '0')}`, w] as const,
);
const LYON: Row[] = [3.0, 3.0, 10.3, 3.6, 4.8, 5.1, 8.3, 8.5, 5.0].map(
  (w, i) => ['Lyon', `6938${i + 1}`, `6900${i + 1}`, w] as const,
);

const OTHERS: Row[] = [
  ['Toulouse', '31555', '31000 31100 31200 31300 31400 31500', 49],
  ['Nice', '06088', '06000 06100 06200 06300', 34],
  ['Nantes', '44109', '44000 44100 44200 44300', 32],
  ['Montpellier', '34172', '34000 34070 34080 34090', 30],
  ['Strasbourg', '67482', '67000 67100 67200', 29],
  ['Bordeaux', '33063', '33000 33100 33200 33300 33800', 26],
  ['Lille', '59350', '59000 59160 59260 59777 59800', 24],
  ['Rennes', '35238', '35000 35200 35700', 22],
  ['Reims', '51454', '51100', 18],
  ['Toulon', '83137', '83000 83100 83200', 18],
  ['Saint-Étienne', '42218', '42000 42100', 17],
  ['Le Havre', '76351', '76600 76610 76620', 17],
  ['Grenoble', '38185', '38000 38100', 16],
  ['Dijon', '21231', '21000', 16],
  ['Angers', '49007', '49000 49100', 16],
  ['Nîmes', '30189', '30000 30900', 15],
  ['Villeurbanne', '69266', '69100', 15],
  ['Clermont-Ferrand', '63113', '63000 63100', 15],
  ['Le Mans', '72181', '72000 72100', 14],
  ['Aix-en-Provence', '13001', '13090 13100 13080 13290 13540', 14],
  ['Brest', '29019', '29200', 14],
  ['Tours', '37261', '37000 37100 37200', 14],
  ['Amiens', '80021', '80000 80080 80090', 13],
  ['Limoges', '87085', '87000 87100 87280', 13],
  ['Annecy', '74010', '74000 74370 74600 74940 74960', 13],
  ['Perpignan', '66136', '66000 66100', 12],
  ['Boulogne-Billancourt', '92012', '92100', 12],
  ['Metz', '57463', '57000 57050 57070', 12],
  ['Besançon', '25056', '25000', 12],
  ['Orléans', '45234', '45000 45100', 12],
  ['Saint-Denis', '93066', '93200 93210', 11],
  ['Argenteuil', '95018', '95100', 11],
  ['Rouen', '76540', '76000 76100', 11],
  ['Montreuil', '93048', '93100', 11],
  ['Mulhouse', '68224', '68100 68200', 11],
  ['Caen', '14118', '14000', 11],
  ['Nancy', '54395', '54000 54100', 10],
  ['Roubaix', '59512', '59100', 10],
  ['Tourcoing', '59599', '59200', 10],
  ['Nanterre', '92050', '92000', 10],
  ['Vitry-sur-Seine', '94081', '94400', 10],
  ['Créteil', '94028', '94000', 9],
  ['Avignon', '84007', '84000', 9],
  ['Poitiers', '86194', '86000', 9],
  ['Aubervilliers', '93001', '93300', 9],
  ['Asnières-sur-Seine', '92004', '92600', 9],
  ['Colombes', '92025', '92700', 9],
  ['Aulnay-sous-Bois', '93005', '93600', 9],
  ['Versailles', '78646', '78000', 9],
  ['Dunkerque', '59183', '59140 59240 59640', 9],
  ['Courbevoie', '92026', '92400', 8],
  ['Rueil-Malmaison', '92063', '92500', 8],
  ['Pau', '64445', '64000', 8],
  ['La Rochelle', '17300', '17000', 8],
  ['Champigny-sur-Marne', '94017', '94500', 8],
  ['Saint-Maur-des-Fossés', '94068', '94100 94210', 7],
  ['Calais', '62193', '62100', 7],
  ['Cannes', '06029', '06150 06400', 7],
  ['Antibes', '06004', '06160 06600', 7],
  ['Béziers', '34032', '34500', 8],
  ['Colmar', '68066', '68000', 7],
  ['Bourges', '18033', '18000', 6],
  ['Mérignac', '33281', '33700', 7],
  ['Saint-Nazaire', '44184', '44600', 7],
  ['Drancy', '93029', '93700', 7],
  ['Quimper', '29232', '29000', 6],
  ['Valence', '26362', '26000', 6],
  ["Villeneuve-d'Ascq", '59009', '59491 59650', 6],
  ['Troyes', '10387', '10000', 6],
  ['Chambéry', '73065', '73000', 6],
  ['Niort', '79191', '79000', 6],
  ['Lorient', '56121', '56100', 6],
  ['Vannes', '56260', '56000', 5],
  ['Beauvais', '60057', '60000', 6],
  ['Cholet', '49099', '49300', 5],
  ['Laval', '53130', '53000', 5],
  ['Évreux', '27229', '27000', 5],
  ['Pessac', '33318', '33600', 6],
  ['Ivry-sur-Seine', '94041', '94200', 6],
  ['Montauban', '82121', '82000', 6],
  ['Vénissieux', '69259', '69200', 6],
  ['Clichy', '92024', '92110', 6],
  ['Issy-les-Moulineaux', '92040', '92130', 7],
  ['Levallois-Perret', '92044', '92300', 7],
  ['Neuilly-sur-Seine', '92051', '92200', 6],
  ['Belfort', '90010', '90000', 5],
  ['Chartres', '28085', '28000', 4],
  ['Arles', '13004', '13200', 5],
  ['Blois', '41018', '41000', 5],
  ['Brive-la-Gaillarde', '19031', '19100', 5],
  ['Angoulême', '16015', '16000', 4],
  ['Châteauroux', '36044', '36000', 4],
  ['Bayonne', '64102', '64100', 5],
  ['Biarritz', '64122', '64200', 3],
  ['Saint-Malo', '35288', '35400', 5],
  ['Périgueux', '24322', '24000', 3],
  ['Agen', '47001', '47000', 3],
  ['Albi', '81004', '81000', 5],
  ['Tarbes', '65440', '65000', 4],
  ['Carcassonne', '11069', '11000', 5],
  ['Auxerre', '89024', '89000', 3],
  ['Nevers', '58194', '58000', 3],
  ['Mâcon', '71270', '71000', 3],
  ['Chalon-sur-Saône', '71076', '71100', 4],
  ['Bourg-en-Bresse', '01053', '01000', 4],
  ['Gap', '05061', '05000', 4],
  ['Digne-les-Bains', '04070', '04000', 2],
  ['Privas', '07186', '07000', 1],
  ['Aurillac', '15014', '15000', 3],
  ['Le Puy-en-Velay', '43157', '43000', 2],
  ['Rodez', '12202', '12000', 2],
  ['Cahors', '46042', '46000', 2],
  ['Mende', '48095', '48000', 1],
  ['Foix', '09122', '09000', 1],
  ['Auch', '32013', '32000', 2],
  ['Mont-de-Marsan', '40192', '40000', 3],
  ['Dax', '40088', '40100', 2],
  ['Guéret', '23096', '23000', 1],
  ['Tulle', '19272', '19000', 1],
  ['Lons-le-Saunier', '39300', '39000', 2],
  ['Vesoul', '70550', '70000', 1],
  ['Épinal', '88160', '88000', 3],
  ['Bar-le-Duc', '55029', '55000', 1],
  ['Charleville-Mézières', '08105', '08000', 4],
  ['Laon', '02408', '02000', 2],
  ['Saint-Quentin', '02691', '02100', 5],
  ['Soissons', '02722', '02200', 3],
  ['Compiègne', '60159', '60200', 4],
  ['Arras', '62041', '62000', 4],
  ['Lens', '62498', '62300', 3],
  ['Boulogne-sur-Mer', '62160', '62200', 4],
  ['Valenciennes', '59606', '59300', 4],
  ['Douai', '59178', '59500', 4],
  ['Cambrai', '59122', '59400', 3],
  ['Maubeuge', '59392', '59600', 3],
  ['Alençon', '61001', '61000', 3],
  ['Saint-Lô', '50502', '50000', 2],
  ['Cherbourg-en-Cotentin', '50129', '50100 50110 50120 50130 50460 50470', 8],
  ['Lisieux', '14366', '14100', 2],
  ['Dieppe', '76217', '76200', 3],
  ['Évry-Courcouronnes', '91228', '91000 91080', 7],
  ['Melun', '77288', '77000', 4],
  ['Meaux', '77284', '77100', 6],
  ['Fontainebleau', '77186', '77300', 2],
  ['Saint-Germain-en-Laye', '78551', '78100', 4],
  ['Cergy', '95127', '95000 95800', 6],
  ['Pontoise', '95500', '95000 95300', 3],
  ['Sarcelles', '95585', '95200', 6],
  ['Bobigny', '93008', '93000', 5],
  ['Saint-Brieuc', '22278', '22000', 4],
  ['Lannion', '22113', '22300', 2],
  ['Morlaix', '29151', '29600', 2],
  ['La Roche-sur-Yon', '85191', '85000', 5],
  ["Les Sables-d'Olonne", '85194', '85100 85180 85340', 5],
  ['Challans', '85047', '85300', 2],
  ['Saintes', '17415', '17100', 3],
  ['Rochefort', '17299', '17300', 2],
  ['Royan', '17306', '17200', 2],
  ['Cognac', '16102', '16100', 2],
  ['Bergerac', '24037', '24100', 3],
  ['Châtellerault', '86066', '86100', 3],
  ['Vichy', '03310', '03200', 3],
  ['Moulins', '03190', '03000', 2],
  ['Montluçon', '03185', '03100', 3],
  ['Roanne', '42187', '42300', 3],
  ['Vienne', '38544', '38200', 3],
  ['Bourgoin-Jallieu', '38053', '38300', 3],
  ['Voiron', '38563', '38500', 2],
  ['Échirolles', '38151', '38130', 4],
  ['La Tronche', '38516', '38700', 1],
  ['Annemasse', '74012', '74100', 4],
  ['Thonon-les-Bains', '74281', '74200', 4],
  ['Sallanches', '74256', '74700', 2],
  ['Aix-les-Bains', '73008', '73100', 3],
  ['Albertville', '73011', '73200', 2],
  ['Montélimar', '26198', '26200', 4],
  ['Romans-sur-Isère', '26281', '26100', 3],
  ['Orange', '84087', '84100', 3],
  ['Carpentras', '84031', '84200', 3],
  ['Salon-de-Provence', '13103', '13300', 5],
  ['Martigues', '13056', '13500', 5],
  ['Aubagne', '13005', '13400', 5],
  ['Istres', '13047', '13800', 4],
  ['Fréjus', '83061', '83600', 5],
  ['Hyères', '83069', '83400', 5],
  ['Draguignan', '83050', '83300', 4],
  ['Grasse', '06069', '06130 06520', 5],
  ['Menton', '06083', '06500', 3],
  ['Sète', '34301', '34200', 4],
  ['Narbonne', '11262', '11100', 5],
  ['Alès', '30007', '30100', 4],
  ['Castres', '81065', '81100', 4],
  ['Millau', '12145', '12100', 2],
  ['Libourne', '33243', '33500', 2],
  ['Arcachon', '33009', '33120', 1],
  ['Lourdes', '65286', '65100', 1],
  ['Saint-Gaudens', '31483', '31800', 1],
  ['Colomiers', '31149', '31770', 4],
  ['Blagnac', '31069', '31700', 3],
  ['Muret', '31395', '31600', 3],
  ['Thionville', '57672', '57100', 4],
  ['Forbach', '57227', '57600', 2],
  ['Sarreguemines', '57631', '57200', 2],
  ['Haguenau', '67180', '67500', 3],
  ['Sélestat', '67462', '67600', 2],
  ['Saint-Dié-des-Vosges', '88413', '88100', 2],
  ['Lunéville', '54329', '54300', 2],
  ['Vandœuvre-lès-Nancy', '54547', '54500', 3],
  ['Châlons-en-Champagne', '51108', '51000', 4],
  ['Chaumont', '52121', '52000', 2],
  ['Le Kremlin-Bicêtre', '94043', '94270', 3],
  ['Villejuif', '94076', '94800', 6],
  ["L'Haÿ-les-Roses", '94038', '94240', 3],
  ['Vincennes', '94080', '94300', 5],
  ['Clamart', '92023', '92140', 5],
  ['Suresnes', '92073', '92150', 5],
  ['Montrouge', '92049', '92120', 5],
  ['Saint-Cloud', '92064', '92210', 3],
  ['Bron', '69029', '69500', 4],
  ['Pierre-Bénite', '69152', '69310', 1],
  ['Caluire-et-Cuire', '69034', '69300', 4],
  ['Saint-Priest-en-Jarez', '42275', '42270', 1],
  ['Saint-Herblain', '44162', '44800', 5],
  ['Rezé', '44143', '44400', 4],
  ['Le Chesnay-Rocquencourt', '78158', '78150', 3],
  ['Chambray-lès-Tours', '37050', '37170', 1],
  ['Dreux', '28134', '28100', 3],
  ['Vendôme', '41269', '41100', 2],
  ['Montargis', '45208', '45200', 2],
  ['Sens', '89387', '89100', 3],
  ['Beaune', '21054', '21200', 2],
  ['Dole', '39198', '39100', 2],
  ['Montbéliard', '25388', '25200', 3],
  ['Pontarlier', '25462', '25300', 2],
  ['Le Creusot', '71153', '71200', 2],
  ['Saumur', '49328', '49400', 3],
  ['Fougères', '35115', '35300', 2],
  ['Vitré', '35360', '35500', 2],
  ['Pontivy', '56178', '56300', 1],
  ['Riom', '63300', '63200', 2],
  ['Issoire', '63178', '63500', 1],
  ['Manosque', '04112', '04100', 2],
  ['Briançon', '05023', '05100', 1],
  ['Oyonnax', '01283', '01100', 2],
  ['Aubenas', '07019', '07200', 1],
  ['Annonay', '07010', '07100', 2],
  ['Pointe-à-Pitre', '97120', '97110', 2],
  ['Fort-de-France', '97209', '97200', 8],
  ['Cayenne', '97302', '97300', 6],
  ['Saint-Denis', '97411', '97400 97490', 15],
  ['Saint-Pierre', '97416', '97410', 8],
  ['Mamoudzou', '97611', '97600', 7],
];

function deptOf(insee: string): string {
  return insee.startsWith('97') ? insee.slice(0, 3) : insee.slice(0, 2);
}

const REGION_BY_DEPT: Record<string, string> = {};
const REGIONS: Record<string, string> = {
  '11': '75 77 78 91 92 93 94 95',
  '24': '18 28 36 37 41 45',
  '27': '21 25 39 58 70 71 89 90',
  '28': '14 27 50 61 76',
  '32': '02 59 60 62 80',
  '44': '08 10 51 52 54 55 57 67 68 88',
  '52': '44 49 53 72 85',
  '53': '22 29 35 56',
  '75': '16 17 19 23 24 33 40 47 64 79 86 87',
  '76': '09 11 12 30 31 32 34 46 48 65 66 81 82',
  '84': '01 03 07 15 26 38 42 43 63 69 73 74',
  '93': '04 05 06 13 83 84',
  '01': '971',
  '02': '972',
  '03': '973',
  '04': '974',
  '06': '976',
};
for (const [region, depts] of Object.entries(REGIONS)) for (const d of depts.split(' ')) REGION_BY_DEPT[d] = region;

export const CITIES: readonly City[] = [...PARIS, ...MARSEILLE, ...LYON, ...OTHERS].map(([name, insee, postal, weight]) => {
  const dept = deptOf(insee);
  const region = REGION_BY_DEPT[dept];
  if (!region) throw new Error(`No region for department ${dept} (${name})`);
  return { name, insee, postalCodes: postal.split(' '), weight, dept, region };
});

/** First digits of landline numbers by region (01 Île-de-France … 05 south-west; overseas prefixes). */
export function phonePrefix(city: City): string {
  switch (city.dept) {
    case '971': return '0590';
    case '972': return '0596';
    case '973': return '0594';
    case '974': return '0262';
    case '976': return '0269';
  }
  switch (city.region) {
    case '11': return '01';
    case '24': case '28': case '52': case '53': return '02';
    case '27': case '32': case '44': return '03';
    case '84': case '93': return '04';
    case '75': return '05';
    case '76': return ['09', '11', '30', '34', '48', '66'].includes(city.dept) ? '04' : '05';
  }
  return '09';
}

/** Street type code (iso21090 streetNameType, RASS abbreviations) and its spelled-out form. */
export const STREET_TYPES: ReadonlyArray<readonly [code: string, label: string, weight: number]> = [
  ['R', 'RUE', 45],
  ['AV', 'AVENUE', 15],
  ['BD', 'BOULEVARD', 8],
  ['PL', 'PLACE', 6],
  ['RTE', 'ROUTE', 5],
  ['CHE', 'CHEMIN', 5],
  ['ALL', 'ALLEE', 5],
  ['IMP', 'IMPASSE', 3],
  ['QU', 'QUAI', 2],
  ['CRS', 'COURS', 2],
];

export const STREET_NAMES: readonly string[] = [
  'JEAN JAURES', 'VICTOR HUGO', 'DE LA REPUBLIQUE', 'DU GENERAL DE GAULLE', 'PASTEUR', 'GAMBETTA', 'DE LA GARE',
  'DES ECOLES', 'DU MARECHAL FOCH', 'DE LA LIBERATION', 'JULES FERRY', 'DE PARIS', 'NATIONALE', 'DU 8 MAI 1945',
  'DU 11 NOVEMBRE', 'CARNOT', 'DE VERDUN', "DE L'EGLISE", 'DU MOULIN', 'DES LILAS', 'DES TILLEULS', 'DU STADE',
  'DE LA PAIX', 'SAINT-MICHEL', 'DIDOT', 'DU MORVAN', 'EMILE ZOLA', 'ANATOLE FRANCE', 'LOUIS PASTEUR', 'DES PEUPLIERS',
  'DU CHATEAU', 'DE LA MAIRIE', 'GEORGES CLEMENCEAU', 'ALSACE LORRAINE', 'DU PRESIDENT WILSON', 'DE BELLEVUE',
  'DES ROSIERS', 'DU COMMANDANT CHARCOT', 'MOZART', 'VOLTAIRE', 'DES CHENES', 'PIERRE ET MARIE CURIE',
  'DU DOCTEUR SCHWEITZER', 'ARISTIDE BRIAND', 'JEAN MOULIN', 'DES ACACIAS', 'HENRI BARBUSSE',
  'DE LATTRE DE TASSIGNY', 'DU GENERAL LECLERC', 'DE STRASBOURG', 'DE LYON', 'DE BRETAGNE', 'DU PORT', 'DE LA PLAGE',
  'DES ALPES', 'SAINT-JACQUES', 'NOTRE-DAME', "DE L'HOPITAL", "DE L'HÔTEL DE VILLE", 'FRANÇOIS MITTERRAND',
  'DE LA CROIX-ROUSSE', 'DES MARTYRS DE LA RESISTANCE', 'DU FAUBOURG SAINT-DENIS', 'DE LA PETITE VITESSE',
  'DES ÉGLANTINES', 'DU CLOS FLEURI', "D'ALEMBERT", 'DU DOCTEUR ROUX', 'ROBERT SCHUMAN', 'DES FRÈRES LUMIÈRE',
  'DE LA CHÂTAIGNERAIE', "DE L'ABBAYE", 'DU VIEUX PORT', 'DES CORDELIERS', 'MARCEL PAGNOL', 'DE NORMANDIE',
];
