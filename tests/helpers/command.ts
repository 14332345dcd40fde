/**
 * A program the tests start (a command's build, the server, npm) as users start it. tap gives every
 * process a test spawns its process-info loader and coverage through NODE_OPTIONS, whatever `env` the
 * test passes: not what users run, and a large share of a small command's CPU. `env` sets
 * NODE_OPTIONS back to what it was without tap, then runs the program.
 */
const USER_NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '')
  .split(/\s+/)
  .filter((option) => option && !option.includes('@tapjs/'))
  .join(' ');

/** The file and arguments to give spawn (or execFile, spawnSync) to run `program` with `args`. */
export function userCommand(program: string, args: readonly string[]): [string, string[]] {
  return ['env', [`NODE_OPTIONS=${USER_NODE_OPTIONS}`, program, ...args]];
}

/** `userCommand` for this node: `node …args`. */
export const userNode = (args: readonly string[]): [string, string[]] => userCommand(process.execPath, args);
