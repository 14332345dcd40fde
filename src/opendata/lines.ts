import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';

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
