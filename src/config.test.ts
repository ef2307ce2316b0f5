import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { writeTinyGguf } from '../test/fixtures/tiny-gguf.ts';
import { loadConfig } from './config.ts';
import { calibrationKeyOf } from './engines/create.ts';
import type { DecisionEngine } from './engines/engine.ts';

describe('loadConfig', () => {
  test('BRIER_LEGACY_EXTENSION_FIELDS: off unless on; anything else is refused by name', () => {
    assert.equal(loadConfig({}).legacyExtensionFields, false);
    assert.equal(loadConfig({ BRIER_LEGACY_EXTENSION_FIELDS: 'off' }).legacyExtensionFields, false);
    assert.equal(loadConfig({ BRIER_LEGACY_EXTENSION_FIELDS: 'on' }).legacyExtensionFields, true);
    assert.throws(() => loadConfig({ BRIER_LEGACY_EXTENSION_FIELDS: 'yes' }), /BRIER_LEGACY_EXTENSION_FIELDS/);
  });

  test('BRIER_GGUF_PROMPT: plain by default, or chat, which a GGUF model is calibrated for apart', async () => {
    assert.equal(loadConfig({}).ggufPrompt, 'plain');
    assert.equal(loadConfig({ BRIER_GGUF_PROMPT: 'chat' }).ggufPrompt, 'chat');
    assert.throws(() => loadConfig({ BRIER_GGUF_PROMPT: 'jinja' }), /BRIER_GGUF_PROMPT/);
    const dir = await mkdtemp(join(tmpdir(), 'brier-config-'));
    try {
      const model = await writeTinyGguf(join(dir, 'tiny.gguf'));
      const key = async (env: Record<string, string>) =>
        calibrationKeyOf(loadConfig({ BRIER_MODEL: model, BRIER_DATA_DIR: dir, ...env }))?.({} as DecisionEngine);
      const plain = await key({});
      assert.match(plain ?? '', /^gguf-[0-9a-f]{64}$/);
      assert.equal(await key({ BRIER_GGUF_PROMPT: 'chat' }), plain?.replace('gguf-', 'ggufchat-'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('loadConfig: BRIER_TEACHERS', () => {
  test('none by default; inline JSON or a file; kinds from the model; keys from the variable named', async () => {
    assert.deepEqual(loadConfig({}).teachers, []);
    const teachers = loadConfig({
      BRIER_TEACHERS: JSON.stringify([
        { id: 'jev', model: 'https://api.example.com/', api_key_env: 'JEV_KEY', upstream_model: 'jev-latest' },
        { id: 'vllm', model: 'openai+http://10.0.0.5:8000', concurrency: 8 },
        { id: 'small', model: '/models/small.gguf', timeout_ms: 60000 },
      ]),
      JEV_KEY: 'sk-jev-secret',
    }).teachers;
    assert.deepEqual(
      teachers.map((t) => [t.id, t.kind, t.target, t.apiKey ?? null, t.concurrency, t.timeoutMs]),
      [
        ['jev', 'systemone', 'https://api.example.com', 'sk-jev-secret', 4, 30000],
        ['vllm', 'openai', 'http://10.0.0.5:8000', null, 8, 30000],
        ['small', 'gguf', '/models/small.gguf', null, 4, 60000],
      ],
    );
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'teachers-')), 'teachers.json');
    fs.writeFileSync(file, JSON.stringify([{ id: 'jev', model: 'http://127.0.0.1:9' }]));
    assert.equal(loadConfig({ BRIER_TEACHERS: file }).teachers[0]?.id, 'jev');
  });

  test('refused by name: bad JSON, an unreadable file, a missing key variable, a repeated id, an odd model, an inline key', () => {
    const bad = (value: string, env: Record<string, string> = {}) =>
      assert.throws(() => loadConfig({ BRIER_TEACHERS: value, ...env }), /BRIER_TEACHERS/);
    bad('[{');
    bad('/nonexistent/teachers.json');
    bad(JSON.stringify([{ id: 'a', model: 'http://x', api_key_env: 'NOPE_KEY' }]));
    bad(
      JSON.stringify([
        { id: 'a', model: 'http://x' },
        { id: 'a', model: 'http://y' },
      ]),
    );
    bad(JSON.stringify([{ id: 'a', model: 'ftp://x' }]));
    bad(JSON.stringify([{ id: 'a', model: 'http://x', api_key: 'inline' }]));
    bad(JSON.stringify([{ id: 'a b', model: 'http://x' }]));
  });
});
