import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { flattenState } from './flatten.ts';
import { type QuestionReading, readQuestion } from './reading.ts';
import { frameText } from './skill.ts';

/**
 * What the embedded engine encodes for one request. Every string here is embedded once (the
 * engine deduplicates and caches); `null` means "no text", which the head reads as a zero vector.
 * Training (src/training) builds its texts with the same functions, so the head sees at inference
 * exactly what it saw in training.
 */
export interface QuestionTexts {
  type: DecisionQuestion['type'];
  /** The instructions, or null. */
  instruction: string | null;
  /**
   * One text per option, in option order. noul: [false, true] where true reads the instruction
   * plus the `true` description, false reads the instruction plus the `false` description or is
   * null (no description: the head uses a learned baseline instead). choice: the label made
   * readable plus its description. score: the level's text (null when the level has none).
   */
  options: (string | null)[];
  /** Two texts whose relation the question is about (a detected pair), or null. */
  pair: [string, string] | null;
  /** How the question reads (reading.ts): family, side, negation. */
  reading: QuestionReading;
  /** What kind of question it is, in words (skill.ts `frameText`): where brier-lite 4.1 places its skill. */
  frame: string;
}

export interface RequestTexts {
  /** The state as read: strings verbatim, JSON flattened into `path: value` lines. */
  state: string;
  /** The caller sent the state as a JSON object or array (flattened), not as text. */
  structured: boolean;
  questions: QuestionTexts[];
}

const PAIR_LABELS =
  /^(sentence|text|premise|hypothesis|question|passage|claim|statement|answer|evidence|context|document|query|summary|response|reference|candidate)\s*(?:[12ab])?$/i;

/**
 * Detects a state made of exactly two labelled parts ("Sentence 1: ... / Sentence 2: ...",
 * "Question: ... / Passage: ..."), returning their bodies.
 */
export function detectStatePair(state: string): [string, string] | null {
  const parts = state.split(/\n(?=[A-Za-z][A-Za-z ]{0,24}\s*[12ab]?\s*:)/);
  if (parts.length !== 2) return null;
  const out: string[] = [];
  for (const part of parts) {
    const m = /^\s*([A-Za-z][A-Za-z ]{0,24}?\s*[12ab]?)\s*:\s*([\s\S]+)$/.exec(part);
    if (!m || !PAIR_LABELS.test((m[1] ?? '').trim())) return null;
    const body = (m[2] ?? '').trim();
    if (body.length === 0) return null;
    out.push(body);
  }
  return [out[0] ?? '', out[1] ?? ''];
}

/** A statement quoted in the instructions ("Does this text imply that "X"?"), or null. */
export function detectQuotedStatement(instructions: string | null): string | null {
  if (!instructions) return null;
  const m = /["“]([^"”]{12,})["”]/.exec(instructions);
  const body = m?.[1]?.trim();
  return body && /\s/.test(body) ? body : null;
}

/** `book_flight` -> `book flight`, `Sci/Tech` stays. */
export function readableLabel(label: string): string {
  return label.replace(/[_]+/g, ' ').trim();
}

function join(a: string | null, b: string | null): string | null {
  if (a && b) return `${a}\n${b}`;
  return a || b || null;
}

/**
 * The texts of one question. `plainNegations` (brier-lite 4): a negated yes/no question is read in its
 * plain wording (its answer is then the complement; model.ts); earlier models read it as written.
 */
export function questionTexts(
  question: DecisionQuestion,
  stateText: string,
  statePair: [string, string] | null,
  plainNegations = false,
): QuestionTexts {
  let pair = statePair;
  if (!pair) {
    const quoted = detectQuotedStatement(question.instructions?.trim() || null);
    if (quoted) pair = [stateText, quoted];
  }
  const reading = readQuestion(question, pair !== null);
  const written = question.instructions?.trim() || null;
  const instruction = plainNegations && reading.negated ? reading.plain : written;
  let options: (string | null)[];
  if (question.type === 'noul') {
    const f = question.options[0]?.description?.trim() || null;
    const t = question.options[1]?.description?.trim() || null;
    options = [f ? join(instruction, f) : null, join(instruction, t)];
  } else if (question.type === 'choice') {
    options = question.options.map((o) => {
      const name = readableLabel(o.label);
      const desc = o.description?.trim() || null;
      return desc ? (name ? `${name}: ${desc}` : desc) : name || null;
    });
  } else {
    options = question.options.map((o) => o.description?.trim() || null);
  }
  // a negated question is of the kind its plain wording is (its answer is the complement of the plain one)
  const frame = frameText(question.type, instruction, question.options);
  return { type: question.type, instruction, options, pair, reading, frame };
}

/**
 * Renders a request into the texts the engine embeds; a JSON state renders to at most `maxStateChars`.
 * `plainNegations`: see questionTexts.
 */
export function requestTexts(request: DecisionRequest, maxStateChars?: number, plainNegations = false): RequestTexts {
  const json = request.state.json;
  const structured = json !== undefined && json !== null && typeof json === 'object';
  const state = structured ? flattenState(json, maxStateChars) : request.state.text;
  const statePair = detectStatePair(state);
  return {
    state,
    structured,
    questions: request.questions.map((q) => questionTexts(q, state, statePair, plainNegations)),
  };
}

/** Every distinct non-empty text a request needs embedded. */
export function textsToEmbed(rt: RequestTexts): string[] {
  const out = new Set<string>();
  if (rt.state) out.add(rt.state);
  for (const q of rt.questions) {
    if (q.instruction) out.add(q.instruction);
    if (q.frame) out.add(q.frame);
    for (const o of q.options) if (o) out.add(o);
    if (q.pair) {
      out.add(q.pair[0]);
      out.add(q.pair[1]);
    }
  }
  out.delete('');
  return [...out];
}

/**
 * The texts the second encoder (MiniLM, brier-lite 4) embeds: what the zero-shot families read
 * (zero-shot.ts). A yes/no topic or spam question's plain `true` text; a topic or polarity choice's
 * options; the two parts of a pair; and the state when any of these needs it. Empty when no question
 * needs it (the request costs no second encoding). `read`: per question, whether its answer is read at
 * all (brier-lite 4.1: a question without measured skill is answered uniform, whatever the encoders say).
 */
export function miniTexts(rt: RequestTexts, read?: readonly boolean[]): string[] {
  const out = new Set<string>();
  for (const [i, q] of rt.questions.entries()) {
    if (read && !read[i]) continue;
    const f = q.reading.family;
    if (q.type === 'noul' && (f === 'topic' || f === 'spam') && q.options[1]) out.add(q.options[1]);
    if (q.type === 'choice' && (f === 'topic' || f === 'polarity')) for (const o of q.options) if (o) out.add(o);
    if (q.type === 'noul' && f === 'pair' && q.pair) {
      out.add(q.pair[0]);
      out.add(q.pair[1]);
    }
  }
  if (out.size > 0 && rt.state) out.add(rt.state);
  out.delete('');
  return [...out];
}
