/**
 * `npm run bench:distill` (issue 34): how closely an adapter on the embedded base learns a teacher.
 * For each shared set (../shared/data/decisions, read from there), a fixed seeded test pool (--test,
 * default 300) and, from the other rows, the first 100 / 300 / 1,000 (--sizes) labelled by each
 * teacher: the adapter is fitted as a distillation job fits it (src/training/adapter-fit.ts, cross-
 * entropy to the teacher's distributions, candidates by cross-validated loss) on those states, and
 * the test pool measures the base model and the adapter against the teacher (agreement with its
 * argmax, Brier and KL to its distribution) and against the truth (accuracy of teacher, base and
 * adapter side by side).
 *
 * Teachers (--teachers, default truth,fixture,gguf):
 * - truth: the true labels as a one-hot teacher (the upper bound: a teacher that is always right);
 * - fixture: the System One fixture server of the tests (test/fixtures/teacher-server.ts) over HTTP,
 *   a deterministic word-matching teacher, asked through src/engines/teachers.ts as a job asks;
 * - gguf: SmolLM2-135M-Instruct from ../shared/models through the GGUF engine (--gguf-sets, default
 *   the first set only: about 0.5 s a call on one CPU thread), asked through the same teachers module.
 * Speed, in the same run: the teacher's milliseconds per call (one call per state, every template in
 * it) against the adapter's per request through the serving path (createSystemOne, fresh states), and
 * what a job costs: one teacher call per state it reads (25% of them held out to measure).
 *
 *   npm run bench:distill -- [--sets sst2,ag_news,trec] [--sizes 100,300,1000] [--test 300]
 *     [--teachers truth,fixture,gguf] [--gguf-sets sst2] [--gguf-threads 1]
 * Writes bench/results/distill.json and prints a table.
 */

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADAPTER_FORMAT, applyHead, parseAdapter } from '../../src/engines/adapters/adapter.ts';
import type { FitRow } from '../../src/engines/adapters/fit-protocol.ts';
import { createFeaturizedEmbeddedEngine } from '../../src/engines/embedded/featurized.ts';
import { createEngineHost } from '../../src/engines/host.ts';
import { createTeachers, type Teacher } from '../../src/engines/teachers.ts';
import { labelStatesOf } from '../../src/jobs/job-kit.ts';
import { mulberry32, shuffled } from '../../src/lib/seeded.ts';
import type { ServedAdapter } from '../../src/systemone/adapters.ts';
import { canonicalLabel } from '../../src/systemone/examples.ts';
import { toDecisionRequest } from '../../src/systemone/normalize.ts';
import type { WireQuestion, WireState } from '../../src/systemone/protocol.ts';
import { createSystemOne } from '../../src/systemone/serve.ts';
import { templateOf, toCanonical } from '../../src/systemone/templates.ts';
import { fitAllRows, teacherAgreement } from '../../src/training/adapter-fit.ts';
import { REPO_ROOT } from '../../src/training/data.ts';
import { asServed, oneHot } from '../../src/training/evaluation.ts';
import { startTeacherServer } from '../../test/fixtures/teacher-server.ts';
import { loadDataset } from '../datasets.ts';

const { values } = parseArgs({
  options: {
    sets: { type: 'string' },
    sizes: { type: 'string' },
    test: { type: 'string' },
    teachers: { type: 'string' },
    'gguf-sets': { type: 'string' },
    'gguf-threads': { type: 'string' },
    seed: { type: 'string' },
  },
});
const sets = (values.sets ?? 'sst2,ag_news,trec').split(',');
const sizes = (values.sizes ?? '100,300,1000').split(',').map(Number);
const testSize = Number(values.test ?? 300);
const teacherNames = (values.teachers ?? 'truth,fixture,gguf').split(',');
const ggufSets = (values['gguf-sets'] ?? sets[0] ?? '').split(',');
const ggufThreads = Number(values['gguf-threads'] ?? 1);
const seed = Number(values.seed ?? 34);
const GGUF = join(REPO_ROOT, '..', 'shared', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const KEY = 'bench-teacher-key-0123456789abcdef';

const load = () => os.loadavg().map((v) => Math.round(v * 100) / 100);
const r4 = (v: number) => Math.round(v * 10_000) / 10_000;
const started = performance.now();
const loadAtStart = load();

const engine = createFeaturizedEmbeddedEngine({ threads: 1, parallelism: 4 });
await engine.load();
const fixture = teacherNames.includes('fixture') ? await startTeacherServer({ key: KEY, sharpness: 1.2 }) : null;
const teachers = createTeachers(
  [
    ...(fixture
      ? [
          {
            id: 'fixture',
            kind: 'systemone' as const,
            target: fixture.url,
            upstreamModel: undefined,
            apiKey: KEY,
            timeoutMs: 30_000,
            concurrency: 4,
            retries: 2,
          },
        ]
      : []),
    ...(teacherNames.includes('gguf') && existsSync(GGUF)
      ? [
          {
            id: 'gguf',
            kind: 'gguf' as const,
            target: GGUF,
            upstreamModel: undefined,
            apiKey: undefined,
            timeoutMs: 300_000,
            concurrency: 1,
            retries: 1,
          },
        ]
      : []),
  ],
  { gguf: { threads: ggufThreads } },
);
if (teacherNames.includes('gguf') && !existsSync(GGUF)) console.log(`# gguf teacher skipped: ${GGUF} is absent`);

interface Row {
  state: WireState;
  label: number;
  base: number[];
  features: Float32Array;
}

/** The teacher's distributions of `rows` (canonical order), and its measured milliseconds per call. */
async function ask(teacher: Teacher, question: WireQuestion, rows: readonly Row[]) {
  const out: number[][] = new Array(rows.length);
  const ms: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const i = next++;
      const t0 = performance.now();
      const a = await teacher.ask(toDecisionRequest((rows[i] as Row).state, [question]));
      ms.push(performance.now() - t0);
      out[i] = toCanonical(question, a.probabilities[0] ?? []);
    }
  };
  const wall0 = performance.now();
  await Promise.all(Array.from({ length: teacher.concurrency }, worker));
  const wall = performance.now() - wall0;
  ms.sort((a, b) => a - b);
  return {
    targets: out,
    msPerCall: ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length),
    p50: ms[Math.floor(ms.length / 2)] ?? 0,
    callsPerSecond: rows.length / (wall / 1000),
    concurrency: teacher.concurrency,
  };
}

const results: unknown[] = [];
const lines: string[] = [];
const speed: unknown[] = [];
for (const name of sets) {
  const raw = loadDataset(name, 'bench:distill');
  const question = raw[0]?.question as WireQuestion;
  const template = templateOf(question);
  const k = template.labels.length;
  const usable = shuffled(
    raw.filter((r) => templateOf(r.question as WireQuestion).id === template.id),
    mulberry32(seed),
  );
  const wanted = usable.slice(0, testSize + Math.max(...sizes));
  const t0 = performance.now();
  const rows: Row[] = [];
  for (let i = 0; i < wanted.length; i += 8) {
    const part = await Promise.all(
      wanted.slice(i, i + 8).map(async (r) => {
        const label = canonicalLabel(question, r.label);
        if ('error' in label) return null;
        const request = toDecisionRequest(r.state as WireState, [question]);
        const answer = await engine.answer(request, AbortSignal.timeout(120_000));
        const features = (await engine.features?.state(request)) as Float32Array;
        return {
          state: r.state as WireState,
          label: template.labels.indexOf(label.label),
          base: toCanonical(question, answer.probabilities[0] ?? []),
          features,
        };
      }),
    );
    for (const p of part) if (p) rows.push(p);
  }
  const labelStates = await labelStatesOf(engine, question);
  const test = rows.slice(0, testSize);
  const pool = rows.slice(testSize);
  console.log(
    `${name} (${template.type}, k=${k}): ${rows.length} states read by the base in ${((performance.now() - t0) / 1000).toFixed(0)} s; test ${test.length}, pool ${pool.length}; load ${load().join(' ')}`,
  );
  for (const teacherName of teacherNames) {
    let targetsTest: number[][];
    let targetsPool: number[][];
    let teacherSpeed: Awaited<ReturnType<typeof ask>> | null = null;
    if (teacherName === 'truth') {
      targetsTest = test.map((r) => oneHot(k, r.label));
      targetsPool = pool.map((r) => oneHot(k, r.label));
    } else {
      const teacher = teachers.get(teacherName);
      if (!teacher || (teacherName === 'gguf' && !ggufSets.includes(name))) continue;
      const askedTest = await ask(teacher, question, test);
      const askedPool = await ask(teacher, question, pool);
      targetsTest = askedTest.targets;
      targetsPool = askedPool.targets;
      teacherSpeed = askedPool;
    }
    const teacherTruth =
      test.filter((r, i) => {
        const t = targetsTest[i] as number[];
        return t.indexOf(Math.max(...t)) === r.label;
      }).length / Math.max(1, test.length);
    const baseItems = test.map((r, i) => ({ p: asServed(r.base), t: targetsTest[i] as number[], truth: r.label }));
    const base = teacherAgreement(baseItems);
    const curve: unknown[] = [];
    let lastAdapter: ServedAdapter | null = null;
    for (const n of sizes) {
      if (n > pool.length) continue;
      const fitRows: FitRow[] = pool.slice(0, n).map((r, i) => {
        const target = targetsPool[i] as number[];
        return {
          base: r.base,
          state: r.features,
          label: target.indexOf(Math.max(...target)),
          target,
          source: 'teacher',
        };
      });
      const f0 = performance.now();
      const fitted = fitAllRows({
        template: template.id,
        type: template.type,
        labels: template.labels,
        rows: fitRows,
        labelStates,
      });
      const fitSeconds = (performance.now() - f0) / 1000;
      if (!fitted) {
        console.log(`# ${name}/${teacherName} at ${n}: not fitted (one class only)`);
        continue;
      }
      const parsed = parseAdapter({
        format: ADAPTER_FORMAT,
        base: engine.info.id,
        features: engine.features?.id ?? null,
        heads: [fitted.file],
      });
      const head = parsed.heads.get(template.id);
      if (!head) continue;
      const adapter = teacherAgreement(
        test.map((r, i) => ({
          p: asServed(applyHead(head, r.base, r.features)),
          t: targetsTest[i] as number[],
          truth: r.label,
        })),
      );
      lastAdapter = { ...parsed, id: `ft:${engine.info.id}:bench`, createdAt: Date.now(), fallback: null };
      // A job reads n / 0.75 states to fit on n (25% held out), one teacher call each.
      const jobCalls = Math.ceil(n / 0.75);
      curve.push({
        states: n,
        jobTeacherCalls: jobCalls,
        chosen: fitted.chosen,
        fitSeconds: Math.round(fitSeconds * 10) / 10,
        base: { ...base },
        adapter,
      });
      const line = `| ${name} | ${teacherName} | ${n} | ${base.agreement.toFixed(3)} → ${adapter.agreement.toFixed(3)} | ${base.brier.toFixed(4)} → ${adapter.brier.toFixed(4)} | ${base.kl.toFixed(3)} → ${adapter.kl.toFixed(3)} | ${teacherTruth.toFixed(3)} / ${(base.accuracy ?? 0).toFixed(3)} / ${(adapter.accuracy ?? 0).toFixed(3)} | ${jobCalls} |`;
      lines.push(line);
      console.log(line);
    }
    // Speed in one run: the teacher per call against the adapter per request through the serving path.
    let adapterMs: { mean: number; p50: number } | null = null;
    if (teacherSpeed && lastAdapter) {
      const host = createEngineHost(engine, { queueLimit: 64, timeoutMs: 60_000 });
      const adapter = lastAdapter;
      const s1 = createSystemOne(host, {
        adapters: { find: async () => adapter, list: async () => [adapter], forget: () => {} },
      });
      const ms: number[] = [];
      for (const [i, r] of test.slice(0, 100).entries()) {
        const state = typeof r.state === 'string' ? `${r.state} #${teacherName}${i}` : { ...Object(r.state), bench: i };
        const s = performance.now();
        await s1.serve({ model: adapter.id, state, questions: { q: question } }, undefined, { account: 'bench' });
        ms.push(performance.now() - s);
      }
      ms.sort((a, b) => a - b);
      adapterMs = {
        mean: Math.round((ms.reduce((a, b) => a + b, 0) / ms.length) * 10) / 10,
        p50: Math.round((ms[Math.floor(ms.length / 2)] ?? 0) * 10) / 10,
      };
      const row = {
        set: name,
        teacher: teacherName,
        teacherMsPerCall: Math.round(teacherSpeed.msPerCall * 10) / 10,
        teacherP50: Math.round(teacherSpeed.p50 * 10) / 10,
        teacherConcurrency: teacherSpeed.concurrency,
        adapterMsPerRequest: adapterMs,
        ratio: Math.round((teacherSpeed.msPerCall / adapterMs.mean) * 100) / 100,
        load: load(),
      };
      speed.push(row);
      console.log(
        `# speed ${name}/${teacherName}: teacher ${row.teacherMsPerCall} ms a call (p50 ${row.teacherP50}, ${row.teacherConcurrency} at once), adapter ${adapterMs.mean} ms a request (p50 ${adapterMs.p50}): ${row.ratio}x; load ${row.load.join(' ')}`,
      );
    }
    results.push({
      set: name,
      type: template.type,
      k,
      teacher: teacherName,
      test: test.length,
      teacherAccuracy: r4(teacherTruth),
      curve,
    });
  }
}
await teachers.close();
await fixture?.close();
await engine.close();

const header = [
  '| set | teacher | teacher-labelled states | agreement with the teacher (base → adapter) | Brier to the teacher (base → adapter) | KL to the teacher (base → adapter) | accuracy vs truth: teacher / base / adapter | job cost (teacher calls) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
];
console.log(`\n${[...header, ...lines].join('\n')}\n`);
for (const s of speed as {
  set: string;
  teacher: string;
  teacherMsPerCall: number;
  adapterMsPerRequest: { mean: number };
  ratio: number;
}[])
  console.log(
    `| ${s.set} | ${s.teacher} | ${s.teacherMsPerCall} ms | ${s.adapterMsPerRequest.mean} ms | ${s.ratio}x |`,
  );
const out = {
  date: new Date().toISOString(),
  machine: { cores: os.availableParallelism(), loadAtStart, loadAtEnd: load() },
  seconds: Math.round((performance.now() - started) / 1000),
  options: { sets, sizes, test: testSize, teachers: teacherNames, ggufSets, ggufThreads, seed },
  results,
  speed,
};
mkdirSync(join(REPO_ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(REPO_ROOT, 'bench', 'results', 'distill.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify({ seconds: out.seconds, machine: out.machine, speed }, null, 2));
