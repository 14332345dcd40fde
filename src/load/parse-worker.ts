import { parentPort } from 'node:worker_threads';
import { loaderTask } from './parse-task.ts';

/** A loader worker thread (src/load/parallel.ts ParsePool): src/load/parse-task.ts does the work. */
parentPort!.on('message', loaderTask);
