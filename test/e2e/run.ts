/**
 * `npm run test:e2e`: builds the console and the docs, then runs the Playwright suite in Debian's Chromium.
 * Skips (exit 0, with a clear message) where /usr/bin/chromium is absent; never downloads a browser.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export const CHROMIUM = process.env.BRIER_CHROMIUM ?? '/usr/bin/chromium';

if (!fs.existsSync(CHROMIUM)) {
  console.log(`# e2e tests SKIPPED: ${CHROMIUM} not found (install it with: apt-get install -y chromium)`);
  process.exit(0);
}
const env = { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };
const build = spawnSync('npm', ['run', '-s', 'build'], { stdio: 'inherit', env });
if (build.status !== 0) process.exit(build.status ?? 1);
const run = spawnSync('npx', ['playwright', 'test', ...process.argv.slice(2)], { stdio: 'inherit', env });
process.exit(run.status ?? 1);
