/**
 * `npm run bench:lite-latency`: latency of the embedded engine (committed artifact, real worker
 * pool) for one request with a ~300-token state and 3 questions; 50 runs per scenario.
 * Writes bench/results/latency-brier-lite.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/training/data.ts';
import { measureEngineLatency } from '../../src/training/latency.ts';

const report = await measureEngineLatency(undefined, (m) => console.log(m), 50);
const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'latency-brier-lite.json'), `${JSON.stringify(report, null, 2)}\n`);
