/**
 * npm run cluster: the scale-out deployment on loopback, from real parts. HAProxy on
 * http://127.0.0.1:8080 (--port) in front of 3 gateways (--gateways) and 2 inference workers
 * (--workers; the embedded model, or --fake), a fresh database on the local PostgreSQL
 * (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres) and a Redis of its own.
 * Ctrl-C stops everything and drops the database. Needs haproxy, redis-server and PostgreSQL.
 */
import { parseArgs } from 'node:util';
import { hasHaproxy, startCluster } from '../test/fixtures/cluster.ts';
import { hasRedisServer } from '../test/fixtures/redis-server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8080' },
    gateways: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
    fake: { type: 'boolean', default: false },
  },
});
if (!hasHaproxy() || !hasRedisServer()) {
  console.error('npm run cluster needs haproxy and redis-server: apt-get install haproxy redis-server');
  process.exit(1);
}
const postgresUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const cluster = await startCluster({
  gateways: Number(values.gateways),
  workers: Number(values.workers),
  workerModel: values.fake ? 'fake' : 'brier-lite',
  postgresUrl,
  port: Number(values.port),
  workerEnv: { BRIER_THREADS: '1' },
  log: (line) => console.log(`cluster: ${line}`),
});
console.log(`
  clients ──> HAProxy ${cluster.url}
                 ├── ${cluster.gateways.map((g) => `gateway ${g.url}`).join('\n                 ├── ')}
                 │      └── workers: ${cluster.workers.map((w) => w.url).join(', ') || '(none: the gateways answer)'}
                 └── PostgreSQL ${new URL(cluster.databaseUrl).pathname.slice(1)}, Redis ${cluster.redis.url}

Create a key, then ask through the load balancer:
  KEY=$(DATABASE_URL=${cluster.databaseUrl} npm run -s brier -- keys create --email you@example.com | tail -n 1)
  curl -s ${cluster.url}/v1/systemone -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
    -d '{"state": "I was charged twice.", "questions": {"refund": {"type": "noul"}}}'

Ctrl-C stops the cluster.`);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\ncluster: ${signal}: stopping HAProxy, gateways, workers and Redis; dropping the database`);
  await cluster.stop();
  console.log('cluster: stopped');
  process.exit(0);
};
process.once('SIGINT', () => void stop('SIGINT'));
process.once('SIGTERM', () => void stop('SIGTERM'));
