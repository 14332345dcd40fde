import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** A `COPY … FROM STDIN` statement not yet sent: postgres.js's `sql\`copy …\`` or `sql.unsafe('copy …')`. */
interface CopyStatement {
  writable(): Promise<Writable>;
}

/**
 * One COPY … FROM STDIN, for every writer of the code (bulk load, write path, import staging).
 * Its invariant: whatever ends the statement — the server refusing a row, the connection closing,
 * the writer aborting — rejects the writer's next wait (`write` past the buffer, `end`), never
 * leaves it waiting. An error the stream emits while nobody waits is kept for that next wait.
 */
export class CopyIn {
  private constructor(
    private readonly stream: Writable,
    private readonly finished: Promise<void>,
  ) {}

  static async open(statement: CopyStatement): Promise<CopyIn> {
    const stream = await statement.writable();
    const finished = new Promise<void>((resolve, reject) => stream.once('finish', resolve).once('error', reject));
    finished.catch(() => {}); // awaited by write() and end()
    return new CopyIn(stream, finished);
  }

  /** Sends `data`; waits only when the stream's buffer is full. */
  async write(data: string | Uint8Array): Promise<void> {
    if (this.stream.destroyed) return this.finished;
    if (!this.stream.write(data)) await Promise.race([once(this.stream, 'drain'), this.finished]);
  }

  /** Sends the last `data` and waits for the server to accept the whole statement. */
  end(data?: string | Uint8Array): Promise<void> {
    if (!this.stream.destroyed) this.stream.end(data);
    return this.finished;
  }

  /** Ends the statement with `err` (the server rolls it back). */
  abort(err: Error): void {
    this.stream.destroy(err);
  }
}
