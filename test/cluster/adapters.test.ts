/**
 * Adapters work the same in every topology (issue 33): a probe adapter fitted through the load
 * balancer of a loopback cluster (HAProxy, 2 gateways, 2 embedded workers, PostgreSQL, Redis: the
 * gateways read the examples, and the state features, from the workers) against the same adapter
 * fitted on one server with the embedded engine in-process. Same yes/no task, same split: the cluster's
 * held-out gain must equal the single server's within noise, its head must be a probe, and the adapter
 * must answer a new request through the load balancer as the single server's does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Cluster, clusterSkip, startCluster } from '../fixtures/cluster.ts';
import { jsonl, row, sharedRows, tickets, waitFor } from '../fixtures/teach.ts';
import { type RunningServer, startServer, waitHealthy } from '../server.ts';

const skip = clusterSkip();

const MONEY = { type: 'noul', instructions: 'Is the customer writing about money?' } as const;
/**
 * A yes/no task the base model abstains on (brier-lite reads "is it offensive?" as no family it answers):
 * 120 rows of tweeteval_offensive when ../shared is there, else generated tickets. sst2 served here until
 * brier-lite 4 read polarity questions itself and left an adapter little to add.
 */
const SHARED = sharedRows('tweeteval_offensive', 120);
const QUESTION = SHARED?.[0]?.question ?? MONEY;
const ROWS = SHARED
  ? SHARED.map((r) => row(r.state, { q: QUESTION }, { q: r.label }))
  : tickets(80).map((x) => row(x.state, { q: MONEY }, { q: x.team === 'billing' }));

interface Report {
  kind: string;
  served: boolean;
  reason: string;
  before: { brier: number };
  after: { brier: number };
}

/** Uploads the rows, trains, and returns the job's report of the template and the adapter id. */
async function train(url: string, key: string): Promise<{ report: Report; adapter: string }> {
  const auth = { authorization: `Bearer ${key}` };
  const up = await fetch(`${url}/control/v1/examples`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/jsonl' },
    body: jsonl(ROWS),
  });
  assert.equal(up.status, 201, await up.clone().text());
  const job = (await (await fetch(`${url}/control/v1/training-jobs`, { method: 'POST', headers: auth })).json()) as {
    id: string;
  };
  const done = await waitFor(
    async () => {
      const j = (await (await fetch(`${url}/control/v1/training-jobs/${job.id}`, { headers: auth })).json()) as {
        status: string;
        message: string;
        adapter_id: string | null;
        result: { templates: Report[] } | null;
      };
      assert.notEqual(j.status, 'failed', j.message);
      return j.status === 'succeeded' ? j : undefined;
    },
    120_000,
    'the training job',
  );
  const report = done.result?.templates[0];
  assert.ok(report && done.adapter_id, done.message);
  return { report, adapter: done.adapter_id };
}

async function ask(url: string, key: string, model: string) {
  const res = await fetch(`${url}/v1/systemone`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      state: 'a warm, funny and moving film; please refund me',
      questions: { q: QUESTION },
    }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { answers: { q: { noul: number; x_answered_by: string } } }).answers.q;
}

describe('adapters through gateways and workers answer as on one server', { skip }, () => {
  let cluster: Cluster;
  let single: RunningServer;
  before(async () => {
    [cluster, single] = await Promise.all([
      startCluster({ gateways: 2, workers: 2, workerModel: 'brier-lite', workerEnv: { BRIER_THREADS: '1' } }),
      startServer({ BRIER_THREADS: '1' }),
    ]);
    await waitHealthy(single.url);
  });
  after(async () => {
    await Promise.all([cluster?.stop(), single?.stop()]);
  });

  test('a probe adapter fitted through the load balancer has the held-out gain of the single server', async () => {
    const clusterKey = (await cluster.gateways[0]?.server.createKey('probe@example.com')) ?? '';
    const singleKey = await single.createKey('probe@example.com');
    const [inCluster, alone] = await Promise.all([train(cluster.url, clusterKey), train(single.url, singleKey)]);
    const gain = (r: Report) => r.before.brier - r.after.brier;
    console.log(`# single server: ${alone.report.reason}`);
    console.log(`# cluster:       ${inCluster.report.reason}`);
    assert.equal(alone.report.kind, 'probe');
    assert.equal(inCluster.report.kind, 'probe', 'the gateway fitted on the workers\u2019 state features');
    assert.equal(inCluster.report.served, true);
    assert.ok(gain(alone.report) > 0.02, `the task is learnable: ${alone.report.reason}`);
    assert.ok(
      Math.abs(gain(inCluster.report) - gain(alone.report)) <= 0.01,
      `held-out gain: cluster ${gain(inCluster.report).toFixed(4)}, one server ${gain(alone.report).toFixed(4)}`,
    );
    // Served through the load balancer, the adapter reads the state features from a worker.
    const [a, b] = await Promise.all([
      ask(cluster.url, clusterKey, inCluster.adapter),
      ask(single.url, singleKey, alone.adapter),
    ]);
    assert.equal(a.x_answered_by, inCluster.adapter);
    assert.ok(Math.abs(a.noul - b.noul) <= 0.02, `cluster ${a.noul}, one server ${b.noul}`);
  });
});
