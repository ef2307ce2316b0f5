/**
 * A distillation job (issue 34), run by ./runner.ts: asks the teacher about the job's states (each
 * state once, with every template it has no soft label for yet, `spec.concurrency` calls at once, at
 * most `spec.budget` calls), storing its distributions as soft labels as they come (a restarted job
 * does not ask again); reads every labelled state with the base model; fits to the teacher's
 * distributions (src/training/adapter-fit.ts fitDistilledTemplate) and stores the adapter with its
 * teacher (and its fallback) where it is closer to the teacher than the base model.
 */
import { type DistillSpec, stateHash } from '../domain/distill.ts';
import type { Executor } from '../domain/jobs.ts';
import type { FitTemplate } from '../engines/adapters/fit-protocol.ts';
import type { EngineAnswer } from '../engines/engine.ts';
import { counted } from '../lib/plural.ts';
import { toDecisionRequest } from '../systemone/normalize.ts';
import type { WireQuestion, WireState } from '../systemone/protocol.ts';
import { templateLabels, toCanonical } from '../systemone/templates.ts';
import { type JobKit, type JobRun, stop, tenths } from './job-kit.ts';

/** Weight of an account's true label against a teacher's soft label in distillation (default; documented). */
export const DEFAULT_HUMAN_WEIGHT = 3;
/** The route of a distillation job's teacher calls in usage (`usage_event.route`, with its `job_id`). */
export const DISTILLATION_USAGE_ROUTE = 'distillation-job';
/** Teacher calls that may fail (after their retries) before a distillation job fails: this share of them. */
const MAX_FAILED_SHARE = 0.5;

/** Runs a distillation job to its end (see the file comment); throws what the runner handles. */
export async function runDistillation(kit: JobKit, run: JobRun): Promise<void> {
  const { job, lease, abort, latest } = run;
  const spec = job.spec as DistillSpec;
  const signal = abort.signal;
  const teacher = kit.teachers?.get(spec.teacher);
  const store = kit.distill;
  if (!teacher || !store) throw new Error(`teacher ${spec.teacher} is not configured on this server`);
  const questions = new Map(
    Object.entries(spec.questions)
      .filter(([id]) => !job.templates || job.templates.includes(id))
      .map(([id, q]) => {
        const question = JSON.parse(q) as WireQuestion;
        return [id, { question, labels: templateLabels(question) }] as const;
      }),
  );
  const ids = [...questions.keys()];
  if (ids.length === 0) throw new Error('the job has no question template left');
  const states =
    spec.source === 'states'
      ? await store.states(job.userId, spec.maxStates)
      : await store.retainedStates(job.userId, spec.maxStates);
  // 1. The teacher's labels, for the states and templates that have none yet.
  const have = await store.labelled(job.userId, spec.teacher, ids);
  const todo = states
    .map((state) => {
      const h = stateHash(state);
      return { state, missing: ids.filter((id) => !have.get(id)?.has(h)) };
    })
    .filter((t) => t.missing.length > 0);
  // Calls charged to the budget: answered or failed (a call cut off by a stop or a delete is not: the
  // restarted job asks it again), counted in the database with each call's soft labels.
  let calls = job.teacherCalls;
  const asked = todo.slice(0, Math.max(0, spec.budget - calls));
  let failed = 0;
  let lastFailure = '';
  let next = 0;
  let answered = 0;
  Object.assign(latest, {
    stage: 'labelling',
    message: `asking teacher ${spec.teacher} about ${counted(asked.length, 'state')}`,
  });
  const labelStarted = performance.now();
  /** Every call sent to the teacher is metered (the account's usage, by day and by job), cut off or not. */
  const meter = (status: number, began: number) =>
    kit.usage?.record({
      keyId: '',
      userId: job.userId,
      jobId: job.id,
      ts: Date.now(),
      route: DISTILLATION_USAGE_ROUTE,
      model: `teacher:${spec.teacher}`,
      status,
      questions: 0,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: Math.round(performance.now() - began),
      teacherCalls: 1,
    });
  /** Stops every call of the run at once: the job is no longer its own (a delete or a cancel landed, its account went). */
  const lost = (when: string) => {
    const why = stop('not-held', `the job is no longer held by this run (${when})`);
    abort.abort(why);
    return why;
  };
  const worker = async () => {
    while (next < asked.length) {
      signal.throwIfAborted();
      const item = asked[next++] as (typeof asked)[number];
      const qs = item.missing.map((id) => questions.get(id)?.question as WireQuestion);
      // Checked before each call, so that a delete stops the calls at once rather than at the next renewal.
      if (!(await kit.jobs.held(job.id, lease))) throw lost('before a teacher call');
      const began = performance.now();
      let sent = false;
      let answer: EngineAnswer | null = null;
      try {
        const request = toDecisionRequest(JSON.parse(item.state) as WireState, qs);
        sent = true;
        answer = await teacher.ask(request, signal);
      } catch (error) {
        if (signal.aborted) {
          if (sent) meter(499, began);
          throw error;
        }
        failed++;
        lastFailure = error instanceof Error ? error.message : String(error);
      }
      if (sent) {
        meter(answer ? 200 : 502, began);
        const labels = answer?.probabilities;
        const write = labels
          ? (tx: Executor) =>
              store.addSoftLabels(
                job.userId,
                spec.teacher,
                job.id,
                item.missing.map((templateId, i) => ({
                  templateId,
                  state: item.state,
                  distribution: toCanonical(qs[i] as WireQuestion, labels[i] ?? []),
                })),
                tx,
              )
          : undefined;
        if (!(await kit.jobs.recordTeacherCall(job.id, lease, write))) throw lost('after a teacher call');
        calls++;
      }
      if (failed > Math.max(2, MAX_FAILED_SHARE * asked.length)) {
        next = asked.length; // the other workers take no more states
        throw new Error(`the teacher failed on ${failed} states (${lastFailure})`);
      }
      answered++;
      Object.assign(latest, {
        progress: 0.4 * (answered / Math.max(1, asked.length)),
        message: `teacher ${spec.teacher} answered ${answered - failed} of ${counted(asked.length, 'state')} (${counted(calls, 'call')} of a budget of ${spec.budget})`,
      });
    }
  };
  const parallel = Math.max(1, Math.min(spec.concurrency, teacher.concurrency, asked.length));
  await Promise.all(Array.from({ length: parallel }, worker));
  const labellingSeconds = (performance.now() - labelStarted) / 1000;
  await kit.checkpoint(run, 'lost after labelling');

  // 2. Every labelled state read by the base model: the teacher's rows, with the account's true labels.
  const soft = await store.softLabels(job.userId, spec.teacher, ids);
  const inJob = new Set(states);
  const human = new Map<string, number>();
  for (const e of await kit.examples.list(job.userId, ids)) {
    const label = questions.get(e.templateId)?.labels.indexOf(e.label) ?? -1;
    if (label >= 0) human.set(`${e.templateId}\u0000${e.state}`, label);
  }
  type Item = { templateId: string; target: number[] | null; truth: number | null };
  const byState = new Map<string, Item[]>();
  const push = (state: string, item: Item) => {
    const list = byState.get(state);
    if (list) list.push(item);
    else byState.set(state, [item]);
  };
  const taught = new Set<string>();
  for (const l of soft) {
    if (!inJob.has(l.state) && spec.source === 'retained') continue;
    const key = `${l.templateId}\u0000${l.state}`;
    taught.add(key);
    push(l.state, { templateId: l.templateId, target: l.distribution, truth: human.get(key) ?? null });
  }
  for (const [key, label] of human) {
    if (taught.has(key)) continue;
    const [templateId, state] = key.split('\u0000') as [string, string];
    push(state, { templateId, target: null, truth: label });
  }
  const rows = new Map<string, FitTemplate['rows']>(ids.map((id) => [id, []]));
  const entries = [...byState].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const readStarted = performance.now();
  let read = 0;
  let skipped = 0;
  Object.assign(latest, {
    progress: 0.4,
    stage: 'reading',
    message: `reading ${entries.length} states with the base model`,
  });
  await kit.readStates(
    entries,
    (items) => items.map((it) => it.templateId),
    (id) => questions.get(id)?.question,
    signal,
    (chunk, results) => {
      results.forEach((answered, j) => {
        // Over the model's limits: left out.
        if (!answered) {
          skipped++;
          return;
        }
        (chunk[j]?.[1] ?? []).forEach((it, i) => {
          const base = answered.bases[i] ?? [];
          const state = answered.state;
          rows.get(it.templateId)?.push(
            it.target
              ? {
                  base,
                  state,
                  label: it.target.indexOf(Math.max(...it.target)),
                  target: it.target,
                  source: 'teacher',
                  truth: it.truth,
                }
              : { base, state, label: it.truth ?? 0, source: 'human' },
          );
        });
      });
      read += chunk.length;
      Object.assign(latest, {
        progress: 0.4 + 0.4 * (read / Math.max(1, entries.length)),
        message: `read ${read} of ${entries.length} states with the base model`,
      });
    },
  );
  const readingSeconds = (performance.now() - readStarted) / 1000;
  const templates = await kit.fitTemplates(
    [...questions].map(([id, t]) => [id, { ...t, rows: rows.get(id) ?? [] }]),
    signal,
  );
  if (templates.length === 0) throw new Error('the teacher labelled no state of these templates');

  // 3. The fit, and the adapter where it is closer to the teacher than the base model.
  const { fitted: result, seconds: fittingSeconds } = await kit.fitJob(
    run,
    templates,
    0.8,
    (id) => questions.get(id)?.question,
    { teacher: spec.teacher, humanWeight: spec.humanWeight },
  );
  const stats = teacher.stats();
  const summary = {
    teacher: spec.teacher,
    states: states.length,
    labelled_states: entries.length,
    teacher_calls: calls,
    failed_calls: failed,
    budget: spec.budget,
    teacher_ms_per_call: stats.msPerCall === null ? null : tenths(stats.msPerCall),
    labelling_s: tenths(labellingSeconds),
  };
  const timing = {
    reading_s: tenths(readingSeconds),
    fitting_s: tenths(fittingSeconds),
    examples: templates.reduce((n, t) => n + t.rows.length, 0),
    states: entries.length,
  };
  await kit.completeJob(run, result, {
    message: (adapterId, served) =>
      [
        adapterId
          ? `adapter ${adapterId} answers ${served} of ${result.reports.length} templates as teacher ${spec.teacher} would; the others fall back to the base model`
          : `no adapter: no template came closer to teacher ${spec.teacher} than the base model on its held-out states (see each template's reason)`,
        counted(calls, 'teacher call'),
        failed > 0 ? `${failed} states the teacher failed on left out (${lastFailure.slice(0, 120)})` : '',
        asked.length < todo.length ? `${todo.length - asked.length} states left unlabelled by the budget` : '',
        skipped > 0 ? `${skipped} states over the model's limits left out` : '',
      ]
        .filter(Boolean)
        .join('; '),
    report: { timing, distill: summary },
    distilled: {
      teacher: spec.teacher,
      fallback: spec.fallbackThreshold === null ? null : { teacher: spec.teacher, threshold: spec.fallbackThreshold },
    },
    done: 'distillation job done',
    fields: { ...summary, ...timing },
  });
}
