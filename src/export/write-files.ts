import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type postgres from 'postgres';
import type { ResourceType } from '../registry/index.ts';
import type { OutputFile } from './jobs.ts';

/**
 * One type of an export: a cursor over the type's resources, read as raw bytes (jsonb's text, one
 * line of JSON: no decoding, no escaping) a batch at a time into NDJSON files of about `fileBytes`
 * each. Only a batch and a write buffer are in memory, whatever the size of the export.
 */
export interface CopyOptions {
  type: ResourceType;
  since: Date | null;
  dir: string;
  fileBytes: number;
  signal: AbortSignal;
  /** rows written so far for this type, called after each write. */
  onRows?: (rows: number) => void;
}

/** Rows fetched from the cursor at a time. */
const BATCH_ROWS = 1000;
/** Bytes gathered before a write to the file. */
const WRITE_BYTES = 256 * 1024;
const NEWLINE = Buffer.from('\n');

/** Writes one type's files in `dir`; returns them (none when the type has no resource to export). */
export async function copyType(tx: postgres.TransactionSql<{}>, o: CopyOptions): Promise<OutputFile[]> {
  const files: OutputFile[] = [];
  let fh: FileHandle | undefined;
  let current: OutputFile | undefined;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let rows = 0;

  const flush = async () => {
    if (!pendingBytes) return;
    const buf = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await fh!.write(buf);
    o.onRows?.(rows);
  };
  const close = async () => {
    await flush();
    await fh!.close();
    fh = undefined;
    files.push(current!);
    current = undefined;
  };

  const query = o.since
    ? tx.unsafe('select content from resource where type = $1 and last_updated > $2', [o.type, o.since])
    : tx.unsafe('select content from resource where type = $1', [o.type]);
  try {
    // Leaving the loop (a cancel, an error) closes the cursor.
    for await (const batch of query.raw().cursor(BATCH_ROWS) as AsyncIterable<Buffer[][]>) {
      o.signal.throwIfAborted();
      for (const [content] of batch) {
        if (!current) {
          current = { type: o.type, file: `${o.type}-${files.length + 1}.ndjson`, count: 0, bytes: 0 };
          fh = await open(path.join(o.dir, current.file), 'wx');
        }
        pending.push(content, NEWLINE);
        pendingBytes += content.length + 1;
        current.bytes += content.length + 1;
        current.count++;
        rows++;
        if (current.bytes >= o.fileBytes) await close();
        else if (pendingBytes >= WRITE_BYTES) await flush();
      }
    }
    if (current) await close();
  } finally {
    await fh?.close().catch(() => {});
  }
  return files;
}
