/**
 * `npm run bench:adapt-latency`: inference latency while an adapter training job runs, against the
 * same server idle. A real server (src/main.ts, the embedded engine, 2 encoder threads) answers the
 * request of bench:lite-latency (a ~300-token state, 3 questions; a fresh state each time) one after
 * another: first with no job, then while a job fits an adapter from 1,000 labelled rows (sst2 from
 * ../shared, or generated tickets without it). Reports p50/p95 and their ratios, per job stage.
 * Writes bench/results/adapt-latency.json.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/training/data.ts';
import { latencyRequest } from '../../src/training/latency.ts';
import { jsonl, ROUTING, row, tickets } from '../../test/fixtures/teach.ts';
import { startServer, waitHealthy } from '../../test/server.ts';

const ROWS = 1000;
const server = await startServer({ BRIER_THREADS: '2' });
await waitHealthy(server.url);
const key = await server.createKey('latency@example.com');
const auth = { authorization: `Bearer ${key}` };

/** The bench:lite-latency request in System One form, with a fresh state. */
function body(i: number) {
  const r = latencyRequest(i);
  const questions: Record<string, unknown> = {};
  r.questions.forEach((q, j) => {
    questions[`q${j}`] =
      q.type === 'noul'
        ? { type: 'noul', instructions: q.instructions }
        : q.type === 'choice'
          ? {
              type: 'choice',
              instructions: q.instructions,
              criteria: Object.fromEntries(q.options.map((o) => [o.label, o.description])),
            }
          : { type: 'score', instructions: q.instructions, criteria: q.options.map((o) => o.description) };
  });
  return JSON.stringify({ state: r.state.text, questions });
}

let next = 0;
async function once(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${server.url}/v1/systemone`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: body(next++),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  return performance.now() - t0;
}

function summary(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => Math.round((s[Math.floor(p * (s.length - 1))] ?? 0) * 10) / 10;
  return { n: s.length, p50: q(0.5), p95: q(0.95), max: q(1) };
}

for (let i = 0; i < 10; i++) await once();
const idle: number[] = [];
for (let i = 0; i < 60; i++) idle.push(await once());

// The labelled rows: sst2 (every other row) when ../shared is there, else generated tickets.
const shared = join(REPO_ROOT, '..', 'shared', 'data', 'decisions', 'sst2.jsonl');
const rows = existsSync(shared)
  ? readFileSync(shared, 'utf8')
      .split('\n')
      .filter(Boolean)
      .filter((_, i) => i % 2 === 0)
      .slice(0, ROWS)
      .map((l) => {
        const r = JSON.parse(l) as { state: string; question: unknown; label: unknown };
        return row(r.state, { q: r.question }, { q: r.label });
      })
  : tickets(ROWS).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
const up = await fetch(`${server.url}/control/v1/examples`, {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/jsonl' },
  body: jsonl(rows),
});
if (up.status !== 201) throw new Error(`upload ${up.status}: ${await up.text()}`);
const started = performance.now();
const job = (await (
  await fetch(`${server.url}/control/v1/training-jobs`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{}',
  })
).json()) as { id: string };

const during: Record<string, number[]> = {};
let status = 'queued';
let final: { status: string; message: string; result?: { templates: { reason: string }[] } } | undefined;
while (status === 'queued' || status === 'running') {
  const j = (await (await fetch(`${server.url}/control/v1/training-jobs/${job.id}`, { headers: auth })).json()) as {
    status: string;
    stage: string;
    message: string;
  };
  status = j.status;
  if (status === 'running') {
    const stage = during[j.stage] ?? [];
    during[j.stage] = stage;
    for (let i = 0; i < 5; i++) stage.push(await once());
  } else if (status !== 'queued') final = j;
  else await new Promise((r) => setTimeout(r, 200));
}
const jobSeconds = (performance.now() - started) / 1000;
const base = summary(idle);
const stages = Object.fromEntries(Object.entries(during).map(([stage, ms]) => [stage, summary(ms)]));
const all = summary(Object.values(during).flat());
const report = {
  request: 'bench:lite-latency request (~300-token state, 3 questions), fresh state each time, one at a time',
  rows: rows.length,
  idle: base,
  duringJob: all,
  byStage: stages,
  ratio: { p50: Math.round((all.p50 / base.p50) * 100) / 100, p95: Math.round((all.p95 / base.p95) * 100) / 100 },
  jobSeconds: Math.round(jobSeconds),
  job: final?.message,
  templates: final?.result?.templates.map((t) => t.reason),
  at: new Date().toISOString(),
};
console.log(JSON.stringify(report, null, 2));
const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'adapt-latency.json'), `${JSON.stringify(report, null, 2)}\n`);
await server.stop();
