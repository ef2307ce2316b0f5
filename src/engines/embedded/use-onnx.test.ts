import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEncoderPool, type TextEncoder } from './pool.ts';
import { createEncoderTokenizer } from './tokenizer.ts';
import { USE_MAX_TOKENS } from './use-onnx.ts';

/**
 * The converted graph (use-onnx.ts) in float32 against the package's own TF.js graph, in the same
 * worker pool: the same vectors to float32 rounding (measured: at most 3.7e-7 apart); the default
 * runtime (int8 products) close to both.
 */
describe('USE-lite: onnxruntime (converted graph) vs TF.js', () => {
  let onnx: TextEncoder;
  let int8: TextEncoder;
  let tfjs: TextEncoder;
  before(async () => {
    onnx = createEncoderPool({ threads: 1, runtime: 'onnx-float32' });
    int8 = createEncoderPool({ threads: 1 });
    tfjs = createEncoderPool({ threads: 1, runtime: 'tfjs' });
  });
  after(async () => {
    await onnx.close();
    await int8.close();
    await tfjs.close();
  });

  const long = 'The on-call engineer rolled back the deploy, but the error rate only dropped later. '.repeat(12);
  const TEXTS = [
    'x',
    'Is this text message spam?',
    'WINNER!! You have won a £1000 cash prize. Call 09061701461 now to claim, T&C apply.',
    'Ünïcödé, emoji 🎉 and 全角 text',
    long, // past USE-lite's 128 tokens: both read the first 128
    'Customers in the EU region were the most affected and support received about forty tickets.',
  ];

  it('gives the same unit vectors in one padded batch and alone (float32)', async () => {
    assert.ok(createEncoderTokenizer().count(long) > USE_MAX_TOKENS);
    const a = await onnx.embed(TEXTS);
    const b = await tfjs.embed(TEXTS);
    const alone = await Promise.all(TEXTS.map(async (t) => (await onnx.embed([t]))[0]));
    TEXTS.forEach((t, i) => {
      const [x, y, z] = [a[i], b[i], alone[i]];
      assert.ok(x && y && z);
      let norm = 0;
      for (let d = 0; d < 512; d++) {
        assert.ok(
          Math.abs((x[d] ?? 0) - (y[d] ?? 0)) < 1e-5,
          `${JSON.stringify(t).slice(0, 30)} dim ${d}: ${x[d]} vs ${y[d]}`,
        );
        assert.ok(Math.abs((x[d] ?? 0) - (z[d] ?? 0)) < 1e-5, 'padding changes nothing');
        norm += (x[d] ?? 0) ** 2;
      }
      assert.ok(Math.abs(norm - 1) < 1e-5);
    });
  });

  it('runs its int8 products within cosine 0.998 of float32, and gives a text the same vector alone and in a batch', async () => {
    const f = await onnx.embed(TEXTS);
    const q = await int8.embed(TEXTS);
    const alone = await Promise.all(TEXTS.map(async (t) => (await int8.embed([t]))[0]));
    TEXTS.forEach((t, i) => {
      const [x, y] = [f[i], q[i]];
      assert.ok(x && y);
      let cos = 0;
      for (let d = 0; d < 512; d++) cos += (x[d] ?? 0) * (y[d] ?? 0);
      assert.ok(cos >= 0.998 && cos < 0.999999, `${JSON.stringify(t).slice(0, 30)}: cosine ${cos}`);
      assert.deepEqual(alone[i], y, "a text's vector depends on the text alone");
    });
  });
});

describe('closing an encoder pool while it encodes', () => {
  it('lets the running batch finish and ends the threads (terminating one inside onnxruntime aborts the process)', async () => {
    const pool = createEncoderPool({ threads: 2 });
    await pool.embed(['warm up']);
    const texts = Array.from(
      { length: 200 },
      (_, i) => `Text ${i}: the payment service returned timeouts for a third of checkouts.`,
    );
    const running = pool.embed(texts).then(
      () => 'done',
      (error: Error) => error.message,
    );
    await new Promise((r) => setTimeout(r, 20));
    await pool.close();
    const outcome = await running;
    assert.ok(outcome === 'done' || /closing/.test(outcome), outcome);
    await assert.rejects(pool.embed(['after']), /closed/);
  });
});
