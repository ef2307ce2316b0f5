import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { getLlama, LlamaLogLevel, readGgufFileInfo } from 'node-llama-cpp';
import { buildTinyGguf, tinyVocabulary, writeTinyGguf } from './tiny-gguf.ts';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brier-tiny-gguf-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('the same options give the same bytes and another seed changes only the weights', () => {
  const a = buildTinyGguf({ seed: 7 });
  const b = buildTinyGguf({ seed: 7 });
  const c = buildTinyGguf({ seed: 8 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.equal(a.length, c.length);
  assert.equal(new TextDecoder().decode(a.subarray(0, 4)), 'GGUF');
});

test('node-llama-cpp reads the written file as a llama model with its vocabulary and tensors', async () => {
  const path = await writeTinyGguf(join(dir, 'tiny.gguf'), { blockCount: 3, contextLength: 1024 });
  const info = await readGgufFileInfo(path, { readTensorInfo: true });
  assert.equal(info.version, 3);
  assert.equal(info.metadata.general.architecture, 'llama');
  assert.equal(info.architectureMetadata.context_length, 1024);
  assert.equal(info.architectureMetadata.block_count, 3);
  assert.equal(info.metadata.tokenizer.ggml.model, 'llama');
  assert.equal(info.metadata.tokenizer.ggml.tokens.length, tinyVocabulary().tokens.length);
  assert.equal(info.tensorCount, 2 + 9 * 3 + 1);
  for (const tensor of info.tensorInfo ?? []) assert.equal(Number(tensor.offset) % 32, 0, tensor.name);
});

test('the tokenizer merges words, splits unknown text into byte tokens and round-trips it', async () => {
  const path = await writeTinyGguf(join(dir, 'vocab.gguf'));
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  try {
    assert.equal(model.tokenize('Answer: Yes', false).length, 3);
    const text = 'naïve ✓ 42\nok';
    const tokens = model.tokenize(text, false, 'trimLeadingSpace');
    assert.equal(model.detokenize(tokens), text);
    assert.equal(model.tokens.bos, 1);
  } finally {
    await model.dispose();
    await llama.dispose();
  }
});
