/**
 * Writes a tiny llama-architecture GGUF with random weights, so GGUF engine tests run on a machine
 * without ../shared. The weights come from a fixed seed (same options, same bytes); the outputs are
 * noise. The vocabulary is a real llama SPM ("llama") tokenizer definition: control tokens, the 256
 * byte-fallback tokens <0x00>..<0xFF> (so any UTF-8 text tokenizes), printable ASCII characters,
 * "▁"-prefixed letters and digits, and a few words with every prefix needed to merge them.
 *
 * GGUF v3 layout written here: magic "GGUF", version, tensor count, metadata count; metadata
 * key/values; tensor infos (name, dims in ggml order, type, offset into the data section); padding to
 * the alignment; then each tensor's little-endian f32 data, each padded to the alignment.
 */
import { writeFile } from 'node:fs/promises';
import { mulberry32 as createRandom } from '../../lib/seeded.ts';

export interface TinyGgufOptions {
  /** PRNG seed for the weights. Default 1. */
  seed?: number;
  /** llama.context_length written into the file. Default 4096. */
  contextLength?: number;
  /** Hidden size. Default 32 (must be a multiple of headCount). */
  embeddingLength?: number;
  /** Transformer blocks. Default 2. */
  blockCount?: number;
  /** Attention heads. Default 4. */
  headCount?: number;
  /** Key/value heads (grouped-query attention). Default 2. */
  headCountKv?: number;
  /** Feed-forward size. Default 64. */
  feedForwardLength?: number;
}

const ALIGNMENT = 32;
const SPACE = '\u2581';

// GGUF metadata value types.
const GGUF_UINT32 = 4;
const GGUF_INT32 = 5;
const GGUF_FLOAT32 = 6;
const GGUF_BOOL = 7;
const GGUF_STRING = 8;
const GGUF_ARRAY = 9;

// ggml tensor type.
const GGML_F32 = 0;

// llama.cpp token types.
const TOKEN_NORMAL = 1;
const TOKEN_UNKNOWN = 2;
const TOKEN_CONTROL = 3;
const TOKEN_BYTE = 6;

type MetaValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'str'; value: string }
  | { type: 'str[]'; value: readonly string[] }
  | { type: 'f32[]'; value: readonly number[] }
  | { type: 'i32[]'; value: readonly number[] };

interface TensorSpec {
  name: string;
  /** Dimensions in ggml order (ne[0] is the contiguous one). */
  dims: readonly number[];
  data: Float32Array;
}

/** Little-endian byte sink that grows as needed. */
function createByteWriter() {
  let buffer = new Uint8Array(1 << 16);
  let view = new DataView(buffer.buffer);
  let length = 0;
  const encoder = new TextEncoder();

  function reserve(bytes: number): number {
    if (length + bytes > buffer.length) {
      let size = buffer.length * 2;
      while (size < length + bytes) size *= 2;
      const next = new Uint8Array(size);
      next.set(buffer.subarray(0, length));
      buffer = next;
      view = new DataView(buffer.buffer);
    }
    const at = length;
    length += bytes;
    return at;
  }

  // reserve() may replace `view`/`buffer`, so it runs before they are read.
  const u64 = (value: number) => {
    const at = reserve(8);
    view.setBigUint64(at, BigInt(value), true);
  };
  const bytes = (data: Uint8Array) => {
    const at = reserve(data.length);
    buffer.set(data, at);
  };
  return {
    u8: (value: number) => {
      const at = reserve(1);
      view.setUint8(at, value);
    },
    u32: (value: number) => {
      const at = reserve(4);
      view.setUint32(at, value, true);
    },
    i32: (value: number) => {
      const at = reserve(4);
      view.setInt32(at, value, true);
    },
    f32: (value: number) => {
      const at = reserve(4);
      view.setFloat32(at, value, true);
    },
    u64,
    bytes,
    string(value: string) {
      const data = encoder.encode(value);
      u64(data.length);
      bytes(data);
    },
    /** Zero bytes up to the next multiple of `alignment` (new space is zero-filled). */
    pad(alignment: number) {
      reserve((alignment - (length % alignment)) % alignment);
    },
    result: (): Uint8Array => buffer.slice(0, length),
  };
}

type ByteWriter = ReturnType<typeof createByteWriter>;

function writeMetaValue(out: ByteWriter, meta: MetaValue): void {
  switch (meta.type) {
    case 'u32':
      out.u32(GGUF_UINT32);
      out.u32(meta.value);
      return;
    case 'f32':
      out.u32(GGUF_FLOAT32);
      out.f32(meta.value);
      return;
    case 'bool':
      out.u32(GGUF_BOOL);
      out.u8(meta.value ? 1 : 0);
      return;
    case 'str':
      out.u32(GGUF_STRING);
      out.string(meta.value);
      return;
    case 'str[]':
      writeArray(out, GGUF_STRING, meta.value, out.string);
      return;
    case 'f32[]':
      writeArray(out, GGUF_FLOAT32, meta.value, out.f32);
      return;
    case 'i32[]':
      writeArray(out, GGUF_INT32, meta.value, out.i32);
      return;
  }
}

function writeArray<V>(out: ByteWriter, itemType: number, items: readonly V[], write: (item: V) => void): void {
  out.u32(GGUF_ARRAY);
  out.u32(itemType);
  out.u64(items.length);
  for (const item of items) write(item);
}

/** Serializes a GGUF v3 file with f32 tensors. */
export function encodeGguf(metadata: ReadonlyMap<string, MetaValue>, tensors: readonly TensorSpec[]): Uint8Array {
  const out = createByteWriter();
  out.bytes(new TextEncoder().encode('GGUF'));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(metadata.size);
  for (const [key, value] of metadata) {
    out.string(key);
    writeMetaValue(out, value);
  }
  let offset = 0;
  for (const tensor of tensors) {
    const elements = tensor.dims.reduce((a, b) => a * b, 1);
    if (elements !== tensor.data.length) throw new Error(`tensor ${tensor.name}: dims do not match data`);
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(dim);
    out.u32(GGML_F32);
    out.u64(offset);
    offset += Math.ceil((elements * 4) / ALIGNMENT) * ALIGNMENT;
  }
  out.pad(ALIGNMENT);
  for (const tensor of tensors) {
    for (const value of tensor.data) out.f32(value);
    out.pad(ALIGNMENT);
  }
  return out.result();
}

const WORDS = [
  'Yes',
  'No',
  'yes',
  'no',
  'Answer',
  'Question',
  'Options',
  'State',
  'Scale',
  'the',
  'and',
  'is',
  'of',
  'to',
  'true',
  'false',
  'option',
];

/** The SPM vocabulary: pieces, scores and token types, in id order. */
export function tinyVocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN_BYTE);
  }
  const pieces: string[] = [SPACE];
  for (let code = 0x21; code <= 0x7e; code++) pieces.push(String.fromCharCode(code));
  for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') pieces.push(SPACE + ch);
  // Each word needs every prefix as a piece so SPM's pairwise merges can reach it.
  for (const word of WORDS) {
    const piece = SPACE + word;
    for (let end = 3; end <= piece.length; end++) pieces.push(piece.slice(0, end));
  }
  const seen = new Set(tokens);
  for (const piece of pieces) {
    if (seen.has(piece)) continue;
    seen.add(piece);
    tokens.push(piece);
    types.push(TOKEN_NORMAL);
  }
  // SPM scores are log-probabilities; longer pieces score higher so merges prefer them.
  const scores = tokens.map((token, id) => (types[id] === TOKEN_NORMAL ? -100 + [...token].length : 0));
  return { tokens, scores, types };
}

/** Builds the tiny model's bytes (deterministic for given options). */
export function buildTinyGguf(options: TinyGgufOptions = {}): Uint8Array {
  const seed = options.seed ?? 1;
  const contextLength = options.contextLength ?? 4096;
  const embd = options.embeddingLength ?? 32;
  const blocks = options.blockCount ?? 2;
  const heads = options.headCount ?? 4;
  const headsKv = options.headCountKv ?? 2;
  const ff = options.feedForwardLength ?? 64;
  if (embd % heads !== 0 || heads % headsKv !== 0)
    throw new RangeError('embeddingLength/headCount/headCountKv mismatch');
  const headDim = embd / heads;
  const embdKv = headDim * headsKv;

  const vocab = tinyVocabulary();
  const vocabSize = vocab.tokens.length;
  const random = createRandom(seed);
  const uniform = (dims: readonly number[], scale: number): Float32Array => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = (random() * 2 - 1) * scale;
    return data;
  };
  const ones = (size: number): Float32Array => new Float32Array(size).fill(1);
  const proj = 1 / Math.sqrt(embd);

  const tensors: TensorSpec[] = [
    { name: 'token_embd.weight', dims: [embd, vocabSize], data: uniform([embd, vocabSize], 1) },
  ];
  for (let b = 0; b < blocks; b++) {
    const add = (name: string, dims: readonly number[], data: Float32Array) =>
      tensors.push({ name: `blk.${b}.${name}.weight`, dims, data });
    add('attn_norm', [embd], ones(embd));
    add('attn_q', [embd, embd], uniform([embd, embd], proj));
    add('attn_k', [embd, embdKv], uniform([embd, embdKv], proj));
    add('attn_v', [embd, embdKv], uniform([embd, embdKv], proj));
    add('attn_output', [embd, embd], uniform([embd, embd], proj));
    add('ffn_norm', [embd], ones(embd));
    add('ffn_gate', [embd, ff], uniform([embd, ff], proj));
    add('ffn_down', [ff, embd], uniform([ff, embd], 1 / Math.sqrt(ff)));
    add('ffn_up', [embd, ff], uniform([embd, ff], proj));
  }
  tensors.push({ name: 'output_norm.weight', dims: [embd], data: ones(embd) });
  tensors.push({ name: 'output.weight', dims: [embd, vocabSize], data: uniform([embd, vocabSize], 0.6) });

  const metadata = new Map<string, MetaValue>([
    ['general.architecture', { type: 'str', value: 'llama' }],
    ['general.name', { type: 'str', value: `brier tiny random llama (seed ${seed})` }],
    ['general.file_type', { type: 'u32', value: 0 }],
    ['general.alignment', { type: 'u32', value: ALIGNMENT }],
    ['llama.context_length', { type: 'u32', value: contextLength }],
    ['llama.embedding_length', { type: 'u32', value: embd }],
    ['llama.block_count', { type: 'u32', value: blocks }],
    ['llama.feed_forward_length', { type: 'u32', value: ff }],
    ['llama.rope.dimension_count', { type: 'u32', value: headDim }],
    ['llama.attention.head_count', { type: 'u32', value: heads }],
    ['llama.attention.head_count_kv', { type: 'u32', value: headsKv }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.vocab_size', { type: 'u32', value: vocabSize }],
    ['tokenizer.ggml.model', { type: 'str', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'str[]', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'f32[]', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32[]', value: vocab.types }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ]);
  return encodeGguf(metadata, tensors);
}

/** Writes the tiny model to `path` and returns the path. */
export async function writeTinyGguf(path: string, options: TinyGgufOptions = {}): Promise<string> {
  await writeFile(path, buildTinyGguf(options));
  return path;
}
