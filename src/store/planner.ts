import { matchSet } from '../fhir/compile.ts';
import { TYPO_MIN_LENGTH, typoSpellings } from '../fhir/phonetic.ts';
import { sortBounds, sortedPageQuery } from '../fhir/sort.ts';
import { normalize, prefixUpperBound } from '../fhir/normalize.ts';
import type { Condition, PlanHints, SearchRequest, SortPath } from '../fhir/search-request.ts';
import { stmt, type Statement } from '../fhir/statement.ts';
import { containsNeedle, countedPrefixKey, likeEscape } from '../fhir/types/string.ts';
import type { BoundParam } from '../registry/index.ts';
import type { Run } from './query.ts';
import { TokenSystems } from './token-systems.ts';

/**
 * The planner: what the database must tell the compiler about one search, gathered before it
 * compiles (src/fhir/search-request.ts PlanHints). The ids of the token systems it names; for each
 * string value with two possible paths, which one is cheaper (a rare prefix read whole, a common
 * :contains needle walked in key order); for a sorted search with conditions, how to read its first
 * phase (walk the sort key's index probing, walk it with the matches hashed, or sort the matches).
 *
 * Each decision compares a value's rows m with the crossover where both paths cost the same: a
 * key-order walk reads about n × P / m entries to fill a page of n over a parameter's P rows, the
 * value's own set m rows each `rowCost` times dearer than a walked entry, so m = √(n × P / rowCost).
 * Decisions are kept a minute: they only steer plans, so a stale one costs time, never results.
 * It chooses no connection and sends nothing itself: its statements go through the `run` the runner
 * hands it (src/store/runner.ts), on the search's pool.
 */
export class Planner {
  private readonly decisions = new Map<string, { value: unknown; at: number }>();
  private readonly estimates = new Map<string, { n: number; at: number }>();

  constructor(readonly systems = new TokenSystems()) {}

  /** The hints of `req`, asked through `run`: on the pool its statements run on. */
  async plan(run: Run, req: SearchRequest): Promise<PlanHints> {
    const uris = new Set<string>();
    const needles: { param: number; needle: string }[] = [];
    const prefixes: { param: number; norm: string }[] = [];
    const walk = (c: Condition): void => {
      if (c.kind === 'token') for (const v of c.values) if (typeof v.system === 'string') uris.add(v.system);
      if (c.kind === 'string' && c.mode === 'contains') {
        for (const v of c.values) {
          const needle = containsNeedle(v);
          if (needle) needles.push({ param: c.param.id, needle });
        }
      }
      if (c.kind === 'string' && c.mode === 'prefix') {
        for (const v of c.values) {
          const norm = normalize(v);
          if (norm !== '' && prefixUpperBound(norm) !== undefined) prefixes.push({ param: c.param.id, norm });
        }
      }
      if (c.kind === 'chain' || c.kind === 'has') walk(c.inner);
    };
    req.conditions.forEach(walk);
    await this.systems.find(run, uris);
    const pageRows = req.count + 1;
    const [common, ranges] = await Promise.all([
      Promise.all(needles.map(async ({ param, needle }) => ((await this.isCommon(run, param, needle, pageRows)) ? `${param}/${needle}` : undefined))),
      Promise.all(prefixes.map(async (p) => ({ ...p, rows: await this.rareRows(run, p.param, p.norm, pageRows) }))),
    ]);
    const rare = ranges.filter((p) => p.rows !== undefined);
    const hints: PlanHints = {
      systemId: (uri) => this.systems.known(uri),
      commonNeedles: new Set(common.filter((k): k is string => k !== undefined)),
      rarePrefixes: new Map(rare.map((p) => [`${p.param}/${p.norm}`, p.rows!])),
    };
    // Beside a rare prefix, the compiler weighs the other prefixes' ranges against its rows.
    if (rare.length > 0 && rare.length < ranges.length) {
      const others = ranges.filter((p) => p.rows === undefined);
      hints.prefixBounds = new Map(await Promise.all(others.map(async (p) => [`${p.param}/${p.norm}`, await this.prefixBound(run, p.param, p.norm)] as const)));
    }
    const spellings = await spellingsOf(run, req);
    if (spellings) hints.spellings = spellings;
    if (req.sort.length && req.conditions.length && req.count > 0) hints.sortPath = await this.sortPathOf(run, hints, req);
    return hints;
  }

  /** The planner's estimate of the matches (`_total=estimate`). */
  async estimateMatches(run: Run, hints: PlanHints, req: SearchRequest): Promise<number> {
    return Math.round(await planRows(run, matchSet(hints, req)));
  }

  /**
   * The rows of a rare prefix's range, undefined for a prefix that is not rare. A prefix is rare when
   * its range of the parameter's index holds fewer rows than the crossover: reading the whole range
   * and keeping the page's first keys then costs less than walking the parameter in key order until
   * the page is full. The rows are counted, up to the crossover, rather than estimated: the
   * statistics of `norm` mix every string parameter, and a prefix common in addresses looks common
   * in names too.
   */
  private async rareRows(run: Run, param: number, norm: string, pageRows: number): Promise<number | undefined> {
    const crossover = Math.ceil(Math.sqrt((pageRows * (await this.stringRows(run, param))) / RANGE_ROW_COST));
    return this.decided(`prefix/${param}/${norm}/${crossover}`, async () => {
      const [{ n }] = await run<{ n: string }[]>(stmt`
        select count(*) as n from (select 1 from string_idx s where s.param = ${param} and s.norm >= ${norm} and s.norm < ${prefixUpperBound(norm)!} limit ${crossover}) x`);
      return Number(n) < crossover ? Number(n) : undefined;
    });
  }

  /** At most how many rows a prefix's range holds: the resources counted under its first characters (value_count, sql/012). */
  private prefixBound(run: Run, param: number, norm: string): Promise<number> {
    const key = countedPrefixKey(norm);
    return this.decided(`bound/${param}/${key}`, async () => {
      const [{ n }] = await run<{ n: string }[]>(stmt`select coalesce(sum(v.n), 0) as n from value_count v where v.param = ${param} and v.key = ${key}`);
      return Number(n);
    });
  }

  /**
   * A :contains needle is common when PostgreSQL's estimate of its rows (the bare condition) is
   * above the crossover: the key-order walk then fills the page sooner than the trigram path reads
   * the needle's rows.
   */
  private async isCommon(run: Run, param: number, needle: string, pageRows: number): Promise<boolean> {
    const crossover = Math.ceil(Math.sqrt((pageRows * (await this.stringRows(run, param))) / CONTAINS_ROW_COST));
    return this.decided(`needle/${param}/${needle}/${crossover}`, async () => {
      const pattern = `%${likeEscape(needle)}%`;
      return (await planRows(run, stmt`select 1 from string_idx s where s.param = ${param} and s.norm like ${pattern}`)) > crossover;
    });
  }

  /**
   * How a sorted search with conditions reads its first phase (src/fhir/sort.ts): the path of least
   * cost for its m matches, each path costing m × its cost per match plus (n × K / m) × its cost per
   * entry walked (a page of n over a first key of K rows meets a match every K / m entries). The
   * matches are counted up to where walking with probes becomes the cheapest whatever else; the
   * hashed walk is taken only if PostgreSQL does hash the set (its estimate of the set must fit its
   * hash memory), which an EXPLAIN of the page tells.
   */
  private async sortPathOf(run: Run, hints: PlanHints, req: SearchRequest): Promise<SortPath> {
    // Conditions that all bound the key's own index: the walk reads the matches and nothing else.
    if (sortBounds(req).length === req.conditions.length) return 'walk';
    const walked = (req.count + 1) * (await this.keyRows(run, req.sort[0].param, req.type));
    const cap = crossover(walked, SORT_PATHS.hashed, SORT_PATHS.walk);
    const criteria = req.criteria.map(([k, v]) => `${k}=${v}`).sort().join('&');
    return this.decided(`sort/${req.type}/${req.sort[0].param.id}/${criteria}/${cap}`, async () => {
      const [{ n }] = await run<{ n: string }[]>(stmt`select count(*) as n from (${matchSet(hints, req)} limit ${cap}) x`);
      const m = Math.max(1, Number(n));
      const cost = (p: SortPath) => m * SORT_PATHS[p].match + (walked / m) * SORT_PATHS[p].walked;
      const cheapest = (paths: SortPath[]) => paths.reduce((a, b) => (cost(b) < cost(a) ? b : a));
      const best = cheapest(['sorted', 'hashed', 'walk']);
      if (best !== 'hashed' || (await this.hashes(run, hints, req))) return best;
      return cheapest(['sorted', 'walk']);
    });
  }

  /** Whether PostgreSQL hashes the matches' set of a hashed sort walk (rather than scanning it per row). */
  private async hashes(run: Run, hints: PlanHints, req: SearchRequest): Promise<boolean> {
    const plan = await run<{ 'QUERY PLAN': string }[]>(stmt`explain ${sortedPageQuery({ ...hints, sortPath: 'hashed' }, req, 1, undefined, req.count + 1)}`);
    return plan.some((row) => row['QUERY PLAN'].includes('hashed SubPlan'));
  }

  private async decided<T>(key: string, decide: () => Promise<T>): Promise<T> {
    const hit = this.decisions.get(key);
    if (hit && Date.now() - hit.at < 60_000) return hit.value as T;
    const value = await decide();
    if (this.decisions.size >= 10_000) this.decisions.clear();
    this.decisions.set(key, { value, at: Date.now() });
    return value;
  }

  /** Rows of a sort key's index (for `_id`, the resources of the type). */
  private keyRows(run: Run, param: BoundParam, type: string): Promise<number> {
    if (param.column === 'id') return this.typeRows(run, type);
    if (param.type === 'date') return this.estimate(run, `date/${param.id}`, stmt`select 1 from date_idx d where d.param = ${param.id}`);
    return this.stringRows(run, param.id);
  }

  /** The resources of a type, as PostgreSQL's statistics estimate them (no count: GET / shows it). */
  typeRows(run: Run, type: string): Promise<number> {
    return this.estimate(run, `type/${type}`, stmt`select 1 from resource r where r.type = ${type}`);
  }

  private stringRows(run: Run, param: number): Promise<number> {
    return this.estimate(run, `string/${param}`, stmt`select 1 from string_idx s where s.param = ${param}`);
  }

  /** PostgreSQL's estimate of a statement's rows, kept a minute. */
  private async estimate(run: Run, key: string, rows: Statement): Promise<number> {
    const hit = this.estimates.get(key);
    if (hit && Date.now() - hit.at < 60_000) return hit.n;
    const n = await planRows(run, rows);
    this.estimates.set(key, { n, at: Date.now() });
    return n;
  }
}

/** A row of a prefix's range (index entry, de-duplication, sort) against an entry of the key-order walk. */
const RANGE_ROW_COST = 8;

/** A row of a :contains needle's trigram set (its value found in string_value, its rows read) against a walked entry. */
const CONTAINS_ROW_COST = 6;

/**
 * The paths of a sorted first phase, in units of an entry of the walk that probes (the entry, the
 * check that it is the resource's key, a probe per condition): per match (read, its key looked up,
 * sorted; or put in the hash) and per entry walked (measured: docs/performance.md, "Measurements
 * behind the code").
 */
const SORT_PATHS: Record<SortPath, { match: number; walked: number }> = {
  sorted: { match: 1.5, walked: 0 },
  hashed: { match: 0.12, walked: 0.1 },
  walk: { match: 0, walked: 1 },
};

/** The matches m where paths a and b cost the same, for `walked` = n × K. */
function crossover(walked: number, a: { match: number; walked: number }, b: { match: number; walked: number }): number {
  return Math.ceil(Math.sqrt((walked * (a.walked - b.walked)) / (b.match - a.match)));
}

async function planRows(run: Run, rows: Statement): Promise<number> {
  const [row] = await run<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }[]>(stmt`explain (format json) ${rows}`);
  return row['QUERY PLAN'][0].Plan['Plan Rows'];
}

/**
 * The one-typo spellings of another sound that the parameter's rows hold, of each word of the
 * search's phonetic values (and of their words joined), in one statement: the compiler reads those
 * alone (src/fhir/types/phonetic.ts). Asked for every search, never kept: a name written a moment
 * ago must be found.
 */
async function spellingsOf(run: Run, req: SearchRequest): Promise<Map<string, string[]> | undefined> {
  const words = new Map<string, { param: number; word: string }>();
  for (const c of req.conditions) {
    if (c.kind !== 'phonetic') continue;
    for (const value of c.values) {
      for (const word of value.length > 1 ? [...value, value.join('')] : value) {
        if (word.length >= TYPO_MIN_LENGTH) words.set(`${c.param.id}/${word}`, { param: c.param.id, word });
      }
    }
  }
  if (words.size === 0) return undefined;
  const keys: string[] = [];
  const params: number[] = [];
  const spellings: string[] = [];
  const out = new Map<string, string[]>();
  for (const [key, { param, word }] of words) {
    out.set(key, []);
    for (const v of typoSpellings(word)) {
      keys.push(key);
      params.push(param);
      spellings.push(v);
    }
  }
  const found = await run<{ key: string; v: string }[]>(stmt`
    select k.key, k.v from unnest(${keys}::text[], ${params}::int[], ${spellings}::text[]) k(key, param, v)
    where exists (select 1 from phonetic_idx p where p.param = k.param and p.word = k.v)`);
  for (const { key, v } of found) out.get(key)!.push(v);
  return out;
}
