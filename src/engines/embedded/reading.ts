/**
 * How a question reads, from its own words only (instructions, option labels and descriptions, level
 * texts; never the state): which family of question it is, whether a yes/no question is negated (and
 * its plain wording), and which way a polarity question points. brier-lite answers each family with
 * the signal measured to carry information for it (model.ts `predict`), and a negated yes/no question
 * as the complement of its plain wording: a sentence encoder gives "Is this X?" and "Is this not X?"
 * nearly the same vector, so negation is handled in language, not by the encoder.
 *
 * Written by hand, tested on paired wordings (reading.test.ts); not fitted on any labelled set.
 */
import type { DecisionQuestion } from '../request.ts';

/**
 * - topic: what the text is about, asks for, or is (topics, intents, categories, kinds of text).
 * - polarity: sentiment, satisfaction, anger, praise or complaint, positive/negative scales.
 * - spam: spam, scams, phishing, unsolicited advertising.
 * - pair: the relation of two texts (paraphrase, implication, relatedness), in a two-part state or a
 *   statement quoted in the question.
 * - other: what the encoders measurably cannot read from the text (toxicity, irony, truthfulness,
 *   plausibility, ...) or a question with no words to read.
 */
export type QuestionFamily = 'topic' | 'polarity' | 'spam' | 'pair' | 'other';

export interface QuestionReading {
  family: QuestionFamily;
  /** noul: the wording is negated (an odd number of negations), so the answer is 1 - P(yes | plain). */
  negated: boolean;
  /** noul: the instructions with their negations taken out (equal to them when not negated). */
  plain: string | null;
  /**
   * polarity: +1 where yes (noul) or a higher level (score) means the positive side, -1 where it
   * means the negative side ("Is the customer angry?", "How frustrated ..."); 0 otherwise.
   */
  direction: number;
  /** noul polarity: the side is named by an emotion ("Is the author angry?"), narrower than a sentiment. */
  emotion: boolean;
  /** choice: each option's side (+1, -1, 0 for none or neutral); null for other types. */
  optionSides: number[] | null;
  /**
   * choice: the options that stand for "none of the others" ("other", "none of the above", "out of
   * scope", "no particular emotion"); their answer is a threshold the named options must beat.
   */
  residual: boolean[] | null;
}

/** Words that ask for the positive side, and words that ask for the negative side (whole words; `*`: a stem). */
export const POSITIVE_WORDS = [
  'positive',
  'favorable',
  'favourable',
  'happy',
  'satisfied',
  'satisfaction',
  'pleased',
  'prais*',
  'compliment*',
  'like it',
  'likes',
  'love',
  'loves',
  'enjoy*',
  'recommend*',
  'approve',
  'approves',
  'approval',
  'grateful',
  'thankful',
  'gratitude',
  'delighted',
  'glad',
  'calm',
  'good',
  'great',
  'excellent',
  'optimistic',
  'enthusiastic',
  'polite',
  'friendly',
  'joy',
  'optimism',
  'content with',
] as const;

export const NEGATIVE_WORDS = [
  'negative',
  'unfavorable',
  'unfavourable',
  'unhappy',
  'dissatisfied',
  'unsatisfied',
  'dissatisfaction',
  'displeased',
  'angry',
  'anger',
  'upset',
  'annoyed',
  'annoyance',
  'frustrated',
  'frustration',
  'irritated',
  'furious',
  'mad at',
  'complain*',
  'criticiz*',
  'criticis*',
  'dislike*',
  'disappointed',
  'disappointment',
  'sad',
  'sadness',
  'fear',
  'afraid',
  'disgust*',
  'rude',
  'hostile',
  'bad',
  'poor',
  'terrible',
  'awful',
  'worst',
  'unpleasant',
  'pessimistic',
  'disapprove',
] as const;

/**
 * Words that name a polarity without a side: a score over them runs negative -> positive. Not "rate" or
 * "rating" alone: "Rate the urgency of this ticket" is no polarity (the paraphrase suite read it as one).
 */
const POLARITY_NEUTRAL_WORDS = ['sentiment', 'tone', 'mood', 'attitude', 'star', 'stars', 'star rating'] as const;

const SPAM_WORDS = ['spam*', 'scam*', 'phishing', 'junk', 'fraud*', 'unsolicited', 'advertis*', 'promotional'];

/**
 * What the encoders measurably cannot read from a text by similarity (brier-lite 3.7's measurements
 * and issue 31's: hate, irony, truthfulness, passage questions near chance). Such questions abstain.
 */
const OTHER_WORDS = [
  'hate',
  'hateful',
  'hatred',
  'offensive',
  'toxic',
  'abusive',
  'insult*',
  'profan*',
  'obscen*',
  'vulgar*',
  'slur*',
  'harass*',
  'irony',
  'ironic*',
  'sarcas*',
  'true',
  'truth*',
  'false',
  'fact-check*',
  'accurate',
  'correct',
  'lie',
  'lies',
  'lying',
  'plausib*',
  'continuation',
  'ending',
  'grammatical*',
  'reading level',
  'difficult',
  'complex',
  'formal',
] as const;

/** Words that make a question about the relation of two texts. */
const PAIR_WORDS = [
  'paraphras*',
  'same thing',
  'same meaning',
  'mean the same',
  'equivalent',
  'imply',
  'implies',
  'entail*',
  'follow from',
  'contradict*',
  'relate*',
  'relatedness',
  'similar*',
  'consistent with',
  'support the',
  'agree with',
] as const;

/**
 * Negations whose removal gives the plain wording: contractions lose their "n't" (isn't -> is,
 * doesn't -> does, won't -> will, can't -> can), "not", "never" and "no longer" go, "fail(s|ed) to"
 * goes, "without" becomes "with", "lack(s)" becomes "have/has", "no" after there / has / contains /
 * mentions / with goes. "or not", "whether or not" and "not only" are not negations.
 */
const NEGATIONS: readonly { pattern: RegExp; plain: (match: string, ...groups: string[]) => string }[] = [
  { pattern: /\b(won)'?t\b/gi, plain: (m) => keepCase(m, 'will') },
  { pattern: /\b(can)'?t\b/gi, plain: (m) => keepCase(m, 'can') },
  { pattern: /\bcannot\b/gi, plain: (m) => keepCase(m, 'can') },
  {
    pattern: /\b(is|are|was|were|does|do|did|has|have|had|should|would|could|must|need)n'?t\b/gi,
    plain: (_m, verb) => verb ?? '',
  },
  { pattern: /\b(not|never|no longer)\s+/gi, plain: () => '' },
  { pattern: /\b(fail(?:s|ed)?|failing)\s+to\s+/gi, plain: () => '' },
  { pattern: /\bwithout\b/gi, plain: (m) => keepCase(m, 'with') },
  { pattern: /\blacks\b/gi, plain: (m) => keepCase(m, 'has') },
  { pattern: /\black\b/gi, plain: (m) => keepCase(m, 'have') },
  { pattern: /\b(there|has|have|contains?|mentions?|with)\s+no\b/gi, plain: (_m, head) => head ?? '' },
];

/** Phrases that contain a negation word but negate nothing. */
const NOT_NEGATIONS = /\b(or not|whether or not|not only|if not|no matter|not sure)\b/gi;

function keepCase(original: string, replacement: string): string {
  return original[0] && original[0] === original[0].toUpperCase()
    ? `${replacement[0]?.toUpperCase() ?? ''}${replacement.slice(1)}`
    : replacement;
}

/**
 * Text in quotes (a statement the question is about) or in parentheses (an option's description quoted
 * in the question: "Is this about out of scope (the request does not match any intent)?") is read as
 * quoted, never as the question's own words.
 */
export const QUOTED = /["“][^"”]*["”]|\([^()]*\)/g;

/**
 * The plain wording of a yes/no question and whether it was negated (an odd number of negations).
 * Only the question's own words count: negations inside a quoted statement, and "or not", do not.
 */
export function plainWording(text: string): { plain: string; negated: boolean } {
  const quotes: string[] = [];
  let work = text.replace(QUOTED, (q) => {
    quotes.push(q);
    return `\uE000${quotes.length - 1}\uE000`;
  });
  const guards: string[] = [];
  work = work.replace(NOT_NEGATIONS, (g) => {
    guards.push(g);
    return `\uE001${guards.length - 1}\uE001`;
  });
  let count = 0;
  for (const { pattern, plain } of NEGATIONS) {
    work = work.replace(pattern, (match: string, ...rest: unknown[]) => {
      count++;
      const groups = rest.filter((r): r is string => typeof r === 'string');
      return plain(match, ...groups);
    });
  }
  work = work
    .replace(/\uE001(\d+)\uE001/g, (_m, i: string) => guards[Number(i)] ?? '')
    .replace(/\uE000(\d+)\uE000/g, (_m, i: string) => quotes[Number(i)] ?? '')
    .replace(/ {2,}/g, ' ')
    .trim();
  return { plain: count > 0 ? work : text, negated: count % 2 === 1 };
}

/** A word list compiled once: whole words, or word beginnings where the entry ends in `*`. */
function lexicon(words: readonly string[]): RegExp {
  const parts = words.map((w) => {
    const stem = w.endsWith('*');
    const body = (stem ? w.slice(0, -1) : w).replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    return stem ? body : `${body}\\b`;
  });
  return new RegExp(`\\b(?:${parts.join('|')})`, 'i');
}

const POSITIVE = lexicon(POSITIVE_WORDS);
const NEGATIVE = lexicon(NEGATIVE_WORDS);
const POLARITY_NEUTRAL = lexicon(POLARITY_NEUTRAL_WORDS);
const SPAM = lexicon(SPAM_WORDS);
const OTHER = lexicon(OTHER_WORDS);
const PAIR = lexicon(PAIR_WORDS);
const MIDDLE = /\b(neutral|mixed|neither)\b/i;
/** Emotions: a polarity question naming one is narrower than one about sentiment; some have no side. */
const EMOTION =
  /\b(anger|angry|joy|joyful|sadness|sad|fear|afraid|scared|disgust\w*|optimism|optimistic|love|gratitude|grateful|surprise\w*|fearful)\b/i;
const RESIDUAL =
  /^\s*(other|others|none|neither|misc|miscellaneous|unknown|something else|out of scope|no particular\b.*)\s*$|\b(none of (?:the|these)|does not match any|not listed|no particular|out of scope)\b/i;
/** Words that ask what a text is about: a side named after them is part of the topic. */
const TOPIC_FRAME =
  /\b(about|concern(?:s|ing)?|relat(?:e|es|ed|ing) to|regarding|mention(?:s|ed)?|topic|categor(?:y|ies)|intent|refer(?:s|ring)? to|belong(?:s)? to|discuss(?:es)?)\b/i;

/** +1 / -1 for the side a phrase names, 0 when it names none or both. */
export function sideOf(text: string): number {
  return (POSITIVE.test(text) ? 1 : 0) - (NEGATIVE.test(text) ? 1 : 0);
}

/** Whether a text names a polarity at all (a side, or a polarity word without one). */
function namesPolarity(text: string): boolean {
  return sideOf(text) !== 0 || POLARITY_NEUTRAL.test(text);
}

/**
 * Reads a question. `pairState`: the state is made of two labelled parts, or the question quotes a
 * statement (texts.ts detects both).
 */
export function readQuestion(question: DecisionQuestion, pairState: boolean): QuestionReading {
  const instructions = question.instructions?.trim() ?? '';
  const negation = question.type === 'noul' ? plainWording(instructions) : { plain: instructions, negated: false };
  const plainText = negation.plain;
  // the quoted statement is the content of a pair question, not its wording
  const own = plainText.replace(QUOTED, ' ');
  const optionText = question.type === 'noul' ? (question.options[1]?.description ?? '') : '';
  const words = `${own} ${optionText}`.toLowerCase();
  const base = { negated: negation.negated, plain: question.type === 'noul' ? plainText || null : null };
  const none: QuestionReading = {
    family: 'other',
    direction: 0,
    emotion: false,
    optionSides: null,
    residual: null,
    ...base,
  };
  if (question.type === 'choice') return readChoice(question, words, pairState, none);
  if (!instructions && question.type === 'noul') return none;

  if (pairState && PAIR.test(words)) return { ...none, family: 'pair' };
  if (SPAM.test(words)) return { ...none, family: 'spam' };
  if (OTHER.test(words) && !namesPolarity(words)) return none;

  if (question.type === 'noul') {
    const side = sideOf(words);
    // "Is this about a bad flight?": a side named inside what the question asks about is a topic
    const frame = TOPIC_FRAME.exec(words);
    const polar = POSITIVE.exec(words)?.index ?? NEGATIVE.exec(words)?.index;
    const framed = frame !== null && (polar === undefined || frame.index < polar);
    const emotion = EMOTION.test(words);
    if (side !== 0 && !framed) return { ...none, family: 'polarity', direction: side, emotion };
    // an emotion without a side (surprise) or the middle of a scale: nothing the encoders read
    if (emotion || MIDDLE.test(words)) return none;
    return { ...none, family: words.trim() ? 'topic' : 'other' };
  }
  const lo = question.options[0]?.description ?? '';
  const hi = question.options.at(-1)?.description ?? '';
  const levelSide = sideOf(hi) - sideOf(lo);
  if (levelSide !== 0) return { ...none, family: 'polarity', direction: Math.sign(levelSide) };
  if (namesPolarity(words)) {
    const side = sideOf(words);
    return { ...none, family: 'polarity', direction: side === 0 ? 1 : side };
  }
  return none;
}

/**
 * A choice: each option's side and whether it stands for "none of the others"; a polarity when every
 * option names a side (or the middle) and both sides occur, a topic unless the question is about what
 * the encoders cannot read or about two texts.
 */
function readChoice(
  question: DecisionQuestion,
  words: string,
  pairState: boolean,
  none: QuestionReading,
): QuestionReading {
  const texts = question.options.map((o) => `${o.label} ${o.description ?? ''}`.replace(/_/g, ' '));
  const residual = question.options.map(
    (o) => RESIDUAL.test(o.label.replace(/_/g, ' ')) || RESIDUAL.test(o.description ?? ''),
  );
  const sides = texts.map((t, i) => (residual[i] || MIDDLE.test(t) ? 0 : sideOf(t)));
  const read = { ...none, optionSides: sides, residual };
  if (pairState && PAIR.test(words)) return { ...read, family: 'pair' };
  const named = texts.every((t, i) => sides[i] !== 0 || MIDDLE.test(t) || residual[i]);
  if (named && sides.includes(1) && sides.includes(-1)) return { ...read, family: 'polarity' };
  if (OTHER.test(words)) return { ...read, family: 'other' };
  return { ...read, family: 'topic' };
}
