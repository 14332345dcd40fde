import { connect, type Socket } from 'node:net';

/**
 * The TCP sockets handed to postgres.js (its `socket` option).
 *
 * TCP_NODELAY: postgres.js leaves Nagle's algorithm on, so a COPY (data, then CopyDone in a second
 * small write) waited for the peer's delayed ACK.
 *
 * The socket is handed over at once, still connecting, as postgres.js's own would be: its error and
 * close listeners are there before the connection can fail, so a refused or lost connection reaches
 * its reconnection (a socket handed over only once connected left a refused reconnect "connecting"
 * for ever), and its connect_timeout covers the attempt. A connect error raised synchronously
 * (ENETUNREACH) is emitted before postgres.js listens: it is held and handed to its listener.
 *
 * With `silenceMs`, a socket that owes answers and has heard nothing from the server for that long
 * is destroyed (see SilenceWatch): postgres.js fails its queries and reconnects.
 */
export function pgSocket(options: { host: string[]; port: number[] }, silenceMs?: number): Socket {
  const socket = connect({ host: options.host[0], port: options.port[0], noDelay: true });
  let early: Error | undefined;
  const hold = (err: Error) => void (early = err);
  const adopt = (event: string | symbol, listener: (err: Error) => void) => {
    if (event !== 'error') return;
    socket.off('newListener', adopt).off('error', hold);
    if (early) process.nextTick(listener, early);
  };
  socket.on('error', hold).on('newListener', adopt);
  if (silenceMs !== undefined && silenceMs > 0) new SilenceWatch(socket, silenceMs);
  return socket;
}

const STARTUP_PROTOCOL = 196608; // 3.0
const FIRST_UNTYPED = 'first';

/**
 * A network cut sends no reset: a query already sent waits for the kernel to give up on the
 * connection (many minutes; Node cannot set TCP_USER_TIMEOUT). The server answers every statement
 * within its statement timeout, so a connection that owes answers and has heard nothing for longer
 * than that is gone. What is owed is counted from the protocol itself: every StartupMessage, Query
 * and Sync the client writes ends with one ReadyForQuery from the server. Connections that speak
 * TLS or send a CancelRequest are not watched (their bytes cannot be read, or no answer comes).
 */
class SilenceWatch {
  private owed = 0;
  /** when the server was last heard, or when it started to owe. */
  private since = 0;
  private out = new MessageReader(FIRST_UNTYPED);
  private in = new MessageReader('typed');
  private timer: NodeJS.Timeout | undefined;
  private off = false;

  constructor(
    private readonly socket: Socket,
    private readonly silenceMs: number,
  ) {
    const write = socket.write;
    const self = this;
    socket.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      if (!self.off && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) self.sent(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      return write.call(this, chunk as never, ...(rest as never[]));
    } as Socket['write'];
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.once('close', () => this.stop());
  }

  private sent(chunk: Buffer): void {
    for (const m of this.out.read(chunk)) {
      if (m.untyped !== undefined) {
        if (m.untyped !== STARTUP_PROTOCOL) return this.stop(); // SSLRequest, CancelRequest, GSSENCRequest
        this.owe();
      } else if (m.type === 0x51 /* Q */ || m.type === 0x53 /* S */) this.owe();
    }
  }

  private received(chunk: Buffer): void {
    if (this.off) return;
    this.since = Date.now();
    for (const m of this.in.read(chunk)) if (m.type === 0x5a /* Z */ && this.owed > 0) this.owed--;
  }

  private owe(): void {
    if (this.owed++ === 0) this.since = Date.now();
    this.timer ??= setInterval(() => this.check(), Math.min(1000, this.silenceMs)).unref();
  }

  private check(): void {
    if (this.owed === 0 || Date.now() - this.since < this.silenceMs) return;
    // Closed without an error: postgres.js fails what it has sent with CONNECTION_CLOSED (transient).
    this.stop();
    this.socket.destroy();
  }

  private stop(): void {
    this.off = true;
    clearInterval(this.timer);
  }
}

/**
 * The protocol's messages as they cross a socket, whatever the chunks: a type byte and a length,
 * or (the client's first message) a length and a code. Only headers are read; bodies are skipped.
 */
class MessageReader {
  private header: Buffer = Buffer.alloc(0);
  private skip = 0;

  constructor(private next: 'first' | 'typed') {}

  *read(chunk: Buffer): Generator<{ type?: number; untyped?: number }> {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      const size = this.next === FIRST_UNTYPED ? 8 : 5;
      const need = size - this.header.length;
      const take = chunk.subarray(at, at + need);
      this.header = this.header.length ? Buffer.concat([this.header, take]) : take;
      at += take.length;
      if (this.header.length < size) return;
      if (this.next === FIRST_UNTYPED) {
        this.skip = this.header.readUInt32BE(0) - 8;
        yield { untyped: this.header.readUInt32BE(4) };
        this.next = 'typed';
      } else {
        this.skip = this.header.readUInt32BE(1) - 4;
        yield { type: this.header[0] };
      }
      this.header = Buffer.alloc(0);
    }
  }
}
