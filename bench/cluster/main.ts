/**
 * npm run bench:cluster: throughput of the loopback cluster (test/fixtures/cluster.ts: HAProxy,
 * gateways, workers, PostgreSQL, Redis) in one run, at 1, 2 and 3 gateways with the fake engine and
 * at 1 and 2 embedded workers behind one gateway, with scaling efficiency = throughput(n) / (n x
 * throughput(1)). Prints a table and writes bench/results/cluster.json. Each measurement is a closed
 * loop through the load balancer that stops by itself (a request count or a time cap).
 *
 * Options: --seconds N (per measurement, default 8), --concurrency N (fake, default 32),
 * --embedded-concurrency N (default 8), --only gateways|workers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Cluster, hasHaproxy, startCluster } from '../../test/fixtures/cluster.ts';
import { hasRedisServer } from '../../test/fixtures/redis-server.ts';
import { ROOT } from '../../test/server.ts';
import { closedLoop, type LoadResult, type Shot } from '../latency/load.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '32' },
    'embedded-concurrency': { type: 'string', default: '8' },
    only: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const postgresUrl =
  process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

if (!hasHaproxy() || !hasRedisServer()) {
  console.log('bench:cluster needs haproxy and redis-server (apt-get install haproxy redis-server) and PostgreSQL');
  process.exit(0);
}

interface Row {
  section: 'gateways (fake engine)' | 'embedded workers';
  replicas: number;
  result: LoadResult;
  efficiency: number;
}

let counter = 0;

const SENTENCES = [
  'I was charged twice for my subscription this month and I would like one of the payments refunded.',
  'The app also keeps logging me out whenever I switch between the web version and my phone.',
  'I contacted support last week about the same problem and nobody has answered my email yet.',
  'My plan renews on the first of every month and I have been a customer for almost three years.',
  'Please check the payment history on my account and tell me when I can expect the money back.',
  'If this cannot be fixed soon I will have to cancel and move to another provider.',
];

/** A ~300-token support ticket (as bench:latency's states), different for every request. */
function stateText(n: number): string {
  const body = Array.from({ length: 12 }, (_, i) => SENTENCES[(n + i) % SENTENCES.length]).join(' ');
  return `Ticket ${n} (order ${n * 7919}): ${body}`;
}
/** A fresh ~300-token state per request (no state cache helps), three questions of the three types. */
function shot(key: string): Shot {
  const n = counter++;
  return {
    path: '/v1/systemone',
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({
      state: stateText(n),
      questions: {
        refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
        team: {
          type: 'choice',
          instructions: 'Which team should handle this?',
          criteria: { billing: 'charges and refunds', tech: 'bugs and outages', other: null },
        },
        urgency: { type: 'score', instructions: 'How urgent is this?', criteria: ['low', 'medium', 'high'] },
      },
    }),
  };
}

async function measure(cluster: Cluster, concurrency: number): Promise<LoadResult> {
  const key = (await cluster.gateways[0]?.server.createKey(`bench-${Date.now()}@example.com`)) ?? '';
  // Warm-up: connections, JIT, the engine's first calls.
  await closedLoop(cluster.url, () => shot(key), { concurrency, count: concurrency * 10, maxMs: 5000 });
  return closedLoop(cluster.url, () => shot(key), { concurrency, count: 1_000_000, maxMs: SECONDS * 1000 });
}

const quiet = { LOG_LEVEL: 'warn' };
const rows: Row[] = [];
const started = new Date().toISOString();
console.log(
  `bench:cluster on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load average ${os.loadavg()[0]?.toFixed(2)}`,
);

if (values.only !== 'workers') {
  for (const gateways of [1, 2, 3]) {
    const cluster = await startCluster({ gateways, workers: 0, gatewayModel: 'fake', postgresUrl, gatewayEnv: quiet });
    try {
      const result = await measure(cluster, Number(values.concurrency));
      rows.push({ section: 'gateways (fake engine)', replicas: gateways, result, efficiency: 0 });
      console.log(`  ${gateways} gateway(s), fake engine: ${result.throughput} req/s (p50 ${result.p50} ms)`);
    } finally {
      await cluster.stop();
    }
  }
}
if (values.only !== 'gateways') {
  for (const workers of [1, 2]) {
    const cluster = await startCluster({
      gateways: 1,
      workers,
      workerModel: 'brier-lite',
      postgresUrl,
      gatewayEnv: quiet,
      // One core each: a worker's encoder threads are its share of the machine.
      workerEnv: { BRIER_THREADS: '1', ...quiet },
    });
    try {
      const result = await measure(cluster, Number(values['embedded-concurrency']));
      rows.push({ section: 'embedded workers', replicas: workers, result, efficiency: 0 });
      console.log(`  ${workers} embedded worker(s): ${result.throughput} req/s (p50 ${result.p50} ms)`);
    } finally {
      await cluster.stop();
    }
  }
}

for (const row of rows) {
  const one = rows.find((r) => r.section === row.section && r.replicas === 1);
  row.efficiency = one ? Math.round((row.result.throughput / (row.replicas * one.result.throughput)) * 100) / 100 : 0;
}

console.log('\n| section | replicas | req/s | p50 ms | p95 ms | 503 | errors | scaling efficiency |');
console.log('| --- | --: | --: | --: | --: | --: | --: | --: |');
for (const r of rows) {
  console.log(
    `| ${r.section} | ${r.replicas} | ${r.result.throughput} | ${r.result.p50} | ${r.result.p95} | ${r.result.refused} | ${r.result.errors} | ${r.efficiency.toFixed(2)} |`,
  );
}
const out = path.join(ROOT, 'bench', 'results', 'cluster.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify({ started, cpus: os.cpus().length, loadAverage: os.loadavg(), seconds: SECONDS, rows }, null, 2)}\n`,
);
console.log(`\nwritten: ${path.relative(ROOT, out)}`);
