import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLoadOnce } from './load-once.ts';

describe('createLoadOnce', () => {
  it('shares one attempt between concurrent loads and is set when load() resolves', async () => {
    let opens = 0;
    const state = createLoadOnce(async () => ++opens);
    await Promise.all([state.load(), state.load(), state.load()]);
    assert.equal(opens, 1);
    assert.equal(state.current(), 1);
    await state.load();
    assert.equal(opens, 1);
  });

  it('forgets a failed attempt, so the next load retries', async () => {
    let opens = 0;
    const state = createLoadOnce(async () => {
      opens++;
      if (opens === 1) throw new Error('first try fails');
      return 'ok';
    });
    await assert.rejects(state.load(), /first try fails/);
    assert.equal(state.current(), null);
    await state.load();
    assert.equal(state.current(), 'ok');
    assert.equal(opens, 2);
  });

  it('reset hands back what was loaded or pending, and a pending attempt never sets current()', async () => {
    let finish: (v: string) => void = () => {};
    const state = createLoadOnce(() => new Promise<string>((resolve) => (finish = resolve)));
    const loading = state.load();
    const { pending, loaded } = state.reset();
    assert.equal(loaded, null);
    assert.ok(pending);
    finish('late');
    await loading;
    assert.equal(await pending, 'late');
    assert.equal(state.current(), null);
  });
});
