/**
 * An engine's idempotent load(): concurrent calls share one attempt; a failed attempt is forgotten
 * so that the next call retries; `current()` is set before load() resolves (the handler is
 * registered before anyone awaits the attempt); `reset()` (close) forgets both a finished and a
 * pending attempt, so that an attempt still running when the engine closes never sets `current()`.
 */
export interface LoadOnce<T> {
  load(): Promise<void>;
  /** What the last successful attempt opened, or null (not loaded, or closed since). */
  current(): T | null;
  /** Forgets the loaded value and any pending attempt, and returns them for disposal. */
  reset(): { pending: Promise<T> | null; loaded: T | null };
}

export function createLoadOnce<T>(open: () => Promise<T>): LoadOnce<T> {
  let loading: Promise<T> | null = null;
  let loaded: T | null = null;
  return {
    async load() {
      if (loading === null) {
        const attempt = open();
        loading = attempt;
        attempt.then(
          (value) => {
            if (loading === attempt) loaded = value;
          },
          () => {
            if (loading === attempt) loading = null;
          },
        );
      }
      await loading;
    },
    current: () => loaded,
    reset() {
      const was = { pending: loading, loaded };
      loading = null;
      loaded = null;
      return was;
    },
  };
}
