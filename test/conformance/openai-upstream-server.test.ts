import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { choice, noul, score, TypeSafeClient } from '@typesafe-ai/sdk';
import { applyModelCalibration, UNCALIBRATED_SHRINK } from '../../src/engines/calibrated.ts';
import { createOpenAiCompletionsEngine, LABEL_MARGIN } from '../../src/engines/upstream/openai-completions.ts';
import { startCompletionsServer } from '../fixtures/completions-server.ts';
import { writeTinyGguf } from '../fixtures/tiny-gguf.ts';
import { ROOT, startServer, waitHealthy } from '../server.ts';

const SHARED_MODEL = path.join(ROOT, '..', 'shared', 'models', 'stories260K.gguf');

test('BRIER_MODEL=openai+http://... answers through the SDK from an OpenAI-compatible completions server', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-openai-'));
  let modelPath = SHARED_MODEL;
  if (!fs.existsSync(modelPath)) {
    console.log('# ../shared/models/stories260K.gguf absent: using a generated tiny GGUF');
    modelPath = await writeTinyGguf(path.join(dir, 'tiny.gguf'));
  }
  const upstream = await startCompletionsServer({ modelPath, flavour: 'vllm', apiKey: 'sk-upstream' });
  const server = await startServer({
    BRIER_MODEL: `openai+${upstream.url}`,
    BRIER_UPSTREAM_API_KEY: 'sk-upstream',
    BRIER_UPSTREAM_MODEL: upstream.modelId,
  });
  try {
    await waitHealthy(server.url);
    const client = new TypeSafeClient({
      apiKey: await server.createKey('openai@example.com'),
      baseURL: server.url,
      retry: { maxRetries: 0 },
    });
    const state = 'Once upon a time there was a little dog who loved to play in the park.';
    const res = await client.systemOne({
      state,
      questions: {
        happy: noul('Is the dog happy?'),
        animal: choice('Which animal is in the story?', { dog: null, cat: null, bird: 'a small flying animal' }),
        mood: score('How happy is the story?', ['sad', 'neutral', 'happy']),
      },
    });
    assert.equal(res.model, 'brier-openai-3.0.0');
    assert.ok(res.usage.input_tokens > 0 && res.usage.output_tokens > 0);

    // The same questions asked of the engine directly: the server's answers are those, rounded.
    const engine = createOpenAiCompletionsEngine({ baseUrl: upstream.url, apiKey: 'sk-upstream' });
    await engine.load();
    const direct = await engine.answer(
      {
        state: { text: state, json: undefined },
        questions: [
          { type: 'noul', instructions: 'Is the dog happy?', options: ['false', 'true'].map(option) },
          {
            type: 'choice',
            instructions: 'Which animal is in the story?',
            options: [option('dog'), option('cat'), { label: 'bird', description: 'a small flying animal' }],
          },
          {
            type: 'score',
            instructions: 'How happy is the story?',
            options: ['sad', 'neutral', 'happy'].map((description, i) => ({ label: String(i), description })),
          },
        ],
      },
      new AbortController().signal,
    );
    await engine.close();
    // No calibration was fitted for this model: it is served half and half with the uniform answer.
    const [happy, animal, mood] = direct.probabilities.map((p) => applyModelCalibration(p, UNCALIBRATED_SHRINK));
    assert.ok(Math.abs(res.answers.happy.noul - (happy?.[1] ?? 2)) <= 0.005 + 1e-9);
    (['dog', 'cat', 'bird'] as const).forEach((label, i) => {
      assert.ok(Math.abs(res.answers.animal.probabilities[label] - (animal?.[i] ?? 2)) <= 0.005 + 1e-9, label);
    });
    [0, 1, 2].forEach((i) => {
      const got = (res.answers.mood.probabilities as Record<string, number>)[String(i)] ?? 2;
      assert.ok(Math.abs(got - (mood?.[i] ?? 2)) <= 0.005 + 1e-9, `level ${i}`);
    });

    // The SDK types the card as {name, description, release_date}; Brier adds id and limits.
    const [card] = (await client.models.list()) as unknown as Array<{
      description: string;
      context_limit: number;
      x_calibrated: boolean;
    }>;
    assert.equal(card?.x_calibrated, false);
    assert.match(card?.description ?? '', /fixture\/tiny-lm on the OpenAI-compatible completions server/);
    assert.equal(card?.context_limit, 1024 - LABEL_MARGIN);
  } finally {
    await server.stop();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function option(label: string) {
  return { label, description: null };
}
