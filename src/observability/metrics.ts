/**
 * Prometheus metrics (prom-client) on a registry of our own: no global default registry, so two
 * apps in one process (tests) never share or collide on counters.
 *
 * - HTTP: `brier_http_requests_total{route,method,status}` and
 *   `brier_http_request_duration_seconds{route,method,status}`; `route` is the matched route pattern
 *   (`/v1/models`, `/control/v1/keys/:id`), `unmatched` for 404s on no route, never the raw URL.
 * - Scheduler: `brier_queue_depth` (waiting) and `brier_queue_running`, read at scrape time.
 * - Decisions: `brier_input_tokens_total`, `brier_output_tokens_total`, `brier_questions_per_request`.
 * - Engines, through the optional EngineMetrics hook: `brier_cache_lookups_total{cache,result}`,
 *   `brier_engine_batch_size{engine,kind}`, `brier_engine_tokens_total{engine,phase}` and
 *   `brier_engine_seconds_total{engine,phase}` (their rate ratio is tokens per second), and
 *   `brier_engine_tokens_per_second{engine,phase}` (the last measured pass).
 * - Scale-out, read at scrape time from what `watch` is given: `brier_rate_limit_store_up{store}`,
 *   `brier_usage_buffered`, `brier_usage_dropped_total`, `brier_workers{state}` and
 *   `brier_worker_failovers_total{reason}`.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineMetrics } from '../engines/engine.ts';

/** What the HTTP request metrics are labelled with. */
export interface HttpLabels {
  /** The matched route pattern (`/control/v1/keys/:id`), `unmatched` for 404s on no route; never the raw URL. */
  route: string;
  method: string;
  status: string;
}

/** What one answered /v1/systemone request consumed. */
export interface DecisionCounts {
  inputTokens: number;
  outputTokens: number;
  questions: number;
}

/** What the metrics read from a scheduler at scrape time. */
export interface QueueProbe {
  depth(): number;
  running(): number;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event-loop lag) with the brier_ prefix. Default true. */
  processMetrics?: boolean;
}

export function createMetrics(options: MetricsOptions = {}) {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'brier_' });

  const httpLabels = ['route', 'method', 'status'] as const;
  const requests = new Counter({
    name: 'brier_http_requests_total',
    help: 'HTTP requests answered, by matched route pattern, method and status',
    labelNames: httpLabels,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'brier_http_request_duration_seconds',
    help: 'Time from the first middleware to the response, by matched route pattern, method and status',
    labelNames: httpLabels,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const inputTokens = new Counter({
    name: 'brier_input_tokens_total',
    help: 'Tokens the engine read for answered /v1/systemone requests',
    registers: [registry],
  });
  const outputTokens = new Counter({
    name: 'brier_output_tokens_total',
    help: 'Option tokens the engine scored for answered /v1/systemone requests',
    registers: [registry],
  });
  const questions = new Histogram({
    name: 'brier_questions_per_request',
    help: 'Questions per answered /v1/systemone request',
    buckets: [1, 2, 3, 5, 10, 20, 50, 100, 255],
    registers: [registry],
  });
  const cacheLookups = new Counter({
    name: 'brier_cache_lookups_total',
    help: 'Engine cache lookups by cache and result (hit or miss)',
    labelNames: ['cache', 'result'] as const,
    registers: [registry],
  });
  const batchSize = new Histogram({
    name: 'brier_engine_batch_size',
    help: 'Items per engine call (embedded: texts per encoder call; GGUF: questions per request pass)',
    labelNames: ['engine', 'kind'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [registry],
  });
  const engineTokens = new Counter({
    name: 'brier_engine_tokens_total',
    help: 'Tokens evaluated by the engine, by phase (prefill: state prompts; question: question prompts)',
    labelNames: ['engine', 'phase'] as const,
    registers: [registry],
  });
  const engineSeconds = new Counter({
    name: 'brier_engine_seconds_total',
    help: 'Seconds the engine spent evaluating, by phase; tokens_total / seconds_total is tokens per second',
    labelNames: ['engine', 'phase'] as const,
    registers: [registry],
  });
  const tokensPerSecond = new Gauge({
    name: 'brier_engine_tokens_per_second',
    help: 'Tokens per second of the last evaluation pass, by phase',
    labelNames: ['engine', 'phase'] as const,
    registers: [registry],
  });

  const queues: QueueProbe[] = [];
  new Gauge({
    name: 'brier_queue_depth',
    help: 'Requests waiting in the engine scheduler',
    registers: [registry],
    collect() {
      this.set(queues.reduce((n, q) => n + q.depth(), 0));
    },
  });
  new Gauge({
    name: 'brier_queue_running',
    help: 'Requests the engine scheduler is running',
    registers: [registry],
    collect() {
      this.set(queues.reduce((n, q) => n + q.running(), 0));
    },
  });

  /**
   * A value owned elsewhere, read when /metrics is scraped: a gauge, or a counter for a total that only
   * grows. `read` returns one value, or one per value of the label `label`.
   */
  function watch(
    type: 'gauge' | 'counter',
    name: string,
    help: string,
    read: () => number | Record<string, number>,
    label?: string,
  ): void {
    const labelNames = label ? [label] : [];
    const collect = (metric: {
      set?(v: number): void;
      reset(): void;
      inc(l: Record<string, string>, v: number): void;
    }) => {
      const value = read();
      metric.reset();
      if (typeof value === 'number') return metric.inc({}, value);
      for (const [k, v] of Object.entries(value)) metric.inc(label ? { [label]: k } : {}, v);
    };
    if (type === 'counter') {
      new Counter({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          collect(this);
        },
      });
      return;
    }
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        collect(this);
      },
    });
  }

  /** The hook engines call; every method is cheap (a counter increment). */
  const engine: EngineMetrics = {
    cacheLookup(cache, hit, count = 1) {
      if (count > 0) cacheLookups.inc({ cache, result: hit ? 'hit' : 'miss' }, count);
    },
    batch(engineName, kind, size) {
      batchSize.observe({ engine: engineName, kind }, size);
    },
    tokens(engineName, phase, tokens, seconds) {
      if (tokens <= 0) return;
      engineTokens.inc({ engine: engineName, phase }, tokens);
      if (seconds > 0) {
        engineSeconds.inc({ engine: engineName, phase }, seconds);
        tokensPerSecond.set({ engine: engineName, phase }, tokens / seconds);
      }
    },
  };

  /** One answered HTTP request (src/http/middleware/request-metrics.ts calls it). */
  function request(labels: HttpLabels, seconds: number): void {
    requests.inc(labels);
    duration.observe(labels, seconds);
  }

  /** What an answered decision request consumed. */
  function decision(counts: DecisionCounts): void {
    inputTokens.inc(counts.inputTokens);
    outputTokens.inc(counts.outputTokens);
    questions.observe(counts.questions);
  }

  return {
    registry,
    engine,
    request,
    decision,
    watch,
    /** Adds a scheduler whose depth and running count the queue gauges report. */
    observeQueue(queue: QueueProbe): void {
      queues.push(queue);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
