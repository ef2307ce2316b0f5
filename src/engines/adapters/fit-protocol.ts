/**
 * The messages between the job runner (src/jobs/runner.ts) and the fitting child process
 * (src/training/adapter-worker.ts), sent over IPC with structured clone (typed arrays travel as
 * they are). The shapes mirror src/training/adapter-fit.ts; serving never imports training, so the
 * child's module is started by path and these types are the contract.
 */
import type { AdapterFile } from './adapter.ts';

export interface FitRow {
  base: number[];
  state: Float32Array | null;
  label: number;
}

export interface FitTemplate {
  template: string;
  type: 'noul' | 'choice' | 'score';
  labels: string[];
  rows: FitRow[];
}

export interface FitRequest {
  type: 'fit';
  base: string;
  features: string | null;
  templates: FitTemplate[];
  minExamples: number;
}

/** One template's report, as the job result carries it (src/training/adapter-fit.ts TemplateReport). */
export interface FitReport {
  template: string;
  type: string;
  labels: string[];
  n: number;
  nTrain: number;
  nTest: number;
  kind: string | null;
  served: boolean;
  reason: string;
  before: FitMetrics | null;
  after: FitMetrics | null;
  prior: FitMetrics | null;
  reliability: { before: ReliabilityBin[]; after: ReliabilityBin[] | null } | null;
  candidates: { name: string; nll: number }[];
  seconds: number;
}

/** Held-out metrics (src/training/evaluation.ts computeMetrics, with the ECE's chance floor). */
export interface FitMetrics {
  n: number;
  nHard: number;
  accuracy: number;
  brier: number;
  nll: number;
  ece: number;
  scoreMae: number | null;
  eceFloor?: number;
}

export interface ReliabilityBin {
  lo: number;
  hi: number;
  n: number;
  confidence: number;
  accuracy: number;
}

export type FitMessage =
  | { type: 'progress'; done: number; message: string }
  | { type: 'result'; artifact: AdapterFile | null; reports: FitReport[] }
  | { type: 'error'; message: string };
