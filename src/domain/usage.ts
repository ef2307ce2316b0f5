import { randomUUID } from 'node:crypto';
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
  /** Calls made to a teacher (an adapter's fallback, issue 34); counted apart from the model's work. */
  teacherCalls?: number;
  /** A distillation job's teacher call (issue 41): the job, with no key and not a request. */
  jobId?: string;
}

export interface UsageRecorderOptions {
  flushMs: number;
  /** Flush early once this many events wait. */
  maxBatch?: number;
  onError?: (error: unknown, pending: number) => void;
  /**
   * Most events kept in memory while the database cannot take them (BRIER_USAGE_BUFFER_MAX; default
   * 100,000). Events recorded past it are dropped and counted (`dropped()`, brier_usage_dropped_total).
   */
  maxPending?: number;
}

/** An event as buffered: with the id that makes writing it twice harmless. */
type Pending = UsageEvent & { eventId: string };

/**
 * Usage metering off the hot path: record() appends to memory; a timer writes batches in one
 * insert each and stamps the keys' last use. A failed write keeps the events for the next try
 * (the database down: they wait in memory up to `maxPending`); close() writes everything that is left.
 *
 * Exactly once: each event gets a random id when recorded, and the insert skips ids already written.
 * A write whose commit reached the database but whose answer was lost (a timeout, a dropped
 * connection) is retried like a failed one, and the retry adds nothing twice. Each replica writes
 * only the events of the requests it answered, so usage is counted once across replicas.
 */
export function createUsageRecorder(db: Db, options: UsageRecorderOptions) {
  const maxBatch = options.maxBatch ?? 500;
  const maxPending = options.maxPending ?? 100_000;
  let pending: Pending[] = [];
  let inFlight = 0;
  let dropped = 0;
  let flushing: Promise<void> | undefined;
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  function record(event: UsageEvent): void {
    if (pending.length + inFlight >= maxPending) {
      dropped++;
      return;
    }
    pending.push({ ...event, eventId: randomUUID() });
    if (pending.length >= maxBatch) void flush();
  }

  async function writeBatch(batch: Pending[]): Promise<void> {
    const lastUse = new Map<string, number>();
    // A job's teacher calls have no key.
    for (const e of batch) if (e.keyId) lastUse.set(e.keyId, Math.max(lastUse.get(e.keyId) ?? 0, e.ts));
    await db.kysely.transaction().execute(async (tx) => {
      for (let i = 0; i < batch.length; i += 200) {
        await tx
          .insertInto('usage_event')
          .values(
            batch.slice(i, i + 200).map((e) => ({
              event_id: e.eventId,
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
              teacher_calls: e.teacherCalls ?? 0,
              job_id: e.jobId ?? null,
            })),
          )
          .onConflict((oc) => oc.column('event_id').doNothing())
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
      const batch = pending.slice(0, maxBatch * 10);
      pending = pending.slice(batch.length);
      inFlight = batch.length;
      let failed = false;
      flushing = writeBatch(batch)
        .catch((error: unknown) => {
          failed = true;
          pending = batch.concat(pending);
          options.onError?.(error, pending.length);
        })
        .finally(() => {
          flushing = undefined;
          inFlight = 0;
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

  return {
    record,
    flush,
    close,
    /** Events waiting to be written (being written included). */
    pendingCount: () => pending.length + inFlight,
    /** Events dropped because the buffer was full (the database down for long). */
    dropped: () => dropped,
  };
}

export type UsageRecorder = ReturnType<typeof createUsageRecorder>;
