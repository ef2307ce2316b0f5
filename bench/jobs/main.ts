/**
 * `npm run bench:jobs`: how long one training job takes on a real server. A real server
 * (src/main.ts, the embedded engine, its default threads) gets the job of issue 33's report
 * (bench/jobs/data.ts: 1,651 labelled questions, 29 templates, 1,001 distinct states) in one upload,
 * then one training job; the bench polls the job and times its stages (reading the examples with the
 * base model, then fitting). Prints labelled rows per second, distinct states read per second and
 * minutes per job beside the numbers of the code before issue 33:
 *
 * - by default, the numbers recorded in bench/jobs/baseline.json (measured with this bench on that
 *   code: `-- --root <checkout> --label <name> --record bench/jobs/baseline.json`);
 * - with `--against <checkout>` (e.g. `git worktree add /tmp/before 31a61e2`, or `git archive` of it
 *   with node_modules linked), that code measured in the same run, just before this one, so that both
 *   see the same machine load (each run prints the load averages around it).
 *
 * Writes bench/results/jobs.json. Needs ../shared/data.
 *
 *   npm run bench:jobs -- [--against DIR] [--root DIR] [--label NAME] [--record FILE] [--env KEY=VALUE ...]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../../src/training/data.ts';
import { startServer, waitHealthy } from '../../test/server.ts';
import { describe, jobRows, type UploadRow } from './data.ts';

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    against: { type: 'string' },
    record: { type: 'string' },
    /** Names the code measured (default: its git commit). */
    label: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
  },
});

interface JobView {
  id: string;
  status: string;
  stage: string;
  message: string;
  adapter_id: string | null;
  result: { templates: { template: string; n: number; served: boolean; seconds: number; chosen?: string }[] } | null;
}

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

function commitOf(root: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** One job of `rows` on a fresh server of the checkout at `root`. */
async function measure(rows: UploadRow[], root: string, label: string, env: Record<string, string>) {
  const shape = describe(rows);
  const loadBefore = os.loadavg();
  const server = await startServer(env, 120_000, root);
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('jobs@example.com');
    const auth = { authorization: `Bearer ${key}` };
    const up = await fetch(`${server.url}/control/v1/examples`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/jsonl' },
      body: `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`,
    });
    if (up.status !== 201) throw new Error(`upload ${up.status}: ${await up.text()}`);
    const queuedAt = performance.now();
    const created = (await (
      await fetch(`${server.url}/control/v1/training-jobs`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as JobView;
    /** When each stage was first seen (s after queueing). */
    const firstSeen: Record<string, number> = {};
    let job = created;
    while (job.status === 'queued' || job.status === 'running') {
      await new Promise((r) => setTimeout(r, 250));
      job = (await (
        await fetch(`${server.url}/control/v1/training-jobs/${created.id}`, { headers: auth })
      ).json()) as JobView;
      firstSeen[job.stage] ??= (performance.now() - queuedAt) / 1000;
    }
    const total = (performance.now() - queuedAt) / 1000;
    if (job.status !== 'succeeded') throw new Error(`the job ended ${job.status}: ${job.message}`);
    const started = Math.min(...['starting', 'reading'].map((s) => firstSeen[s] ?? total));
    const fitting = firstSeen.fitting ?? total;
    const templates = job.result?.templates ?? [];
    return {
      job: `${shape.labelled} labelled questions, ${shape.templates} templates, ${shape.states} distinct states (bench/jobs/data.ts)`,
      code: { root, commit: label },
      env,
      machine: {
        cores: os.cpus().length,
        load: { before: loadBefore.map((v) => round(v, 2)), after: os.loadavg().map((v) => round(v, 2)) },
      },
      seconds: {
        total: round(total),
        waiting: round(started),
        reading: round(fitting - started),
        fitting: round(total - fitting),
      },
      minutesPerJob: round(total / 60, 2),
      rowsPerSecond: round(shape.labelled / total, 2),
      statesPerSecondRead: round(shape.states / Math.max(0.001, fitting - started), 2),
      fitSeconds: {
        sum: round(templates.reduce((s, t) => s + t.seconds, 0)),
        slowest: [...templates]
          .sort((a, b) => b.seconds - a.seconds)
          .slice(0, 5)
          .map((t) => ({ n: t.n, seconds: round(t.seconds), chosen: t.chosen ?? null })),
      },
      served: `${templates.filter((t) => t.served).length} of ${templates.length} templates`,
      message: job.message,
      at: new Date().toISOString(),
    };
  } finally {
    await server.stop();
  }
}

type Report = Awaited<ReturnType<typeof measure>>;

function compare(before: Report, now: Report): void {
  const line = (what: string, a: number, b: number) =>
    `${what.padEnd(26)}${String(a).padStart(12)}${String(b).padStart(12)}${`${round(b / a, 2)}x`.padStart(10)}`;
  console.log(`\n${''.padEnd(26)}${'before'.padStart(12)}${'now'.padStart(12)}${'ratio'.padStart(10)}`);
  console.log(line('minutes per job', before.minutesPerJob, now.minutesPerJob));
  console.log(line('labelled rows per second', before.rowsPerSecond, now.rowsPerSecond));
  console.log(line('states read per second', before.statesPerSecondRead, now.statesPerSecondRead));
  console.log(line('reading (s)', before.seconds.reading, now.seconds.reading));
  console.log(line('fitting (s)', before.seconds.fitting, now.seconds.fitting));
  const load = (r: Report) => `${r.machine.load.before.join('/')} -> ${r.machine.load.after.join('/')}`;
  console.log(
    `before: ${before.code.commit}, ${before.at.slice(0, 16)}, load ${load(before)}; now: ${now.code.commit}, load ${load(now)}`,
  );
}

const rows = jobRows();
if (!rows) {
  console.log('bench:jobs needs ../shared/data (the CalDec validation set and the decision sets); skipped');
  process.exit(0);
}
const env = Object.fromEntries(
  (values.env ?? []).map((kv) => {
    const at = kv.indexOf('=');
    return [kv.slice(0, at), kv.slice(at + 1)];
  }),
);
const root = resolve(values.root ?? REPO_ROOT);
const before = values.against
  ? await measure(rows, resolve(values.against), `${commitOf(resolve(values.against))} (--against)`, env)
  : undefined;
const now = await measure(rows, root, values.label ?? commitOf(root), env);
console.log(JSON.stringify(before ? { before, now } : now, null, 2));
const baselineFile = join(REPO_ROOT, 'bench', 'jobs', 'baseline.json');
const reference =
  before ?? (existsSync(baselineFile) ? (JSON.parse(readFileSync(baselineFile, 'utf8')) as Report) : undefined);
if (reference && !values.record) compare(reference, now);
if (values.record) writeFileSync(resolve(values.record), `${JSON.stringify(now, null, 2)}\n`);
const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'jobs.json'), `${JSON.stringify(before ? { before, now } : now, null, 2)}\n`);
