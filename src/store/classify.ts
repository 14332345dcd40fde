import { countedQuery, measuredBy, measureOrdered } from '../fhir/compile.ts';
import { searchType } from '../fhir/types/index.ts';
import type { Condition, SearchRequest } from '../fhir/search-request.ts';

/**
 * The class of a search, from the parsed request alone: what its execution (src/store/execution.ts,
 * the only caller) decides its lane and pools from.
 *
 * - `lookup`: every condition an equality on a `selective` parameter (identifiers, ids, references,
 *   possibly through a chain), no `_sort`: a handful of matches whatever the values. Never waits in
 *   a lane, never counted beside its page.
 * - `heavy`: may make PostgreSQL read thousands of rows — pages of more than 100, `:contains`,
 *   exact counts (`_total=accurate`, `_summary=count`, `_count=0`) but those the write path keeps
 *   (src/fhir/compile.ts countedQuery). A lane and a pool of its own, so
 *   that a crowd of them is served in turn and never sits in front of the others.
 * - `nearby`: one measured condition whose page reads only the rows around one place (near within
 *   20 km: its measure says it is `local`), nearest first. Its page costs about what a lookup's
 *   does, so it never waits in a lane either; its first page is counted like a page's.
 * - `page`: everything else. A lane of its own, so that PostgreSQL runs as many at once as it has
 *   cores and a lookup finds one.
 */
export type SearchClass = 'lookup' | 'nearby' | 'page' | 'heavy';

export function classify(req: SearchRequest): SearchClass {
  if (heavy(req)) return 'heavy';
  if (req.conditions.length > 0 && planOnce(req) && req.sort.length === 0) return 'lookup';
  return nearby(req) ? 'nearby' : 'page';
}

function nearby(req: SearchRequest): boolean {
  if (req.conditions.length !== 1 || !measureOrdered(req)) return false;
  const by = measuredBy(req)!;
  return searchType(by.param).measure?.local?.(by as never) === true;
}

function heavy(req: SearchRequest): boolean {
  const contains = (c: Condition): boolean =>
    (c.kind === 'string' && c.mode === 'contains') || ((c.kind === 'chain' || c.kind === 'has') && contains(c.inner));
  const counts = req.count === 0 || req.total === 'accurate' || req.summary === 'count';
  // Whether a total is kept does not depend on the plan: any system id will do.
  if (counts && countedQuery({ systemId: () => 0 }, req) === undefined) return true;
  return req.count > 100 || req.conditions.some(contains);
}

/**
 * True when no statement of the search has a plan that depends on its values: every condition an
 * equality on a `selective` parameter, possibly through a chain, or no condition at all (the type's
 * rids in key order). Those run on the pool whose statements are planned once per connection
 * (src/db.ts `generic`); anything else — codes, booleans, strings, dates, `:not`, `:missing`,
 * `system|` — is planned for its values.
 */
export function planOnce(req: SearchRequest): boolean {
  const independent = (c: Condition): boolean => {
    switch (c.kind) {
      case 'token':
        return !c.not && !c.text && c.param.selective === true && c.values.every((v) => v.code !== undefined);
      case 'reference':
        return c.param.selective === true;
      case 'chain':
        return c.param.selective === true && independent(c.inner);
      default:
        return false;
    }
  };
  return req.conditions.every(independent);
}
