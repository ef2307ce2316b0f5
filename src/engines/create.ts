import path from 'node:path';
import { describeModelSpec, resolveModelSpec } from '../catalog/catalog.ts';
import type { Config } from '../config.ts';
import type { DecisionEngine } from './engine.ts';
import { createFakeEngine } from './fake/fake-engine.ts';
import type { PoolEvents } from './upstream/pool.ts';

/**
 * Picks the engine for BRIER_MODEL (see resolveModelSpec). Engines are imported lazily so that a
 * server on one engine never loads another's native code or weights.
 */
export async function createEngine(config: Config, events: PoolEvents = {}): Promise<DecisionEngine> {
  if (config.workers.length > 0) {
    const { createWorkerPool } = await import('./upstream/workers.ts');
    return createWorkerPool(config, events);
  }
  // The zero-cost test engine, optionally slow (`fake:<ms>`): for tests and gateway benchmarks only.
  const fake = config.model ? /^fake(?::(\d+))?$/.exec(config.model) : null;
  if (fake) return createFakeEngine({ delayMs: fake[1] ? Number(fake[1]) : 0 });

  const spec = resolveModelSpec(config.model, path.join(config.dataDir, 'models'));
  switch (spec.kind) {
    case 'gguf': {
      const { createGgufEngine } = await import('./gguf/gguf-engine.ts');
      return createGgufEngine({
        modelPath: spec.path,
        temperature: config.modelTemperature,
        contextSize: config.contextSize,
        threads: config.threads,
        description: describeModelSpec(spec).description,
        parallelism: config.engineParallelism,
        kvCacheBytes: config.kvCacheMb === undefined ? undefined : config.kvCacheMb * 2 ** 20,
        answerCacheEntries: config.answerCacheEntries,
      });
    }
    case 'embedded': {
      // The embedded engine with its state features, which adapters' probes read.
      const { createFeaturizedEmbeddedEngine } = await import('./embedded/featurized.ts');
      return createFeaturizedEmbeddedEngine({
        threads: config.threads,
        parallelism: config.engineParallelism,
        encoderRuntime: config.encoderRuntime,
      });
    }
    case 'upstream': {
      const { createUpstreamEngine } = await import('./upstream/system-one.ts');
      return createUpstreamEngine({
        baseUrl: spec.baseUrl,
        apiKey: config.upstreamApiKey,
        model: config.upstreamModel,
      });
    }
    case 'openai': {
      const { createOpenAiCompletionsEngine } = await import('./upstream/openai-completions.ts');
      return createOpenAiCompletionsEngine({
        baseUrl: spec.baseUrl,
        apiKey: config.upstreamApiKey,
        model: config.upstreamModel,
        temperature: config.modelTemperature,
        parallelism: config.engineParallelism,
      });
    }
  }
}
