import { createMiddleware } from 'hono/factory';
import type { UsageRecorder } from '../../domain/usage.ts';
import type { AppEnv } from '../env.ts';

/**
 * Appends one usage event per authenticated request, errors included, after the response is
 * built. The append is in memory; the recorder writes batches off the hot path.
 */
export const usageMeter = (usage: UsageRecorder, route: string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const owner = c.get('owner');
      if (owner) {
        const m = c.get('metered');
        usage.record({
          keyId: owner.keyId,
          userId: owner.userId,
          ts: Date.now(),
          route,
          model: m?.model ?? '',
          status: c.res.status,
          questions: m?.questions ?? 0,
          inputTokens: m?.inputTokens ?? 0,
          outputTokens: m?.outputTokens ?? 0,
          latencyMs: Math.round(performance.now() - started),
        });
      }
    }
  });
