// Paths that only a running server can give: its next links. The deep walk, the second pages of
// `next-page` and the sorted pages at depth of `sorted-deep` are collected here before the classes
// run, as a client gets them (the host part stripped, so they can be replayed).

import { balanced, type Sort } from './classes.ts';
import { log } from './drive.ts';
import type { DeepWalk } from './report.ts';

/** A path with its `_count` set to `count`, or removed when undefined (the cursor does not depend on it). */
export function withCount(path: string, count: number | undefined): string {
  const u = new URL(path, 'http://x');
  u.searchParams.delete('_count');
  if (count !== undefined) u.searchParams.set('_count', String(count));
  return `${u.pathname}?${u.searchParams.toString()}`;
}

/** The Bundle's next link, host part stripped. */
function nextLink(text: string): string | undefined {
  const m = /"relation":"next","url":"([^"]+)"/.exec(text.slice(0, 4096));
  if (!m) return undefined;
  const u = new URL(m[1]);
  return u.pathname + u.search;
}

const matches = (text: string) => {
  let n = 0;
  for (let i = text.indexOf('"mode":"match"'); i >= 0; i = text.indexOf('"mode":"match"', i + 1)) n++;
  return n;
};

/** Requests every path once, `concurrency` at a time, within `maxMs`; `onPage` sees each answer. */
export async function fetchPaths(port: number, paths: string[], headers: Record<string, string>, concurrency: number, maxMs: number,
  onPage?: (index: number, text: string) => void): Promise<{ done: number; ms: number }> {
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < paths.length && performance.now() - t0 < maxMs) {
      const i = next++;
      const res = await fetch(`http://127.0.0.1:${port}${paths[i]}`, { headers });
      const text = await res.text();
      if (res.ok) onPage?.(i, text);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { done, ms: performance.now() - t0 };
}

interface Walked {
  /** each page: the path that produced it, its latency, the matches before it. */
  pages: { path: string; ms: number; start: number }[];
  /** the next link after the last page fetched (undefined at the end of the results). */
  next?: string;
  /** matches on the pages fetched. */
  resources: number;
  totalMs: number;
}

/** Follows the next links from `first`, one request at a time, until `until` matches were read or the results end. */
async function walk(port: number, first: string, headers: Record<string, string>, until = Infinity, label = ''): Promise<Walked> {
  const pages: Walked['pages'] = [];
  let resources = 0;
  let next: string | undefined = first;
  const t0 = performance.now();
  let lastLog = Date.now();
  while (next && resources < until) {
    const s = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${next}`, { headers });
    const text = await res.text();
    const ms = performance.now() - s;
    if (!res.ok) throw new Error(`${label || 'walk'}: ${res.status} on page ${pages.length} of ${first}: ${text.slice(0, 300)}`);
    pages.push({ path: next, ms, start: resources });
    resources += matches(text);
    next = nextLink(text);
    if (label && Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(`  ${label}: ${pages.length} pages, ${resources.toLocaleString('en-US')} resources`);
    }
  }
  return { pages, next, resources, totalMs: performance.now() - t0 };
}

export interface Walk extends DeepWalk {
  windows: { name: string; paths: string[] }[];
}

/** Follows the next links of `first` (pages of 1000 practitioners) to the end, one request at a time. */
export async function deepWalk(port: number, first: string, headers: Record<string, string>): Promise<Walk> {
  const pageSize = 1000;
  const w = await walk(port, first, headers, Infinity, 'deep walk');
  const depthTargets: { label: string; depth: number }[] = [
    w.resources > 200_000 ? { label: 'depth 100k', depth: 100_000 } : { label: 'depth 50 %', depth: Math.floor(w.resources / 2) },
    w.resources > 1_000_000 ? { label: 'depth 1M', depth: 1_000_000 } : { label: 'last page (100 %)', depth: w.pages.at(-1)!.start },
  ];
  const depths = depthTargets.map((t) => {
    const page = Math.min(w.pages.length - 1, Math.floor(t.depth / pageSize));
    return { label: t.label, depth: w.pages[page].start, page, ms: w.pages[page].ms };
  });
  const win = (page: number) => w.pages.slice(Math.max(1, page - 4), page + 1).map((p) => p.path);
  return {
    first,
    pageSize,
    pages: w.pages.length,
    resources: w.resources,
    totalMs: w.totalMs,
    firstPageMs: w.pages[0].ms,
    depths,
    windows: [
      { name: 'deep-first', paths: [first] },
      { name: 'deep-mid', paths: win(depths[0].page) },
      { name: 'deep-last', paths: win(depths[1].page) },
    ],
  };
}

/** The next links of these first pages (those that have one), in the order of the first pages. */
export async function nextPages(port: number, firsts: string[], headers: Record<string, string>): Promise<string[]> {
  const links: (string | undefined)[] = [];
  await fetchPaths(port, firsts, headers, 4, 300_000, (i, text) => (links[i] = nextLink(text)));
  return links.filter((x): x is string => x !== undefined);
}

/**
 * Per sort, the pages at depth `depth` (or at half the matches of a search that has fewer) as a
 * client asks for them: reached through next links of pages of 1000, then taken without `_count`,
 * so the page is of the default size. Up to `perSort` paths per sort: the links of the pages
 * ending at that depth, spread over the sort's first pages.
 */
export async function sortedDeep(port: number, sorts: Sort[], headers: Record<string, string>, depth = 100_000, perSort = 3):
  Promise<{ paths: string[]; depths: { label: string; depth: number[] }[] }> {
  const groups: string[][] = [];
  const depths: { label: string; depth: number[] }[] = [];
  for (const sort of sorts) {
    const links: string[] = [];
    const at: number[] = [];
    const per = Math.ceil(perSort / Math.max(1, sort.paths.length));
    for (const first of sort.paths) {
      const w = await walk(port, withCount(first, 1000), headers, depth, `sorted-deep ${sort.label}`);
      let found: { path: string; start: number }[];
      if (w.next && w.resources >= depth) {
        found = [...w.pages.slice(1), { path: w.next, start: w.resources }];
      } else {
        const half = Math.floor(w.resources / 2);
        if (half >= 1000) found = w.pages.filter((p) => p.start > 0 && p.start <= half);
        else if (half >= 1) {
          // fewer matches than two pages of 1000: one page of half of them, then its next link
          const v = await walk(port, withCount(first, half), headers, half);
          found = v.next ? [{ path: v.next, start: v.resources }] : [];
        } else found = [];
      }
      for (const p of found.slice(-per)) {
        links.push(withCount(p.path, undefined));
        at.push(p.start);
      }
    }
    groups.push(links);
    depths.push({ label: sort.label, depth: at });
  }
  return { paths: balanced(groups), depths };
}
