/**
 * How the GGUF engine frames its prompts for a model: as plain text (any base or instruct model) or in
 * the model's own chat template (an instruct model reads a user turn and starts its reply with the label).
 *
 * A frame turns a state into the prefix tokens kept in the KV cache, a question into the suffix read on
 * top of it, and a label into the tokens the model would write at the answer position. The chat frame
 * renders one conversation through node-llama-cpp's chat wrapper for the model (the GGUF's template, or
 * the built-in wrapper node-llama-cpp matches to it) with unique markers where the state, the question
 * and the reply go, and splits the rendered text at them: what comes before the state (BOS, a system
 * turn, the user turn's header) and what comes between the question and the reply (the end of the user
 * turn, the assistant's header). Request text is always tokenized as text, never as special tokens: a
 * state that writes `<|im_end|>` cannot close the user turn.
 */
import { randomUUID } from 'node:crypto';
import { type LlamaModel, LlamaText, type LlamaTextValue, resolveChatWrapper, type Token } from 'node-llama-cpp';
import type { DecisionQuestion, DecisionState } from '../request.ts';
import { startsWith } from './labels.ts';
import { ANSWER_CUE, renderQuestionPrompt, renderStatePrompt } from './prompt.ts';

/** `plain`: the prompts of prompt.ts as they are. `chat`: the same words inside the model's chat template. */
export type PromptFormat = 'plain' | 'chat';

export interface PromptFrame {
  /** The chat wrapper's name (chat), or null (plain). */
  template: string | null;
  /** Tokens of the state prefix (BOS included where the model wants one). */
  stateTokens(state: DecisionState): Token[];
  /** Tokens of a question's suffix, ending where the answer's first token goes. */
  questionTokens(question: DecisionQuestion, labels: readonly string[]): Token[];
  /** Tokens of `label` written in answer position, or null when the tokenizer merges it with what precedes. */
  labelTokens(label: string): Token[] | null;
}

/** The plain frame: prompt.ts's text, labels as " <label>" after ANSWER_CUE. */
export function plainFrame(model: LlamaModel): PromptFrame {
  const cueTokens = model.tokenize(ANSWER_CUE, false, 'trimLeadingSpace');
  return {
    template: null,
    stateTokens(state) {
      const text = model.tokenize(renderStatePrompt(state), false);
      const bos = model.tokens.bos;
      return model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...text] : text;
    },
    questionTokens(question, labels) {
      return model.tokenize(renderQuestionPrompt(question, labels), false, 'trimLeadingSpace');
    },
    labelTokens(label) {
      const tokens = model.tokenize(`${ANSWER_CUE} ${label}`, false, 'trimLeadingSpace');
      return startsWith(tokens, cueTokens) ? tokens.slice(cueTokens.length) : null;
    },
  };
}

/** The parts of a rendered conversation around the state, the question and the reply. */
export interface ChatParts {
  /** Everything before the state: BOS, any system turn, the user turn's header. */
  head: LlamaText;
  /** Between the question and the reply: the end of the user turn and the assistant's header. */
  tail: LlamaText;
}

/**
 * Splits one rendered conversation `[user: <state><question>], [model: <reply>]` at its markers.
 * Throws when the template moved, dropped or repeated them (such a template cannot be scored this way).
 */
export function splitChat(render: (user: string, reply: string) => LlamaText): ChatParts {
  const id = randomUUID().replaceAll('-', '');
  const [state, question, reply] = ['S', 'Q', 'R'].map((m) => `\u2063${m}${id}\u2063`) as [string, string, string];
  const text = render(`${state}${question}`, reply);
  const [head, afterState] = splitAt(text.values, state);
  const [between, afterQuestion] = splitAt(afterState, question);
  const [tail] = splitAt(afterQuestion, reply);
  if (between.length > 0) throw new Error('the chat template writes text between two parts of one user message');
  return { head: LlamaText(head), tail: LlamaText(tail) };
}

/** The values before and after the one text value holding `marker` (which must occur exactly once). */
function splitAt(values: readonly LlamaTextValue[], marker: string): [LlamaTextValue[], LlamaTextValue[]] {
  const at = values.flatMap((v, i) => (typeof v === 'string' && v.includes(marker) ? [i] : []));
  const index = at[0];
  const value = index === undefined ? undefined : values[index];
  if (at.length !== 1 || typeof value !== 'string' || value.indexOf(marker) !== value.lastIndexOf(marker)) {
    throw new Error('the chat template does not keep the user message and the reply as written');
  }
  const [before, after] = [value.slice(0, value.indexOf(marker)), value.slice(value.indexOf(marker) + marker.length)];
  return [
    [...values.slice(0, index), ...(before ? [before] : [])],
    [...(after ? [after] : []), ...values.slice((index as number) + 1)],
  ];
}

/**
 * Settings of node-llama-cpp's built-in wrappers for scoring a label as the reply's first token:
 * - without today's date (Llama 3.1 and 3.2, gpt-oss's Harmony, Muse write it into their system turn by
 *   default), so that a model answers the same on every day and its calibration, fitted on one day,
 *   holds on the next;
 * - without thinking (Qwen 3: the reply opens with an empty `<think></think>`, the template's own
 *   non-thinking mode; Seed: a thinking budget of 0), so that the label is the answer's first token, not
 *   a competitor of `<think>`. Harmony's reply is already its final channel.
 */
export const CHAT_WRAPPER_SETTINGS = {
  'llama3.1': { todayDate: null },
  'llama3.2-lightweight': { todayDate: null },
  harmony: { todayDate: null },
  muse: { todayDate: null },
  qwen: { thoughts: 'discourage' },
  seed: { thinkingBudget: 0 },
} as const;

/** The chat frame: prompt.ts's words as one user turn in the model's template; the reply starts with the label. */
export function chatFrame(model: LlamaModel): PromptFrame {
  const wrapper = resolveChatWrapper(model, { customWrapperSettings: CHAT_WRAPPER_SETTINGS });
  const { head, tail } = splitChat(
    (user, reply) =>
      wrapper.generateContextState({
        chatHistory: [
          { type: 'user', text: user },
          { type: 'model', response: [reply] },
        ],
      }).contextText,
  );
  const tailTokens = tail.tokenize(model.tokenizer, 'trimLeadingSpace');
  return {
    template: wrapper.wrapperName,
    stateTokens(state) {
      return LlamaText([...head.values, renderStatePrompt(state)]).tokenize(model.tokenizer);
    },
    questionTokens(question, labels) {
      return LlamaText([renderQuestionPrompt(question, labels, null), ...tail.values]).tokenize(
        model.tokenizer,
        'trimLeadingSpace',
      );
    },
    labelTokens(label) {
      const tokens = LlamaText([...tail.values, label]).tokenize(model.tokenizer, 'trimLeadingSpace');
      return startsWith(tokens, tailTokens) && tokens.length > tailTokens.length
        ? tokens.slice(tailTokens.length)
        : null;
    },
  };
}

export function createFrame(model: LlamaModel, format: PromptFormat): PromptFrame {
  return format === 'chat' ? chatFrame(model) : plainFrame(model);
}
