import { fail } from '../lib/errors.ts';
import { counted } from '../lib/plural.ts';

export interface SchedulerOptions {
  /** Most requests waiting or running at once; one more is refused with OVERLOADED. */
  limit: number;
  /** Per-request deadline, from admission to answer. */
  timeoutMs: number;
  /** Tasks run at once (engines serialise internally; >1 lets them batch). */
  concurrency?: number;
  /**
   * Service time assumed before the first task finishes (ms). Default 100. The first measured
   * service time replaces it; after that the estimate is a moving average.
   */
  initialServiceMs?: number;
}

type Job = { start: () => void };

/**
 * A bounded queue in front of one engine (llama.cpp's slots): admission control, a deadline per
 * request, and cancellation when the client goes away, whether it is still waiting or running.
 *
 * Admission has two tests. The queue limit caps requests waiting or running. And a request that
 * would have to wait is refused when its estimated completion time (the requests ahead of it plus
 * itself, times the moving average of service times, over the concurrency) is past the deadline:
 * it would only time out after holding its client, so it gets a 503 with retry-after at once, and
 * the latency of accepted requests stays bounded by the deadline whatever the load. A request that
 * can start at once is always admitted, so a slow engine is never locked out by its own average.
 */
export function createScheduler(options: SchedulerOptions) {
  const concurrency = options.concurrency ?? 1;
  const waiting: Job[] = [];
  let running = 0;
  let recentMs = options.initialServiceMs ?? 100;
  let measured = false;

  function overloaded(retryAfter: number, why: string) {
    return fail('OVERLOADED', `the model is busy: ${why}; retry after ${retryAfter} s`, { retryAfter });
  }

  function pump(): void {
    while (running < concurrency && waiting.length > 0) waiting.shift()?.start();
  }

  /** Why one more request would be refused now (OVERLOADED, with retry-after), or null. */
  function refusal(): Error | null {
    const ahead = waiting.length + running;
    // Time until a place frees up for one more request, and until this one would be answered.
    const retryAfter = Math.max(1, Math.ceil(((waiting.length + 1) * recentMs) / concurrency / 1000));
    if (ahead >= options.limit) {
      return overloaded(retryAfter, `${options.limit} requests are already waiting or running (the queue limit)`);
    }
    const estimateMs = ((ahead + 1) * recentMs) / concurrency;
    if (ahead >= concurrency && estimateMs > options.timeoutMs) {
      const why = `${counted(ahead, 'request')} ${ahead === 1 ? 'is' : 'are'} ahead, about ${Math.round(estimateMs)} ms of work, past the ${options.timeoutMs} ms request deadline`;
      return overloaded(retryAfter, why);
    }
    return null;
  }

  function run<T>(task: (signal: AbortSignal) => Promise<T>, clientSignal?: AbortSignal): Promise<T> {
    const refused = refusal();
    if (refused) return Promise.reject(refused);
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const signal = clientSignal ? AbortSignal.any([clientSignal, deadline]) : deadline;
    const reason = () =>
      deadline.aborted
        ? fail('TIMEOUT', `no answer within the ${options.timeoutMs} ms request deadline`, { retryAfter: 1 })
        : fail('CANCELLED', 'the client closed the request');
    return new Promise<T>((resolve, reject) => {
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      const onAbort = () => {
        if (state === 'waiting') {
          state = 'done';
          const i = waiting.indexOf(job);
          if (i >= 0) waiting.splice(i, 1);
          reject(reason());
        }
      };
      const job: Job = {
        start: () => {
          if (state !== 'waiting') return;
          state = 'running';
          running++;
          const started = performance.now();
          // The slot is freed before the caller hears back, so its next request finds it free.
          const finish = () => {
            state = 'done';
            running--;
            const took = performance.now() - started;
            // The first measurement replaces the initial guess; then a moving average.
            recentMs = measured ? 0.8 * recentMs + 0.2 * took : took;
            measured = true;
            signal.removeEventListener('abort', onAbort);
            pump();
          };
          task(signal).then(
            (value) => {
              finish();
              resolve(value);
            },
            (error: unknown) => {
              finish();
              reject(signal.aborted ? reason() : error);
            },
          );
        },
      };
      if (signal.aborted) return reject(reason());
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.push(job);
      pump();
    });
  }

  return {
    run,
    /**
     * Throws what `run` would refuse with now, so that a caller can refuse before work it does ahead
     * of `run` (counting tokens): under overload a refused request then costs next to nothing.
     */
    admit(): void {
      const refused = refusal();
      if (refused) throw refused;
    },
    depth: () => waiting.length,
    running: () => running,
    /** The moving average of service times the admission test uses (ms). */
    serviceMs: () => recentMs,
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
