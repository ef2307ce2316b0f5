/**
 * The openai+ engine against real HTTP servers on loopback (test/fixtures/completions-server.ts)
 * whose log-probabilities come from node-llama-cpp on a real GGUF: ../shared/models/stories260K.gguf
 * when present, else the generated tiny model. The expected numbers are computed here, directly with
 * node-llama-cpp on the same prompts, never taken from the server. One thread everywhere: ggml's
 * threads spin-wait on this shared 2-core machine.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Llama, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import {
  type CompletionsServer,
  type CompletionsServerOptions,
  startCompletionsServer,
} from '../../../test/fixtures/completions-server.ts';
import { writeTinyGguf } from '../../../test/fixtures/tiny-gguf.ts';
import { isDomainError } from '../../lib/errors.ts';
import type { DecisionEngine } from '../engine.ts';
import { loadCpuLlama } from '../gguf/llama.ts';
import { renderQuestionPrompt, renderStatePrompt } from '../gguf/prompt.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import {
  createOpenAiCompletionsEngine,
  DEFAULT_MODEL_LEN,
  LABEL_MARGIN,
  OPENAI_ENGINE_ID,
  type OpenAiCompletionsEngineOptions,
  TOP_LOGPROBS,
  topLogprobScores,
} from './openai-completions.ts';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const sharedModel = resolve(repoRoot, '../shared/models/stories260K.gguf');
const WINDOW = 1024;

const noul = (instructions: string, describe = false): DecisionQuestion => ({
  type: 'noul',
  instructions,
  options: [
    { label: 'false', description: describe ? 'it is not' : null },
    { label: 'true', description: describe ? 'it is' : null },
  ],
});
const choice = (labels: string[], instructions = 'Which one fits?'): DecisionQuestion => ({
  type: 'choice',
  instructions,
  options: labels.map((label, i) => ({ label, description: i === 0 ? 'the first option' : null })),
});
const score = (levels: number): DecisionQuestion => ({
  type: 'score',
  instructions: 'How urgent is it?',
  options: Array.from({ length: levels }, (_, i) => ({ label: String(i), description: i === 0 ? 'not at all' : null })),
});
const request = (text: string, questions: DecisionQuestion[]): DecisionRequest => ({
  state: { text, json: undefined },
  questions,
});

const STATE = 'The little dog found a red ball in the park and wanted to play with it all day.';
const MIXED = request(STATE, [
  noul('Is the dog happy?'),
  noul('Is there a ball?', true),
  choice(['dog', 'cat', 'bird']),
  score(5),
]);
const MANY = choice(Array.from({ length: 27 }, (_, i) => `thing ${i}`));

/** The labels the prompt shows, written out here rather than taken from the engine. */
function expectedLabels(q: DecisionQuestion): string[] {
  if (q.type === 'noul') return ['No', 'Yes'];
  if (q.type === 'score') return q.options.map((_, i) => String(i));
  const letters = (i: number) => String.fromCharCode(65 + i);
  return q.options.length <= 26
    ? q.options.map((_, i) => letters(i))
    : q.options.map((_, i) => letters(Math.floor(i / 26)) + letters(i % 26));
}

const signal = () => new AbortController().signal;

let tmp = '';
let modelPath = '';
let llama: Llama;
let direct: LlamaModel;
let sequence: LlamaContextSequence;
const servers: CompletionsServer[] = [];
const engines: DecisionEngine[] = [];

async function serve(options: Omit<CompletionsServerOptions, 'modelPath' | 'llama'> = {}): Promise<CompletionsServer> {
  const server = await startCompletionsServer({ modelPath, llama, contextSize: WINDOW, ...options });
  servers.push(server);
  return server;
}

function engineFor(server: CompletionsServer, extra: Partial<OpenAiCompletionsEngineOptions> = {}): DecisionEngine {
  const engine = createOpenAiCompletionsEngine({ baseUrl: server.url, apiKey: undefined, ...extra });
  engines.push(engine);
  return engine;
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'brier-openai-engine-'));
  modelPath = existsSync(sharedModel) ? sharedModel : await writeTinyGguf(join(tmp, 'tiny.gguf'));
  llama = await loadCpuLlama(1);
  direct = await llama.loadModel({ modelPath });
  const context = await direct.createContext({ contextSize: WINDOW, threads: 1, sequences: 1, flashAttention: false });
  sequence = context.getSequence();
});

after(async () => {
  await Promise.all(engines.map((e) => e.close()));
  for (const server of servers) await server.close();
  await direct.dispose();
  await llama.dispose();
  await rm(tmp, { recursive: true, force: true });
});

function withBos(text: string): Token[] {
  const tokens = direct.tokenize(text, false);
  const bos = direct.tokens.bos;
  return direct.tokens.shouldPrependBosToken && bos !== null ? [bos, ...tokens] : tokens;
}

function logSoftmax(logits: Map<Token, number>): Map<Token, number> {
  const max = Math.max(...logits.values());
  const norm = max + Math.log([...logits.values()].reduce((s, v) => s + Math.exp(v - max), 0));
  return new Map([...logits].map(([t, v]) => [t, v - norm]));
}

/** log P(" <label>" | prompt) with node-llama-cpp, and the label's token count. */
async function labelLogprob(prompt: string, label: string): Promise<{ logprob: number; tokens: number }> {
  const head = withBos(prompt);
  const full = withBos(`${prompt} ${label}`);
  assert.deepEqual(full.slice(0, head.length), head, `"${label}" must not merge into the prompt's last token`);
  await sequence.clearHistory();
  const output = await sequence.controlledEvaluate(
    full.map((t, i) => (i >= head.length - 1 && i < full.length - 1 ? [t, { generateNext: { logits: true } }] : t)),
  );
  let logprob = 0;
  for (let i = head.length; i < full.length; i++) {
    const logits = output[i - 1]?.next.logits;
    assert.ok(logits);
    logprob += logSoftmax(logits).get(full[i] as Token) ?? Number.NaN;
  }
  return { logprob, tokens: full.length - head.length };
}

const questionPrompt = (state: string, q: DecisionQuestion) =>
  renderStatePrompt({ text: state, json: undefined }) + renderQuestionPrompt(q, expectedLabels(q));

function softmax(scores: number[], temperature = 1): number[] {
  const scaled = scores.map((s) => s / temperature);
  const max = Math.max(...scaled);
  const exp = scaled.map((s) => Math.exp(s - max));
  const total = exp.reduce((a, b) => a + b, 0);
  return exp.map((e) => e / total);
}

/** The exact answer: softmax of the summed label log-probabilities, per question. */
async function exactAnswer(r: DecisionRequest, temperature = 1): Promise<{ p: number[][]; longest: number }> {
  const p: number[][] = [];
  let longest = 0;
  for (const q of r.questions) {
    const scores: number[] = [];
    for (const label of expectedLabels(q)) {
      const { logprob, tokens } = await labelLogprob(questionPrompt(r.state.text, q), label);
      scores.push(logprob);
      longest = Math.max(longest, tokens);
    }
    p.push(softmax(scores, temperature));
  }
  return { p, longest };
}

/** The documented echo-less approximation, from the 20 most likely next tokens computed here. */
async function topLogprobAnswer(r: DecisionRequest): Promise<number[][]> {
  const p: number[][] = [];
  for (const q of r.questions) {
    const tokens = withBos(questionPrompt(r.state.text, q));
    await sequence.clearHistory();
    const last = tokens.length - 1;
    const output = await sequence.controlledEvaluate(
      tokens.map((t, i) => (i === last ? [t, { generateNext: { logits: true } }] : t)),
    );
    const logits = output[last]?.next.logits;
    assert.ok(logits);
    const top = [...logSoftmax(logits)].sort((a, b) => b[1] - a[1]).slice(0, TOP_LOGPROBS);
    const named = top.map(([t, lp]) => ({ text: direct.detokenize([t], false, tokens.slice(-8)).trimStart(), lp }));
    const floor = Math.min(...named.map((n) => n.lp)) - Math.LN2;
    const scores = expectedLabels(q).map((label) => {
      const hits = named.filter((n) => n.text === label).map((n) => n.lp);
      return hits.length === 0 ? floor : Math.log(hits.reduce((s, lp) => s + Math.exp(lp), 0));
    });
    p.push(softmax(scores));
  }
  return p;
}

function assertClose(got: number[][], want: number[][], what: string, tolerance = 1e-6): void {
  assert.equal(got.length, want.length, `${what}: question count`);
  got.forEach((p, i) => {
    assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9, `${what} q${i}: sums to 1`);
    assert.equal(p.length, want[i]?.length, `${what} q${i}: option count`);
    p.forEach((x, j) => {
      const y = want[i]?.[j] ?? Number.NaN;
      assert.ok(Math.abs(x - y) <= tolerance, `${what} q${i} option ${j}: ${x} vs ${y}`);
    });
  });
}

describe('openai+ engine on a vLLM-shaped server (echo)', () => {
  let server: CompletionsServer;
  let engine: DecisionEngine;
  before(async () => {
    server = await serve({ flavour: 'vllm' });
    engine = engineFor(server);
  });

  test('loads the listed model, takes its max_model_len as the window and picks exact echo scoring', async (t) => {
    t.diagnostic(`model file: ${modelPath}`);
    assert.equal(engine.ready(), false);
    await Promise.all([engine.load(), engine.load()]);
    assert.equal(engine.ready(), true);
    assert.equal(engine.info.id, OPENAI_ENGINE_ID);
    assert.deepEqual(engine.limits, { contextTokens: WINDOW - LABEL_MARGIN, inputTokens: WINDOW - LABEL_MARGIN });
    assert.match(engine.info.description, /fixture\/tiny-lm/);
    assert.match(engine.info.description, /Scored exactly/);
    const probe = server.requests.at(-1);
    assert.equal(probe?.echo, true);
    assert.equal(probe?.max_tokens, 0);
  });

  test('answers every type with the softmax of the summed label log-probabilities (within 1e-6)', async () => {
    server.requests.length = 0;
    const got = await engine.answer(MIXED, signal());
    assertClose(got.probabilities, (await exactAnswer(MIXED)).p, 'mixed');
    // One request per question: every option's prompt in one array, echoed at temperature 0.
    assert.equal(server.requests.length, MIXED.questions.length);
    server.requests.forEach((body, i) => {
      assert.equal(body.model, server.modelId);
      assert.equal((body.prompt as string[]).length, MIXED.questions[i]?.options.length);
      assert.deepEqual([body.echo, body.max_tokens, body.logprobs, body.temperature], [true, 0, 1, 0]);
    });
    const counts = await engine.countTokens(MIXED);
    assert.equal(got.inputTokens, counts.state + counts.questions.reduce((a, b) => a + b, 0));
    assert.ok(got.outputTokens >= MIXED.questions.reduce((n, q) => n + q.options.length, 0));
  });

  test('scores multi-token labels exactly: a 27-option choice with two-letter labels', async () => {
    const many = request(STATE, [MANY]);
    const want = await exactAnswer(many);
    assert.ok(want.longest > 1, 'some label is more than one token');
    const got = await engine.answer(many, signal());
    assertClose(got.probabilities, want.p, '27 options');
  });

  test('choice answers follow their options: a reordered choice is scored on its own listing', async () => {
    const forward = request(STATE, [choice(['dog', 'cat', 'bird'])]);
    const backward = request(STATE, [choice(['bird', 'cat', 'dog'])]);
    const [f, b] = await Promise.all([engine.answer(forward, signal()), engine.answer(backward, signal())]);
    assertClose(f.probabilities, (await exactAnswer(forward)).p, 'forward');
    assertClose(b.probabilities, (await exactAnswer(backward)).p, 'backward');
  });

  test('BRIER_MODEL_TEMPERATURE divides the log-probabilities: temperature 2 gives softmax(log p / 2)', async () => {
    const warm = engineFor(server, { temperature: 2 });
    await warm.load();
    const levels = request(STATE, [score(5)]);
    const got = await warm.answer(levels, signal());
    assertClose(got.probabilities, (await exactAnswer(levels, 2)).p, 'temperature 2');
  });

  test("the server's 400s pass through as BAD_REQUEST, 503s become OVERLOADED with its retry-after", async () => {
    const long = request('word '.repeat(WINDOW), [noul('Is it long?')]);
    await assert.rejects(engine.answer(long, signal()), (e: unknown) => {
      assert.ok(isDomainError(e) && e.code === 'BAD_REQUEST', String(e));
      assert.match(e.message, /upstream refused the request: This model's maximum context length is 1024 tokens/);
      return true;
    });
    server.failNext(503, { retryAfter: 7 });
    await assert.rejects(engine.answer(MIXED, signal()), (e: unknown) => {
      assert.ok(isDomainError(e) && e.code === 'OVERLOADED', String(e));
      assert.equal(e.retryAfter, 7);
      return true;
    });
    assertClose((await engine.answer(MIXED, signal())).probabilities, (await exactAnswer(MIXED)).p, 'after errors');
  });

  test("rejects with the signal's reason when aborted before or during a request", async () => {
    const early = new AbortController();
    const reason = new Error('client went away');
    early.abort(reason);
    await assert.rejects(engine.answer(MIXED, early.signal), (e) => e === reason);

    server.setDelay(5000);
    try {
      const running = new AbortController();
      const stop = new Error('stop running');
      const started = performance.now();
      const pending = engine.answer(MIXED, running.signal);
      setTimeout(() => running.abort(stop), 50);
      await assert.rejects(pending, (e) => e === stop);
      assert.ok(performance.now() - started < 2000, 'the abort did not wait for the server');
    } finally {
      server.setDelay(0);
    }
  });
});

describe('openai+ engine: the same exact numbers whatever the server does with offsets and order', () => {
  const cases: { name: string; options: Omit<CompletionsServerOptions, 'modelPath' | 'llama'>; maxTokens: number }[] = [
    { name: 'SGLang (text_offset -1)', options: { flavour: 'sglang' }, maxTokens: 0 },
    {
      name: 'exact offsets, choices answered last first',
      options: { textOffsets: 'exact', reverseChoices: true },
      maxTokens: 0,
    },
    { name: 'a server that refuses max_tokens 0', options: { refuseZeroMaxTokens: true }, maxTokens: 1 },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const server = await serve(c.options);
      const engine = engineFor(server);
      await engine.load();
      assert.match(engine.info.description, /Scored exactly/);
      server.requests.length = 0;
      const r = MIXED;
      assertClose((await engine.answer(r, signal())).probabilities, (await exactAnswer(r)).p, c.name);
      assert.ok(server.requests.every((body) => body.max_tokens === c.maxTokens));
    });
  }
});

describe('openai+ engine on an echo-less server (llama.cpp flavour): the top-logprobs approximation', () => {
  for (const status of [500, 400]) {
    test(`echo refused with ${status}: falls back, says so, and matches the documented approximation`, async () => {
      const server = await serve({ flavour: 'llama.cpp', echoRefusalStatus: status });
      const engine = engineFor(server);
      await engine.load();
      assert.match(engine.info.description, /Scored approximately/);
      // No max_model_len in llama.cpp's /v1/models: the documented default window.
      assert.deepEqual(engine.limits, {
        contextTokens: DEFAULT_MODEL_LEN - LABEL_MARGIN,
        inputTokens: DEFAULT_MODEL_LEN - LABEL_MARGIN,
      });
      server.requests.length = 0;
      const got = await engine.answer(MIXED, signal());
      assertClose(got.probabilities, await topLogprobAnswer(MIXED), 'top-logprobs');
      assert.equal(server.requests.length, MIXED.questions.length);
      for (const body of server.requests) {
        assert.equal(typeof body.prompt, 'string');
        assert.deepEqual([body.echo, body.max_tokens, body.logprobs], [undefined, 1, TOP_LOGPROBS]);
      }
    });
  }

  test('labels outside the top tokens get the smallest log-probability seen minus ln 2', () => {
    const scores = topLogprobScores(
      [
        { token: ' A', logprob: -0.5 },
        { token: 'A', logprob: -2 },
        { token: ' the', logprob: -3 },
      ],
      ['A', 'B'],
    );
    assert.ok(Math.abs((scores[0] ?? 0) - Math.log(Math.exp(-0.5) + Math.exp(-2))) < 1e-12);
    assert.ok(Math.abs((scores[1] ?? 0) - (-3 - Math.LN2)) < 1e-12);
  });
});

describe('openai+ engine load failures', () => {
  test('a down server fails load naming the URL', async () => {
    const server = await serve();
    const url = server.url;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const engine = engineFor(server);
    await assert.rejects(engine.load(), (e: Error) => {
      assert.match(e.message, new RegExp(`upstream ${url}/v1/models is unreachable`));
      return true;
    });
    assert.equal(engine.ready(), false);
  });

  test('a bad key fails with the status; an unknown BRIER_UPSTREAM_MODEL names what is served', async () => {
    const server = await serve({ apiKey: 'sk-right' });
    await assert.rejects(engineFor(server, { apiKey: 'sk-wrong' }).load(), /\/v1\/models answered 401/);
    await assert.rejects(
      engineFor(server, { apiKey: 'sk-right', model: 'nope' }).load(),
      /does not list the model "nope" \(it lists: fixture\/tiny-lm\)/,
    );
    const named = engineFor(server, { apiKey: 'sk-right', model: 'fixture/tiny-lm' });
    await named.load();
    assert.equal(named.ready(), true);
  });
});
