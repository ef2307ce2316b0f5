import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEncoderPool, createSharedEncoderPool } from './pool.ts';

describe('a shared encoder pool (both encoders in each worker thread)', () => {
  it('gives each encoder the vectors a pool of its own gives, and closes as one', async () => {
    const texts = ['Is this a refund request?', 'The payment service returned timeouts all night. '.repeat(6), 'hi'];
    const shared = createSharedEncoderPool({ threads: 2, models: ['use', 'minilm'] });
    const use = createEncoderPool({ threads: 1 });
    const mini = createEncoderPool({ threads: 1, model: 'minilm' });
    try {
      const [sharedUse, sharedMini] = await Promise.all([
        shared.encoder('use').embed(texts),
        shared.encoder('minilm').embed(texts),
      ]);
      assert.equal(shared.encoder('use').dim, 512);
      assert.equal(shared.encoder('minilm').dim, 384);
      assert.deepEqual(sharedUse, await use.embed(texts));
      assert.deepEqual(sharedMini, await mini.embed(texts));
    } finally {
      await use.close();
      await mini.close();
      await shared.encoder('minilm').close();
    }
    await assert.rejects(shared.encoder('use').embed(['after close']), /closed/);
  });

  it('refuses a view of an encoder it does not hold', async () => {
    const pool = createSharedEncoderPool({ threads: 1, models: ['use'] });
    try {
      assert.throws(() => pool.encoder('minilm'), /no minilm encoder/);
    } finally {
      await pool.close();
    }
  });
});
