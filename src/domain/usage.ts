import type { Db } from '../db/open.ts';

export interface UsageEvent {
  keyId: string;
  userId: string;
  ts: number;
  route: string;
  model: string;
  status: number;
  questions: number;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
}

export interface UsageRecorderOptions {
  flushMs: number;
  /** Flush early once this many events wait. */
  maxBatch?: number;
  onError?: (error: unknown, pending: number) => void;
}

/**
 * Usage metering off the hot path: record() appends to memory; a timer writes batches in one
 * insert each and stamps the keys' last use. A failed write keeps the events for the next try;
 * close() writes everything that is left.
 */
export function createUsageRecorder(db: Db, options: UsageRecorderOptions) {
  const maxBatch = options.maxBatch ?? 500;
  let pending: UsageEvent[] = [];
  let flushing: Promise<void> | undefined;
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  function record(event: UsageEvent): void {
    pending.push(event);
    if (pending.length >= maxBatch) void flush();
  }

  async function writeBatch(batch: UsageEvent[]): Promise<void> {
    const lastUse = new Map<string, number>();
    for (const e of batch) lastUse.set(e.keyId, Math.max(lastUse.get(e.keyId) ?? 0, e.ts));
    await db.kysely.transaction().execute(async (tx) => {
      for (let i = 0; i < batch.length; i += 200) {
        await tx
          .insertInto('usage_event')
          .values(
            batch.slice(i, i + 200).map((e) => ({
              key_id: e.keyId,
              user_id: e.userId,
              ts: e.ts,
              route: e.route,
              model: e.model,
              status: e.status,
              questions: e.questions,
              input_tokens: e.inputTokens,
              output_tokens: e.outputTokens,
              latency_ms: e.latencyMs,
            })),
          )
          .execute();
      }
      for (const [keyId, ts] of lastUse) {
        await tx
          .updateTable('api_key')
          .set({ last_used_at: ts })
          .where('id', '=', keyId)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', ts)]))
          .execute();
      }
    });
  }

  /**
   * Writes what is pending and resolves once nothing is pending or being written (or a write failed:
   * its events wait for the next flush). Concurrent calls share the writes in flight.
   */
  async function flush(): Promise<void> {
    while (flushing || pending.length > 0) {
      if (flushing) {
        await flushing;
        continue;
      }
      const batch = pending;
      pending = [];
      let failed = false;
      flushing = writeBatch(batch)
        .catch((error: unknown) => {
          failed = true;
          pending = batch.concat(pending);
          options.onError?.(error, pending.length);
        })
        .finally(() => {
          flushing = undefined;
        });
      await flushing;
      if (failed) return;
    }
  }

  async function close(): Promise<void> {
    clearInterval(timer);
    await flush();
    if (pending.length > 0) await flush();
  }

  return { record, flush, close, pendingCount: () => pending.length };
}

export type UsageRecorder = ReturnType<typeof createUsageRecorder>;
