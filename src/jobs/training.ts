/**
 * An adapter training job (issue 23), run by ./runner.ts: reads the account's labelled examples with
 * the base model (./job-kit.ts readStates: in batches when no live traffic is about, one at a time
 * when it is), fits in child processes (./fitter.ts), each template holding out part of its examples
 * and reporting held-out metrics before and after, and stores the adapter, when at least one
 * template's head is better than the base model there, in the transaction that ends the job, only if
 * the job is still its own (not cancelled, restarted by a delete of its examples, nor its account deleted).
 */
import type { StoredExample } from '../domain/examples.ts';
import type { Job } from '../domain/jobs.ts';
import type { FitTemplate } from '../engines/adapters/fit-protocol.ts';
import type { WireQuestion } from '../systemone/protocol.ts';
import { templateLabels } from '../systemone/templates.ts';
import { type JobKit, type JobRun, tenths } from './job-kit.ts';

/** Examples one job reads at most, by default (BRIER_TRAINING_MAX_EXAMPLES; documented). */
export const DEFAULT_MAX_EXAMPLES_PER_JOB = 20_000;

/** In content order, so that the same examples give the same held-out split and the same adapter. */
function contentOrder(a: StoredExample, b: StoredExample): number {
  return (
    (a.templateId < b.templateId ? -1 : a.templateId > b.templateId ? 1 : 0) ||
    (a.state < b.state ? -1 : a.state > b.state ? 1 : 0) ||
    (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)
  );
}

interface Read {
  templates: FitTemplate[];
  examples: number;
  states: number;
  /** Examples over the job's bound, left out (the oldest). */
  dropped: number;
  /** Examples over the model's limits, left out. */
  skipped: number;
  questionOf: (templateId: string) => WireQuestion | undefined;
}

/** The account's labelled examples of the job's templates, read by the base engine (templates with rows). */
async function featurize(
  kit: JobKit,
  job: Job,
  signal: AbortSignal,
  progress: (p: number, message: string, examples?: number) => void,
): Promise<Read> {
  const all = await kit.examples.templates(job.userId);
  const wanted = job.templates ? all.filter((t) => job.templates?.includes(t.id)) : all;
  const templates = new Map(
    wanted.map((t) => {
      const question = JSON.parse(t.question) as WireQuestion;
      return [t.id, { question, labels: templateLabels(question), rows: [] as FitTemplate['rows'] }];
    }),
  );
  let examples = await kit.examples.list(job.userId, [...templates.keys()]);
  const dropped = Math.max(0, examples.length - kit.maxExamples);
  // Past the bound, the newest (list is oldest first).
  if (dropped > 0) examples = examples.slice(dropped);
  examples.sort(contentOrder);
  // One engine call per distinct state, with every labelled question of it.
  const byState = new Map<string, StoredExample[]>();
  for (const e of examples) {
    const same = byState.get(e.state);
    if (same) same.push(e);
    else byState.set(e.state, [e]);
  }
  let done = 0;
  let skipped = 0;
  const states = [...byState];
  progress(0, `reading ${examples.length} examples with the base model`, examples.length);
  await kit.readStates(
    states,
    (labelled) => labelled.map((e) => e.templateId),
    (id) => templates.get(id)?.question,
    signal,
    (chunk, results) => {
      results.forEach((answered, j) => {
        const labelled = chunk[j]?.[1] ?? [];
        // Over the model's limits: left out.
        if (!answered) {
          skipped += labelled.length;
          return;
        }
        labelled.forEach((e, i) => {
          const t = templates.get(e.templateId);
          const label = t?.labels.indexOf(e.label) ?? -1;
          if (label >= 0) t?.rows.push({ base: answered.bases[i] ?? [], state: answered.state, label });
        });
      });
      done += chunk.reduce((n, [, labelled]) => n + labelled.length, 0);
      progress(done / Math.max(1, examples.length), `read ${done} of ${examples.length} examples with the base model`);
    },
  );
  const out = await kit.fitTemplates(templates, signal);
  const questionOf = (id: string) => templates.get(id)?.question;
  return { templates: out, examples: examples.length, states: states.length, dropped, skipped, questionOf };
}

/** Runs an adapter training job to its end (see the file comment); throws what the runner handles. */
export async function runTraining(kit: JobKit, run: JobRun): Promise<void> {
  const { job, abort, latest, began } = run;
  const read = await featurize(kit, job, abort.signal, (p, message, examples) => {
    Object.assign(latest, { progress: 0.7 * p, stage: 'reading', message }, examples === undefined ? {} : { examples });
  });
  if (read.templates.length === 0) throw new Error('the account has no labelled examples for these templates');
  const readingSeconds = (performance.now() - began) / 1000;
  delete latest.examples;
  const { fitted: result, seconds: fittingSeconds } = await kit.fitJob(run, read.templates, 0.7, read.questionOf);
  const notes = [
    read.dropped > 0
      ? `read the newest ${read.examples} examples (the bound per job); ${read.dropped} older ones left out`
      : '',
    read.skipped > 0 ? `${read.skipped} examples over the model's limits left out` : '',
  ].filter(Boolean);
  const timing = {
    reading_s: tenths(readingSeconds),
    fitting_s: tenths(fittingSeconds),
    examples: read.examples,
    states: read.states,
  };
  await kit.completeJob(run, result, {
    message: (adapterId, served) =>
      [
        adapterId
          ? `adapter ${adapterId} answers ${served} of ${result.reports.length} templates; the others fall back to the base model`
          : "no adapter: no template was better than the base model on its held-out examples (see each template's reason)",
        ...notes,
      ].join('; '),
    report: { timing },
    done: 'training job done',
    fields: { templates: result.reports.length, ...timing },
  });
}
