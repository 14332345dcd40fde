/**
 * COPY text format (the default of COPY … FROM STDIN): backslash, tab, newline and carriage return
 * escaped; also U+0002, written as the escape \x02, because the raw character marks a token system
 * whose interned id is not known yet (src/store/copy-encode.ts SYSTEM_MARK).
 */
const NEEDS_ESCAPE = /[\\\t\n\r\x02]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x02': '\\x02' };

export const copyText = (s: string) => (NEEDS_ESCAPE.test(s) ? s.replace(/[\\\t\n\r\x02]/g, (c) => COPY_ESCAPES[c]) : s);

/** A text[] value in COPY text format: `{"a","b"}`, each element's quotes and backslashes escaped. */
export const copyTextArray = (values: readonly string[]) =>
  copyText(`{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
