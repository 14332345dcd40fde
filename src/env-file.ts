import { existsSync, readFileSync } from 'node:fs';
import { ConfigError } from './config.ts';

/**
 * `.env` in the working directory, when there is one, read into process.env by the entry points
 * (the server and the CLIs that read the configuration) before loadConfig, which stays pure: a
 * variable already in the environment wins over the file. Node's own parser reads it
 * (process.loadEnvFile); a line it would misread (not NAME=value, a quote never closed) stops the
 * process first with a ConfigError naming the line, instead of swallowing the next variable.
 */
export function loadDotEnv(file = '.env'): void {
  if (!existsSync(file)) return;
  checkDotEnv(readFileSync(file, 'utf8'), file);
  process.loadEnvFile(file);
}

const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=\s*(.*)$/;

/** Throws a ConfigError for the first line that is neither NAME=value, a # comment nor blank. */
export function checkDotEnv(text: string, file: string): void {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(#|$)/.test(lines[i])) continue;
    const value = ASSIGNMENT.exec(lines[i])?.[1];
    // The line's first word only: a malformed line may hold a secret.
    const start = /^[\w.-]{0,40}/.exec(lines[i].trim())?.[0];
    if (value === undefined) throw new ConfigError(`${file} line ${i + 1} ("${start} …"): expected NAME=value, a # comment or a blank line`);
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && value.indexOf(quote, 1) < 0) {
      // A quoted value goes on over the next lines, to its closing quote.
      const opened = i;
      while (++i < lines.length && !lines[i].includes(quote));
      if (i === lines.length) throw new ConfigError(`${file} line ${opened + 1} (${start}): the ${quote} that opens its value is never closed`);
    }
  }
}
