import { type CalibrationMetrics, calibrationReport, DRIFT } from '../../../domain/calibration.ts';
import type { ExampleStore } from '../../../domain/examples.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import type { WireQuestion } from '../../../systemone/protocol.ts';
import { templateLabels } from '../../../systemone/templates.ts';
import { accountOf } from '../examples/route.ts';
import { CalibrationQuery, CalibrationReport } from './protocol.ts';

export const calibrationRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/calibration',
  tags: ['Adapters'],
  summary: 'How well live answers are calibrated, from the outcomes recorded for them',
  description:
    'Per question template with outcomes in the window: accuracy, Brier and ECE of the answers that were served (overall and by week), reliability bins, and whether the most recent outcomes show drift past the threshold in `drift` (then retrain: POST /control/v1/training-jobs).',
  request: { query: CalibrationQuery },
  responses: {
    200: { description: 'The report', content: { 'application/json': { schema: CalibrationReport } } },
    ...errorResponses(401, 403, 422),
  },
});

const wire = (m: CalibrationMetrics) => ({
  n: m.n,
  accuracy: m.accuracy,
  brier: m.brier,
  ece: m.ece,
  ece_floor: m.eceFloor,
});

export function registerCalibration(api: Api, examples: ExampleStore): void {
  api.openapi(calibrationRoute, async (c) => {
    const { days } = c.req.valid('query');
    const userId = accountOf(c);
    const templates = await examples.templates(userId);
    const labels = new Map(templates.map((t) => [t.id, templateLabels(JSON.parse(t.question) as WireQuestion)]));
    const since = Date.now() - days * 86_400_000;
    const report = calibrationReport(await examples.outcomes(userId, since), labels);
    const byId = new Map(templates.map((t) => [t.id, t]));
    return c.json(
      {
        days,
        drift: {
          window: DRIFT.window,
          min_outcomes: DRIFT.minOutcomes,
          ece: DRIFT.ece,
          floor_factor: DRIFT.floorFactor,
        },
        templates: report.map((r) => ({
          template: r.templateId,
          type: byId.get(r.templateId)?.type ?? '',
          question: JSON.parse(byId.get(r.templateId)?.question ?? '{}') as Record<string, unknown>,
          overall: wire(r.overall),
          reliability: r.reliability,
          weekly: r.weekly.map((w) => ({ week: w.week, ...wire(w) })),
          recent: r.recent ? wire(r.recent) : null,
          drifted: r.drifted,
          reason: r.reason,
          served_by: r.servedBy,
        })),
      },
      200,
    );
  });
}
