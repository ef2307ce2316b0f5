/**
 * Related questions of one request answered so that they agree by construction (issue 31): a yes/no
 * question that names exactly one option of a choice question in the same request ("Is it about
 * sports?" beside "Which topic?") is answered with that option's probability; one that names a level
 * of a score question ("Is it at least 4 stars?", "Is the sentiment positive?") with the probability
 * of that level, of it or higher ("at least", "or more"), or of it or lower ("at most", "or less").
 * Negated wordings get the complement (reading.ts). Pure: no model, no embeddings.
 */
import type { DecisionQuestion } from '../request.ts';
import { plainWording } from './reading.ts';
import { readableLabel } from './texts.ts';

/** Labels too generic to say which option a yes/no question means. */
const GENERIC = new Set(['other', 'others', 'none', 'neither', 'unknown', 'misc', 'n/a', 'yes', 'no', 'true', 'false']);

function normalizeWords(text: string): string {
  return ` ${text
    .toLowerCase()
    .replace(/[_/]+/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;
}

/**
 * The phrases that name an option: a choice option's readable label, and any option's description
 * (a score level's text; a score's labels are level numbers, not names). A description names its
 * option only where the question quotes it whole, so a long one is as safe as a short one.
 */
function phrases(type: DecisionQuestion['type'], label: string, description: string | null): string[] {
  const out: string[] = [];
  const name = normalizeWords(readableLabel(label));
  if (type === 'choice' && name.trim().length >= 2 && !GENERIC.has(name.trim())) out.push(name);
  if (description) {
    const d = normalizeWords(description);
    if (d.trim().length >= 2 && !GENERIC.has(d.trim())) out.push(d);
  }
  return out;
}

/**
 * The index of the one option that a text names; null when it names none or several. A phrase
 * inside a longer phrase that also matched ("positive" in "very positive") does not count.
 */
export function namedOption(text: string, question: DecisionQuestion): number | null {
  const words = normalizeWords(text);
  const matches = question.options.flatMap((o, index) =>
    phrases(question.type, o.label, o.description)
      .filter((p) => words.includes(p))
      .map((phrase) => ({ index, phrase })),
  );
  const kept = matches.filter(
    (m) => !matches.some((n) => n.phrase.length > m.phrase.length && n.phrase.includes(m.phrase)),
  );
  const indices = new Set(kept.map((m) => m.index));
  return indices.size === 1 ? (kept[0]?.index ?? null) : null;
}

const AT_LEAST = /\b(at least|or (?:more|higher|above|better))\b/i;
const AT_MOST = /\b(at most|or (?:less|lower|below|worse))\b/i;

/** Where a yes/no question's plain wording points into another question of the request. */
export interface Link {
  /** The linked question's index in the request. */
  question: number;
  /** The options of the linked question whose probabilities sum to P(yes). */
  options: number[];
  negated: boolean;
}

/** For each question of a request: its link (yes/no questions that name one option of another), or null. */
export function linkQuestions(questions: readonly DecisionQuestion[]): (Link | null)[] {
  return questions.map((q) => {
    if (q.type !== 'noul' || !q.instructions) return null;
    const { plain, negated } = plainWording(q.instructions);
    for (let j = 0; j < questions.length; j++) {
      const other = questions[j];
      if (!other || other.type === 'noul') continue;
      const index = namedOption(plain, other);
      if (index === null) continue;
      let options = [index];
      if (other.type === 'score') {
        const k = other.options.length;
        if (AT_LEAST.test(plain)) options = Array.from({ length: k - index }, (_, l) => index + l);
        else if (AT_MOST.test(plain)) options = Array.from({ length: index + 1 }, (_, l) => l);
      }
      return { question: j, options, negated };
    }
    return null;
  });
}

/** The probabilities of a request with every linked yes/no question answered from its link. */
export function reconcile(links: readonly (Link | null)[], probabilities: readonly number[][]): number[][] {
  return probabilities.map((p, i) => {
    const link = links[i];
    const source = link ? probabilities[link.question] : undefined;
    if (!link || !source) return [...p];
    const yes = Math.min(
      1,
      Math.max(
        0,
        link.options.reduce((a, o) => a + (source[o] ?? 0), 0),
      ),
    );
    const value = link.negated ? 1 - yes : yes;
    return [1 - value, value];
  });
}
