import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FixtureServer } from '../../test/fixtures/model-server.ts';
import { startFixtureServer } from '../../test/fixtures/model-server.ts';
import type { CatalogEntry, GgufCatalogEntry } from './catalog.ts';
import { MODEL_CATALOG, resolveModelSpec } from './catalog.ts';
import type { ModelsCommandIo } from './cli.ts';
import { runModelsCommand } from './cli.ts';

let root: string;
let server: FixtureServer;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'brier-models-cli-'));
  server = await startFixtureServer({ size: 64 * 1024 });
});
after(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

let dirCount = 0;

/** A fresh data dir, and io whose streams are captured; stderr is not a TTY. */
function setup(env: Record<string, string> = {}, catalog?: readonly CatalogEntry[]) {
  const dataDir = join(root, `data${dirCount++}`);
  const out: string[] = [];
  const err: string[] = [];
  const io: ModelsCommandIo = {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text), isTTY: false },
    env: { BRIER_DATA_DIR: dataDir, ...env },
    catalog,
  };
  return { io, dataDir, modelsDir: join(dataDir, 'models'), stdout: () => out.join(''), stderr: () => err.join('') };
}

/** A catalog with a test model whose size and sha256 are those of the fixture server's file. */
function testCatalog(overrides: Partial<GgufCatalogEntry> = {}): CatalogEntry[] {
  const tiny: GgufCatalogEntry = {
    name: 'tiny-test-q4_k_m',
    engine: 'gguf',
    title: 'Tiny test model',
    description: 'A generated file served locally for tests.',
    licence: 'MIT',
    homepage: 'http://127.0.0.1/',
    url: 'https://huggingface.co/example/tiny/resolve/main/tiny.gguf',
    fileName: 'tiny.gguf',
    quantization: 'Q4_K_M',
    approxSize: '64 kB',
    sizeBytes: server.content.length,
    sha256: server.sha256,
    ...overrides,
  };
  return [...MODEL_CATALOG, tiny];
}

describe('models list', () => {
  it('lists every catalog model with what it is good for, its source and whether it is downloaded', async () => {
    const { io, stdout } = setup();
    assert.equal(await runModelsCommand(['models', 'list'], io), 0);
    const text = stdout();
    for (const entry of MODEL_CATALOG) {
      assert.ok(text.includes(entry.name), entry.name);
      if (entry.engine === 'gguf') assert.ok(text.includes(entry.url), entry.url);
    }
    assert.match(text, /\* brier-lite .*ready \(ships with Brier\)/);
    assert.match(text, /qwen2\.5-1\.5b-instruct-q4_k_m .*not downloaded/);
    assert.match(text, /size and sha256 verified/);
    assert.match(text, /no size or sha256 pinned yet/);
    assert.match(text, /models pull <name>/);
  });

  it('shows downloaded and partly downloaded models, and marks the one BRIER_MODEL selects', async () => {
    const { io, modelsDir, stdout } = setup({ BRIER_MODEL: 'smollm2-1.7b-instruct-q4_k_m' });
    await mkdir(modelsDir, { recursive: true });
    await writeFile(join(modelsDir, 'smollm2-1.7b-instruct-q4_k_m.gguf'), Buffer.alloc(2000));
    await writeFile(join(modelsDir, 'Qwen3-1.7B-Q4_K_M.gguf.partial'), Buffer.alloc(1500));
    assert.equal(await runModelsCommand(['list'], io), 0);
    const text = stdout();
    assert.match(text, /\* smollm2-1\.7b-instruct-q4_k_m .*downloaded \(2\.00 kB\)/);
    assert.match(text, /qwen3-1\.7b-q4_k_m .*partly downloaded \(1\.50 kB; pull resumes\)/);
    assert.doesNotMatch(text, /\* brier-lite/);
  });
});

describe('models pull', () => {
  it('downloads a catalog model from a mirror URL, verifies it, and BRIER_MODEL=<name> then resolves to it', async () => {
    const catalog = testCatalog();
    const { io, modelsDir, stdout, stderr } = setup({}, catalog);
    const code = await runModelsCommand(['models', 'pull', 'tiny-test-q4_k_m', '--url', server.url], io);
    assert.equal(code, 0, stderr());
    const path = join(modelsDir, 'tiny.gguf');
    assert.deepEqual(await readFile(path), server.content);
    assert.match(stdout(), /Downloaded tiny-test-q4_k_m/);
    assert.match(stdout(), new RegExp(`sha256 ${server.sha256} \\(size and sha256 verified\\)`));
    assert.match(stdout(), /Use it: BRIER_MODEL=tiny-test-q4_k_m npm start/);
    assert.match(stderr(), /Pulling tiny-test-q4_k_m/);
    assert.match(stderr(), /100\.0%/, 'progress lines go to stderr');
    assert.deepEqual(resolveModelSpec('tiny-test-q4_k_m', modelsDir, catalog), {
      kind: 'gguf',
      path,
      entry: catalog.at(-1),
    });

    // a second pull finds the verified file and does nothing
    const requests = server.requests.length;
    assert.equal(await runModelsCommand(['models', 'pull', 'tiny-test-q4_k_m', '--url', server.url], io), 0);
    assert.match(stdout(), /already downloaded \(size and sha256 verified\)/);
    assert.equal(server.requests.length, requests);
  });

  it('honours --dir and says how to point Brier at it', async () => {
    const { io, stdout, stderr } = setup({}, testCatalog());
    const dir = join(root, 'elsewhere', 'models');
    const code = await runModelsCommand(['models', 'pull', 'tiny-test-q4_k_m', '--url', server.url, '--dir', dir], io);
    assert.equal(code, 0, stderr());
    assert.ok(existsSync(join(dir, 'tiny.gguf')));
    assert.match(stdout(), new RegExp(`BRIER_DATA_DIR=${join(root, 'elsewhere')} BRIER_MODEL=tiny-test-q4_k_m`));
  });

  it('fails with exit 1 on a checksum mismatch, naming expected and actual, and keeps nothing', async () => {
    const wrong = '0'.repeat(64);
    const { io, modelsDir, stderr } = setup({}, testCatalog({ sha256: wrong }));
    assert.equal(await runModelsCommand(['models', 'pull', 'tiny-test-q4_k_m', '--url', server.url], io), 1);
    assert.match(stderr(), new RegExp(`expected sha256 ${wrong}, got ${server.sha256}`));
    assert.equal(existsSync(join(modelsDir, 'tiny.gguf.partial')), false);
    assert.equal(existsSync(join(modelsDir, 'tiny.gguf')), false);
  });

  it('pulls a file that is not in the catalog by URL, checking --sha256', async () => {
    const { io, modelsDir, stdout, stderr } = setup();
    const code = await runModelsCommand(['pull', 'my-model', '--url', server.url, '--sha256', server.sha256], io);
    assert.equal(code, 0, stderr());
    assert.match(stdout(), /sha256 verified/);
    assert.match(stdout(), new RegExp(`BRIER_MODEL=${join(modelsDir, 'model.gguf')}`));
  });

  it('has nothing to download for brier-lite', async () => {
    const { io, stdout } = setup();
    assert.equal(await runModelsCommand(['models', 'pull', 'brier-lite'], io), 0);
    assert.match(stdout(), /ships with Brier: nothing to download/);
  });

  it('rejects an unknown model with exit 2, listing the models to pull', async () => {
    const { io, stderr } = setup();
    assert.equal(await runModelsCommand(['models', 'pull', 'llama-70b'], io), 2);
    assert.match(stderr(), /unknown model "llama-70b"/);
    assert.match(stderr(), /qwen2\.5-1\.5b-instruct-q4_k_m/);
  });

  it('rejects bad usage with exit 2 and prints usage for help', async () => {
    const { io, stderr, stdout } = setup();
    assert.equal(await runModelsCommand(['models', 'pull'], io), 2);
    assert.equal(await runModelsCommand(['models', 'frobnicate'], io), 2);
    assert.equal(await runModelsCommand(['models', 'list', '--bogus'], io), 2);
    assert.match(stderr(), /Usage:/);
    assert.equal(await runModelsCommand(['models', '--help'], io), 0);
    assert.match(stdout(), /models pull <name>/);
  });
});
