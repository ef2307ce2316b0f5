import type { DecisionEngine } from '../engines/engine.ts';
import { counted } from '../lib/plural.ts';
import type { ServedAdapter } from './adapters.ts';
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
    x_calibrated: engine.calibration === undefined ? true : (engine.calibration?.calibrated ?? false),
  };
}

/** An account's adapter as its /v1/models lists it: the base model's limits, its own id. */
export function describeAdapter(engine: DecisionEngine, adapter: ServedAdapter): ModelEntry {
  return {
    name: adapter.id,
    id: adapter.id,
    description: `This account's adapter of ${adapter.base} for ${counted(adapter.heads.size, 'question template')}; other questions are answered by the base model (each answer's x_answered_by says which).`,
    release_date: new Date(adapter.createdAt).toISOString().slice(0, 10),
    context_limit: engine.limits.contextTokens,
    input_limit: engine.limits.inputTokens,
    x_calibrated: engine.calibration === undefined ? true : (engine.calibration?.calibrated ?? false),
  };
}
