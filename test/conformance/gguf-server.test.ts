import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { choice, noul, score, TypeSafeClient } from '@typesafe-ai/sdk';
import { writeTinyGguf } from '../fixtures/tiny-gguf.ts';
import { ROOT, type RunningServer, startServer, waitHealthy } from '../server.ts';

const SHARED_MODEL = path.join(ROOT, '..', 'shared', 'models', 'stories260K.gguf');

describe('the real server on the GGUF engine (BRIER_MODEL=<file>.gguf)', () => {
  let server: RunningServer;
  let client: TypeSafeClient;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-gguf-'));
    let model = SHARED_MODEL;
    if (!fs.existsSync(model)) {
      console.log('# ../shared/models/stories260K.gguf absent: using a generated tiny GGUF');
      model = await writeTinyGguf(path.join(dir, 'tiny.gguf'));
    }
    server = await startServer({ BRIER_MODEL: model, BRIER_THREADS: '1', BRIER_CONTEXT_SIZE: '1024' });
    await waitHealthy(server.url);
    client = new TypeSafeClient({
      apiKey: await server.createKey('gguf@example.com'),
      baseURL: server.url,
      retry: { maxRetries: 0 },
    });
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers all three types through the SDK, deterministically, with token usage', async () => {
    const request = {
      state: 'Once upon a time there was a little dog who loved to play in the park.',
      questions: {
        happy: noul('Is the dog happy?'),
        animal: choice('Which animal is in the story?', { dog: null, cat: null, bird: 'a small flying animal' }),
        mood: score('How happy is the story?', ['sad', 'neutral', 'happy']),
      },
    };
    const a = await client.systemOne(request);
    const b = await client.systemOne(request);
    assert.deepEqual(a.answers, b.answers);
    assert.match(a.model, /-3\.\d+\.\d+$/);
    assert.ok(a.answers.happy.noul >= 0 && a.answers.happy.noul <= 1);
    assert.ok(a.usage.input_tokens > 0 && a.usage.output_tokens > 0);
    // The SDK types the card as {name, description, release_date}; Brier adds id and limits.
    const [card] = (await client.models.list()) as unknown as Array<{ context_limit: number }>;
    assert.ok((card?.context_limit ?? 0) > 0 && (card?.context_limit ?? 0) <= 1024);
  });
});
