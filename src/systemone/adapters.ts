/**
 * Adapters as model ids of an account, for serving: found by (account, id), parsed once, served only
 * on the base model they were fitted on (and, for probe heads, the same state features). A lookup is
 * cached for `ttlMs` (default 1 s), and so is an account's list (GET /v1/models); deleting an
 * adapter in this process drops it from the cache at once, and storing or deleting one in this
 * process (the source's generation) drops the lists at once; in other processes both within the TTL. No HTTP here; the store is injected (src/domain/adapters.ts).
 */
import { LRUCache } from 'lru-cache';
import { type Adapter, type AdapterFile, parseAdapter } from '../engines/adapters/adapter.ts';
import type { DecisionEngine } from '../engines/engine.ts';

export interface AdapterRecord {
  id: string;
  base: string;
  artifact: string;
  createdAt: number;
  /** Opt-in fallback to a teacher (issue 34). */
  fallback?: { teacher: string; threshold: number } | null;
}

export interface AdapterSource {
  find(userId: string, id: string): Promise<AdapterRecord | undefined>;
  list(userId: string): Promise<AdapterRecord[]>;
  /** A number that changes whenever this process stores or deletes an adapter (absent: lists are not cached). */
  generation?(): number;
}

export interface ServedAdapter extends Adapter {
  id: string;
  createdAt: number;
  fallback: { teacher: string; threshold: number } | null;
}

export function createAdapterResolver(source: AdapterSource, engine: DecisionEngine, options: { ttlMs?: number } = {}) {
  const lookups = new LRUCache<string, { adapter: ServedAdapter | null }>({
    max: 10_000,
    ttl: Math.max(1, options.ttlMs ?? 1000),
  });
  const parsed = new LRUCache<string, ServedAdapter>({ max: 256 });
  const lists = new LRUCache<string, { generation: number; adapters: ServedAdapter[] }>({
    max: 10_000,
    ttl: Math.max(1, options.ttlMs ?? 1000),
  });

  /** The adapter as this engine can serve it, or null (another base model, other features, malformed). */
  function servable(r: AdapterRecord): ServedAdapter | null {
    if (r.base !== engine.info.id) return null;
    const key = `${r.id}\u0000${r.createdAt}`;
    let a = parsed.get(key);
    if (!a) {
      try {
        a = {
          ...parseAdapter(JSON.parse(r.artifact) as AdapterFile),
          id: r.id,
          createdAt: r.createdAt,
          fallback: null,
        };
      } catch {
        return null;
      }
      parsed.set(key, a);
    }
    if (a.features !== null && a.features !== engine.features?.id) return null;
    return { ...a, fallback: r.fallback ?? null };
  }

  /** The account's adapter `id` if this server can serve it; undefined for any other id (or account). */
  async function find(userId: string, id: string): Promise<ServedAdapter | undefined> {
    const key = `${userId}\u0000${id}`;
    const hit = lookups.get(key);
    if (hit) return hit.adapter ?? undefined;
    const record = await source.find(userId, id);
    const adapter = record ? servable(record) : null;
    lookups.set(key, { adapter });
    return adapter ?? undefined;
  }

  /** The account's adapters this server can serve, newest first. */
  async function list(userId: string): Promise<ServedAdapter[]> {
    const generation = source.generation?.();
    const hit = generation === undefined ? undefined : lists.get(userId);
    if (hit && hit.generation === generation) return hit.adapters;
    const all = await source.list(userId);
    const adapters = all.map(servable).filter((a): a is ServedAdapter => a !== null);
    if (generation !== undefined) lists.set(userId, { generation, adapters });
    return adapters;
  }

  /** Drops an adapter from the cache (it was deleted). */
  function forget(userId: string, id: string): void {
    lookups.delete(`${userId}\u0000${id}`);
    lists.delete(userId);
  }

  return { find, list, forget };
}

export type AdapterResolver = ReturnType<typeof createAdapterResolver>;
