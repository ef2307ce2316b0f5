/**
 * A bounded load generator for loopback benchmarks: closed-loop (N workers, each sending its next
 * request when the previous one is answered) or open-loop (fixed arrival rate). Both stop by
 * themselves after `count` requests or `maxMs`, whichever comes first, and cap what is in flight.
 */

export interface Shot {
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  sent: number;
  ok: number;
  /** 503 answers carrying a retry-after header (the allowed refusal). */
  refused: number;
  /** Anything else: other statuses, 503 without retry-after, network errors. */
  errors: number;
  statuses: Record<string, number>;
  elapsedS: number;
  /** Answered (200) requests per second. */
  throughput: number;
  /** Latency of the 200 answers, ms. */
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function collector() {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let sent = 0;
  let refused = 0;
  let errors = 0;
  const started = performance.now();
  async function fire(base: string, shot: Shot): Promise<void> {
    sent++;
    const t0 = performance.now();
    try {
      const res = await fetch(`${base}${shot.path}`, {
        method: shot.method ?? (shot.body === undefined ? 'GET' : 'POST'),
        headers: shot.body === undefined ? shot.headers : { 'content-type': 'application/json', ...shot.headers },
        body: shot.body,
      });
      await res.arrayBuffer();
      const ms = performance.now() - t0;
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 200) latencies.push(ms);
      else if (res.status === 503 && res.headers.get('retry-after')) refused++;
      else errors++;
    } catch {
      statuses.network = (statuses.network ?? 0) + 1;
      errors++;
    }
  }
  function result(): LoadResult {
    const elapsedS = (performance.now() - started) / 1000;
    const sorted = latencies.toSorted((a, b) => a - b);
    return {
      sent,
      ok: latencies.length,
      refused,
      errors,
      statuses,
      elapsedS: round(elapsedS),
      throughput: round(latencies.length / elapsedS),
      p50: round(percentile(sorted, 0.5)),
      p95: round(percentile(sorted, 0.95)),
      p99: round(percentile(sorted, 0.99)),
      max: round(sorted.at(-1) ?? Number.NaN),
    };
  }
  return { fire, result, sent: () => sent };
}

/** `concurrency` workers send `shot(i)` one after another until `count` are sent or `maxMs` passed. */
export async function closedLoop(
  base: string,
  shot: (i: number) => Shot,
  options: { concurrency: number; count: number; maxMs: number },
): Promise<LoadResult> {
  const c = collector();
  const deadline = performance.now() + options.maxMs;
  let next = 0;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.count && performance.now() < deadline) await c.fire(base, shot(next++));
    }),
  );
  return c.result();
}

/**
 * Requests arrive every 1/rate s whatever the answers (open loop), until `count` or `maxMs`; at
 * most `maxInFlight` outstanding (a request that would exceed it is skipped and counted in sent
 * as a client-side drop under statuses.dropped).
 */
export async function openLoop(
  base: string,
  shot: (i: number) => Shot,
  options: { rate: number; count: number; maxMs: number; maxInFlight: number },
): Promise<LoadResult> {
  const c = collector();
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let dropped = 0;
  for (let i = 0; i < options.count; i++) {
    const due = started + (i * 1000) / options.rate;
    if (due - started > options.maxMs) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (pending.size >= options.maxInFlight) {
      dropped++;
      continue;
    }
    const p = c.fire(base, shot(i)).finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
  const r = c.result();
  if (dropped > 0) r.statuses.dropped = dropped;
  return r;
}
