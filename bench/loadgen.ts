// The HTTP load generator of the benchmark, in a process of its own (see drive.ts httpRun): it
// receives the options of one run at a time over IPC, runs autocannon, and answers its RunStats.

import { autocannonRun, type HttpRunOptions } from './drive.ts';

process.on('message', (opts: HttpRunOptions) => {
  autocannonRun(opts).then(
    (stats) => process.send!({ stats }),
    (err: unknown) => process.send!({ error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
