/**
 * Keys of what the GGUF engine caches: a state prefix (its KV cache, in a slot) and one question's
 * option scores on one state (the answer cache). Scoring is deterministic (flash attention off), so
 * the same key always means the same numbers.
 */
import { createHash } from 'node:crypto';
import type { Token } from 'node-llama-cpp';

export function prefixKey(tokens: readonly Token[]): string {
  return createHash('sha256')
    .update(new Uint32Array(tokens as readonly number[]))
    .digest('hex');
}

/** The answer-cache key of one question on one state: everything its scores depend on. */
export function answerKey(
  statePrefixKey: string,
  plan: { tokens: readonly Token[]; labels: readonly (readonly Token[])[] },
): string {
  const hash = createHash('sha256')
    .update(statePrefixKey)
    .update(new Uint32Array(plan.tokens as readonly number[]));
  // Token ids are below 2^32 - 1, so the separator cannot be mistaken for a token.
  for (const label of plan.labels) hash.update(new Uint32Array([0xffffffff, ...(label as readonly number[])]));
  return hash.digest('hex');
}
