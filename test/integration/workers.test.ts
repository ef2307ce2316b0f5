/**
 * Inference workers as real processes (`node src/main.ts` with BRIER_ROLE=worker) behind a real
 * gateway process with BRIER_WORKERS: the worker's credential, failover when a worker is killed
 * mid-request, backpressure when workers are full, and the same list form in front of a System One
 * server and an OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { FEATURES_DIM, FEATURES_ID, FEATURES_PREFIX } from '../../src/engines/embedded/featurized.ts';
import { decodeVector } from '../../src/engines/upstream/worker-protocol.ts';
import { startCompletionsServer } from '../fixtures/completions-server.ts';
import { ROUTING, trainAdapterOver, waitFor } from '../fixtures/teach.ts';
import { writeTinyGguf } from '../fixtures/tiny-gguf.ts';
import { ROOT, type RunningServer, startServer, waitHealthy } from '../server.ts';

const TOKEN = randomBytes(24).toString('base64url');
const BODY = JSON.stringify({
  state: 'My parcel has not arrived.',
  questions: { late: { type: 'noul', instructions: 'Is the parcel late?' } },
});

const started: RunningServer[] = [];
after(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

async function worker(env: Record<string, string> = {}): Promise<RunningServer> {
  const s = await startServer({ BRIER_ROLE: 'worker', BRIER_MODEL: 'fake', BRIER_WORKER_TOKEN: TOKEN, ...env });
  started.push(s);
  await waitHealthy(s.url, 20_000);
  return s;
}

async function gateway(workers: string[], env: Record<string, string> = {}) {
  const s = await startServer({
    BRIER_WORKERS: workers.join(','),
    BRIER_WORKER_TOKEN: TOKEN,
    BRIER_WORKER_HEALTH_MS: '200',
    ...env,
  });
  started.push(s);
  await waitHealthy(s.url, 20_000);
  const key = await s.createKey(`gw-${randomBytes(3).toString('hex')}@example.com`);
  const ask = () =>
    fetch(`${s.url}/v1/systemone`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: BODY,
    });
  return { server: s, key, ask };
}

/** What the gateway's /v1/models says of its model's calibration (x_calibrated). */
async function calibratedSays(g: Awaited<ReturnType<typeof gateway>>): Promise<boolean | undefined> {
  const res = await fetch(`${g.server.url}/v1/models`, { headers: { authorization: `Bearer ${g.key}` } });
  return ((await res.json()) as { models: { x_calibrated?: boolean }[] }).models[0]?.x_calibrated;
}

describe('inference workers (BRIER_ROLE=worker, BRIER_WORKERS)', () => {
  test("a gateway's x_calibrated is its workers': false for an uncalibrated GGUF worker, true for a test engine's", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-workers-cal-'));
    try {
      const gguf = await worker({ BRIER_MODEL: await writeTinyGguf(path.join(dir, 'tiny.gguf')), BRIER_THREADS: '1' });
      const g = await gateway([gguf.url]);
      assert.equal((await g.ask()).status, 200);
      assert.equal(await calibratedSays(g), false);
      const fake = await worker();
      assert.equal(await calibratedSays(await gateway([fake.url])), true);
      // one uncalibrated backend among calibrated ones: the gateway does not say calibrated
      const mixed = await gateway([fake.url, gguf.url]);
      await waitFor(async () => ((await calibratedSays(mixed)) === false ? true : undefined), 10_000, 'both loaded');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a worker answers only its gateways: no token or a public API key is 401, /healthz needs nothing', async () => {
    const w = await worker();
    const g = await gateway([w.url]);
    const internal = (authorization?: string) =>
      fetch(`${w.url}/internal/v1/answer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: '{}',
      });
    assert.equal((await internal()).status, 401);
    assert.equal((await internal(`Bearer ${g.key}`)).status, 401);
    assert.equal((await internal(`Bearer ${TOKEN}x`)).status, 401);
    // The public API is not served by a worker at all.
    assert.equal((await fetch(`${w.url}/v1/models`, { headers: { authorization: `Bearer ${g.key}` } })).status, 404);
    assert.equal((await fetch(`${w.url}/healthz`)).status, 200);
    // With the token, a bad body is a 4xx, never a 5xx.
    assert.equal((await internal(`Bearer ${TOKEN}`)).status, 422);
    const res = await g.ask();
    assert.equal(res.status, 200);
    const answer = (await res.json()) as { model: string; answers: { late: { noul: number } } };
    assert.equal(answer.model, 'brier-fake-3.0.0');
    assert.equal(typeof answer.answers.late.noul, 'number');
    assert.ok(!w.logs.join('\n').includes(TOKEN), 'the worker token is never logged');
    assert.ok(!g.server.logs.join('\n').includes(TOKEN), 'the worker token is never logged by the gateway');
  });

  test('a worker killed mid-request: its requests are answered by the other worker (retried once)', async () => {
    const a = await worker({ BRIER_MODEL: 'fake:400' });
    const b = await worker({ BRIER_MODEL: 'fake:400' });
    const g = await gateway([a.url, b.url]);
    const inFlight = Array.from({ length: 8 }, () => g.ask().then((r) => r.status));
    await new Promise((r) => setTimeout(r, 150));
    // SIGKILL: no draining, the sockets of its requests are cut.
    await a.kill('SIGKILL');
    const statuses = await Promise.all(inFlight);
    assert.deepEqual(statuses, Array(8).fill(200));
    const metrics = await (await fetch(`${g.server.url}/metrics`)).text();
    assert.match(metrics, /brier_worker_failovers_total\{reason="broken"\} [1-9]/);
    const health = (await (await fetch(`${g.server.url}/healthz`)).json()) as { workers: { healthy: boolean }[] };
    assert.deepEqual(
      health.workers.map((w) => w.healthy),
      [false, true],
    );
  });

  test('workers full: clients get 503 with retry-after, never another status', async () => {
    const w = await worker({ BRIER_MODEL: 'fake:300', BRIER_QUEUE_LIMIT: '1' });
    const g = await gateway([w.url]);
    const responses = await Promise.all(Array.from({ length: 5 }, () => g.ask()));
    const statuses = responses.map((r) => r.status);
    assert.ok(statuses.includes(200), statuses.join());
    assert.ok(statuses.includes(503), statuses.join());
    for (const r of responses) {
      assert.ok([200, 503].includes(r.status));
      if (r.status === 503) {
        assert.ok(Number(r.headers.get('retry-after')) >= 1);
        assert.equal(((await r.json()) as { detail: { error_type: string } }).detail.error_type, 'overloaded');
      }
    }
  });

  test('the same list fronts other System One servers (systemone+) and OpenAI-compatible servers (openai+)', async () => {
    // Another Brier as a System One server, and an address nobody listens on (skipped as down).
    const upstream = await startServer({ BRIER_MODEL: 'fake' });
    started.push(upstream);
    await waitHealthy(upstream.url, 20_000);
    const upstreamKey = await upstream.createKey('upstream@example.com');
    const g = await gateway([`systemone+${upstream.url}`, 'systemone+http://127.0.0.1:9'], {
      BRIER_UPSTREAM_API_KEY: upstreamKey,
    });
    for (let i = 0; i < 3; i++) assert.equal((await g.ask()).status, 200);
    // Served through the gateway's calibration for that server: none fitted, so not calibrated.
    assert.equal(await calibratedSays(g), false);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-workers-'));
    const shared = path.join(ROOT, '..', 'shared', 'models', 'stories260K.gguf');
    const modelPath = fs.existsSync(shared) ? shared : await writeTinyGguf(path.join(dir, 'tiny.gguf'));
    const completions = await startCompletionsServer({ modelPath, flavour: 'vllm', apiKey: 'sk-upstream' });
    try {
      const o = await gateway([`openai+${completions.url}`], {
        BRIER_UPSTREAM_API_KEY: 'sk-upstream',
        BRIER_UPSTREAM_MODEL: completions.modelId,
      });
      const res = await o.ask();
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { model: string }).model, 'brier-openai-3.0.0');
      assert.equal(await calibratedSays(o), false, 'an OpenAI-compatible backend is not calibrated without a file');
    } finally {
      await completions.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an embedded worker gives gateways its state features: an adapter fitted through a gateway is a probe, and serves', async () => {
    const fake = await worker();
    const info = await fetch(`${fake.url}/internal/v1/model`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(((await info.json()) as { features: unknown }).features, null, 'the fake engine has none');
    const none = await fetch(`${fake.url}/internal/v1/features`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request: { state: { text: 'x' }, questions: [] } }),
    });
    assert.equal(none.status, 404);

    const w = await worker({ BRIER_MODEL: 'brier-lite', BRIER_THREADS: '1' });
    const model = (await (
      await fetch(`${w.url}/internal/v1/model`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { features: { id: string; dim: number; options: boolean } };
    assert.deepEqual(model.features, { id: FEATURES_ID, dim: FEATURES_DIM, options: true, prefix: FEATURES_PREFIX });
    const YES_NO = [
      { label: 'false', description: null },
      { label: 'true', description: null },
    ];
    // a head on USE-lite's part alone asks for that part: MiniLM's comes back as zeros, not encoded
    const stateOf = async (dims?: number) => {
      const res = await fetch(`${w.url}/internal/v1/features`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          request: {
            state: { text: 'refund me' },
            questions: [{ type: 'noul', instructions: 'Is it urgent?', options: YES_NO }],
          },
          ...(dims ? { dims } : {}),
        }),
      });
      assert.equal(res.status, 200);
      return decodeVector(((await res.json()) as { state: string }).state, FEATURES_DIM);
    };
    const prefixOnly = await stateOf(FEATURES_PREFIX.dim);
    const every = await stateOf();
    assert.ok(prefixOnly.subarray(FEATURES_PREFIX.dim).every((x) => x === 0));
    assert.ok(every.subarray(FEATURES_PREFIX.dim).some((x) => x !== 0));
    assert.deepEqual(prefixOnly.subarray(0, FEATURES_PREFIX.dim), every.subarray(0, FEATURES_PREFIX.dim));
    const g = await gateway([w.url]);
    const adapter = await trainAdapterOver(g.server.url, g.key);
    const jobs = (await (
      await fetch(`${g.server.url}/control/v1/training-jobs`, { headers: { authorization: `Bearer ${g.key}` } })
    ).json()) as { data: { result: { templates: { kind: string }[] } }[] };
    assert.equal(jobs.data[0]?.result.templates[0]?.kind, 'probe', 'fitted on the worker\u2019s state features');
    const res = await fetch(`${g.server.url}/v1/systemone`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: adapter, state: 'refund my last payment please', questions: { team: ROUTING } }),
    });
    assert.equal(res.status, 200);
    const answer = ((await res.json()) as { answers: { team: { choice: string; x_answered_by: string } } }).answers
      .team;
    assert.equal(answer.x_answered_by, adapter);
    assert.equal(answer.choice, 'billing');
  });
});
