/**
 * What the "teach Brier your task" routes share (issue 23): labelled examples, and later retention,
 * outcomes, training jobs and adapters. Built once in src/services.ts and handed to both sub-apps.
 */
import type { AdapterStore } from '../domain/adapters.ts';
import type { DistillStore } from '../domain/distill.ts';
import type { ExampleStore } from '../domain/examples.ts';
import type { JobQueue } from '../domain/jobs.ts';
import type { Outcomes } from '../domain/outcomes.ts';
import type { Retention } from '../domain/retention.ts';
import type { Teachers } from '../engines/teachers.ts';
import type { AdapterResolver } from '../systemone/adapters.ts';

export interface TeachDeps {
  examples: ExampleStore;
  retention: Retention;
  outcomes: Outcomes;
  jobs: JobQueue;
  adapters: AdapterStore;
  /** Adapters as model ids, for serving (a deletion drops its cache entry at once). */
  resolver: AdapterResolver;
  /** Fewest labelled examples a template needs to be fitted. */
  minExamples: number;
  /** Examples one training job reads at most (the newest past it). */
  maxJobExamples: number;
  /** The id of the model this server answers with (adapters serve only on theirs). */
  baseModel(): string;
  /** Distillation (issue 34): the configured teachers, unlabelled states and soft labels. */
  teachers: Teachers;
  distill: DistillStore;
  /** Default weight of true labels against a teacher's in a distillation fit. */
  humanWeight: number;
}
