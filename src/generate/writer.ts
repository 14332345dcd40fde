// NDJSON output with bounded memory: each resource's JSON text is UTF-8 encoded straight into
// an 8 MB buffer; a full buffer is written synchronously (plain) or pushed into a gzip stream
// whose backpressure is awaited. Encoding line by line avoids joining megabytes of strings.

import fs from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';

const BUFFER_BYTES = 8 * 1024 * 1024;
/** Fast gzip level: the output compresses ~10× anyway and generation stays the bottleneck. */
export const GZIP_LEVEL = 3;

export class NdjsonWriter {
  readonly path: string;
  count = 0;
  /** Uncompressed bytes. */
  bytes = 0;
  private buf = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  /** Lines that did not fit in the buffer, written right after it (keeps file order). */
  private pending: Buffer[] = [];
  private fd: number | null = null;
  private gzip: zlib.Gzip | null = null;
  private file: fs.WriteStream | null = null;
  private error: Error | null = null;

  constructor(path: string, gzip: boolean) {
    this.path = path;
    if (gzip) {
      this.gzip = zlib.createGzip({ level: GZIP_LEVEL });
      this.file = fs.createWriteStream(path);
      this.gzip.pipe(this.file);
      // Surface stream errors (disk full, permissions) at the next flush instead of crashing the process.
      this.gzip.on('error', (e) => (this.error ??= e));
      this.file.on('error', (e) => (this.error ??= e));
    } else {
      this.fd = fs.openSync(path, 'w');
    }
  }

  /**
   * Queue one resource (its JSON text, without newline); returns true when the caller should `await flush()` (buffer nearly full).
   * A line longer than the free space (at most 3 bytes per UTF-16 unit) goes through a one-off buffer.
   */
  add(line: string): boolean {
    this.count++;
    if (line.length * 3 + 1 > this.buf.length - this.used) {
      const encoded = Buffer.from(`${line}\n`, 'utf8');
      if (encoded.length > this.buf.length - this.used) {
        this.pending.push(encoded);
        return true;
      }
      encoded.copy(this.buf, this.used);
      this.used += encoded.length;
      return this.used > this.buf.length - 65536;
    }
    this.used += this.buf.write(line, this.used, 'utf8');
    this.buf[this.used++] = 10;
    return this.used > this.buf.length - 65536;
  }

  async flush(): Promise<void> {
    if (this.error) throw this.error;
    if (this.used > 0) {
      await this.emit(this.buf.subarray(0, this.used));
      // The gzip stream may still hold a reference to the old bytes: never reuse them.
      if (this.gzip) this.buf = Buffer.allocUnsafe(BUFFER_BYTES);
      this.used = 0;
    }
    const pending = this.pending;
    this.pending = [];
    for (const b of pending) await this.emit(b);
  }

  private async emit(buf: Buffer): Promise<void> {
    this.bytes += buf.length;
    if (this.fd !== null) {
      let off = 0;
      while (off < buf.length) off += fs.writeSync(this.fd, buf, off, buf.length - off);
    } else if (this.gzip && !this.gzip.write(buf)) {
      await once(this.gzip, 'drain');
    }
  }

  /** Flush, close, and return the size of the file on disk. */
  async close(): Promise<number> {
    await this.flush();
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    } else if (this.gzip && this.file) {
      this.gzip.end();
      await finished(this.file);
      if (this.error) throw this.error;
    }
    return fs.statSync(this.path).size;
  }
}

/**
 * Drain a resource generator into a writer, honouring backpressure; what the generator put in
 * `companion.queue` meanwhile (resources made with these) goes into the companion's writer.
 */
export async function writeAll(writer: NdjsonWriter, resources: Iterable<string>, companion?: { writer: NdjsonWriter; queue: string[] }): Promise<void> {
  for (const r of resources) {
    if (writer.add(r)) await writer.flush();
    if (!companion?.queue.length) continue;
    for (const c of companion.queue) if (companion.writer.add(c)) await companion.writer.flush();
    companion.queue.length = 0;
  }
}
