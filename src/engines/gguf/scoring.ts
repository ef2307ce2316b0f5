/**
 * Scoring on a loaded model: tokenizing a state and a question into prompts, evaluating a question on
 * top of a held state prefix, and reading each option label's log-probability from the logits
 * (multi-token labels through a trie, one decode step per inner node).
 */
import type { ControlledEvaluateInputItem, LlamaContextSequence, Token } from 'node-llama-cpp';
import type { EngineMetrics } from '../engine.ts';
import type { DecisionQuestion, DecisionState } from '../request.ts';
import type { PromptFrame } from './frames.ts';
import type { LabelPlan, TrieNode } from './labels.ts';
import { buildTrie, logSumExp, planLabels, startsWith } from './labels.ts';
import { naturalLabels } from './prompt.ts';

export interface QuestionPlan {
  /** The question prompt's tokens, then the labels' shared lead. */
  tokens: Token[];
  trie: TrieNode<Token>[];
  options: number;
  /** Label tokens scored, summed over options. */
  scoredTokens: number;
  /** Longest label (tokens after the lead). */
  depth: number;
  /** Each option's label tokens after the lead, in option order. */
  labels: readonly (readonly Token[])[];
}

const MAX_PLAN_CACHE = 1024;

/**
 * The prompts (framed by `frame`: plain or the model's chat template) and scores of one loaded model;
 * `metrics()` reads the engine's current hook.
 */
export function createScorer(frame: PromptFrame, temperature: number, metrics: () => EngineMetrics | undefined) {
  /** Label plans by question shape (type, option count, natural labels). */
  const plans = new Map<string, LabelPlan<Token>>();

  function stateTokens(state: DecisionState): Token[] {
    return frame.stateTokens(state);
  }

  function labelPlan(question: DecisionQuestion): LabelPlan<Token> {
    const natural = naturalLabels(question);
    const key = `${question.type}\u0000${question.options.length}\u0000${natural?.join('\u0000') ?? ''}`;
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = planLabels<Token>(question.options.length, natural, frame.labelTokens);
      if (plans.size >= MAX_PLAN_CACHE) plans.clear();
      plans.set(key, plan);
    }
    return plan;
  }

  function questionPlan(question: DecisionQuestion): QuestionPlan {
    const labels = labelPlan(question);
    const text = frame.questionTokens(question, labels.labels);
    return {
      tokens: [...text, ...labels.lead],
      trie: buildTrie(labels.sequences),
      options: labels.sequences.length,
      scoredTokens: labels.sequences.reduce((sum, s) => sum + s.length, 0),
      depth: Math.max(...labels.sequences.map((s) => s.length)),
      labels: labels.sequences,
    };
  }

  /**
   * Evaluates `tokens` on the sequence as it stands and returns each option's log-score (label
   * log-probability at the temperature, up to a constant shared by all options).
   */
  async function scoreOptions(
    sequence: LlamaContextSequence,
    tokens: Token[],
    plan: QuestionPlan,
    signal: AbortSignal,
  ): Promise<number[]> {
    const scores = new Array<number>(plan.options).fill(Number.NEGATIVE_INFINITY);
    const last = tokens.length - 1;
    const lastToken = tokens[last];
    if (lastToken === undefined) throw new Error('empty question prompt');
    const input: ControlledEvaluateInputItem[] = tokens.slice(0, last);
    input.push([lastToken, { generateNext: { logits: { filter: { tokens: plan.trie.map((n) => n.token) } } } }]);
    const output = await sequence.controlledEvaluate(input);
    const rootLogits = output[last]?.next.logits;
    if (rootLogits === undefined) throw new Error('the model returned no logits');

    // Depth-first over the label trie; at the root the normalizer is shared by all options (0 here).
    async function visit(nodes: TrieNode<Token>[], logits: Map<Token, number>, acc: number, logZ: number) {
      for (const node of nodes) {
        const logit = logits.get(node.token);
        if (logit === undefined) throw new Error(`no logit for label token ${node.token}`);
        const score = acc + logit / temperature - logZ;
        if (node.option !== null) {
          scores[node.option] = score;
          continue;
        }
        signal.throwIfAborted();
        const start = sequence.nextTokenIndex;
        const [step] = await sequence.controlledEvaluate([[node.token, { generateNext: { logits: true } }]]);
        const full = step?.next.logits;
        if (full === undefined) throw new Error('the model returned no logits');
        const next = logSumExp(Array.from(full.values(), (v) => v / temperature));
        await visit(node.children, full, score, next);
        await sequence.eraseContextTokenRanges([{ start, end: sequence.nextTokenIndex }]);
      }
    }
    await visit(plan.trie, rootLogits, 0, 0);
    return scores;
  }

  async function rewind(sequence: LlamaContextSequence, length: number): Promise<void> {
    if (sequence.nextTokenIndex > length) {
      await sequence.eraseContextTokenRanges([{ start: length, end: sequence.nextTokenIndex }]);
    }
  }

  /**
   * Leaves exactly `prefix` in the sequence, evaluating it unless it is already cached (compared
   * token by token, whatever the slot's key says). Returns whether it was cached.
   */
  async function holdPrefix(sequence: LlamaContextSequence, prefix: Token[]): Promise<boolean> {
    const cached = sequence.contextTokens;
    if (startsWith(cached, prefix)) {
      await rewind(sequence, prefix.length);
      return true;
    }
    await sequence.clearHistory();
    const started = performance.now();
    await sequence.evaluateWithoutGeneratingNewTokens(prefix);
    metrics()?.tokens('gguf', 'prefill', prefix.length, (performance.now() - started) / 1000);
    if (sequence.needsCheckpoints) await sequence.takeCheckpoint();
    return false;
  }

  return { stateTokens, questionPlan, scoreOptions, holdPrefix, rewind };
}

export type Scorer = ReturnType<typeof createScorer>;
