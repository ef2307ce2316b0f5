import path from 'node:path';
import { describeModelSpec, resolveModelSpec } from '../catalog/catalog.ts';
import type { Config } from '../config.ts';
import { sourceCalibrationKey, withModelCalibration } from './calibrated.ts';
import type { DecisionEngine } from './engine.ts';
import { createFakeEngine } from './fake/fake-engine.ts';
import type { PoolEvents } from './upstream/pool.ts';

/** Where `brier models calibrate` writes, and engines read, the calibration of a model Brier did not train. */
export function calibrationDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'calibration');
}

/**
 * Picks the engine for BRIER_MODEL (see resolveModelSpec), with the model's calibration where Brier
 * did not train it (GGUF and upstream engines: src/engines/calibrated.ts). Engines are imported
 * lazily so that a server on one engine never loads another's native code or weights.
 */
export async function createEngine(config: Config, events: PoolEvents = {}): Promise<DecisionEngine> {
  const engine = await createRawEngine(config, events);
  const key = calibrationKeyOf(config);
  if (key === null) return engine;
  return withModelCalibration(engine, { dir: calibrationDir(config), key, uncalibrated: config.uncalibrated });
}

/**
 * How the calibration file of BRIER_MODEL is named (see src/engines/calibrated.ts), or null for an
 * engine that needs none (the embedded model, the test engine, a gateway whose workers calibrate).
 */
export function calibrationKeyOf(config: Config): ((engine: DecisionEngine) => Promise<string>) | null {
  if (config.workers.length > 0 || (config.model && /^fake(?::\d+)?$/.test(config.model))) return null;
  const spec = resolveModelSpec(config.model, path.join(config.dataDir, 'models'));
  switch (spec.kind) {
    case 'embedded':
      return null;
    case 'gguf':
      return sourceCalibrationKey({ kind: 'gguf', path: spec.path, prompt: config.ggufPrompt }, calibrationDir(config));
    case 'upstream':
    case 'openai':
      // The server and the model asked for: calibrate again after changing the model behind the URL.
      return sourceCalibrationKey(
        { kind: spec.kind, baseUrl: spec.baseUrl, model: config.upstreamModel ?? '' },
        calibrationDir(config),
      );
  }
}

/** The engine for BRIER_MODEL as it comes, without calibration (`brier models calibrate` measures this one). */
export async function createRawEngine(config: Config, events: PoolEvents = {}): Promise<DecisionEngine> {
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
        promptFormat: config.ggufPrompt,
        temperature: config.modelTemperature,
        contextSize: config.contextSize,
        threads: config.threads,
        description:
          describeModelSpec(spec).description +
          (config.ggufPrompt === 'chat' ? ' Prompted in its chat template (BRIER_GGUF_PROMPT=chat).' : ''),
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
