import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';

/** A line of a text file: its number (1-based) and its text, without the line end. */
export interface Line {
  n: number;
  text: string;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * A line's bytes as text. The encoding is decided per line: bytes that are valid UTF-8 are UTF-8,
 * anything else is Windows-1252 (iconv-lite, which maps 0x80–0x9F to € … œ ’ Ÿ, unlike Latin-1).
 * Per line, because the file is streamed and its first lines may be pure ASCII whatever it is, and
 * because Windows-1252 text with letters outside ASCII is virtually never valid UTF-8, so a line is
 * never read in the wrong one even in a file that mixes both.
 */
export function decodeLine(bytes: Buffer): string {
  return isUtf8(bytes) ? bytes.toString('utf8') : iconv.decode(bytes, 'win1252');
}

/**
 * The lines of a stream of bytes, split on `\n`, a `\r` before it dropped, a UTF-8 BOM at the start
 * dropped. Memory holds one chunk and the line it cuts; the consumer's pace is the stream's.
 */
export async function* linesOf(chunks: AsyncIterable<Buffer>): AsyncGenerator<Line> {
  let n = 0;
  let rest: Buffer | undefined;
  let first = true;
  for await (const chunk of chunks) {
    let buf = rest ? Buffer.concat([rest, chunk]) : chunk;
    if (first) {
      if (buf.length < BOM.length && buf.indexOf(10) < 0) {
        rest = buf;
        continue;
      }
      buf = withoutBom(buf);
      first = false;
    }
    const last = buf.lastIndexOf(10);
    if (last < 0) {
      rest = buf;
      continue;
    }
    // Whole lines are valid UTF-8 together iff each is (0x0A never occurs inside a UTF-8 sequence).
    const utf8 = isUtf8(buf.subarray(0, last));
    let start = 0;
    while (start <= last) {
      const end = buf.indexOf(10, start);
      const bytes = withoutCr(buf.subarray(start, end));
      yield { n: ++n, text: utf8 ? bytes.toString('utf8') : decodeLine(bytes) };
      start = end + 1;
    }
    rest = last + 1 < buf.length ? Buffer.from(buf.subarray(last + 1)) : undefined;
  }
  if (rest && first) rest = withoutBom(rest);
  if (rest && rest.length > 0) yield { n: ++n, text: decodeLine(withoutCr(rest)) };
}

function withoutBom(bytes: Buffer): Buffer {
  return bytes.subarray(0, BOM.length).equals(BOM) ? bytes.subarray(BOM.length) : bytes;
}

function withoutCr(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, -1) : bytes;
}
