/**
 * A template's report (fit-protocol's FitReport) and held-out measures as the job reports them.
 */
import type { HeadFile } from '../engines/adapters/adapter.ts';
import type { FitReport } from '../engines/adapters/fit-protocol.ts';
import type { ReliabilityBin } from '../lib/scoring.ts';
import type { TemplateData } from './adapter-data.ts';
import {
  computeMetrics,
  confidencePairs,
  eceNoiseFloor,
  type MetricItem,
  type Metrics,
  reliability,
} from './evaluation.ts';

export type MeasuredMetrics = Metrics & { eceFloor: number };

/** The job's report of one template (fit-protocol's FitReport), its measured metrics with their floor. */
export interface TemplateReport extends FitReport {
  before: MeasuredMetrics | null;
  after: MeasuredMetrics | null;
  prior: Metrics | null;
}

export function measured(items: MetricItem[]): MeasuredMetrics {
  const metrics = computeMetrics(items);
  const confidences = confidencePairs(items).map((p) => p.confidence);
  return { ...metrics, eceFloor: eceNoiseFloor(confidences) };
}

export function bins(items: MetricItem[]): ReliabilityBin[] {
  return reliability(confidencePairs(items));
}
/** A template's report before anything is fitted, and the way every fit returns (timed). */
export function emptyReport(t: TemplateData, started: number) {
  const report: TemplateReport = {
    template: t.template,
    type: t.type,
    labels: t.labels,
    n: t.rows.length,
    nTrain: 0,
    nTest: 0,
    kind: null,
    served: false,
    reason: '',
    before: null,
    after: null,
    prior: null,
    reliability: null,
    candidates: [],
    chosen: null,
    seconds: 0,
  };
  const done = (head: HeadFile | null) => {
    report.seconds = (performance.now() - started) / 1000;
    return { head, report };
  };
  return { report, done };
}
