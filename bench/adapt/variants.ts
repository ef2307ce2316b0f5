/**
 * The adapters' feature spaces bench:adapt compares, each read from the embedded engine's features
 * ([USE-lite 512 | MiniLM 384], src/engines/embedded/featurized.ts): a state's and an option's
 * (label prior) vectors as the variant's adapter would read them.
 */
import { EMBEDDING_DIM } from '../../src/engines/embedded/pool.ts';

export interface FeatureVariant {
  name: string;
  /** The features' part a state reads: [from, to) of the joined vector. */
  state: readonly [number, number];
  /**
   * The part an option's vector keeps for the label prior g * (s . e_j), the rest zeroed (within the
   * state's part): where one encoder matches labels to states better, only its cosine counts.
   */
  label: readonly [number, number];
}

const JOINED = Number.POSITIVE_INFINITY;

export const FEATURE_VARIANTS: readonly FeatureVariant[] = [
  /** brier-lite 4.1's adapters (features `use-lite-512`). */
  { name: 'use-lite', state: [0, EMBEDDING_DIM], label: [0, EMBEDDING_DIM] },
  { name: 'minilm', state: [EMBEDDING_DIM, JOINED], label: [EMBEDDING_DIM, JOINED] },
  /** The engine's own: both encoders, the label prior their cosines summed. */
  { name: 'joint', state: [0, JOINED], label: [0, JOINED] },
  /** Both encoders' states, the label prior MiniLM's cosine alone. */
  { name: 'joint-minilm-labels', state: [0, JOINED], label: [EMBEDDING_DIM, JOINED] },
];

/** `v` (joined features) as `variant` reads it: a state's part, or an option's (`label`). */
export function inVariant(variant: FeatureVariant, v: Float32Array, label = false): Float32Array {
  const [from, to] = variant.state;
  const part = v.slice(from, Math.min(to, v.length));
  if (!label) return part;
  const [lf, lt] = variant.label;
  for (let i = 0; i < part.length; i++) if (i + from < lf || i + from >= lt) part[i] = 0;
  return part;
}
