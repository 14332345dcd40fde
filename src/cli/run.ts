/**
 * Runs a command's `main`: its number is the exit code, and a thrown error is one line on stderr
 * (`failure`) and exit code 1. A `main` still pending when nothing else is (a promise no event
 * will ever settle) is a failure too: Node would exit 0 without a word, which a cron job takes
 * for a success.
 */
export function runCommand(main: () => Promise<number>, failure: (err: unknown) => string, stalled: string): void {
  let settled = false;
  process.once('beforeExit', () => {
    if (settled) return;
    console.error(stalled);
    process.exit(1);
  });
  main().then(
    (code) => {
      settled = true;
      process.exit(code);
    },
    (err) => {
      settled = true;
      console.error(failure(err));
      process.exit(1);
    },
  );
}
