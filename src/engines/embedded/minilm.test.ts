import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMiniLm, createMiniLmTokenizer, MINILM_DIM } from './minilm.ts';

const GOLDEN = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '..',
  'shared',
  'models',
  'all-MiniLM-L6-v2',
  'golden.json',
);
const haveGolden = existsSync(GOLDEN);

interface GoldenRow {
  text: string;
  input_ids: number[];
  embedding: number[];
}

describe('MiniLM (the shipped int8 ONNX file)', () => {
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

  it('reproduces the reference token ids and embeddings of ../shared golden.json', {
    skip: haveGolden ? false : 'skipped: ../shared/models/all-MiniLM-L6-v2/golden.json is absent',
  }, async () => {
    const rows = (JSON.parse(readFileSync(GOLDEN, 'utf8')) as { rows: GoldenRow[] }).rows;
    const t = createMiniLmTokenizer();
    const m = createMiniLm();
    try {
      const vectors = await m.encoder.embed(rows.map((r) => r.text));
      rows.forEach((row, i) => {
        assert.deepEqual(t.ids(row.text), row.input_ids, row.text.slice(0, 40));
        const v = vectors[i] ?? new Float32Array();
        const norm = Math.hypot(...row.embedding);
        let cos = 0;
        for (let d = 0; d < MINILM_DIM; d++) cos += (v[d] ?? 0) * ((row.embedding[d] ?? 0) / norm);
        assert.ok(cos > 0.9999, `${row.text.slice(0, 40)}: cosine ${cos}`);
      });
    } finally {
      await m.encoder.close();
    }
  });
});
