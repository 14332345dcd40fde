import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';

/** A failure of the input as a whole (a damaged archive): the import stops with this message. */
export class OpenDataError extends Error {
  override name = 'OpenDataError';
}

export interface ZipEntry {
  name: string;
  /** its size once decompressed, as the archive's directory says. */
  size: number;
  /** The entry's bytes, decompressed; throws OpenDataError at the end when its CRC-32 is wrong. */
  chunks(): AsyncGenerator<Buffer>;
}

export interface ZipArchive {
  file: string;
  /** file entries in central-directory order (directories left out). */
  entries: ZipEntry[];
  close(): void;
}

/** Whether a file starts like a ZIP archive (a local file header, or the end record of an empty one). */
export async function isZip(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fh.read(head, 0, 4, 0);
    return bytesRead === 4 && head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6));
  } finally {
    await fh.close();
  }
}

/**
 * Opens an archive and reads its central directory. A truncated download has lost the end record
 * the directory is found from (yauzl then fails to open it): that is said as such.
 */
export async function openZip(file: string): Promise<ZipArchive> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
  } catch (err) {
    const message = (err as Error).message;
    if (/end of central directory record signature not found/i.test(message)) {
      throw new OpenDataError(`${file}: not a complete ZIP archive (truncated download?)`);
    }
    throw new OpenDataError(`${file}: not a readable ZIP archive (${message})`);
  }
  const entries: ZipEntry[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      if (!entry.fileName.endsWith('/')) entries.push(zipEntry(file, zip, entry));
    }
  } catch (err) {
    zip.close();
    throw new OpenDataError(`${file}: corrupt ZIP directory (${(err as Error).message})`);
  }
  return { file, entries, close: () => zip.close() };
}

function zipEntry(file: string, zip: yauzl.ZipFile, entry: yauzl.Entry): ZipEntry {
  const where = `${file}!${entry.fileName}`;
  return {
    name: entry.fileName,
    size: entry.uncompressedSize,
    async *chunks() {
      let crc = 0;
      try {
        const stream = await zip.openReadStreamPromise(entry);
        for await (const chunk of stream) {
          crc = crc32(chunk as Buffer, crc);
          yield chunk as Buffer;
        }
      } catch (err) {
        throw new OpenDataError(`${where}: corrupt ZIP entry (${(err as Error).message})`);
      }
      // yauzl checks sizes but not the CRC-32: a damaged stored entry is caught only here.
      if (crc >>> 0 !== entry.crc32 >>> 0) throw new OpenDataError(`${where}: corrupt ZIP entry (CRC-32 mismatch)`);
    },
  };
}

/**
 * Reads every entry to its end, so that a damaged archive fails before anything of it is used
 * (yauzl finds most damage only while it inflates, and the CRC only at an entry's end).
 */
export async function verifyZip(archive: ZipArchive): Promise<void> {
  for (const entry of archive.entries) {
    for await (const _ of entry.chunks());
  }
}
