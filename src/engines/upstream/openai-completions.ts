/**
 * The OpenAI-compatible completions engine: answers from a model served elsewhere behind
 * `POST /v1/completions` with log-probabilities (vLLM, SGLang, llama.cpp server), reading the
 * probability of each option's label after the GGUF engine's plain-text prompt (prompt.ts: the state
 * prompt, then the question prompt ending in "Answer:"). No text is generated.
 *
 * Labels: the GGUF engine's rules on text (labels.ts): "No"/"Yes" for noul, the level numbers for
 * score, A..Z for choices (AA..ZZ, all of one length, above 26 options), so no label is a prefix of
 * another.
 *
 * Two ways of scoring. load() probes the server once, on a short real prompt, in this order: echo
 * with `max_tokens: 0`, echo with `max_tokens: 1`, top log-probs; it keeps the first that gives
 * scores and says which in the model description (a busy 429/503 answer fails the load instead):
 *
 * 1. Echo, exact (vLLM, SGLang). Per question, one request whose `prompt` is an array with one
 *    string per option, prompt + " " + label, and `echo: true, logprobs: 1, max_tokens: 0,
 *    temperature: 0` (`max_tokens: 1`, the generated token dropped, for a server that refuses 0).
 *    Each choice (matched to its option by `choices[i].index`) lists the prompt's tokens and their
 *    `token_logprobs`. The option prompts share all their text up to the label, so their token lists
 *    agree up to where the labels start; an option's score is the sum of its `token_logprobs` from
 *    the first position where the lists differ. That is log P(label | prompt) when the lists part at
 *    the label (the usual case); otherwise it differs from it by the log-probability of tokens every
 *    option shares, which is the same for all options and cancels in the softmax. Multi-token labels
 *    are exact. `text_offset` is not used to find the label: vLLM computes it by adding up the
 *    lengths of tokens decoded one by one (a decoded BOS such as "<s>" shifts every offset, and
 *    SentencePiece tokens decoded alone lose their leading space) and SGLang sends -1 for every
 *    token, so offsets miss the label on common models where token lists do not.
 * 2. Top log-probs, approximate (llama.cpp server, which refuses echo). Per question, one request on
 *    the prompt alone with `max_tokens: 1, logprobs: 20` (and `n_probs: 20`, llama.cpp's own name),
 *    reading the 20 most likely first tokens. A label's score is the log-probability of a first token
 *    that is the label once leading spaces are trimmed (" A" and "A" both count, summed). A label not
 *    among those 20 tokens gets the smallest log-probability seen minus ln 2, a guess below every
 *    listed token. Only single-token labels can match: two-letter labels (choices of more than 26
 *    options) and labels a small vocabulary splits get that floor. Both the llama.cpp shape
 *    (`logprobs.content[0].top_logprobs`) and the OpenAI shape (`logprobs.top_logprobs[0]`) are read.
 *
 * Scores are divided by the temperature (BRIER_MODEL_TEMPERATURE) and softmaxed across options.
 *
 * Cost: the echo path evaluates each option's whole prompt. vLLM documents that it does not read
 * its prefix cache for requests that ask for prompt log-probabilities, so there the state is read
 * once per option; the top-logprobs path sends one prompt per question and does use it.
 *
 * Limits: the model's `max_model_len` from GET /v1/models when the server reports it (vLLM does),
 * else DEFAULT_MODEL_LEN; each question is its own prompt, and like the GGUF engine the request total
 * is held to the same bound. Token counts are estimated locally (system-one.ts's ~4 characters a
 * token); the server enforces its exact limits and its 400s pass through as 400s.
 */
import { isDomainError } from '../../lib/errors.ts';
import type { DecisionEngine, EngineAnswer, EngineLimits, ModelInfo, TokenCounts } from '../engine.ts';
import { logSumExp, planLabels, softmax } from '../gguf/labels.ts';
import { ANSWER_CUE, naturalLabels, renderQuestionPrompt, renderStatePrompt } from '../gguf/prompt.ts';
import { createLoadOnce } from '../load-once.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { estimateTokens, upstreamFailure } from './system-one.ts';

export const OPENAI_ENGINE_ID = 'brier-openai-3.0.0';
export const OPENAI_ENGINE_RELEASE_DATE = '2026-11-22';
/** The model window assumed when GET /v1/models does not report `max_model_len` (llama.cpp server). */
export const DEFAULT_MODEL_LEN = 4096;
/** Tokens of the window kept free of request text: the label and the one generated token. */
export const LABEL_MARGIN = 16;
/** First tokens read by the top-logprobs path (vLLM's default cap on `logprobs`). */
export const TOP_LOGPROBS = 20;
/** Completion requests one Brier request has in flight at once (one per question). */
const QUESTIONS_IN_FLIGHT = 8;

export interface OpenAiCompletionsEngineOptions {
  /** Base URL of the server, without /v1 (e.g. http://10.0.0.5:8000). */
  baseUrl: string;
  /** Bearer key (BRIER_UPSTREAM_API_KEY); none when undefined. */
  apiKey: string | undefined;
  /** The served model name (BRIER_UPSTREAM_MODEL); default the first id of GET /v1/models. */
  model?: string;
  /** Divides the label log-probabilities before the softmax. Default 1. */
  temperature?: number;
  /** Brier requests answered at once (the server batches their completions). Default 4. */
  parallelism?: number;
  fetch?: typeof fetch;
}

/** How scores are read, decided by load()'s probe. */
export type ScoringMode = { kind: 'echo'; maxTokens: 0 | 1 } | { kind: 'top-logprobs' };

interface Loaded {
  model: string;
  mode: ScoringMode;
}

/** One choice's tokens and their log-probabilities (null where the server gives none). */
interface EchoedTokens {
  tokens: string[];
  logprobs: (number | null)[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The option labels shown in the prompt, one per option (labels.ts's rules, applied to text). */
export function optionLabels(question: DecisionQuestion): string[] {
  return planLabels(question.options.length, naturalLabels(question), (label) => [...label]).labels;
}

/** Index of the first position where the token lists differ (their common prefix length). */
export function divergence(lists: readonly (readonly string[])[]): number {
  const first = lists[0] ?? [];
  let at = 0;
  while (at < first.length && lists.every((list) => at < list.length && list[at] === first[at])) at++;
  return at;
}

/**
 * Each option's score from its echoed prompt: the sum of the log-probabilities after the options'
 * common token prefix, and how many tokens that is.
 */
export function echoScores(choices: readonly EchoedTokens[]): { scores: number[]; tokens: number } {
  const start = divergence(choices.map((c) => c.tokens));
  let tokens = 0;
  const scores = choices.map((choice, option) => {
    if (choice.tokens.length <= start) {
      throw new Error(`upstream echoed no label tokens for option ${option}: cannot score it`);
    }
    let sum = 0;
    for (let i = start; i < choice.logprobs.length; i++) {
      const logprob = choice.logprobs[i];
      if (typeof logprob !== 'number' || !Number.isFinite(logprob)) {
        throw new Error(`upstream gave no log-probability for a label token of option ${option}`);
      }
      sum += logprob;
      tokens++;
    }
    return sum;
  });
  return { scores, tokens };
}

/**
 * The top-logprobs approximation: per label, the log-probability of first tokens equal to it once
 * leading whitespace is trimmed (log-sum-exp when several match); labels none matches get the
 * smallest log-probability among `candidates` minus ln 2.
 */
export function topLogprobScores(
  candidates: readonly { token: string; logprob: number }[],
  labels: readonly string[],
): number[] {
  const seen = new Map<string, number>();
  for (const c of candidates) if (Number.isFinite(c.logprob)) seen.set(c.token, c.logprob);
  if (seen.size === 0) throw new Error('upstream returned no top log-probabilities');
  const floor = Math.min(...seen.values()) - Math.LN2;
  return labels.map((label) => {
    const matching = [...seen].filter(([token]) => token.trimStart() === label).map(([, logprob]) => logprob);
    return matching.length > 0 ? logSumExp(matching) : floor;
  });
}

function asStrings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((x) => typeof x === 'string')) {
    throw new Error(`upstream completion: ${what} is not a list of strings`);
  }
  return value;
}

function asLogprobs(value: unknown, what: string): (number | null)[] {
  if (!Array.isArray(value) || !value.every((x) => x === null || typeof x === 'number')) {
    throw new Error(`upstream completion: ${what} is not a list of numbers`);
  }
  return value;
}

/** The completion's choices placed by their `index`, each exactly once, `count` in all. */
function choicesByIndex(body: unknown, count: number): Record<string, unknown>[] {
  const choices = isRecord(body) ? body.choices : undefined;
  if (!Array.isArray(choices)) throw new Error('upstream completion has no choices');
  const placed: (Record<string, unknown> | undefined)[] = new Array(count).fill(undefined);
  for (const choice of choices) {
    const index = isRecord(choice) ? choice.index : undefined;
    if (!isRecord(choice) || typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) {
      throw new Error(`upstream completion has a choice with index ${String(index)}; expected 0..${count - 1}`);
    }
    if (placed[index] !== undefined) throw new Error(`upstream completion has two choices with index ${index}`);
    placed[index] = choice;
  }
  const missing = placed.indexOf(undefined);
  if (missing >= 0) throw new Error(`upstream completion has no choice with index ${missing}`);
  return placed as Record<string, unknown>[];
}

function echoedTokens(choice: Record<string, unknown>, dropLast: boolean): EchoedTokens {
  const logprobs = choice.logprobs;
  if (!isRecord(logprobs)) throw new Error('upstream completion has no logprobs: does the server support them?');
  const tokens = asStrings(logprobs.tokens, 'logprobs.tokens');
  const values = asLogprobs(logprobs.token_logprobs, 'logprobs.token_logprobs');
  if (tokens.length !== values.length)
    throw new Error('upstream completion: tokens and token_logprobs differ in length');
  return dropLast ? { tokens: tokens.slice(0, -1), logprobs: values.slice(0, -1) } : { tokens, logprobs: values };
}

/** The first generated token's top candidates, from the OpenAI or the llama.cpp server shape. */
function firstTokenCandidates(choice: Record<string, unknown>): { token: string; logprob: number }[] {
  const logprobs = choice.logprobs;
  if (!isRecord(logprobs)) throw new Error('upstream completion has no logprobs: does the server support them?');
  const out: { token: string; logprob: number }[] = [];
  const push = (token: unknown, logprob: unknown) => {
    if (typeof token === 'string' && typeof logprob === 'number') out.push({ token, logprob });
  };
  if (Array.isArray(logprobs.content)) {
    // llama.cpp server: {content: [{token, logprob, top_logprobs: [{token, logprob}]}]}
    const first = logprobs.content[0];
    if (isRecord(first)) {
      if (Array.isArray(first.top_logprobs)) {
        for (const c of first.top_logprobs) if (isRecord(c)) push(c.token, c.logprob);
      }
      push(first.token, first.logprob);
    }
  } else {
    // OpenAI / vLLM / SGLang: {tokens, token_logprobs, top_logprobs: [{token: logprob}]}
    const top = Array.isArray(logprobs.top_logprobs) ? logprobs.top_logprobs[0] : undefined;
    if (isRecord(top)) for (const [token, logprob] of Object.entries(top)) push(token, logprob);
    if (Array.isArray(logprobs.tokens) && Array.isArray(logprobs.token_logprobs)) {
      push(logprobs.tokens[0], logprobs.token_logprobs[0]);
    }
  }
  return out;
}

function describeMode(mode: ScoringMode): string {
  return mode.kind === 'echo'
    ? 'Scored exactly: the summed log-probabilities of each option label read back with echo.'
    : `Scored approximately: the server does not echo prompt log-probabilities, so each option label is read ` +
        `from the ${TOP_LOGPROBS} most likely first tokens (single-token labels; a label outside them gets a floor).`;
}

/** Runs `work` on each item with at most `limit` in flight, results in item order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export function createOpenAiCompletionsEngine(options: OpenAiCompletionsEngineOptions): DecisionEngine {
  const base = options.baseUrl.replace(/\/+$/, '');
  const host = new URL(base).host;
  const doFetch = options.fetch ?? fetch;
  const temperature = options.temperature ?? 1;
  const parallelism = options.parallelism ?? 4;
  if (!(Number.isFinite(temperature) && temperature > 0)) throw new RangeError('temperature must be a positive number');
  if (!Number.isInteger(parallelism) || parallelism < 1) throw new RangeError('parallelism must be a positive integer');
  const headers = {
    'content-type': 'application/json',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };
  const info: ModelInfo = {
    id: OPENAI_ENGINE_ID,
    description: `Answers come from the OpenAI-compatible completions server at ${host}.`,
    releaseDate: OPENAI_ENGINE_RELEASE_DATE,
  };
  let limits: EngineLimits = {
    contextTokens: DEFAULT_MODEL_LEN - LABEL_MARGIN,
    inputTokens: DEFAULT_MODEL_LEN - LABEL_MARGIN,
  };
  const state = createLoadOnce(() => open());

  /** fetch that names the URL when the server cannot be reached, and rejects with the abort reason. */
  async function send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await doFetch(url, init);
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      const detail = error instanceof Error ? error.message : String(error);
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
      throw new Error(`upstream ${url} is unreachable: ${detail}${cause}`, { cause: error });
    }
  }

  async function complete(model: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const res = await send(`${base}/v1/completions`, {
      method: 'POST',
      headers,
      signal,
      body: JSON.stringify({ model, ...body }),
    });
    const text = await res.text();
    if (!res.ok) throw upstreamFailure(res, text);
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`upstream ${base}/v1/completions answered ${res.status} with a body that is not JSON`);
    }
  }

  /** Per-option log-scores (at temperature 1) and label tokens scored, for one question's prompt. */
  async function scoreQuestion(
    m: Loaded,
    prompt: string,
    labels: readonly string[],
    signal: AbortSignal,
  ): Promise<{ scores: number[]; tokens: number }> {
    if (m.mode.kind === 'echo') {
      const body = await complete(
        m.model,
        {
          prompt: labels.map((label) => `${prompt} ${label}`),
          max_tokens: m.mode.maxTokens,
          echo: true,
          logprobs: 1,
          temperature: 0,
        },
        signal,
      );
      const dropLast = m.mode.maxTokens === 1;
      return echoScores(choicesByIndex(body, labels.length).map((choice) => echoedTokens(choice, dropLast)));
    }
    const body = await complete(
      m.model,
      { prompt, max_tokens: 1, logprobs: TOP_LOGPROBS, n_probs: TOP_LOGPROBS, temperature: 0 },
      signal,
    );
    const choice = choicesByIndex(body, 1)[0] as Record<string, unknown>;
    return { scores: topLogprobScores(firstTokenCandidates(choice), labels), tokens: labels.length };
  }

  /** The model to ask for and its window, from GET /v1/models. */
  async function readModels(): Promise<{ model: string; maxModelLen: number | undefined }> {
    const url = `${base}/v1/models`;
    const res = await send(url, { headers });
    const text = await res.text();
    if (!res.ok) throw new Error(`upstream ${url} answered ${res.status}: ${text.slice(0, 200)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`upstream ${url} answered ${res.status} with a body that is not JSON`);
    }
    const data = isRecord(body) && Array.isArray(body.data) ? body.data.filter(isRecord) : [];
    const listed = data.map((m) => m.id).filter((id): id is string => typeof id === 'string');
    const model = options.model ?? listed[0];
    if (model === undefined) throw new Error(`upstream ${url} lists no models`);
    if (!listed.includes(model)) {
      throw new Error(`upstream ${url} does not list the model "${model}" (it lists: ${listed.join(', ') || 'none'})`);
    }
    const len = data.find((m) => m.id === model)?.max_model_len;
    const maxModelLen = typeof len === 'number' && Number.isInteger(len) && len > 2 * LABEL_MARGIN ? len : undefined;
    return { model, maxModelLen };
  }

  /**
   * Tries each scoring mode on a short real prompt; the first that gives scores is kept. A busy
   * server (429/503) fails the load rather than pick a worse mode.
   */
  async function probe(model: string): Promise<ScoringMode> {
    const { state, questions } = prompts({ state: PROBE_STATE, questions: [PROBE_QUESTION] });
    const { labels, suffix } = questions[0] as PreparedQuestion;
    const prompt = state + suffix;
    const failures: string[] = [];
    const modes: ScoringMode[] = [
      { kind: 'echo', maxTokens: 0 },
      { kind: 'echo', maxTokens: 1 },
      { kind: 'top-logprobs' },
    ];
    for (const mode of modes) {
      try {
        const { scores } = await scoreQuestion({ model, mode }, prompt, labels, AbortSignal.timeout(60_000));
        if (scores.every(Number.isFinite)) return mode;
        failures.push(`${modeName(mode)}: scores are not finite`);
      } catch (error) {
        if (isDomainError(error) && error.code === 'OVERLOADED') throw error;
        failures.push(`${modeName(mode)}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    throw new Error(
      `upstream ${base}/v1/completions cannot score options for model "${model}":\n  ${failures.join('\n  ')}`,
    );
  }

  async function open(): Promise<Loaded> {
    const { model, maxModelLen } = await readModels();
    const mode = await probe(model);
    const window = maxModelLen ?? DEFAULT_MODEL_LEN;
    limits = { contextTokens: window - LABEL_MARGIN, inputTokens: window - LABEL_MARGIN };
    info.description =
      `Answers come from ${model} on the OpenAI-compatible completions server at ${host} ` +
      `(${maxModelLen === undefined ? `window not reported: ${DEFAULT_MODEL_LEN} tokens assumed` : `${maxModelLen}-token window`}). ` +
      describeMode(mode);
    return { model, mode };
  }

  function requireLoaded(): Loaded {
    const loaded = state.current();
    if (loaded === null) throw new Error(`engine ${info.id} is not loaded: call load() first`);
    return loaded;
  }

  function counts({ state, questions }: PreparedRequest): TokenCounts {
    return { state: estimateTokens(state), questions: questions.map((q) => estimateTokens(q.suffix)) };
  }

  async function run(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer> {
    const m = requireLoaded();
    const prepared = prompts(request);
    const count = counts(prepared);
    // A failed question stops the others; the caller's abort stops them all.
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let outputTokens = 0;
    try {
      const probabilities = await mapLimited(prepared.questions, QUESTIONS_IN_FLIGHT, async ({ labels, suffix }) => {
        if (labels.length < 2) return labels.map(() => 1);
        stop.signal.throwIfAborted();
        try {
          const { scores, tokens } = await scoreQuestion(m, prepared.state + suffix, labels, stop.signal);
          outputTokens += tokens;
          return softmax(scores.map((s) => s / temperature));
        } catch (error) {
          stop.abort(error);
          throw error;
        }
      });
      return {
        probabilities,
        inputTokens: count.state + count.questions.reduce((a, b) => a + b, 0),
        outputTokens,
      };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    info,
    get limits() {
      return limits;
    },
    parallelism,
    load: state.load,
    ready: () => state.current() !== null,
    async countTokens(request) {
      return counts(prompts(request));
    },
    async answer(request, signal) {
      signal.throwIfAborted();
      return run(request, signal);
    },
    async close() {
      state.reset();
    },
  };
}

/** One question's labels, one per option, and its prompt (which ends with ANSWER_CUE). */
interface PreparedQuestion {
  labels: string[];
  suffix: string;
}

interface PreparedRequest {
  state: string;
  questions: PreparedQuestion[];
}

/**
 * A request's prompts, rendered once for both counting and scoring: a question's labels are scored
 * as the continuation of `state + suffix`, each appended as " <label>".
 */
function prompts(request: DecisionRequest): PreparedRequest {
  return {
    state: renderStatePrompt(request.state),
    questions: request.questions.map((question) => {
      const labels = optionLabels(question);
      const suffix = renderQuestionPrompt(question, labels);
      if (!suffix.endsWith(ANSWER_CUE)) throw new Error(`a question prompt must end with ${ANSWER_CUE}`);
      return { labels, suffix };
    }),
  };
}

const PROBE_STATE = { text: 'A short state to find out how this server scores options.', json: undefined };
const PROBE_QUESTION: DecisionQuestion = {
  type: 'noul',
  instructions: 'Is this a probe?',
  options: [
    { label: 'false', description: null },
    { label: 'true', description: null },
  ],
};

function modeName(mode: ScoringMode): string {
  return mode.kind === 'echo' ? `echo with max_tokens ${mode.maxTokens}` : `top ${TOP_LOGPROBS} logprobs`;
}
