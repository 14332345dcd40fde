/** A command line the command refuses: one line on stderr, nothing done. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `--name N`: an integer within [min, max], else a UsageError naming the option and the value given. */
export function integerOption(name: string, raw: string, max: number, min = 1): number {
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) throw new UsageError(`--${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  return v;
}
