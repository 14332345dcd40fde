import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKey, KEY_NAME_RE, KeyError, listKeys, revokeKey, type KeyInfo } from '../auth/keys.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase, type Sql } from '../db.ts';
import { loadDotEnv } from '../env-file.ts';
import { UsageError } from './usage.ts';

export const USAGE = `usage: npm run keys -- <command>

  create --name <name> [--rate-limit <N>]
                  creates an API key and prints it (once: only its digest is stored).
                  --rate-limit: requests per second for this key (0 = unlimited);
                  without it, RATE_LIMIT applies
  list            names, creation and revocation dates, rate limits (never a key)
  revoke <name>   revokes a key; a running server refuses it within 30 s

Works on DATABASE_URL, or on the embedded database in DATA_DIR.
Exit code: 0 done, 1 failed (unknown or duplicate name, database unreachable), 2 bad usage.`;

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

interface Command {
  run: (sql: Sql, io: Io) => Promise<number>;
}

function fmtDate(d: Date | null): string {
  return d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-';
}

function table(keys: KeyInfo[]): string[] {
  const rows = [
    ['NAME', 'CREATED', 'REVOKED', 'RATE LIMIT'],
    ...keys.map((k) => [k.name, fmtDate(k.createdAt), fmtDate(k.revokedAt), k.rateLimit === null ? 'default' : k.rateLimit === 0 ? 'unlimited' : `${k.rateLimit}/s`]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
}

/** Parses the arguments into a command; throws UsageError. Nothing touches the database here. */
export function parseCommand(argv: string[]): Command | 'help' {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        'rate-limit': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = args;
  if (values.help || positionals[0] === 'help') return 'help';
  const [cmd, ...rest] = positionals;
  const noExtra = (allowed: string[]) => {
    for (const opt of ['name', 'rate-limit'] as const) {
      if (values[opt] !== undefined && !allowed.includes(opt)) throw new UsageError(`${cmd} takes no --${opt}`);
    }
  };
  switch (cmd) {
    case 'create': {
      noExtra(['name', 'rate-limit']);
      if (rest.length) throw new UsageError(`create takes no positional argument (got "${rest[0]}"): use --name <name>`);
      const name = values.name;
      if (!name) throw new UsageError('create needs --name <name>');
      if (!KEY_NAME_RE.test(name)) throw new UsageError(`invalid key name "${name}": 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
      let rateLimit: number | undefined;
      if (values['rate-limit'] !== undefined) {
        if (!/^\d{1,9}$/.test(values['rate-limit'])) throw new UsageError(`--rate-limit must be a whole number ≥ 0, got "${values['rate-limit']}"`);
        rateLimit = Number(values['rate-limit']);
      }
      return {
        run: async (sql, io) => {
          const { key, info } = await createKey(sql, { name, rateLimit });
          io.out(key);
          io.err(
            `created API key "${info.name}"${info.rateLimit === null ? '' : ` (rate limit ${info.rateLimit === 0 ? 'unlimited' : `${info.rateLimit}/s`})`}: ` +
              'store it now, it cannot be shown again. Send it in the SERVICE-API-KEY header.',
          );
          return 0;
        },
      };
    }
    case 'list': {
      noExtra([]);
      if (rest.length) throw new UsageError(`list takes no argument (got "${rest[0]}")`);
      return {
        run: async (sql, io) => {
          const keys = await listKeys(sql);
          if (keys.length === 0) io.err('no API keys yet: npm run keys -- create --name <name>');
          else for (const line of table(keys)) io.out(line);
          return 0;
        },
      };
    }
    case 'revoke': {
      noExtra([]);
      if (rest.length !== 1) throw new UsageError('revoke takes exactly one key name: npm run keys -- revoke <name>');
      const name = rest[0];
      return {
        run: async (sql, io) => {
          const { info, already } = await revokeKey(sql, name);
          io.err(
            already
              ? `API key "${info.name}" was already revoked on ${fmtDate(info.revokedAt)}`
              : `revoked API key "${info.name}": running servers refuse it within 30 s`,
          );
          return 0;
        },
      };
    }
    case undefined:
      throw new UsageError('a command is needed: create, list or revoke');
    default:
      throw new UsageError(`unknown command "${cmd}": create, list or revoke`);
  }
}

/**
 * Runs the CLI. `sql` given (tests): that database; otherwise DATABASE_URL or the embedded
 * database in DATA_DIR, opened like src/cli/load.ts does. Returns the exit code.
 */
export async function runKeysCli(argv: string[], io: Io, opts: { sql?: Sql; env?: Record<string, string | undefined> } = {}): Promise<number> {
  let cmd: Command | 'help';
  try {
    cmd = parseCommand(argv);
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (cmd === 'help') {
    io.out(USAGE);
    return 0;
  }
  let sql = opts.sql;
  let close = async () => {};
  try {
    if (!sql) {
      const config = loadConfig(opts.env ?? process.env);
      const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, persistent: true, profile: { sharedBuffers: config.embeddedSharedBuffers }, max: 2 });
      sql = db.sql;
      close = () => db.close();
    }
    return await cmd.run(sql, io);
  } catch (err) {
    if (err instanceof KeyError) io.err(err.message);
    else if (err instanceof ConfigError) io.err(`configuration: ${err.message}`);
    else io.err(`keys: ${(err as Error).message}`);
    return 1;
  } finally {
    await close().catch(() => {});
  }
}

const isMain = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  try {
    loadDotEnv();
  } catch (err) {
    console.error(err instanceof ConfigError ? `configuration: ${err.message}` : `keys: ${(err as Error).message}`);
    process.exit(1);
  }
  runKeysCli(process.argv.slice(2), { out: (l) => console.log(l), err: (l) => console.error(l) }).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`keys: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
