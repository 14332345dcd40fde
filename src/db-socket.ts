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
 * With `silenceMs`, a socket on which nothing has passed for that long is destroyed: postgres.js
 * fails its queries with CONNECTION_CLOSED and reconnects.
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
  if (silenceMs !== undefined && silenceMs > 0) {
    // A network cut sends no reset, and the kernel gives up on a connection only after many minutes
    // (Node cannot set TCP_USER_TIMEOUT). The server answers every statement within its statement
    // timeout, so a connection on which nothing has passed for longer is either idle, and closing it
    // costs the next query a reconnection, or gone.
    socket.setTimeout(silenceMs, () => socket.destroy());
  }
  return socket;
}
