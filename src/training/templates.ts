/**
 * Questions generated from the labels of the sets in ../shared/data (issue 31): the training and
 * evaluation data of the zero-shot family maps and of the coherence bench. Every generated item
 * keeps its source set, so every fit and every number can hold whole source sets out.
 *
 * - topic / emotion: each choice label of a topic-like (emotion) set asked as yes/no ("Is this about
 *   {label}?", "Does the author express {label}?", in a few wordings), once with the row's true label
 *   (yes) and once with another label drawn at random (no).
 * - polarity: sentiment scales asked as yes/no ("Is this review positive?", "Is the customer unhappy?"),
 *   the top levels as yes for a positive wording, the bottom levels for a negative one.
 * - negated: a share of the above in a negated wording ("Is this not about {label}?") with the target
 *   flipped, each paired with its plain wording (`pair`), for the negation measurements.
 * - subset: a choice over some of a topic-like set's labels plus a "none of these" option (the answer
 *   when the row's label is left out): what a residual option ("other", "out of scope") needs to be fitted.
 * - native: the sets' own yes/no questions (their family read from their words like any other).
 *
 * Wordings are written here once, generic, and not tuned on the measurements.
 */
import type { DecisionQuestion } from '../engines/request.ts';
import { hash32, mulberry32 } from '../lib/seeded.ts';
import type { Example } from './data.ts';

export type TemplateKind = 'topic' | 'emotion' | 'polarity' | 'subset' | 'native';

export interface GeneratedItem {
  /** The source set; fits and measurements hold whole source sets out. */
  source: string;
  kind: TemplateKind;
  /** Worded with a negation; its target is flipped. */
  negated: boolean;
  /** Items that share `pair` are the plain and the negated wording of one question on one state. */
  pair: string | null;
  example: Example;
}

/** Choice sets whose labels name topics, intents, categories or emotions (asked as "is it X?"). */
export const TOPIC_SOURCES = ['ag_news', 'airline_complaint', 'clinc150', 'trec'] as const;
/** Choice sets whose labels name emotions (asked as "does the author express X?"). */
export const EMOTION_SOURCES = ['goemotions_ekman', 'tweeteval_emotion'] as const;

/** Score sets whose scale is a polarity, with the levels that count as its positive and negative side. */
export const POLARITY_SOURCES: Record<
  string,
  { positive: (level: number) => boolean; negative: (level: number) => boolean; noun: string }
> = {
  // negative / neutral / positive
  airline_sentiment: { positive: (l) => l === 2, negative: (l) => l === 0, noun: 'tweet' },
  tweeteval_sentiment: { positive: (l) => l === 2, negative: (l) => l === 0, noun: 'tweet' },
  // very negative / negative / neutral / positive / very positive
  sst5: { positive: (l) => l >= 3, negative: (l) => l <= 1, noun: 'movie review' },
  // 1 to 5 stars
  amazon_alexa: { positive: (l) => l >= 3, negative: (l) => l <= 1, noun: 'review' },
};

const TOPIC_WORDINGS = [
  (x: string) => `Is this about ${x}?`,
  (x: string) => `Does this text concern ${x}?`,
  (x: string) => `Is the topic ${x}?`,
  (x: string) => `Does this relate to ${x}?`,
] as const;

const EMOTION_WORDINGS = [
  (x: string) => `Does the author express ${x}?`,
  (x: string) => `Is the author feeling ${x}?`,
  (x: string) => `Does this text show ${x}?`,
  (x: string) => `Is ${x} what the writer feels?`,
] as const;

const EMOTION_NEGATED = [
  (x: string) => `Does the author not express ${x}?`,
  (x: string) => `Isn't the author feeling ${x}?`,
  (x: string) => `Does this text not show ${x}?`,
  (x: string) => `Is ${x} not what the writer feels?`,
] as const;

const TOPIC_NEGATED = [
  (x: string) => `Is this not about ${x}?`,
  (x: string) => `Doesn't this text concern ${x}?`,
  (x: string) => `Is the topic not ${x}?`,
  (x: string) => `Does this not relate to ${x}?`,
] as const;

const POLARITY_WORDINGS: readonly { side: 1 | -1; plain: (n: string) => string; negated: (n: string) => string }[] = [
  { side: 1, plain: (n) => `Is this ${n} positive?`, negated: (n) => `Is this ${n} not positive?` },
  { side: -1, plain: (n) => `Is this ${n} negative?`, negated: (n) => `Isn't this ${n} negative?` },
  { side: 1, plain: () => 'Is the author satisfied?', negated: () => 'Is the author not satisfied?' },
  { side: -1, plain: () => 'Is the author unhappy?', negated: () => 'Is the author not unhappy?' },
  {
    side: 1,
    plain: (n) => `Does this ${n} praise what it talks about?`,
    negated: (n) => `Does this ${n} fail to praise what it talks about?`,
  },
  {
    side: -1,
    plain: () => 'Is the writer angry or disappointed?',
    negated: () => "Isn't the writer angry or disappointed?",
  },
];

/** How the "none of the others" option of a subset is worded (label, description). */
const RESIDUAL_OPTIONS: readonly [string, string | null][] = [
  ['other', null],
  ['none', 'none of these'],
  ['something_else', null],
  ['out_of_scope', 'does not match any of the other options'],
];

/**
 * How often a subset keeps the row's own label: a "none of these" option is the answer the rest of the
 * time. Measured (stage Z, leave-source-out choice accuracy): at 0.8, about as often as clinc150's
 * out_of_scope (19% of its rows), clinc150 0.513 -> 0.500 and ag_news Brier 0.1131 -> 0.1233 against 0.5.
 */
export const SUBSET_KEEPS_LABEL = 0.5;

/** The share of generated items worded with a negation. */
export const NEGATED_SHARE = 0.25;

/** How a choice label reads in a question: its description where the name is a code (ABBR, A), else the name. */
export function labelPhrase(label: string, description: string | null): string {
  const name = label.replace(/_+/g, ' ').trim();
  if (!description) return name;
  if (/^[A-Z]{1,4}$/.test(label) || name.length <= 1) return description;
  return `${name} (${description})`;
}

function noul(instructions: string): DecisionQuestion {
  return {
    type: 'noul',
    instructions,
    options: [
      { label: 'false', description: null },
      { label: 'true', description: null },
    ],
  };
}

function withQuestion(ex: Example, id: string, question: DecisionQuestion, target: number): Example {
  return { ...ex, id, request: { state: ex.request.state, questions: [question] }, target, raw: ex.raw };
}

/**
 * The generated yes/no items for the rows of one set (empty for sets that are neither topic-like nor
 * polarity scales, apart from their native yes/no questions). Deterministic in the rows' ids.
 */
export function generateItems(task: string, rows: readonly Example[]): GeneratedItem[] {
  const out: GeneratedItem[] = [];
  const topic = (TOPIC_SOURCES as readonly string[]).includes(task);
  const emotion = (EMOTION_SOURCES as readonly string[]).includes(task);
  const polarity = POLARITY_SOURCES[task];
  for (const ex of rows) {
    const q = ex.request.questions[0];
    if (!q) continue;
    const rand = mulberry32(hash32(`${task}/${ex.id}/templates`));
    const negate = rand() < NEGATED_SHARE;
    const emit = (kind: TemplateKind, tag: string, plain: string, negated: string, yes: boolean): void => {
      const id = `${ex.id}#${tag}`;
      out.push({
        source: task,
        kind,
        negated: false,
        pair: negate ? id : null,
        example: withQuestion(ex, id, noul(plain), yes ? 1 : 0),
      });
      if (negate)
        out.push({
          source: task,
          kind,
          negated: true,
          pair: id,
          example: withQuestion(ex, `${id}/not`, noul(negated), yes ? 0 : 1),
        });
    };
    if (q.type === 'noul') {
      out.push({ source: task, kind: 'native', negated: false, pair: null, example: ex });
    } else if ((topic || emotion) && q.type === 'choice' && q.options.length >= 2) {
      const w = Math.floor(rand() * TOPIC_WORDINGS.length);
      const [plainWordings, negatedWordings] = emotion
        ? [EMOTION_WORDINGS, EMOTION_NEGATED]
        : [TOPIC_WORDINGS, TOPIC_NEGATED];
      const other = (ex.target + 1 + Math.floor(rand() * (q.options.length - 1))) % q.options.length;
      for (const [tag, index, yes] of [
        ['yes', ex.target, true],
        ['no', other, false],
      ] as const) {
        const o = q.options[index];
        if (!o) continue;
        const x = emotion ? o.label.replace(/_+/g, ' ') : labelPhrase(o.label, o.description);
        const kind = emotion ? 'emotion' : 'topic';
        emit(kind, `${kind}-${tag}`, plainWordings[w]?.(x) ?? '', negatedWordings[w]?.(x) ?? '', yes);
      }
      if (topic && q.options.length >= 4) out.push(subsetItem(task, ex, q, rand));
    } else if (polarity && q.type === 'score') {
      const wording = POLARITY_WORDINGS[Math.floor(rand() * POLARITY_WORDINGS.length)];
      if (!wording) continue;
      const yes = wording.side === 1 ? polarity.positive(ex.target) : polarity.negative(ex.target);
      emit('polarity', 'polarity', wording.plain(polarity.noun), wording.negated(polarity.noun), yes);
    }
  }
  return out;
}

/**
 * A choice over 2 to 7 of the question's labels, in a random order, plus a residual option last: the
 * row's own label is among them with probability SUBSET_KEEPS_LABEL; otherwise the residual option is
 * the answer.
 */
function subsetItem(task: string, ex: Example, q: DecisionQuestion, rand: () => number): GeneratedItem {
  const others = q.options.map((_, i) => i).filter((i) => i !== ex.target);
  for (let i = others.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [others[i], others[j]] = [others[j] ?? 0, others[i] ?? 0];
  }
  const keep = rand() < SUBSET_KEEPS_LABEL;
  const size = 2 + Math.floor(rand() * Math.min(6, others.length - 1));
  const chosen = keep ? [ex.target, ...others.slice(0, size - 1)] : others.slice(0, size);
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j] ?? 0, chosen[i] ?? 0];
  }
  const [label, description] = RESIDUAL_OPTIONS[Math.floor(rand() * RESIDUAL_OPTIONS.length)] ?? ['other', null];
  const options = [...chosen.map((i) => q.options[i] ?? { label: '?', description: null }), { label, description }];
  const target = keep ? chosen.indexOf(ex.target) : options.length - 1;
  return {
    source: task,
    kind: 'subset',
    negated: false,
    pair: null,
    example: withQuestion(ex, `${ex.id}#subset`, { type: 'choice', instructions: q.instructions, options }, target),
  };
}
