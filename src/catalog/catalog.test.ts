import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { GgufCatalogEntry } from './catalog.ts';
import {
  DEFAULT_MODEL_NAME,
  defaultModelsDir,
  describeModelSpec,
  downloadState,
  findModel,
  MODEL_CATALOG,
  resolveModelSpec,
} from './catalog.ts';

const ggufEntries = MODEL_CATALOG.filter((entry): entry is GgufCatalogEntry => entry.engine === 'gguf');
const qwen = ggufEntries.find((entry) => entry.name === 'qwen2.5-1.5b-instruct-q4_k_m');

let modelsDir: string;
before(async () => {
  modelsDir = await mkdtemp(join(tmpdir(), 'brier-catalog-'));
});
after(async () => {
  await rm(modelsDir, { recursive: true, force: true });
});

describe('MODEL_CATALOG', () => {
  it('has the embedded default and the recommended GGUF instruct models, with unique lower-case names', () => {
    const names = MODEL_CATALOG.map((entry) => entry.name);
    assert.equal(new Set(names).size, names.length);
    for (const name of names) assert.equal(name, name.toLowerCase());
    assert.equal(findModel(DEFAULT_MODEL_NAME)?.engine, 'embedded');
    for (const name of [
      'qwen2.5-1.5b-instruct-q4_k_m',
      'qwen2.5-3b-instruct-q4_k_m',
      'qwen3-1.7b-q4_k_m',
      'smollm2-1.7b-instruct-q4_k_m',
    ]) {
      assert.equal(findModel(name)?.engine, 'gguf', name);
    }
  });

  it('gives every GGUF entry a Hugging Face resolve/main URL of its file, a licence and a description', () => {
    for (const entry of ggufEntries) {
      assert.match(entry.url, /^https:\/\/huggingface\.co\/[^/]+\/[^/]+\/resolve\/main\//, entry.name);
      assert.ok(entry.url.endsWith(`/${entry.fileName}`), entry.name);
      assert.match(entry.fileName, /\.gguf$/);
      assert.ok(entry.licence.length > 0 && entry.description.length > 40, entry.name);
      assert.match(entry.quantization, /^Q4_K_M$/);
    }
  });

  it('holds sizes and checksums only in a valid form (they are optional: unknown stays undefined)', () => {
    for (const entry of ggufEntries) {
      if (entry.sha256 !== undefined) assert.match(entry.sha256, /^[0-9a-f]{64}$/, entry.name);
      if (entry.sizeBytes !== undefined) assert.ok(Number.isSafeInteger(entry.sizeBytes) && entry.sizeBytes > 0);
    }
  });

  it('finds names case-insensitively', () => {
    assert.equal(findModel('  Qwen2.5-1.5B-Instruct-Q4_K_M ')?.name, 'qwen2.5-1.5b-instruct-q4_k_m');
    assert.equal(findModel('nope'), undefined);
  });
});

describe('defaultModelsDir', () => {
  it('is $BRIER_DATA_DIR/models, with ./data by default', () => {
    assert.equal(defaultModelsDir({}), resolve('data', 'models'));
    assert.equal(defaultModelsDir({ BRIER_DATA_DIR: '/srv/brier' }), '/srv/brier/models');
  });
});

describe('resolveModelSpec', () => {
  it('loads the embedded model when BRIER_MODEL is unset, empty or brier-lite', () => {
    for (const value of [undefined, '', '  ', 'brier-lite', 'BRIER-LITE']) {
      const spec = resolveModelSpec(value, modelsDir);
      assert.equal(spec.kind, 'embedded', String(value));
    }
  });

  it('maps a downloaded catalog name to its file under the models dir', async () => {
    assert.ok(qwen);
    const dir = join(modelsDir, 'has-qwen');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, qwen.fileName), 'GGUF');
    const spec = resolveModelSpec(qwen.name, dir);
    assert.deepEqual(spec, { kind: 'gguf', path: join(dir, qwen.fileName), entry: qwen });
  });

  it('names the pull command when a catalog model is not downloaded', () => {
    assert.throws(
      () => resolveModelSpec('qwen3-1.7b-q4_k_m', join(modelsDir, 'empty')),
      (error: Error) =>
        error.message.includes('npm run brier -- models pull qwen3-1.7b-q4_k_m') &&
        error.message.includes('not downloaded'),
    );
  });

  it('says a catalog model is only partly downloaded, and that pull resumes', async () => {
    const dir = join(modelsDir, 'partial');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'smollm2-1.7b-instruct-q4_k_m.gguf.partial'), 'GG');
    assert.throws(
      () => resolveModelSpec('smollm2-1.7b-instruct-q4_k_m', dir),
      /partly downloaded.*models pull smollm2-1\.7b-instruct-q4_k_m.*resumes/s,
    );
    const smol = findModel('smollm2-1.7b-instruct-q4_k_m');
    assert.ok(smol);
    assert.equal(downloadState(smol, dir).state, 'partial');
  });

  it('loads a .gguf path as that file, and fails clearly when it is missing', async () => {
    const file = join(modelsDir, 'custom.GGUF');
    await writeFile(file, 'GGUF');
    assert.deepEqual(resolveModelSpec(file, modelsDir), { kind: 'gguf', path: file });
    assert.throws(() => resolveModelSpec(join(modelsDir, 'absent.gguf'), modelsDir), /no GGUF file at/);
  });

  it('treats an http(s) URL as an upstream engine base URL', () => {
    assert.deepEqual(resolveModelSpec('https://api.example.com/', modelsDir), {
      kind: 'upstream',
      baseUrl: 'https://api.example.com',
    });
    assert.deepEqual(resolveModelSpec('http://127.0.0.1:8080/brier', modelsDir), {
      kind: 'upstream',
      baseUrl: 'http://127.0.0.1:8080/brier',
    });
    assert.throws(() => resolveModelSpec('https://x.example/?key=1', modelsDir), /no query/);
  });

  it('treats openai+http(s):// as an OpenAI-compatible completions server, by its base URL without /v1', () => {
    assert.deepEqual(resolveModelSpec('openai+http://10.0.0.5:8000/', modelsDir), {
      kind: 'openai',
      baseUrl: 'http://10.0.0.5:8000',
    });
    assert.deepEqual(resolveModelSpec('OPENAI+https://llm.example.com/vllm', modelsDir), {
      kind: 'openai',
      baseUrl: 'https://llm.example.com/vllm',
    });
    assert.throws(() => resolveModelSpec('openai+http://10.0.0.5:8000/v1', modelsDir), /without \/v1/);
    assert.throws(() => resolveModelSpec('openai+https://x.example/?key=1', modelsDir), /no query/);
    assert.throws(() => resolveModelSpec('openai+http://', modelsDir), /not a valid URL/);
  });

  it('rejects anything else, listing the catalog names', () => {
    assert.throws(
      () => resolveModelSpec('gpt-4', modelsDir),
      (error: Error) =>
        MODEL_CATALOG.every((entry) => error.message.includes(entry.name)) &&
        error.message.includes('.gguf') &&
        error.message.includes('not a known model'),
    );
  });
});

describe('describeModelSpec', () => {
  it('says plainly which model is loaded and what it is good for', () => {
    assert.ok(qwen);
    const lite = describeModelSpec(resolveModelSpec(undefined, modelsDir));
    assert.equal(lite.name, 'brier-lite');
    assert.match(lite.description, /Good for/);
    const gguf = describeModelSpec({ kind: 'gguf', path: `/m/${qwen.fileName}`, entry: qwen });
    assert.equal(gguf.name, qwen.name);
    assert.ok(gguf.description.startsWith(qwen.title));
    const custom = describeModelSpec({ kind: 'gguf', path: '/m/My-Model.Q8_0.gguf' });
    assert.equal(custom.name, 'My-Model.Q8_0');
    assert.match(custom.description, /not from the Brier catalog/);
    const upstream = describeModelSpec({ kind: 'upstream', baseUrl: 'https://api.example.com/v1' });
    assert.match(upstream.description, /api\.example\.com/);
    const openai = describeModelSpec({ kind: 'openai', baseUrl: 'http://10.0.0.5:8000' });
    assert.match(openai.description, /OpenAI-compatible completions server at 10\.0\.0\.5:8000/);
  });
});
