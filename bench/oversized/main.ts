/**
 * `npm run bench:oversized [-- --baseline <git ref>]`: does an oversized request stall the server?
 * Starts the real server (embedded engine, default limits) on loopback and measures `/healthz` and a
 * small `/v1/systemone` request, one after another, while quiet and while 16 oversized requests
 * arrive at once:
 * - `1MB`: states of ~1,000,000 characters (under the 1 MiB body limit, far past the token limit);
 * - `60k`: states of 60,000 characters (under the character bound, so the tokenizer reads them,
 *   past the 4,096-token input limit): the most work an over-limit request can still cause.
 * With --baseline, the same runs go to the server of that commit too (a git worktree in
 * .cache/bench), interleaved, so the two are compared within one run. Prints a table and writes
 * bench/results/oversized.json. Every part is bounded in count and time.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, type RunningServer, startServer, waitHealthy } from '../../test/server.ts';
import { baselineWorktree } from '../baseline.ts';
import { percentile } from '../latency/load.ts';

const { values } = parseArgs({ options: { baseline: { type: 'string' }, floods: { type: 'string', default: '3' } } });
const OUT = path.join(ROOT, 'bench', 'results', 'oversized.json');
const FLOOD = 16;

const WORDS = 'the customer was charged twice for the same order and asks for a refund of one charge '.split(' ');
function text(chars: number, salt: number): string {
  let out = `${salt} `;
  for (let i = 0; out.length < chars; i++) out += `${WORDS[(i + salt) % WORDS.length]} `;
  return out.slice(0, chars);
}

interface Probes {
  healthz: number[];
  small: number[];
  smallStatuses: Record<string, number>;
}

async function timed(run: () => Promise<Response>): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await run();
  await res.arrayBuffer();
  return { ms: performance.now() - t0, status: res.status };
}

/** Probes /healthz and a small request alternately until `until` resolves (and for at least `minMs`). */
async function probe(server: RunningServer, key: string, until: Promise<unknown>, minMs: number): Promise<Probes> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const started = performance.now();
  const out: Probes = { healthz: [], small: [], smallStatuses: {} };
  for (let i = 0; (!done || performance.now() - started < minMs) && i < 2000; i++) {
    out.healthz.push((await timed(() => fetch(`${server.url}/healthz`))).ms);
    const small = await timed(() =>
      fetch(`${server.url}/v1/systemone`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          state: `Where is my parcel? It is late. (${i})`,
          questions: { late: { type: 'noul', instructions: 'Is the customer waiting for a delivery?' } },
        }),
      }),
    );
    out.small.push(small.ms);
    out.smallStatuses[small.status] = (out.smallStatuses[small.status] ?? 0) + 1;
  }
  return out;
}

/** Sends FLOOD oversized requests at once; resolves when all are answered, with their statuses and time. */
async function flood(server: RunningServer, key: string, chars: number, salt: number) {
  const t0 = performance.now();
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: FLOOD }, async (_, i) => {
      const res = await fetch(`${server.url}/v1/systemone`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ state: text(chars, salt * 100 + i), questions: { q: { type: 'noul' } } }),
      }).catch(() => undefined);
      const status = res ? String(res.status) : 'error';
      if (res) await res.arrayBuffer();
      statuses[status] = (statuses[status] ?? 0) + 1;
    }),
  );
  return { statuses, allAnsweredMs: performance.now() - t0 };
}

const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 0.5), p99: percentile(s, 0.99), max: s.at(-1) ?? Number.NaN };
};

const servers: { name: string; server: RunningServer; key: string }[] = [];
const roots: [string, string][] = [['this checkout', ROOT]];
if (values.baseline) roots.push([`baseline ${values.baseline}`, baselineWorktree(values.baseline)]);
for (const [name, root] of roots) {
  const server = await startServer({}, 120_000, root);
  await waitHealthy(server.url);
  servers.push({ name, server, key: await server.createKey(`bench-${servers.length}@example.com`) });
}

const rows: Record<string, unknown>[] = [];
try {
  for (let round = 0; round < Number(values.floods); round++) {
    for (const { name, server, key } of servers) {
      for (const [kind, chars] of [
        ['quiet', 0],
        ['1MB', 1_000_000],
        ['60k', 60_000],
      ] as const) {
        const arrivals = kind === 'quiet' ? new Promise((r) => setTimeout(r, 1000)) : flood(server, key, chars, round);
        const probes = await probe(server, key, arrivals, 1000);
        const result = kind === 'quiet' ? null : await (arrivals as ReturnType<typeof flood>);
        rows.push({
          server: name,
          round,
          kind,
          healthz: summary(probes.healthz),
          small: summary(probes.small),
          smallStatuses: probes.smallStatuses,
          oversized: result,
        });
      }
    }
  }
} finally {
  for (const { server } of servers) await server.stop();
}

const f = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-');
console.log(`\n16 oversized requests at once; /healthz and a small request probed one after another meanwhile\n`);
console.log(
  '| server | round | arriving | /healthz p50 / p99 / max ms | small request p50 / p99 / max ms | oversized answers | all answered after ms |',
);
console.log('| --- | --: | --- | --: | --: | --- | --: |');
for (const r of rows) {
  const h = r.healthz as ReturnType<typeof summary>;
  const s = r.small as ReturnType<typeof summary>;
  const o = r.oversized as Awaited<ReturnType<typeof flood>> | null;
  console.log(
    `| ${r.server} | ${r.round} | ${r.kind === 'quiet' ? 'nothing' : `16 x ${r.kind}`} | ${f(h.p50)} / ${f(h.p99)} / ${f(h.max)} | ${f(s.p50)} / ${f(s.p99)} / ${f(s.max)} | ${o ? JSON.stringify(o.statuses) : '-'} | ${o ? f(o.allAnsweredMs) : '-'} |`,
  );
}
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(
  OUT,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        loadavgAtStart: os.loadavg(),
        node: process.version,
      },
      baseline: values.baseline ?? null,
      rows,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nwrote ${path.relative(ROOT, OUT)}`);
