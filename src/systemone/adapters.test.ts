import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createFakeEngine } from '../engines/fake/fake-engine.ts';
import { type AdapterRecord, createAdapterResolver } from './adapters.ts';

/** A source that counts its list reads; `generation` moves when the test says a change happened. */
function source() {
  let generation = 0;
  let reads = 0;
  const rows: Record<string, AdapterRecord[]> = {
    a: [{ id: 'ft:other:1', base: 'other-base', artifact: '{}', createdAt: 1 }],
    b: [],
  };
  return {
    find: async () => undefined,
    list: async (userId: string) => {
      reads++;
      return rows[userId] ?? [];
    },
    generation: () => generation,
    change: () => generation++,
    reads: () => reads,
  };
}

test("an account's adapter list is read once per TTL, per account, and again at once after a change or a delete", async () => {
  const s = source();
  const resolver = createAdapterResolver(s, createFakeEngine(), { ttlMs: 60_000 });
  await resolver.list('a');
  await resolver.list('a');
  assert.equal(s.reads(), 1);
  await resolver.list('b'); // another account: its own entry
  assert.equal(s.reads(), 2);
  s.change(); // this process stored or deleted an adapter
  await resolver.list('a');
  assert.equal(s.reads(), 3);
  resolver.forget('a', 'ft:other:1');
  await resolver.list('a');
  assert.equal(s.reads(), 4);
});

test('lists expire after the TTL (another process may have changed them)', async () => {
  const s = source();
  const resolver = createAdapterResolver(s, createFakeEngine(), { ttlMs: 20 });
  await resolver.list('a');
  await new Promise((r) => setTimeout(r, 40));
  await resolver.list('a');
  assert.equal(s.reads(), 2);
});

test('a source without a generation is read every time', async () => {
  const { generation: _, ...plain } = source();
  let reads = 0;
  const resolver = createAdapterResolver(
    {
      ...plain,
      list: async () => {
        reads++;
        return [];
      },
    },
    createFakeEngine(),
    {
      ttlMs: 60_000,
    },
  );
  await resolver.list('a');
  await resolver.list('a');
  assert.equal(reads, 2);
});
