import net from 'node:net';

/**
 * Exact bytes on a socket, as a client such as curl writes them (raw UTF-8 in a URL, a body sent
 * in parts …), for what an HTTP client library would encode or refuse. Resolves with everything
 * the server wrote, as latin1 (byte for byte), once it closes the connection.
 */
export function rawRequest(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    s.setEncoding('latin1');
    s.on('data', (d) => (out += d));
    s.on('error', () => resolve(out));
    s.on('close', () => resolve(out));
  });
}

/** An answer of rawRequest: its status, headers (lower-case names) and body decoded as UTF-8. */
export function parseRaw(out: string): { status: number; headers: Record<string, string>; body: string } {
  const end = out.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = out.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: Buffer.from(out.slice(end + 4), 'latin1').toString('utf8') };
}
