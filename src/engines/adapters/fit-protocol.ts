/**
 * The messages between the job runner (src/jobs/runner.ts) and the fitting child process
 * (src/training/adapter-worker.ts), sent over IPC with structured clone (typed arrays travel as
 * they are). These types are the contract: src/training/adapter-fit.ts builds on them (serving never
 * imports training, so the child's module is started by path).
 */
import type { ReliabilityBin } from '../../lib/scoring.ts';
import type { Metrics } from '../embedded/artifacts.ts';
import type { FeaturePrefix } from '../engine.ts';
import type { AdapterFile, HeadKind } from './adapter.ts';

export interface FitRow {
  /** The base model's probabilities, canonical class order, unrounded. */
  base: readonly number[];
  /** State features (the embedded engine's state embedding), or null. */
  state: Float32Array | null;
  /** Index of the true class in canonical order (a teacher's row: its distribution's argmax). */
  label: number;
  /** Distillation (issue 34): the teacher's distribution (canonical order), fitted by cross-entropy. */
  target?: number[] | undefined;
  /** The row's weight in the fit (default 1; human labels above a teacher's in distillation). */
  weight?: number | undefined;
  /** Distillation: 'teacher' rows are held out and measured; 'human' rows (labels) only train. */
  source?: 'teacher' | 'human' | undefined;
  /** A teacher row's true label where the account labelled the same state (canonical index), else null. */
  truth?: number | null | undefined;
}

export interface FitTemplate {
  template: string;
  type: 'noul' | 'choice' | 'score';
  labels: string[];
  rows: FitRow[];
  /** Per class (canonical order), its option's features in the state space, or null (no label prior). */
  labelStates?: (Float32Array | null)[] | null;
}

export interface FitRequest {
  type: 'fit';
  base: string;
  features: string | null;
  /** The features' cheaper prefix (EngineFeatures.prefix), or null/absent: every feature costs the same. */
  prefix?: FeaturePrefix | null | undefined;
  templates: FitTemplate[];
  minExamples: number;
  /** Distillation (issue 34): fit to the teacher's rows, human labels weighted `humanWeight`. */
  distill?: { teacher: string; humanWeight: number } | undefined;
  /**
   * The templates this child fits and reports (src/jobs/fitter.ts deals them to children); absent:
   * all. Every template of the request is read by the account's shared model (issue 39).
   */
  only?: string[] | undefined;
}

/** Held-out measures against a teacher (issue 34), of one model (the base or the adapter). */
export interface TeacherAgreement {
  /** Share of held-out states whose argmax is the teacher's. */
  agreement: number;
  /** CalDec Brier against the teacher's distribution. */
  brier: number;
  /** Mean KL(teacher || model), nats. */
  kl: number;
  /** ECE of the top probability against agreement with the teacher's argmax (15 bins). */
  ece: number;
  /** Accuracy against the true labels, on held-out states the account labelled (null: none). */
  accuracy: number | null;
}

export interface DistillReport {
  teacher: string;
  /** Held-out states (25%), and how many of them have a true label. */
  nTest: number;
  nTruth: number;
  /** Human-labelled rows in the fit, and their weight. */
  nHuman: number;
  humanWeight: number;
  base: TeacherAgreement;
  adapter: TeacherAgreement | null;
  /** The teacher's own accuracy against the true labels on the same held-out states (null: none). */
  teacherAccuracy: number | null;
}

/** One template's report, as the job result carries it. */
export interface FitReport {
  template: string;
  type: FitTemplate['type'];
  labels: string[];
  n: number;
  nTrain: number;
  nTest: number;
  /** The head fitted (probe or calibration), or null when the template was skipped. */
  kind: HeadKind | null;
  served: boolean;
  /** Why it is served or not, in a sentence. */
  reason: string;
  before: FitMetrics | null;
  after: FitMetrics | null;
  /** Held-out rows: the base model, the adapter, and the training labels' prior as a reference. */
  prior: FitMetrics | null;
  reliability: { before: ReliabilityBin[]; after: ReliabilityBin[] | null } | null;
  /** Cross-validated NLL of each candidate on the training rows (lower is better). */
  candidates: { name: string; nll: number }[];
  /** The candidate fitted and measured (one of `candidates`), or null when none was fitted. */
  chosen: string | null;
  seconds: number;
  /** Distillation jobs: the held-out measures against the teacher. */
  distill?: DistillReport | undefined;
}

/** Held-out metrics (src/training/evaluation.ts computeMetrics, with the ECE's chance floor). */
export type FitMetrics = Metrics & { eceFloor?: number };

export type FitMessage =
  | { type: 'progress'; done: number; message: string }
  | { type: 'result'; artifact: AdapterFile | null; reports: FitReport[] }
  | { type: 'error'; message: string };
