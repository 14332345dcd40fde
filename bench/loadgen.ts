// The HTTP load generator of the benchmark, in a process of its own (see drive.ts httpRun): it
// receives one run at a time over IPC (autocannon on a class, or the mixed run) and answers its RunStats.

import { loadgenJob, type LoadgenJob } from './drive.ts';

process.on('message', (job: LoadgenJob) => {
  loadgenJob(job).then(
    (stats) => process.send!({ stats }),
    (err: unknown) => process.send!({ error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
