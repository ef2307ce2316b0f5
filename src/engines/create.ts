import path from 'node:path';
import type { Config } from '../config.ts';
import type { DecisionEngine } from './engine.ts';
import { createFakeEngine } from './fake/fake-engine.ts';

/**
 * Picks the engine for BRIER_MODEL. Engines are imported lazily so that a server on one engine
 * never loads another's native code.
 */
export async function createEngine(config: Config): Promise<DecisionEngine> {
  const spec = config.model;
  // The zero-cost test engine, optionally slow (`fake:<ms>`): for tests and gateway benchmarks only.
  const fake = spec ? /^fake(?::(\d+))?$/.exec(spec) : null;
  if (fake) return createFakeEngine({ delayMs: fake[1] ? Number(fake[1]) : 0 });
  if (spec?.endsWith('.gguf')) {
    const { createGgufEngine } = await import('./gguf/gguf-engine.ts');
    return createGgufEngine({
      modelPath: path.resolve(spec),
      temperature: config.modelTemperature,
      contextSize: config.contextSize,
      threads: config.threads,
    });
  }
  throw new Error('BRIER_MODEL must name a .gguf file (or "fake" for tests) until the embedded engine lands');
}
