import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMiniLm, createMiniLmTokenizer, MINILM_DIM } from './minilm.ts';

const SHARED_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '..',
  'shared',
  'models',
  'all-MiniLM-L6-v2',
);
const GOLDEN = join(SHARED_DIR, 'golden.json');
const haveGolden = existsSync(GOLDEN);

interface GoldenRow {
  text: string;
  input_ids: number[];
  embedding: number[];
}

describe('MiniLM (the shipped int8 graph)', () => {
  it('returns unit 384-d vectors, one per text, in the order given', async () => {
    const m = createMiniLm();
    try {
      const texts = ['a much longer sentence about refunds and a double charge on my card', 'hi', ''];
      const v = await m.encoder.embed(texts);
      assert.equal(v.length, 3);
      for (const x of v) {
        assert.equal(x.length, MINILM_DIM);
        assert.ok(Math.abs(Math.hypot(...x) - 1) < 1e-5);
      }
      const again = await m.encoder.embed([texts[1] ?? '']);
      assert.deepEqual(
        [...(again[0] ?? [])].map((x) => x.toFixed(5)),
        [...(v[1] ?? [])].map((x) => x.toFixed(5)),
      );
    } finally {
      await m.encoder.close();
    }
  });

  it('counts tokens without the special ones and cuts ids at 256', () => {
    const t = createMiniLmTokenizer();
    assert.equal(t.count('hello world'), 2);
    const ids = t.ids('word '.repeat(400));
    assert.equal(ids.length, 256);
    assert.equal(ids[0], 101);
    assert.equal(ids.at(-1), 102);
  });

  /** Cosine of each golden row's vector (as `file` computes it) with the reference, whose token ids must match. */
  async function goldenCosines(options: Parameters<typeof createMiniLm>[0]): Promise<number[]> {
    const rows = (JSON.parse(readFileSync(GOLDEN, 'utf8')) as { rows: GoldenRow[] }).rows;
    const t = createMiniLmTokenizer();
    const m = createMiniLm(options);
    try {
      const vectors = await m.encoder.embed(rows.map((r) => r.text));
      return rows.map((row, i) => {
        assert.deepEqual(t.ids(row.text), row.input_ids, row.text.slice(0, 40));
        const v = vectors[i] ?? new Float32Array();
        const norm = Math.hypot(...row.embedding);
        let cos = 0;
        for (let d = 0; d < MINILM_DIM; d++) cos += (v[d] ?? 0) * ((row.embedding[d] ?? 0) / norm);
        return cos;
      });
    } finally {
      await m.encoder.close();
    }
  }

  it('agrees with the float32 reference embeddings of ../shared golden.json at cosine >= 0.998 per text (int8 products)', {
    skip: haveGolden ? false : 'skipped: ../shared/models/all-MiniLM-L6-v2/golden.json is absent',
  }, async () => {
    const cos = await goldenCosines({});
    for (const c of cos) assert.ok(c >= 0.998, `cosine ${c}`);
    // not identical: the int8 products do change the vectors a little
    assert.ok(Math.min(...cos) < 0.99999);
  });

  it('reproduces the reference embeddings exactly from the float32 source file (../shared)', {
    skip: existsSync(join(SHARED_DIR, 'model-int8.onnx')) ? false : `skipped: ${SHARED_DIR}/model-int8.onnx is absent`,
  }, async () => {
    for (const c of await goldenCosines({ dir: SHARED_DIR, file: 'model-int8.onnx' }))
      assert.ok(c > 0.9999, `cosine ${c}`);
  });

  it('gives a text the same vector alone and among others (texts run one per call)', async () => {
    const m = createMiniLm();
    try {
      const texts = ['Is this a refund request?', 'word '.repeat(300), 'hi'];
      const together = await m.encoder.embed(texts);
      for (const [i, text] of texts.entries()) assert.deepEqual((await m.encoder.embed([text]))[0], together[i]);
    } finally {
      await m.encoder.close();
    }
  });
});
