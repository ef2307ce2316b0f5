import { fail } from '../domain/errors.ts';

export interface SchedulerOptions {
  /** Most requests waiting or running at once; one more is refused with OVERLOADED. */
  limit: number;
  /** Per-request deadline, from admission to answer. */
  timeoutMs: number;
  /** Tasks run at once (engines serialise internally; >1 lets them batch). */
  concurrency?: number;
}

type Job = { start: () => void };

/**
 * A bounded queue in front of one engine (llama.cpp's slots): admission control, a deadline per
 * request, and cancellation when the client goes away, whether it is still waiting or running.
 */
export function createScheduler(options: SchedulerOptions) {
  const concurrency = options.concurrency ?? 1;
  const waiting: Job[] = [];
  let running = 0;
  let recentMs = 100;

  function pump(): void {
    while (running < concurrency && waiting.length > 0) waiting.shift()?.start();
  }

  function run<T>(task: (signal: AbortSignal) => Promise<T>, clientSignal?: AbortSignal): Promise<T> {
    if (waiting.length + running >= options.limit) {
      const retryAfter = Math.max(1, Math.ceil(((waiting.length + 1) * recentMs) / concurrency / 1000));
      return Promise.reject(
        fail(
          'OVERLOADED',
          `the model is busy: ${options.limit} requests are already waiting or running (the queue limit); retry after ${retryAfter} s`,
          { retryAfter },
        ),
      );
    }
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
          task(signal)
            .then(resolve, (error: unknown) => reject(signal.aborted ? reason() : error))
            .finally(() => {
              state = 'done';
              running--;
              recentMs = 0.8 * recentMs + 0.2 * (performance.now() - started);
              signal.removeEventListener('abort', onAbort);
              pump();
            });
        },
      };
      if (signal.aborted) return reject(reason());
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.push(job);
      pump();
    });
  }

  return { run, depth: () => waiting.length, running: () => running };
}

export type Scheduler = ReturnType<typeof createScheduler>;
