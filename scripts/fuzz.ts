/**
 * `npm run fuzz -- [--requests 50000] [--seed 1] [--engine fake|embedded] [--concurrency 4]`: a
 * larger fuzz campaign than the test suite's (test/fuzz), in batches of 5,000 with a fresh seed
 * each, against a loopback server. Prints the statuses and every broken promise, writes
 * bench/results/fuzz-<engine>.json, and exits 1 if anything broke. Stops by itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbeddedEngine } from '../src/engines/embedded/index.ts';
import { createFakeEngine } from '../src/engines/fake/fake-engine.ts';
import { runFuzz, startFuzzTarget } from '../test/fuzz/run.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    seed: { type: 'string', default: '1' },
    engine: { type: 'string', default: 'fake' },
    concurrency: { type: 'string', default: '4' },
  },
});
const total = Number(values.requests);
const seed = Number(values.seed);
const engineName = values.engine === 'embedded' ? 'embedded' : 'fake';
const target = await startFuzzTarget(engineName === 'embedded' ? createEmbeddedEngine() : createFakeEngine());
const byStatus: Record<string, number> = {};
const failures: string[] = [];
const started = performance.now();
const BATCH = 5000;
for (let done = 0, batch = 0; done < total; done += BATCH, batch++) {
  const report = await runFuzz(target, seed * 1000 + batch, Math.min(BATCH, total - done), Number(values.concurrency));
  for (const [status, n] of Object.entries(report.byStatus)) byStatus[status] = (byStatus[status] ?? 0) + n;
  failures.push(...report.failures);
  console.error(`# ${done + report.requests} of ${total} requests, ${failures.length} failures`);
}
const healthy = (await fetch(`${target.url}/healthz`)).status === 200;
await target.close();
const seconds = (performance.now() - started) / 1000;

console.log(`\nfuzz: ${total} requests, engine ${engineName}, seed ${seed}, ${seconds.toFixed(0)} s\n`);
console.log('| status | requests |\n| -----: | -------: |');
for (const [status, n] of Object.entries(byStatus).sort()) console.log(`| ${status} | ${n} |`);
const serverErrors = Object.entries(byStatus)
  .filter(([s]) => Number(s) >= 500)
  .reduce((a, [, n]) => a + n, 0);
console.log(
  `\n5xx: ${serverErrors}; connection errors: ${byStatus.error ?? 0}; /healthz afterwards: ${healthy ? 200 : 'failed'}`,
);
for (const f of failures.slice(0, 50)) console.log(`FAIL ${f}`);

const out = path.resolve('bench/results', `fuzz-${engineName}.json`);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), engine: engineName, seed, requests: total, seconds, byStatus, failures, healthy }, null, 2)}\n`,
);
console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
process.exitCode = failures.length === 0 && healthy ? 0 : 1;
