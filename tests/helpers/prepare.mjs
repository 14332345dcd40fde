// Run by tap before every run (package.json "tap.before"):
// - the build that `npm start` and the commands (`npm run load`, `import`, `sync`, `keys`) run, made
//   once, so that the tests spawn what users run and no test file rebuilds it while another starts it;
// - one embedded cluster initialised for the run, which each test process copies instead of running
//   initdb (tests/helpers/pg-template.ts).
import { execFileSync } from 'node:child_process';

execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
execFileSync(process.execPath, ['--import', 'tsx', 'tests/helpers/pg-template.ts'], { stdio: 'inherit' });
