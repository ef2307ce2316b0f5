/**
 * Questions generated from the labels of the sets in ../shared/data (issue 31): the training and
 * evaluation data of the zero-shot family maps and of the coherence bench. Every generated item
 * keeps its source set, so every fit and every number can hold whole source sets out.
 *
 * - topic: each choice label of a topic-like set asked as yes/no ("Is this about {label}?", in a few
 *   wordings), once with the row's true label (yes) and once with another label drawn at random (no).
 * - polarity: sentiment scales asked as yes/no ("Is this review positive?", "Is the customer unhappy?"),
 *   the top levels as yes for a positive wording, the bottom levels for a negative one.
 * - negated: a share of the above in a negated wording ("Is this not about {label}?") with the target
 *   flipped, each paired with its plain wording (`pair`), for the negation measurements.
 * - native: the sets' own yes/no questions (their family read from their words like any other).
 *
 * Wordings are written here once, generic, and not tuned on the measurements.
 */
import type { DecisionQuestion } from '../engines/request.ts';
import { hash32, mulberry32 } from '../lib/seeded.ts';
import type { Example } from './data.ts';

export type TemplateKind = 'topic' | 'polarity' | 'native';

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
export const TOPIC_SOURCES = [
  'ag_news',
  'airline_complaint',
  'clinc150',
  'goemotions_ekman',
  'trec',
  'tweeteval_emotion',
] as const;

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
    } else if (topic && q.type === 'choice' && q.options.length >= 2) {
      const w = Math.floor(rand() * TOPIC_WORDINGS.length);
      const other = (ex.target + 1 + Math.floor(rand() * (q.options.length - 1))) % q.options.length;
      for (const [tag, index, yes] of [
        ['yes', ex.target, true],
        ['no', other, false],
      ] as const) {
        const o = q.options[index];
        if (!o) continue;
        const x = labelPhrase(o.label, o.description);
        emit('topic', `topic-${tag}`, TOPIC_WORDINGS[w]?.(x) ?? '', TOPIC_NEGATED[w]?.(x) ?? '', yes);
      }
    } else if (polarity && q.type === 'score') {
      const wording = POLARITY_WORDINGS[Math.floor(rand() * POLARITY_WORDINGS.length)];
      if (!wording) continue;
      const yes = wording.side === 1 ? polarity.positive(ex.target) : polarity.negative(ex.target);
      emit('polarity', 'polarity', wording.plain(polarity.noun), wording.negated(polarity.noun), yes);
    }
  }
  return out;
}
