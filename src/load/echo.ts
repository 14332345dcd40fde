/**
 * Input echoed in a loader message is cut to a readable length: a rejected 100 KB id must not
 * become a 100 KB line of the report.
 */
export const ECHO_MAX = 80;

/** Longest reason reported for an entry, whatever it echoes. */
const REASON_MAX = 4 * ECHO_MAX;

/**
 * `s` cut after `max` characters (never inside a surrogate pair), "…" marking the cut; a quoted
 * value keeps its closing quote.
 */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const end = s.charCodeAt(max - 1) >= 0xd800 && s.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return `${s.slice(0, end)}…${s.length > 1 && s.startsWith('"') && s.endsWith('"') ? '"' : ''}`;
}

/** An input value as a message shows it: its JSON, cut after ECHO_MAX characters. */
export function echo(value: unknown): string {
  return cut(JSON.stringify(value) ?? String(value), ECHO_MAX);
}

/** A quoted value in a message ("…", JSON escapes inside). */
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

/**
 * A reject's reason as the loader reports it: every quoted value (the validators quote the input
 * they echo) cut as `echo` cuts it, and the whole reason cut to REASON_MAX.
 */
export function clipReason(reason: string): string {
  if (reason.length <= ECHO_MAX) return reason;
  return cut(
    reason.replace(QUOTED, (q) => cut(q, ECHO_MAX)),
    REASON_MAX,
  );
}
