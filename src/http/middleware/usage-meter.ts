import { createMiddleware } from 'hono/factory';
import type { UsageRecorder } from '../../domain/usage.ts';
import type { AppEnv, Metered } from '../env.ts';

/** Appends one usage event: who made the request, on which route, how it ended, what it cost. */
export function recordUsage(
  usage: UsageRecorder,
  who: { keyId: string; userId: string },
  route: string,
  status: number,
  metered: Metered | undefined,
  started: number,
): void {
  usage.record({
    keyId: who.keyId,
    userId: who.userId,
    ts: Date.now(),
    route,
    model: metered?.model ?? '',
    status,
    questions: metered?.questions ?? 0,
    inputTokens: metered?.inputTokens ?? 0,
    outputTokens: metered?.outputTokens ?? 0,
    teacherCalls: metered?.teacherCalls ?? 0,
    latencyMs: Math.round(performance.now() - started),
  });
}

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
      if (owner) recordUsage(usage, owner, route, c.res.status, c.get('metered'), started);
    }
  });
