/**
 * The loopback cluster under steady load (README, "Scale-out"): a real HAProxy in front of three
 * gateways, two workers, a fresh PostgreSQL database and a Redis of the test's own. While 8 clients
 * send requests through the load balancer, a gateway is stopped (SIGTERM, as an orchestrator does),
 * a worker is killed (SIGKILL, mid-request) and Redis is killed and restarted. Then: every client
 * saw 200 or 503 with retry-after; the usage rows equal the 200s plus the gateways' metered 503s; a
 * key revoked on one gateway fails on all three within the key-cache TTL; and ten key creations
 * raced through the three gateways make exactly 3 keys. Bounded: 6,000 requests or 60 s of load.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Cluster, clusterSkip, startCluster } from '../fixtures/cluster.ts';

const TTL_MS = 500;
const skip = clusterSkip();

interface Tally {
  ok: number;
  /** 503 with retry-after from a gateway (metered: it passed the key check). */
  gateway503: number;
  /** 503 with retry-after from the load balancer (no gateway up: never metered). */
  balancer503: number;
  /** Anything else: a status, a 503 without retry-after, a network error. */
  violations: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('cluster on loopback: HAProxy, 3 gateways, 2 workers, PostgreSQL, Redis', { skip }, () => {
  let cluster: Cluster;
  let key = '';
  before(async () => {
    cluster = await startCluster({
      gateways: 3,
      workers: 2,
      workerModel: 'fake:20',
      gatewayEnv: { BRIER_KEY_CACHE_TTL_MS: String(TTL_MS), BRIER_USAGE_FLUSH_MS: '200' },
    });
    key = (await cluster.gateways[0]?.server.createKey('load@example.com')) ?? '';
  });
  after(async () => {
    await cluster?.stop();
  });

  test('under load, a gateway stopped, a worker killed and Redis restarted: only 200 or 503 with retry-after, usage exact', async () => {
    const tally: Tally = { ok: 0, gateway503: 0, balancer503: 0, violations: [] };
    let running = true;
    let sent = 0;
    const started = Date.now();
    const body = JSON.stringify({
      state: 'The invoice was charged twice.',
      questions: { refund: { type: 'noul', instructions: 'Is the customer asking for money back?' } },
    });
    const client = async () => {
      while (running && sent < 6000 && Date.now() - started < 60_000) {
        sent++;
        try {
          const res = await fetch(`${cluster.url}/v1/systemone`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body,
          });
          await res.arrayBuffer();
          if (res.status === 200) tally.ok++;
          else if (res.status === 503 && Number(res.headers.get('retry-after')) >= 1) {
            if (res.headers.get('x-brier-balancer')) tally.balancer503++;
            else tally.gateway503++;
          } else tally.violations.push(`${res.status} (retry-after ${res.headers.get('retry-after')})`);
        } catch (e) {
          tally.violations.push(`network: ${String(e)}`);
        }
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, client));

    const [g1, , g3] = cluster.gateways;
    const [w1] = cluster.workers;
    assert.ok(g1 && g3 && w1);
    await sleep(1500);
    const before3 = tally.ok;
    await g3.server.stop(); // SIGTERM: drains its requests, writes its usage
    await sleep(1500);
    await w1.server.kill('SIGKILL'); // mid-request: the gateways retry on w2
    await sleep(1500);
    await cluster.redis.kill();
    await sleep(700);
    await cluster.redis.start();
    await sleep(1500);
    running = false;
    await load;

    assert.deepEqual(
      tally.violations.slice(0, 10),
      [],
      `${tally.violations.length} answers other than 200/503+retry-after`,
    );
    assert.ok(
      tally.ok > before3 && before3 > 0,
      `requests answered before and after the faults (${before3}, ${tally.ok})`,
    );
    console.log(
      `# cluster load: ${sent} requests, ${tally.ok} x 200, ${tally.gateway503} gateway 503, ${tally.balancer503} balancer 503`,
    );

    // Usage: what the gateways metered, once each, including the stopped gateway's last events.
    await sleep(1000);
    const rows = await cluster.db.query<{ status: number; n: string }>(
      `select status, count(*) as n from usage_event where key_id = (select id from api_key where prefix = $1) group by status`,
      [key.slice(0, 15)],
    );
    const by = Object.fromEntries(rows.rows.map((r) => [String(r.status), Number(r.n)]));
    assert.equal(by['200'] ?? 0, tally.ok, 'usage rows with status 200 = the clients’ 200s');
    assert.equal(by['503'] ?? 0, tally.gateway503, 'metered refusals = the gateways’ 503s');
    assert.deepEqual(
      Object.keys(by).filter((s) => s !== '200' && s !== '503'),
      [],
    );

    // The stopped gateway comes back for the next tests.
    await cluster.restartGateway(g3);
  });

  test('a key revoked on one gateway fails on all three within the key-cache TTL; a creation race makes exactly 3 keys', async () => {
    const email = 'race@example.com';
    const password = 'correct-horse-battery';
    const origin = cluster.url;
    const signUp = await fetch(`${cluster.url}/control/v1/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ email, password }),
    });
    assert.equal(signUp.status, 200);
    let link: string | undefined;
    for (let i = 0; i < 50 && !link; i++) {
      link = cluster.verificationLink(email);
      if (!link) await sleep(100);
    }
    assert.ok(link, 'the log mailer printed the verification link');
    const verified = await fetch(link, { redirect: 'manual' });
    assert.ok(verified.status < 400, `verification: ${verified.status}`);
    const cookie = verified.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    assert.ok(cookie.length > 0, 'the link signs the user in');

    const gateways = cluster.gateways;
    const control = (g: number, method: string, path: string, json?: unknown) =>
      fetch(`${gateways[g % gateways.length]?.url}/control/v1${path}`, {
        method,
        headers: { cookie, origin, ...(json ? { 'content-type': 'application/json' } : {}) },
        body: json ? JSON.stringify(json) : undefined,
      });

    // Created on g1, used on every gateway (each caches it), revoked on g2.
    const created = (await (await control(0, 'POST', '/keys', { name: 'soon revoked' })).json()) as {
      id: string;
      key: string;
    };
    const use = async (g: number) =>
      (await fetch(`${gateways[g]?.url}/v1/models`, { headers: { authorization: `Bearer ${created.key}` } })).status;
    assert.deepEqual(await Promise.all([0, 1, 2].map(use)), [200, 200, 200]);
    const revokedAt = Date.now();
    assert.equal((await control(1, 'DELETE', `/keys/${created.id}`)).status, 204);
    const seen: number[] = [];
    for (const g of [0, 1, 2]) {
      while ((await use(g)) !== 401) {
        assert.ok(Date.now() - revokedAt < TTL_MS + 1000, `gateway ${g + 1} still accepts the key after the TTL`);
        await sleep(25);
      }
      seen.push(Date.now() - revokedAt);
    }
    assert.ok(Math.max(...seen) <= TTL_MS + 1000);
    console.log(`# revocation seen on the 3 gateways after ${seen.join(', ')} ms (TTL ${TTL_MS} ms)`);

    // Ten creations at once, spread over the three gateways: the cap holds across replicas.
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => (await control(i, 'POST', '/keys', { name: `k${i}` })).status),
    );
    assert.equal(statuses.filter((s) => s === 201).length, 3, statuses.join());
    assert.equal(statuses.filter((s) => s === 409).length, 7, statuses.join());
    const active = await cluster.db.query<{ n: string }>(
      `select count(*) as n from api_key k join "user" u on u.id = k.user_id where u.email = $1 and k.revoked_at is null`,
      [email],
    );
    assert.equal(Number(active.rows[0]?.n), 3);
  });
});
