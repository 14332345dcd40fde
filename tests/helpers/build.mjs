// Run by tap before every run (package.json "tap.before"): the build that `npm start` and the
// commands (`npm run load`, `import`, `sync`, `keys`) run, made once, so that the tests spawn what
// users run and no test file rebuilds it while another one starts it.
import { execFileSync } from 'node:child_process';

execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
