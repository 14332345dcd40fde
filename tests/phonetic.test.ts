import { createHash } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { phoneticWords, SOUND_KEYS_VERSION, soundOf, typoVariants, TYPO_MIN_LENGTH, withinOneTypo } from '../src/fhir/phonetic.ts';

/** Folded words as phoneticWords gives them; a small alphabet makes near-misses likely. */
const word = (letters: string, minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...letters), minLength, maxLength });

t.test('phoneticWords folds, then splits on everything outside [a-z0-9]', async (t) => {
  const cases: [string, string[]][] = [
    ['Le Bihan', ['le', 'bihan']],
    ['le-bihan', ['le', 'bihan']],
    ['Dupont-Martin', ['dupont', 'martin']],
    ['da  Silva', ['da', 'silva']],
    ["O'Neil", ['o', 'neil']],
    ['L’Haÿ-les-Roses', ['l', 'hay', 'les', 'roses']],
    ['Lefèvre Œuvre ÉTIENNE', ['lefevre', 'oeuvre', 'etienne']],
    ['Jean-Paul II 2e', ['jean', 'paul', 'ii', '2e']],
    ['Ζήνων Zénon', ['zenon']],
    [' - ', []],
    ['', []],
  ];
  for (const [text, words] of cases) t.same(phoneticWords(text), words, text);
});

t.test('soundOf: the published Sonnex examples', async (t) => {
  // Examples from the Sonnex README, https://github.com/Zigazou/Sonnex (é written E; accented ones compared folded).
  const keyed: [string[], string][] = [
    [['balade', 'ballade'], 'balad'],
    [['basilic', 'basilique'], 'bazilik'],
    [['boulot', 'bouleau'], 'bUlo'],
    [['cane', 'canne'], 'kan'],
    [['compte', 'comte', 'conte'], 'k3t'],
    [['cygne', 'signe'], 'sin'],
    [['date', 'datte'], 'dat'],
    [['dessin', 'dessein'], 'dEs1'],
    [['cric', 'crique'], 'krik'],
    [['champ', 'chant'], 'C2'],
  ];
  for (const [words, key] of keyed) for (const w of words) t.equal(soundOf(w), key, w);
  for (const pair of [['censé', 'sensé'], ['différend', 'différent']]) {
    const [a, b] = pair.map((w) => soundOf(phoneticWords(w)[0]));
    t.equal(a, b, pair.join(' ~ '));
  }
});

t.test('soundOf: French sound-alike names share a key', async (t) => {
  const groups = [
    ['lefebvre', 'lefevre'], ['dupond', 'dupont'], ['filipe', 'philippe'], ['rousso', 'rousseau'],
    ['chevallier', 'chevalier'], ['gauthier', 'gautier'], ['thomas', 'tomas'], ['faure', 'phaure'],
    ['bertrand', 'bertran'], ['renaud', 'reno'], ['durand', 'durant'], ['bonnet', 'bonet'],
    ['fontaine', 'fontenne'], ['simone', 'simonne'], ['costa', 'cossta'],
  ];
  for (const [first, ...rest] of groups) for (const w of rest) t.equal(soundOf(w), soundOf(first), `${first} ~ ${w}`);
});

t.test('soundOf: an n before a vowel is never nasal, and a final ene sounds as ène, aine, eine and enne', async (t) => {
  // Folded, "Fontène" is "fontene": heard and typed, it must find Fontaine.
  const groups = [
    ['fontaine', 'fontene', 'fontenne', 'fonteine', 'fontaines', 'fontenes'], ['lafontaine', 'lafontene'],
    ['helene', 'helaine', 'helenne'], ['irene', 'iraine'], ['jeanne', 'jeane', 'jane'], ['fabienne', 'fabiene'],
    ['antoine', 'antoinne', 'antouane'], ['simone', 'simonne'], ['anne', 'ane'], ['martine', 'martinne'],
    ['lune', 'lunne'], ['etienne', 'etiene'],
  ];
  for (const [first, ...rest] of groups) for (const w of rest) t.equal(soundOf(w), soundOf(first), `${first} ~ ${w}`);
  const nasal = [['antoine', 'antoin'], ['jeane', 'jean'], ['fabiene', 'fabien'], ['simone', 'simon'], ['fontene', 'fonten'], ['martine', 'martin'], ['lune', 'lun']];
  for (const [vowel, end] of nasal) t.not(soundOf(vowel), soundOf(end), `${vowel} is not ${end}`);
  // Not final, e before n and a vowel is still the e of Renaud, Denis, Fontenay.
  t.same(['fontenay', 'renaud', 'menard'].map(soundOf), ['f3tenE', 'reno', 'menar']);
});

t.test('soundOf keeps different names apart', async (t) => {
  const distinct = [
    ['martin', 'martineau', 'marin', 'martine'], ['dupont', 'dumont'], ['bernard', 'benard'],
    ['petit', 'petitjean'], ['simon', 'simone'], ['fontaine', 'fontet'], ['costa', 'cosa'],
    ['perrin', 'terrin', 'berrin'], ['berger', 'verger'], ['moreau', 'noreau'],
  ];
  for (const names of distinct) t.equal(new Set(names.map(soundOf)).size, names.length, names.join(' / '));

  // Frequent French surnames: only true sound-alikes may share a key.
  const surnames = `martin bernard thomas petit robert richard durand dubois moreau laurent simon michel
    lefebvre leroy roux david bertrand morel fournier girard bonnet dupont lambert fontaine rousseau
    vincent muller lefevre faure andre mercier blanc guerin boyer garnier chevalier francois legrand
    gauthier garcia perrin robin clement morin nicolas henry roussel mathieu gautier masson marchand
    duval denis dumont marie lemaire noel meyer dufour meunier brun blanchard giraud joly riviere lucas
    brunet gaillard barbier arnaud martinez gerard roche renard schmitt roy leroux colin vidal caron
    picard roger fabre aubert lemoine renaud dumas lacroix olivier philippe bourgeois pierre benoit rey
    leclerc payet rolland leclercq guillaume lecomte lopez jean dupuy guillot hubert berger carpentier
    sanchez dupuis moulin louis deschamps huet vasseur perez boucher fleury royer klein jacquet adam
    paris poirier marty aubry guyot carre charles renault charpentier menard maillard baron bertin
    bailly herve schneider fernandez collet leger bouvier julien prevost millet perrot daniel cousin
    germain breton besson langlois remy pelletier leveque perrier leblanc barre lebrun marchal weber
    mallet hamon boulanger jacob monnier michaud rodriguez guichard gillet etienne grondin poulain
    tessier chevallier collin chauvin bouchet gay lemaitre benard marechal humbert reynaud antoine
    hoarau perret barthelemy cordier pichon lejeune gilbert lamy delaunay pasquier carlier laporte`.split(/\s+/);
  const alike = ['boucher bouchet', 'chevalier chevallier', 'colin collin', 'dupuis dupuy', 'gauthier gautier', 'guillot guyot', 'lefebvre lefevre'];
  const byKey = new Map<string, string[]>();
  for (const s of surnames) byKey.set(soundOf(s), [...(byKey.get(soundOf(s)) ?? []), s]);
  const shared = [...byKey.values()].filter((g) => g.length > 1).map((g) => g.sort().join(' '));
  t.same(shared.sort(), alike, 'keys shared among frequent surnames');
});

t.test('the keys are those of SOUND_KEYS_VERSION: a change of soundOf bumps it, and stored keys are made again', async (t) => {
  // 50,000 words of a fixed pseudo-random sequence, weighted towards French spellings: every rule meets many.
  const letters = 'aaaeeeeiioouunnnrrsstlcmpdgbfhvjqxyzkw';
  let x = 12345;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8;
  const keys = Array.from({ length: 50_000 }, () => {
    const w = Array.from({ length: 2 + (next() % 9) }, () => letters[next() % letters.length]).join('');
    return `${w}=${soundOf(w)}`;
  });
  const digest = createHash('sha256').update(keys.join('\n')).digest('hex').slice(0, 16);
  t.same({ version: SOUND_KEYS_VERSION, digest }, { version: 2, digest: '75ee21b1cef9dbf0' }, 'keys changed: bump SOUND_KEYS_VERSION, then pin the new digest');
});

t.test('soundOf gives a non-empty printable ASCII key, the same every time', async () => {
  fc.assert(fc.property(word('abcdefghijklmnopqrstuvwxyz0123456789', 1, 14), (w) => {
    const key = soundOf(w);
    return /^[!-~]+$/.test(key) && soundOf(w) === key;
  }), { numRuns: 5000 });
});

t.test('typoVariants: one edit of a word of 5 letters or more', async (t) => {
  t.equal(TYPO_MIN_LENGTH, 5);
  t.same(typoVariants('marc'), [], 'shorter words have none');
  const marin = typoVariants('marin');
  for (const v of ['mari', 'arin', 'maarin', 'marine', 'morin', 'amrin', 'mairn']) t.ok(marin.includes(v), v);
  for (const v of ['marin', 'mar1n', 'amrni', 'marinee', 'mar']) t.notOk(marin.includes(v), v);
  t.ok(typoVariants('h2o2x').includes('h2o3x'), 'digits when the word has one');

  // With n letters, no two neighbours equal, k letters in the alphabet: (n+1)k - n insertions
  // (doubling a letter on either side is one string), n drops, n(k-1) replacements, n-1 swaps.
  const count = (n: number, k: number): number => (n + 1) * k - n + n + n * (k - 1) + n - 1;
  t.equal(typoVariants('martin').length, count(6, 26));
  t.equal(typoVariants('a1b2c').length, count(5, 36));
  t.same(typoVariants('martin'), typoVariants('martin'), 'deterministic');
});

/** Optimal string alignment distance, by the textbook dynamic programme. */
function osa(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** A word and a copy of it under up to two random edits: near and far pairs in about equal parts. */
const edited = word('abc1', 5, 9).chain((w) => fc.tuple(
  fc.constant(w),
  fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.nat(), fc.constantFrom(...'abcd1')), { maxLength: 2 }).map((edits) =>
    edits.reduce((s, [kind, p, c]) => {
      const i = p % (s.length + 1);
      if (kind === 0) return s.slice(0, i) + c + s.slice(i);
      if (kind === 1) return s.slice(0, i) + s.slice(i + 1);
      if (kind === 2) return s.slice(0, i) + c + s.slice(i + 1);
      return s.slice(0, i) + s.slice(i + 1, i + 2) + s.slice(i, i + 1) + s.slice(i + 2);
    }, w)),
));

t.test('withinOneTypo agrees with the OSA distance', async () => {
  fc.assert(fc.property(edited, ([a, b]) => withinOneTypo(a, b) === (osa(a, b) <= 1) && withinOneTypo(b, a) === withinOneTypo(a, b)), { numRuns: 5000 });
  fc.assert(fc.property(word('ab', 0, 6), word('ab', 0, 6), (a, b) => withinOneTypo(a, b) === (osa(a, b) <= 1)), { numRuns: 5000 });
});

t.test('typoVariants lists exactly the strings one typo away', async () => {
  fc.assert(fc.property(edited, ([w, other]) => {
    const variants = typoVariants(w);
    const alphabet = /[0-9]/.test(w) ? /^[a-z0-9]*$/ : /^[a-z]*$/;
    return new Set(variants).size === variants.length
      && variants.every((v) => v !== w && alphabet.test(v) && withinOneTypo(w, v))
      && variants.includes(other) === (other !== w && alphabet.test(other) && withinOneTypo(w, other));
  }), { numRuns: 3000 });
});
