/**
 * BRIER_WORKERS: the pool of inference backends a gateway spreads requests over, each URL built into
 * its engine: `http(s)://` a Brier worker (worker-client.ts), `openai+http(s)://` an OpenAI-compatible
 * completions server, `systemone+http(s)://` another System One server. One undici Agent holds the
 * keep-alive connections to all of them.
 */
import { Agent, fetch as undiciFetch } from 'undici';
import type { Config } from '../../config.ts';
import { withSourceCalibration } from '../calibrated.ts';
import { calibrationDir } from '../create.ts';
import type { DecisionEngine } from '../engine.ts';
import { createOpenAiCompletionsEngine } from './openai-completions.ts';
import { createEnginePool, type PoolBackend, type PoolEvents } from './pool.ts';
import { createUpstreamEngine } from './system-one.ts';
import { createWorkerClient, probeHealth } from './worker-client.ts';

/**
 * Idle connections are closed by the gateway before a worker's keep-alive timeout (5 s by default)
 * would close them under a request being sent, which would look like a broken worker.
 */
const KEEP_ALIVE_MS = 4000;

export function createWorkerPool(config: Config, events: PoolEvents = {}) {
  const dispatcher = new Agent({
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    connect: { timeout: 2000 },
    // The gateway's deadline (an abort) bounds a request; undici's own timeouts are only a backstop.
    headersTimeout: config.requestTimeoutMs + 5000,
    bodyTimeout: config.requestTimeoutMs + 5000,
  });
  const probeMs = Math.max(500, Math.min(2000, config.workerHealthMs * 2));
  const fetchVia: typeof fetch = (input, init) =>
    undiciFetch(input as string, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  const upstreamHeaders = config.upstreamApiKey ? { authorization: `Bearer ${config.upstreamApiKey}` } : undefined;

  const calibration = { dir: calibrationDir(config), uncalibrated: config.uncalibrated };
  const backends: PoolBackend[] = config.workers.map((url): PoolBackend => {
    const plus = /^(openai|systemone)\+(.*)$/.exec(url);
    if (!plus) {
      return {
        name: url,
        engine: createWorkerClient({ baseUrl: url, token: config.workerToken ?? '', dispatcher }),
        probe: () => probeHealth(dispatcher, `${url}/healthz`, probeMs),
      };
    }
    const baseUrl = plus[2] ?? '';
    const probe = () =>
      probeHealth(dispatcher, `${baseUrl}/v1/models`, probeMs, upstreamHeaders ? config.upstreamApiKey : undefined);
    // Calibrated here as BRIER_MODEL=<the same URL> is on one server (a Brier worker calibrates itself).
    const calibrated = (engine: DecisionEngine, kind: 'openai' | 'upstream') =>
      withSourceCalibration(engine, { kind, baseUrl, model: config.upstreamModel ?? '' }, calibration);
    if (plus[1] === 'openai') {
      return {
        name: url,
        probe,
        engine: calibrated(
          createOpenAiCompletionsEngine({
            baseUrl,
            apiKey: config.upstreamApiKey,
            model: config.upstreamModel,
            temperature: config.modelTemperature,
            parallelism: config.engineParallelism,
            fetch: fetchVia,
          }),
          'openai',
        ),
      };
    }
    return {
      name: url,
      probe,
      engine: calibrated(
        createUpstreamEngine({
          baseUrl,
          apiKey: config.upstreamApiKey,
          model: config.upstreamModel,
          fetch: fetchVia,
        }),
        'upstream',
      ),
    };
  });
  const pool = createEnginePool({
    backends,
    healthMs: config.workerHealthMs,
    parallelism: config.engineParallelism ?? config.queueLimit,
    events,
  });
  const close = pool.close;
  return Object.assign(pool, {
    async close() {
      await close();
      await dispatcher.close();
    },
  });
}
