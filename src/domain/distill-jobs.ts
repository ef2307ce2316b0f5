/**
 * Starting a distillation job (issue 34), shared by POST /control/v1/distillation-jobs and `brier
 * distill start`: the states it would read, the teacher calls it would make (its budget) and the time
 * they should take, shown before anything is queued (a dry run), then the job queued with its spec.
 * The teacher is given as what serving knows of it (no engine here).
 */
import { fail } from '../lib/errors.ts';
import type { WireQuestion } from '../systemone/protocol.ts';
import { templateOf } from '../systemone/templates.ts';
import type { AdapterStore } from './adapters.ts';
import { type DistillSpec, type DistillStore, stateHash } from './distill.ts';
import type { ExampleStore } from './examples.ts';
import type { Job, JobQueue } from './jobs.ts';

/** Fewest states a distillation job needs (documented). */
export const MIN_DISTILL_STATES = 20;

export interface DistillRequest {
  questions: readonly WireQuestion[];
  source: 'states' | 'retained';
  maxStates: number;
  /** Teacher calls at most; default the estimate. */
  budget?: number | undefined;
  concurrency: number;
  humanWeight: number;
  fallbackThreshold: number | null;
  dryRun: boolean;
}

export interface DistillEstimate {
  teacher: string;
  templates: number;
  states: number;
  already_labelled: number;
  teacher_calls: number;
  budget: number;
  teacher_questions: number;
  estimated_seconds: number | null;
}

export function createDistillation(deps: {
  distill: DistillStore;
  examples: ExampleStore;
  jobs: JobQueue;
  adapters: AdapterStore;
}) {
  /**
   * The estimate for `request` with `teacher`, and unless it is a dry run the queued job. 400 when the
   * account has too few states (naming the source and how to get more).
   */
  async function start(
    userId: string,
    teacher: { id: string; concurrency: number; msPerCall: number | null },
    request: DistillRequest,
  ): Promise<{ estimate: DistillEstimate; job: Job | null }> {
    const templates = new Map<string, { canonical: string; type: string }>();
    for (const q of request.questions) {
      const t = templateOf(q);
      templates.set(t.id, { canonical: t.canonical, type: t.type });
    }
    const ids = [...templates.keys()];
    const states =
      request.source === 'states'
        ? await deps.distill.states(userId, request.maxStates)
        : await deps.distill.retainedStates(userId, request.maxStates);
    if (states.length < MIN_DISTILL_STATES) {
      throw fail(
        'BAD_REQUEST',
        request.source === 'states'
          ? `source: this account has ${states.length} unlabelled states, at least ${MIN_DISTILL_STATES} are needed; upload some (POST /control/v1/states)`
          : `source: this account has ${states.length} retained requests, at least ${MIN_DISTILL_STATES} are needed; turn retention on (PUT /control/v1/retention) or upload states`,
      );
    }
    const have = await deps.distill.labelled(userId, teacher.id, ids);
    const needing = states.filter((s) => {
      const h = stateHash(s);
      return ids.some((id) => !have.get(id)?.has(h));
    }).length;
    const budget = request.budget ?? needing;
    const calls = Math.min(budget, needing);
    const parallel = Math.max(1, Math.min(request.concurrency, teacher.concurrency));
    const estimate: DistillEstimate = {
      teacher: teacher.id,
      templates: ids.length,
      states: states.length,
      already_labelled: states.length - needing,
      teacher_calls: calls,
      budget,
      teacher_questions: calls * ids.length,
      estimated_seconds: teacher.msPerCall === null ? null : Math.round((calls * teacher.msPerCall) / 1000 / parallel),
    };
    if (request.dryRun) return { estimate, job: null };
    await deps.adapters.checkRoom(userId);
    await deps.examples.ensureTemplates(
      userId,
      [...templates].map(([templateId, t]) => ({ templateId, type: t.type, question: t.canonical })),
    );
    const spec: DistillSpec & { estimate: DistillEstimate } = {
      teacher: teacher.id,
      questions: Object.fromEntries([...templates].map(([id, t]) => [id, t.canonical])),
      source: request.source,
      maxStates: request.maxStates,
      budget,
      concurrency: request.concurrency,
      humanWeight: request.humanWeight,
      fallbackThreshold: request.fallbackThreshold,
      estimate,
    };
    return { estimate, job: await deps.jobs.enqueue(userId, ids, states.length, { spec }) };
  }

  return { start };
}
