import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import path from 'node:path';
import { ROOT } from './app.ts';
import { userNode } from './command.ts';

/** A free port on the loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * GET on 127.0.0.1:`port` over a new connection (no keep-alive): with WORKERS > 1, each request may
 * land on another worker. `key`: the SERVICE-API-KEY sent, none when undefined.
 */
export function getFresh(port: number, path: string, key?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { ...(key ? { 'service-api-key': key } : {}), connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${path} in 10 s`)));
    req.end();
  });
}

/**
 * The real server as `npm start` runs it: its build (dist/server.js, made before the run by
 * tests/helpers/prepare.mjs), as a child process of `env` (on top of this one's; undefined unsets)
 * in `cwd` (the project by default); `ready(n)` waits for n "server ready" lines and the banner (a write of its
 * own, which may reach this pipe after the last ready line), and returns how many ready lines came.
 */
export function startServer(t: { teardown(fn: () => unknown): void }, env: Record<string, string | undefined>, cwd = ROOT) {
  const merged: Record<string, string | undefined> = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
  const server = spawn(...userNode([path.join(ROOT, 'dist', 'server.js')]), {
    cwd,
    env: Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  server.stdout.on('data', (c) => ((output += c), (stdout += c)));
  server.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
  });
  const up = (n: number) => (output.match(/FHIR server ready/g)?.length ?? 0) >= n && /^Try it:$/m.test(stdout);
  const ready = async (n: number) => {
    for (let i = 0; i < 600 && !up(n) && server.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
    return output.match(/FHIR server ready/g)?.length ?? 0;
  };
  return {
    server,
    exited,
    ready,
    /** stdout and stderr, as they came. */
    get output() {
      return output;
    },
    /** stdout alone: what a person at the terminal reads (the log lines are JSON). */
    get stdout() {
      return stdout;
    },
  };
}
