// The HTTP load generator of one benchmark run, in a process of its own (see drive.ts httpRun):
// reads the run's options as JSON on stdin, runs autocannon, prints the RunStats as JSON.

import { autocannonRun, type HttpRunOptions } from './drive.ts';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const stats = await autocannonRun(JSON.parse(input) as HttpRunOptions);
process.stdout.write(JSON.stringify(stats), () => process.exit(0));
