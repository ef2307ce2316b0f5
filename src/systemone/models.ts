import type { DecisionEngine } from '../engines/engine.ts';
import type { ModelEntry } from './protocol.ts';

/** Names the System One SDKs send by default; all resolve to the default model. */
export const MODEL_ALIASES = ['brier-latest', 'jev-latest', 'jev-preview'] as const;

/**
 * The served model as /v1/models and the console describe it. Read per request: an upstream engine
 * learns its description and limits when it loads.
 */
export function describeModel(engine: DecisionEngine): ModelEntry {
  return {
    name: 'brier-latest',
    id: engine.info.id,
    description: engine.info.description,
    release_date: engine.info.releaseDate,
    context_limit: engine.limits.contextTokens,
    input_limit: engine.limits.inputTokens,
  };
}
