/**
 * `npm start`'s prestart: builds the web console into dist/console when it is missing, so that a
 * fresh clone serves /console without a separate build step. Does nothing when a build exists.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const index = new URL('../dist/console/index.html', import.meta.url);
if (!fs.existsSync(index)) {
  console.error('dist/console is missing: building the console (npm run build:console)');
  const run = spawnSync('npm', ['run', '-s', 'build:console'], { stdio: 'inherit' });
  if (run.status !== 0) {
    console.error('the console build failed; the API still starts, and /console answers 503 until it is built');
  }
}
