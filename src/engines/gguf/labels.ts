/**
 * Option labels and how they are scored.
 *
 * Every question's prompt lists its options under short labels and ends where the answer goes: after
 * "Answer:" in plain prompts, at the start of the assistant's reply in the model's chat template
 * (frames.ts). An option's probability is read from the model's next-token logits for its label,
 * tokenized the way the model's tokenizer writes it there (plain: tokens of "Answer: X" minus the
 * tokens of "Answer:"; chat: the template's tail with "X" minus the tail).
 *
 * Label choice, per question (first rule that applies):
 * 1. Natural labels: "No"/"Yes" for noul, the level numbers for score, when their token sequences
 *    are distinct and prefix-free (no label's tokens start another's).
 * 2. Spreadsheet labels of one length, the fewest letters that give enough labels (A..Z for up to
 *    26 options, AA..ZZ for up to 676), when each is a single token (after the shared lead, rule 5).
 *    This is what big vocabularies give for up to 26 options.
 * 3. For more than 26 options: the first single-token labels of A..Z, AA..ZZ in that order (big
 *    vocabularies have most pairs as single tokens), when there are enough of them.
 * 4. Otherwise (tiny vocabularies; up to 255 options) the labels of rule 2, scored as multi-token
 *    labels. Labels of equal length are never a prefix of one another as text, so neither are their
 *    tokens; when a label cannot be tokenized cleanly after the cue, the next length is tried.
 *    Arbitrary vocabulary words are never used as labels: they would mean something to the model.
 * 5. Tokens that every label starts with (SPM's lone "▁" before a letter, for example) are moved
 *    into the prompt as a shared `lead`: the probability of the shared token is the same factor for
 *    every option, so it cancels, and moving it saves a forward pass.
 *
 * Scoring: the labels' remaining tokens form a trie. Single-token labels (the usual case) need one
 * forward pass: the logits after the prompt, restricted to the labels' tokens, softmaxed at the
 * model's temperature. Multi-token labels are scored by their summed log-probabilities
 * (full-vocabulary log-softmax at each inner trie node, one extra single-token pass per inner node),
 * then softmaxed across options; the root's normalizer cancels, so for single-token labels both
 * descriptions give the same numbers.
 */

/** Tokens of " <label>" in answer position, or null when the tokenizer merges across the boundary. */
export type LabelTokenizer<T> = (label: string) => readonly T[] | null;

export interface LabelPlan<T> {
  /** The label shown for each option, in option order. */
  labels: string[];
  /** Tokens every label starts with, appended to the prompt after "Answer:". */
  lead: T[];
  /** Per option, the tokens scored after `lead` (at least one each). */
  sequences: T[][];
}

export interface TrieNode<T> {
  token: T;
  /** The option this node ends, or null for an inner node. */
  option: number | null;
  children: TrieNode<T>[];
}

/** Spreadsheet-style label for a 0-based index: A..Z, AA..ZZ, AAA... */
export function spreadsheetLabel(index: number): string {
  let label = '';
  let n = index + 1;
  while (n > 0) {
    const rem = (n - 1) % 26;
    label = String.fromCharCode(65 + rem) + label;
    n = Math.floor((n - 1) / 26);
  }
  return label;
}

/** Candidates scanned for single-token labels: A..ZZ. */
const SINGLE_TOKEN_SCAN = 26 + 26 * 26;
/** Longest fixed-length labels tried (26^4 labels). */
const MAX_LABEL_LETTERS = 4;

/** True when `sequence` begins with `prefix`. */
export function startsWith<T>(sequence: readonly T[], prefix: readonly T[]): boolean {
  if (prefix.length > sequence.length) return false;
  for (let i = 0; i < prefix.length; i++) if (sequence[i] !== prefix[i]) return false;
  return true;
}

/** True when no sequence is empty, equal to or a prefix of another. */
export function isPrefixFree<T>(sequences: readonly (readonly T[])[]): boolean {
  for (let i = 0; i < sequences.length; i++) {
    const a = sequences[i];
    if (a === undefined || a.length === 0) return false;
    for (let j = i + 1; j < sequences.length; j++) {
      const b = sequences[j];
      if (b === undefined || startsWith(a, b) || startsWith(b, a)) return false;
    }
  }
  return true;
}

function withLead<T>(labels: string[], sequences: (readonly T[])[]): LabelPlan<T> {
  const first = sequences[0] ?? [];
  let shared = 0;
  // Prefix-free sequences of two or more options never share a whole sequence, so each keeps a token.
  while (shared < first.length - 1 && sequences.every((s) => s[shared] === first[shared])) shared++;
  if (sequences.length < 2) shared = 0;
  return { labels, lead: first.slice(0, shared), sequences: sequences.map((s) => s.slice(shared)) };
}

/**
 * Spreadsheet labels of one length (1..MAX_LABEL_LETTERS letters, the fewest that give `count`),
 * skipping labels the tokenizer cannot split cleanly after the cue; null if none works.
 */
function fixedLengthLabels<T>(count: number, tokenize: LabelTokenizer<T>): LabelPlan<T> | null {
  let first = 0;
  for (let letters = 1; letters <= MAX_LABEL_LETTERS; letters++) {
    const available = 26 ** letters;
    if (available >= count) {
      const labels: string[] = [];
      const sequences: (readonly T[])[] = [];
      for (let index = first; index < first + available && labels.length < count; index++) {
        const label = spreadsheetLabel(index);
        const tokens = tokenize(label);
        if (tokens === null || tokens.length === 0) continue;
        labels.push(label);
        sequences.push(tokens);
      }
      if (labels.length === count && isPrefixFree(sequences)) return withLead(labels, sequences);
    }
    first += available;
  }
  return null;
}

/**
 * Picks labels for `count` options (rules in the header). `natural` (optional) are the labels to
 * prefer, one per option; `tokenize` gives a label's tokens in answer position.
 */
export function planLabels<T>(
  count: number,
  natural: readonly string[] | null,
  tokenize: LabelTokenizer<T>,
): LabelPlan<T> {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`a question needs at least one option, got ${count}`);
  if (natural !== null && natural.length === count) {
    const sequences = natural.map(tokenize);
    if (sequences.every((s) => s !== null) && isPrefixFree(sequences)) return withLead([...natural], sequences);
  }

  const fixed = fixedLengthLabels(count, tokenize);
  if (fixed?.sequences.every((s) => s.length === 1)) return fixed;

  if (count > 26) {
    const labels: string[] = [];
    const sequences: (readonly T[])[] = [];
    for (let index = 0; index < SINGLE_TOKEN_SCAN && labels.length < count; index++) {
      const label = spreadsheetLabel(index);
      const tokens = tokenize(label);
      if (tokens === null || tokens.length !== 1 || sequences.some((s) => s[0] === tokens[0])) continue;
      labels.push(label);
      sequences.push(tokens);
    }
    if (labels.length === count) return withLead(labels, sequences);
  }

  if (fixed !== null) return fixed;
  throw new Error(`could not find ${count} distinct option labels for this tokenizer`);
}

/** Builds the scoring trie of prefix-free sequences (one leaf per option). */
export function buildTrie<T>(sequences: readonly (readonly T[])[]): TrieNode<T>[] {
  const roots: TrieNode<T>[] = [];
  sequences.forEach((sequence, option) => {
    let level = roots;
    sequence.forEach((token, depth) => {
      let node = level.find((n) => n.token === token);
      if (node === undefined) {
        node = { token, option: null, children: [] };
        level.push(node);
      }
      if (depth === sequence.length - 1) node.option = option;
      level = node.children;
    });
  });
  return roots;
}

/** log(sum(exp(values))), stable. */
export function logSumExp(values: Iterable<number>): number {
  let max = Number.NEGATIVE_INFINITY;
  const list = [...values];
  for (const v of list) if (v > max) max = v;
  if (max === Number.NEGATIVE_INFINITY) return max;
  let sum = 0;
  for (const v of list) sum += Math.exp(v - max);
  return max + Math.log(sum);
}

/** Softmax of log-scores (already divided by the temperature). */
export function softmax(scores: readonly number[]): number[] {
  const norm = logSumExp(scores);
  return scores.map((s) => Math.exp(s - norm));
}
