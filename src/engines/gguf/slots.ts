/**
 * The slot pool of the GGUF engine: the sequences of one context, each a parallel lane and one
 * cached state prefix. A request takes the slot already holding its state (a hit: no prefill),
 * waits when that slot is busy (concurrent requests on one state evaluate it once), or else takes
 * the least recently used idle slot; at most `parallelism` slots are busy at once.
 */
import type { LlamaContextSequence, LlamaModel } from 'node-llama-cpp';

/** One context sequence: a parallel lane and one cached state prefix. */
export interface Slot {
  sequence: LlamaContextSequence;
  /** SHA-256 of the prefix tokens it holds (or is evaluating); null: nothing reusable. */
  key: string | null;
  busy: boolean;
  lastUsed: number;
}

export const MAX_SLOTS = 16;
export const DEFAULT_KV_CACHE_BYTES = 256 * 2 ** 20;

/**
 * Slots for a model: `sequences` when given (tests), else as many sequences' KV caches as fit in
 * `kvCacheBytes` (default 256 MiB), at least `parallelism`, at most MAX_SLOTS.
 */
export async function slotCount(
  model: LlamaModel,
  options: {
    contextSize: number;
    parallelism: number;
    kvCacheBytes?: number | undefined;
    sequences?: number | undefined;
  },
): Promise<number> {
  if (options.sequences !== undefined) return Math.max(1, Math.min(MAX_SLOTS, options.sequences));
  const budget = options.kvCacheBytes ?? DEFAULT_KV_CACHE_BYTES;
  const estimate = (sequences: number) =>
    model.fileInsights
      .estimateContextResourceRequirementsV2({
        contextSize: options.contextSize,
        modelGpuLayers: 0,
        sequences,
        flashAttention: false,
        swaFullCache: true,
      })
      .then((r) => r.cpuRam);
  // The KV bytes of one more sequence (graph overheads cancel out).
  const perSequence = (await estimate(2)) - (await estimate(1));
  const fit = perSequence > 0 ? Math.floor(budget / perSequence) : options.parallelism;
  return Math.max(options.parallelism, Math.min(MAX_SLOTS, fit));
}

/** Waiting for, claiming and releasing slots; `open()` says whether the slots' engine is still loaded. */
export function createSlotPool(parallelism: number) {
  /** Woken whenever a slot is released. */
  let waiters: (() => void)[] = [];
  let clock = 0;

  function wakeAll(): void {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  }

  function release(slot: Slot): void {
    slot.busy = false;
    slot.lastUsed = ++clock;
    wakeAll();
  }

  /**
   * The slot for a state, once fewer than `parallelism` slots are busy: the one holding (or
   * evaluating) `key`, waiting while it is busy; else an empty or the least recently used idle slot.
   * `key` null: any idle slot. Throws `closed()`'s error once the engine is closed.
   */
  async function acquire(slots: Slot[], key: string | null, signal: AbortSignal, closed: () => Error | null) {
    for (;;) {
      signal.throwIfAborted();
      const error = closed();
      if (error) throw error;
      const owner = key === null ? undefined : slots.find((s) => s.key === key);
      let slot: Slot | undefined;
      if (slots.filter((s) => s.busy).length >= parallelism) slot = undefined;
      else if (owner) slot = owner.busy ? undefined : owner;
      else {
        for (const s of slots) {
          if (s.busy) continue;
          if (
            slot === undefined ||
            (s.key === null && slot.key !== null) ||
            ((s.key !== null) === (slot.key !== null) && s.lastUsed < slot.lastUsed)
          )
            slot = s;
        }
      }
      if (slot) {
        // Claimed with its key at once, so a concurrent request for the same state finds it busy.
        slot.busy = true;
        slot.key = key;
        return slot;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }

  /** Resolves once no slot is busy (running requests finished), then wakes every waiter. */
  async function drain(slots: Slot[]): Promise<void> {
    while (slots.some((s) => s.busy)) await new Promise<void>((resolve) => waiters.push(resolve));
    // Requests still waiting for a slot wake up, see that the engine is closed, and reject.
    wakeAll();
  }

  return { acquire, release, drain };
}
