/**
 * The inference worker (BRIER_ROLE=worker): the engine's host and nothing else, on an internal
 * address, for gateways only (engines/upstream/worker-protocol.ts). No database, no accounts, no
 * public API keys: every inference route needs `Authorization: Bearer <BRIER_WORKER_TOKEN>`;
 * /healthz (engine readiness) and /metrics (as on a gateway) are for probes and Prometheus.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { EngineHost } from '../engines/host.ts';
import {
  encodeVector,
  WORKER_ANSWER_PATH,
  WORKER_FEATURES_PATH,
  WORKER_MODEL_PATH,
  WorkerAnswerRequest,
  WorkerFeaturesRequest,
} from '../engines/upstream/worker-protocol.ts';
import { createOpenApiApp } from '../http/api.ts';
import { fromZodError, handleErrors, notFound } from '../http/errors.ts';
import { bodyGuard, connectionHygiene } from '../http/middleware/body-guard.ts';
import { requestId } from '../http/middleware/request-id.ts';
import { requestLog } from '../http/middleware/request-log.ts';
import { requestMetrics } from '../http/middleware/request-metrics.ts';
import { fail } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { registerMetrics } from '../routes/metrics/route.ts';

export interface WorkerAppDeps {
  host: EngineHost;
  /** BRIER_WORKER_TOKEN. */
  token: string;
  /** The worker's BRIER_QUEUE_LIMIT, told to gateways. */
  queueLimit: number;
  /** Byte limit of an internal request (it carries the state as text and as JSON: about twice a public body). */
  maxBodyBytes: number;
  logger: Logger;
  metrics?: { metrics: Metrics; token: string | undefined } | undefined;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function buildWorkerApp(deps: WorkerAppDeps) {
  const { host } = deps;
  const features = host.engine.features;
  const expected = digest(`Bearer ${deps.token}`);
  const app = createOpenApiApp();
  app.use('*', requestId());
  app.use('*', connectionHygiene());
  if (deps.metrics) app.use('*', requestMetrics(deps.metrics.metrics));
  app.use('*', requestLog(deps.logger));

  app.get('/healthz', (c) => {
    const ready = host.engine.ready();
    const body = {
      status: ready ? 'ok' : 'unavailable',
      role: 'worker',
      engine: { ready, model: host.engine.info.id },
      queue: { waiting: host.scheduler.depth(), running: host.scheduler.running(), limit: deps.queueLimit },
    };
    return c.json(body, ready ? 200 : 503);
  });
  if (deps.metrics) registerMetrics(app, deps.metrics);

  // Gateways only: compared as digests, in constant time, whatever the header's length.
  app.use('/internal/*', async (c, next) => {
    const given = digest(c.req.header('authorization') ?? '');
    if (!timingSafeEqual(given, expected))
      throw fail('INVALID_CREDENTIALS', 'this worker accepts only its gateways (BRIER_WORKER_TOKEN)');
    await next();
  });
  app.use('/internal/*', bodyGuard({ maxBytes: deps.maxBodyBytes, maxDepth: 200 }));

  app.get(WORKER_MODEL_PATH, (c) => {
    if (!host.engine.ready()) throw fail('NOT_READY', 'the model is still loading; retry shortly', { retryAfter: 2 });
    return c.json({
      info: host.engine.info,
      limits: host.engine.limits,
      parallelism: host.engine.parallelism ?? 1,
      queueLimit: deps.queueLimit,
      features: features
        ? {
            id: features.id,
            dim: features.dim,
            options: typeof features.options === 'function',
            ...(features.prefix ? { prefix: features.prefix } : {}),
          }
        : null,
      calibration: host.engine.calibration ?? null,
    });
  });

  // The state features adapters' probes read (the gateway applies the adapter on them).
  app.post(WORKER_FEATURES_PATH, async (c) => {
    if (!host.engine.ready()) throw fail('NOT_READY', 'the model is still loading; retry shortly', { retryAfter: 2 });
    if (!features) throw fail('NOT_FOUND', "this worker's engine has no state features");
    const raw: unknown = await c.req.json();
    const parsed = WorkerFeaturesRequest.safeParse(raw);
    if (!parsed.success) throw fromZodError(parsed.error, raw);
    const signal = c.req.raw.signal;
    if ('request' in parsed.data) {
      const { request, dims } = parsed.data;
      const state = await features.state(
        { state: { text: request.state.text, json: request.state.json }, questions: request.questions },
        signal,
        dims,
      );
      return c.json({ state: encodeVector(state) });
    }
    const vectors = features.options ? await features.options(parsed.data.question, signal) : [];
    return c.json({ options: vectors.map((v) => (v ? encodeVector(v) : null)) });
  });

  app.post(WORKER_ANSWER_PATH, async (c) => {
    const raw: unknown = await c.req.json();
    const parsed = WorkerAnswerRequest.safeParse(raw);
    if (!parsed.success) throw fromZodError(parsed.error, raw);
    const { request, names } = parsed.data;
    const labels = request.questions.map((_, i) => names?.[i] ?? `question ${i + 1}`);
    const answer = await host.answer(
      { state: { text: request.state.text, json: request.state.json }, questions: request.questions },
      labels,
      c.req.raw.signal,
    );
    return c.json(answer);
  });

  app.notFound(notFound);
  app.onError(handleErrors(deps.logger));
  return app;
}
