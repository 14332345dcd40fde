import { zipf, type Rng } from './prng.ts';

// Name tables. Lists are ordered roughly from most to least frequent in France; the generator
// draws them with a Zipf-like law (see names distribution in docs/generator.md), so Martin or
// Marie are common and the tail (Œillet, Łukasz, Wiśniewski…) is rare.

export const FAMILY_NAMES: readonly string[] = [
  // most frequent French surnames
  'Martin', 'Bernard', 'Thomas', 'Petit', 'Robert', 'Richard', 'Durand', 'Dubois', 'Moreau', 'Laurent',
  'Simon', 'Michel', 'Lefebvre', 'Leroy', 'Roux', 'David', 'Bertrand', 'Morel', 'Fournier', 'Girard',
  'Bonnet', 'Dupont', 'Lambert', 'Fontaine', 'Rousseau', 'Vincent', 'Muller', 'Lefèvre', 'Faure', 'André',
  'Mercier', 'Blanc', 'Guérin', 'Boyer', 'Garnier', 'Chevalier', 'François', 'Legrand', 'Gauthier', 'Garcia',
  'Perrin', 'Robin', 'Clément', 'Morin', 'Nicolas', 'Henry', 'Roussel', 'Mathieu', 'Gautier', 'Masson',
  'Marchand', 'Duval', 'Denis', 'Dumont', 'Marie', 'Lemaire', 'Noël', 'Meyer', 'Dufour', 'Meunier',
  'Brun', 'Blanchard', 'Giraud', 'Joly', 'Rivière', 'Lucas', 'Brunet', 'Gaillard', 'Barbier', 'Arnaud',
  'Martinez', 'Gérard', 'Roche', 'Renard', 'Schmitt', 'Roy', 'Leroux', 'Colin', 'Vidal', 'Caron',
  'Picard', 'Roger', 'Fabre', 'Aubert', 'Lemoine', 'Renaud', 'Dumas', 'Lacroix', 'Olivier', 'Philippe',
  'Bourgeois', 'Pierre', 'Benoît', 'Rey', 'Leclerc', 'Payet', 'Rolland', 'Leclercq', 'Guillaume', 'Lecomte',
  'Lopez', 'Jean', 'Dupuy', 'Guillot', 'Hubert', 'Berger', 'Carpentier', 'Sanchez', 'Dupuis', 'Moulin',
  'Louis', 'Deschamps', 'Huet', 'Vasseur', 'Perez', 'Boucher', 'Fleury', 'Royer', 'Klein', 'Jacquet',
  'Adam', 'Paris', 'Poirier', 'Marty', 'Aubry', 'Guyot', 'Carré', 'Charles', 'Renault', 'Charpentier',
  'Ménard', 'Maillard', 'Baron', 'Bertin', 'Bailly', 'Hervé', 'Schneider', 'Fernandez', 'Le Gall', 'Collet',
  'Léger', 'Bouvier', 'Julien', 'Prévost', 'Millet', 'Perrot', 'Daniel', 'Le Roux', 'Cousin', 'Germain',
  'Breton', 'Besson', 'Langlois', 'Rémy', 'Le Goff', 'Pelletier', 'Lévêque', 'Perrier', 'Leblanc', 'Barré',
  'Lebrun', 'Marchal', 'Weber', 'Mallet', 'Hamon', 'Boulanger', 'Jacob', 'Monnier', 'Michaud', 'Rodriguez',
  'Guichard', 'Gillet', 'Étienne', 'Grondin', 'Poulain', 'Tessier', 'Chevallier', 'Collin', 'Chauvin', 'Da Silva',
  'Bouchet', 'Gay', 'Lemaître', 'Bénard', 'Maréchal', 'Humbert', 'Reynaud', 'Antoine', 'Hoarau', 'Perret',
  'Barthélemy', 'Cordier', 'Pichon', 'Lejeune', 'Gilbert', 'Lamy', 'Delaunay', 'Pasquier', 'Carlier', 'Laporte',
  'Gomez', 'Gonzalez', 'Dos Santos', 'Ferreira', 'Pereira', 'Rodrigues', 'Fernandes', 'Lopes', 'Martins', 'Da Costa',
  'Gonçalves', 'Oliveira', 'Carvalho', 'Teixeira', 'Sousa', 'Alves', 'Ribeiro', 'Pinto', 'Marques', 'Moreira',
  'Le Bihan', 'Le Floch', 'Le Corre', 'Le Meur', 'Tanguy', 'Quéré', 'Kerjean', 'Le Guen', 'Le Bras', 'Le Borgne',
  'Le Moal', 'Guivarc\'h', 'Kervella', 'Le Normand', 'Le Bris', 'Jégou', 'Le Hir', 'Le Du', 'Cadiou', 'Riou',
  'Diallo', 'N\'Diaye', 'Traoré', 'Koné', 'Camara', 'Cissé', 'Diop', 'Sow', 'Ba', 'Fall',
  'Mbaye', 'Touré', 'Keïta', 'Coulibaly', 'Diarra', 'Sylla', 'Kanté', 'Ndiaye', 'Diawara', 'Konaté',
  'Benali', 'Haddad', 'Belkacem', 'Bouaziz', 'Mansouri', 'Brahimi', 'Cherif', 'Khelifi', 'Saïdi', 'Amrani',
  'El Amrani', 'Ben Ahmed', 'Aït-Ahmed', 'Bensaïd', 'Meziane', 'Hamidi', 'Boudjema', 'Benkhelifa', 'Chaouch', 'Ziani',
  'Nguyen', 'Tran', 'Le', 'Pham', 'Hoang', 'Vu', 'Dang', 'Bui', 'Do', 'Ngo',
  'Rossi', 'Russo', 'Bianchi', 'Romano', 'Esposito', 'Ricci', 'Colombo', 'De Luca', 'Ferrari', 'Marino',
  'Müller', 'Schmidt', 'Wagner', 'Becker', 'Hoffmann', 'Schäfer', 'Koch', 'Bauer', 'Fischer', 'Zimmermann',
  'García', 'Martínez', 'Sánchez', 'López', 'González', 'Hernández', 'Pérez', 'Gómez', 'Díaz', 'Ruiz',
  'Álvarez', 'Muñoz', 'Jiménez', 'Moreno', 'Romero', 'Navarro', 'Núñez', 'Ibáñez', 'Peña', 'Castaño',
  'Saint-Martin', 'Saint-Jean', 'Saint-Pierre', 'Sainte-Marie', 'Saint-Cyr', 'Saint-Germain', 'Saint-Laurent', 'Saint-Andre', 'Saint-Hilaire', 'Saint-Arnaud',
  'de La Tour', 'du Pont', 'd\'Arcy', 'D\'Almeida', 'de Saint-Exupéry', 'de Montfort', 'de Lattre', 'du Bellay', 'de La Fayette', 'd\'Harcourt',
  'L\'Hôte', 'L\'Hermite', 'Lhuillier', 'L\'Huillier', 'Delacroix', 'Delafosse', 'Delahaye', 'Delmas', 'Delorme', 'Deloffre',
  'Crépin', 'Courbière', 'Ferrière', 'Bréchet', 'Chênevert', 'Frémont', 'Gaudré', 'Hébert', 'Jérôme', 'Lagrée',
  'Cœur', 'Lœuillet', 'Bœuf', 'Œillet', 'Sœur', 'Vœux', 'Mœglin', 'Bœuvier', 'Cæsar', 'Œuvrard',
  'Kowalski', 'Nowak', 'Wiśniewski', 'Lewandowski', 'Kamiński', 'Wójcik', 'Zieliński', 'Szymański', 'Dąbrowski', 'Kozłowski',
  'Wang', 'Li', 'Zhang', 'Chen', 'Liu', 'Huang', 'Lin', 'Zhou', 'Wu', 'Xu',
  'Yılmaz', 'Kaya', 'Demir', 'Şahin', 'Çelik', 'Öztürk', 'Aydın', 'Arslan', 'Doğan', 'Kılıç',
  'Papadopoulos', 'Georgiou', 'Hovsepian', 'Karapetian', 'Petrossian', 'Ivanov', 'Popescu', 'Horvat', 'Novák', 'Dvořák',
  'Abitbol', 'Cohen', 'Levy', 'Benhamou', 'Attali', 'Azoulay', 'Sebag', 'Elbaz', 'Bitton', 'Amsellem',
  'Vandenberghe', 'Van Damme', 'Vanderhaegen', 'Verhaeghe', 'Dewaele', 'Desmet', 'Vermeulen', 'Janssens', 'Peeters', 'Maes',
  'Grosjean', 'Petitjean', 'Grandjean', 'Bonnefoy', 'Bonhomme', 'Beaulieu', 'Beauchamp', 'Bellamy', 'Belmont', 'Boisvert',
  'Chastagnol', 'Coustès', 'Escoffier', 'Fabrègue', 'Garrigues', 'Labarthe', 'Lacaze', 'Larrieu', 'Etcheverry', 'Harispe',
  'Iribarne', 'Mendiboure', 'Ospital', 'Uhalde', 'Zubiri', 'Goñi', 'Arrieta', 'Echeverría', 'Urrutia', 'Aguirre',
  'Casanova', 'Santoni', 'Pietri', 'Colonna', 'Luciani', 'Leca', 'Poli', 'Filippi', 'Albertini', 'Mattei',
  'Fontanel', 'Ravanel', 'Mugnier', 'Perrillat', 'Jacquier', 'Vuillermoz', 'Bochaton', 'Dunand', 'Favre-Bonvin', 'Chappaz',
];

export const FEMALE_GIVEN_NAMES: readonly string[] = [
  'Marie', 'Nathalie', 'Isabelle', 'Sylvie', 'Catherine', 'Sophie', 'Christine', 'Valérie', 'Sandrine', 'Stéphanie',
  'Céline', 'Véronique', 'Julie', 'Françoise', 'Aurélie', 'Émilie', 'Camille', 'Laurence', 'Caroline', 'Anne',
  'Patricia', 'Chantal', 'Martine', 'Nicole', 'Brigitte', 'Hélène', 'Claire', 'Delphine', 'Karine', 'Virginie',
  'Audrey', 'Élodie', 'Mélanie', 'Laura', 'Pauline', 'Marion', 'Lucie', 'Manon', 'Léa', 'Chloé',
  'Sarah', 'Anaïs', 'Mathilde', 'Charlotte', 'Justine', 'Clémence', 'Florence', 'Corinne', 'Pascale', 'Agnès',
  'Béatrice', 'Monique', 'Dominique', 'Annie', 'Emma', 'Inès', 'Jade', 'Louise', 'Zoé', 'Alice',
  'Juliette', 'Margaux', 'Océane', 'Noémie', 'Gaëlle', 'Maëlle', 'Solène', 'Ophélie', 'Coralie', 'Sabrina',
  'Vanessa', 'Jessica', 'Lætitia', 'Laetitia', 'Marie-Claire', 'Marie-Christine', 'Anne-Sophie', 'Marie-Pierre', 'Anne-Marie', 'Marie-Hélène',
  'Geneviève', 'Josiane', 'Danielle', 'Odile', 'Cécile', 'Estelle', 'Fabienne', 'Ghislaine', 'Ingrid', 'Joëlle',
  'Lydie', 'Maryse', 'Muriel', 'Nadège', 'Régine', 'Sonia', 'Thérèse', 'Élise', 'Bérénice', 'Maëva',
  'Nadia', 'Fatima', 'Amina', 'Yasmine', 'Rachida', 'Karima', 'Leïla', 'Myriam', 'Samia', 'Nour',
  'Aïcha', 'Khadija', 'Mariam', 'Binta', 'Fatou', 'Awa', 'Agathe', 'Capucine', 'Apolline', 'Héloïse',
  'Cléa', 'Zélie', 'Rose', 'Yvette', 'Paulette', 'Małgorzata', 'Agnieszka', 'Ana', 'Inês', 'Joana',
  'Giulia', 'Chiara', 'Mei', 'Linh', 'Thi Thu', 'Hanna', 'Ayşe', 'Siobhán', 'Eléonore', 'Bérangère',
];

export const MALE_GIVEN_NAMES: readonly string[] = [
  'Jean', 'Philippe', 'Michel', 'Nicolas', 'Christophe', 'Pierre', 'Alain', 'Patrick', 'Laurent', 'Frédéric',
  'Stéphane', 'Éric', 'David', 'Julien', 'Sébastien', 'Thomas', 'Olivier', 'François', 'Christian', 'Pascal',
  'Alexandre', 'Vincent', 'Thierry', 'Daniel', 'Guillaume', 'Jérôme', 'Antoine', 'Maxime', 'Bruno', 'Marc',
  'Jean-Pierre', 'Jean-François', 'Jean-Claude', 'Jean-Luc', 'Jean-Marc', 'Jean-Michel', 'Jean-Paul', 'Jean-Louis', 'Jean-Baptiste', 'Pierre-Yves',
  'Romain', 'Benoît', 'Mathieu', 'Matthieu', 'Cédric', 'Fabrice', 'Franck', 'Didier', 'Gérard', 'Jacques',
  'Yves', 'Bernard', 'Dominique', 'Hugo', 'Lucas', 'Louis', 'Gabriel', 'Léo', 'Raphaël', 'Arthur',
  'Jules', 'Adam', 'Noé', 'Théo', 'Nathan', 'Enzo', 'Mathéo', 'Clément', 'Florian', 'Adrien',
  'Damien', 'Rémi', 'Rémy', 'Loïc', 'Yannick', 'Hervé', 'Gilles', 'Serge', 'René', 'Roger',
  'André', 'Henri', 'Georges', 'Joël', 'Noël', 'Gaël', 'Gaëtan', 'Joseph', 'Kévin', 'Anthony',
  'Aurélien', 'Bastien', 'Baptiste', 'Benjamin', 'Cyril', 'Emmanuel', 'Étienne', 'Fabien', 'Grégory', 'Jonathan',
  'Ludovic', 'Mickaël', 'Michaël', 'Régis', 'Sylvain', 'Tristan', 'Xavier', 'Yann', 'Paul', 'Simon',
  'Samuel', 'Quentin', 'Arnaud', 'Valentin', 'Victor', 'Axel', 'Erwan', 'Malo', 'Titouan', 'Côme',
  'Mohamed', 'Ahmed', 'Karim', 'Mehdi', 'Rachid', 'Youssef', 'Samir', 'Nabil', 'Yanis', 'Ilyès',
  'Moussa', 'Mamadou', 'Ibrahima', 'Oumar', 'Amadou', 'Cheikh', 'Łukasz', 'Piotr', 'Tomasz', 'João',
  'José', 'Carlos', 'Miguel', 'Giuseppe', 'Marco', 'Minh', 'Wei', 'Mehmet', 'Anatole', 'Hippolyte',
];

/** Lowercase ASCII form used in e-mail local parts: "Jean-François Le Gall" → "jean-francois", "le-gall". */
const foldCache = new Map<string, string>();

export function foldAscii(s: string): string {
  let v = foldCache.get(s);
  if (v === undefined) {
    v = foldUncached(s);
    if (foldCache.size < 200_000) foldCache.set(s, v);
  }
  return v;
}

function foldUncached(s: string): string {
  let out = '';
  const lower = s.toLowerCase();
  for (const ch of lower) {
    switch (ch) {
      case 'œ': out += 'oe'; continue;
      case 'æ': out += 'ae'; continue;
      case 'ß': out += 'ss'; continue;
      case 'ł': out += 'l'; continue;
      case 'ø': out += 'o'; continue;
      case 'ı': out += 'i'; continue;
      case 'đ': out += 'd'; continue;
      case "'": case '’': continue;
      case ' ': out += '-'; continue;
      default: break;
    }
    const base = ch.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    if (/^[a-z0-9.-]$/.test(base)) out += base;
  }
  return out;
}

/** Uppercase without diacritics, the way many registries store names ("Saint-Étienne" → "SAINT-ETIENNE"). */
export function upperNoAccents(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/œ/g, 'oe')
    .replace(/Œ/g, 'OE')
    .replace(/æ/g, 'ae')
    .replace(/Æ/g, 'AE')
    .toUpperCase();
}


/** Surnames: Zipf exponent 1.05, offset 10 → the top name ≈ 2.6 %, the rarest ≈ 0.05 %. */
export const FAMILY_DIST = zipf(FAMILY_NAMES, 1.05, 10);
/** Given names: exponent 1.0, offset 5 → the top name ≈ 5 % of its gender. */
export const FEMALE_DIST = zipf(FEMALE_GIVEN_NAMES, 1, 5);
export const MALE_DIST = zipf(MALE_GIVEN_NAMES, 1, 5);
/** Share of double-barrelled surnames ("Martin-Dupont"), which multiply the rare combinations. */
export const COMPOUND_FAMILY_SHARE = 0.025;

export function familyName(rng: Rng): string {
  const a = FAMILY_DIST.sample(rng);
  if (!rng.chance(COMPOUND_FAMILY_SHARE)) return a;
  const b = FAMILY_DIST.sample(rng);
  return b === a ? a : `${a}-${b}`;
}
