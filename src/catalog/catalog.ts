/**
 * The model catalog, as data, and the mapping from a `BRIER_MODEL` value to what to load.
 *
 * Sizes and checksums: this catalog was written on a machine without internet access, so no
 * file here was downloaded and hashed by us. A `sizeBytes`/`sha256` pair is filled in only where
 * several independent public records agree on it for the exact file behind `url`; everywhere else
 * both are left undefined. `models pull` verifies size and sha256 when they are known, and
 * otherwise prints the sha256 of what it downloaded (unverified) so that it can be pinned here.
 * Never fill in a size or checksum that was not read off the real file.
 */
import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/** An engine that ships inside the package: nothing to download. */
export interface EmbeddedCatalogEntry {
  name: string;
  engine: 'embedded';
  /** Human name, e.g. "Brier lite". */
  title: string;
  /** What the model is good for and what it is not, in plain words (README, /v1/models, `models list`). */
  description: string;
  licence: string;
}

/** A GGUF file for the node-llama-cpp engine, downloaded with `models pull`. */
export interface GgufCatalogEntry {
  /** The `BRIER_MODEL` value and the `models pull` argument, lower case. */
  name: string;
  engine: 'gguf';
  title: string;
  description: string;
  /** SPDX id where there is one, otherwise the licence's own name. */
  licence: string;
  /** The upstream model card (not the GGUF repo), for people. */
  homepage: string;
  /** Hugging Face `resolve/main` URL of the GGUF file. */
  url: string;
  /** The file name under the models dir (as upstream names it). */
  fileName: string;
  quantization: string;
  /** Rounded, for display before a download starts (from the upstream file listing). */
  approxSize: string;
  /** Exact size in bytes, only where known (see the note at the top of this file). */
  sizeBytes?: number;
  /** Lower-case hex sha256 of the file, only where known (see the note at the top of this file). */
  sha256?: string;
}

export type CatalogEntry = EmbeddedCatalogEntry | GgufCatalogEntry;

export const DEFAULT_MODEL_NAME = 'brier-lite';

export const MODEL_CATALOG: readonly CatalogEntry[] = [
  {
    name: 'brier-lite',
    engine: 'embedded',
    title: 'Brier lite (embedded)',
    description:
      'The default model. Ships with Brier: nothing to download, runs on any CPU in little memory, fast. ' +
      'A sentence-embedding encoder (Universal Sentence Encoder lite) with a small decision head trained and ' +
      'calibrated on labelled decision sets; it reads the state and the options, it does not reason. Good for ' +
      'short states and questions whose answer shows in the wording: routing, intent, topic, sentiment, simple ' +
      'yes/no checks. Weak where an answer needs reasoning, arithmetic, world knowledge or a long state: use a ' +
      'GGUF instruct model for those.',
    licence: 'Apache-2.0',
  },
  {
    name: 'qwen2.5-1.5b-instruct-q4_k_m',
    engine: 'gguf',
    title: 'Qwen2.5 1.5B Instruct (Q4_K_M)',
    description:
      'The recommended first GGUF model: a small instruct model that runs on a CPU. Reads the whole state and ' +
      'question like a chat model, so it handles questions that need some reasoning or world knowledge, ' +
      'structured (JSON) states and many languages (Qwen2.5 covers 29+). Good general choice for yes/no, ' +
      'choice and score questions. Needs about 2 GB of memory.',
    licence: 'Apache-2.0',
    homepage: 'https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct',
    url: 'https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf',
    fileName: 'qwen2.5-1.5b-instruct-q4_k_m.gguf',
    quantization: 'Q4_K_M',
    approxSize: '1.1 GB',
    // Not hashed here (no network). Several independent public records agree on this size and
    // sha256 for the official file, one of them noting it equals the x-linked-etag Hugging Face
    // serves for Qwen/Qwen2.5-1.5B-Instruct-GGUF at commit 91cad51170dc346986eccefdc2dd33a9da36ead9.
    // If upstream ever replaces the file, `models pull` fails with both checksums in the message.
    sizeBytes: 1_117_320_736,
    sha256: '6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e',
  },
  {
    name: 'qwen2.5-3b-instruct-q4_k_m',
    engine: 'gguf',
    title: 'Qwen2.5 3B Instruct (Q4_K_M)',
    description:
      'The larger Qwen2.5: for questions where reasoning or world knowledge matter more than speed, at about ' +
      'twice the compute of the 1.5B model: best with a GPU, usable on a fast CPU. Multilingual. Needs about ' +
      '3 GB of memory. Licence: the Qwen Research License, not Apache-2.0: read it before any commercial use.',
    licence: 'Qwen Research License',
    homepage: 'https://huggingface.co/Qwen/Qwen2.5-3B-Instruct',
    url: 'https://huggingface.co/Qwen/Qwen2.5-3B-Instruct-GGUF/resolve/main/qwen2.5-3b-instruct-q4_k_m.gguf',
    fileName: 'qwen2.5-3b-instruct-q4_k_m.gguf',
    quantization: 'Q4_K_M',
    approxSize: '1.9 GB',
  },
  {
    name: 'qwen3-1.7b-q4_k_m',
    engine: 'gguf',
    title: 'Qwen3 1.7B (Q4_K_M)',
    description:
      'The newer Qwen3 generation at 1.7B parameters, Apache-2.0: an alternative to Qwen2.5 1.5B at a similar ' +
      'size, trained for reasoning. A hybrid "thinking" model; Brier scores the answer options directly and ' +
      'never generates thinking text. Multilingual. Needs about 2 GB of memory. Community quantization by Unsloth.',
    licence: 'Apache-2.0',
    homepage: 'https://huggingface.co/Qwen/Qwen3-1.7B',
    url: 'https://huggingface.co/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf',
    fileName: 'Qwen3-1.7B-Q4_K_M.gguf',
    quantization: 'Q4_K_M',
    approxSize: '1.1 GB',
  },
  {
    name: 'smollm2-1.7b-instruct-q4_k_m',
    engine: 'gguf',
    title: 'SmolLM2 1.7B Instruct (Q4_K_M)',
    description:
      "Hugging Face's fully open small model (open weights, data and training recipe), Apache-2.0. " +
      'Trained mostly on English: pick it for English deployments that want an open-data model; prefer a Qwen ' +
      'model for other languages. Needs about 2 GB of memory.',
    licence: 'Apache-2.0',
    homepage: 'https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct',
    url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF/resolve/main/smollm2-1.7b-instruct-q4_k_m.gguf',
    fileName: 'smollm2-1.7b-instruct-q4_k_m.gguf',
    quantization: 'Q4_K_M',
    approxSize: '1.1 GB',
  },
];

/** The catalog entry with this name (case-insensitive), or undefined. */
export function findModel(name: string, catalog: readonly CatalogEntry[] = MODEL_CATALOG): CatalogEntry | undefined {
  const wanted = name.trim().toLowerCase();
  return catalog.find((entry) => entry.name === wanted);
}

export function catalogNames(catalog: readonly CatalogEntry[] = MODEL_CATALOG): string[] {
  return catalog.map((entry) => entry.name);
}

/** One line on how a download of this entry is checked. */
export function describeVerification(entry: GgufCatalogEntry): string {
  if (entry.sha256 !== undefined && entry.sizeBytes !== undefined) return 'size and sha256 verified';
  if (entry.sha256 !== undefined) return 'sha256 verified';
  if (entry.sizeBytes !== undefined) return 'size verified; no sha256 pinned';
  return 'no size or sha256 pinned yet: checked when known, sha256 printed after download';
}

/** `$BRIER_DATA_DIR/models`, with BRIER_DATA_DIR defaulting to `./data`, as an absolute path. */
export function defaultModelsDir(env: Readonly<Record<string, string | undefined>>): string {
  const dataDir = env.BRIER_DATA_DIR?.trim() || './data';
  return resolve(dataDir, 'models');
}

/** Where a catalog GGUF lives once pulled. */
export function modelFilePath(entry: GgufCatalogEntry, modelsDir: string): string {
  return join(modelsDir, entry.fileName);
}

/** The suffix of an unfinished download next to the final file. */
export const PARTIAL_SUFFIX = '.partial';

export type DownloadState =
  | { state: 'embedded' }
  | { state: 'downloaded'; path: string; bytes: number }
  | { state: 'partial'; path: string; bytes: number }
  | { state: 'missing'; path: string };

/** Whether a catalog entry is on disk (by presence and name only; `models pull` verifies content). */
export function downloadState(entry: CatalogEntry, modelsDir: string): DownloadState {
  if (entry.engine === 'embedded') return { state: 'embedded' };
  const path = modelFilePath(entry, modelsDir);
  const final = fileSize(path);
  if (final !== undefined) return { state: 'downloaded', path, bytes: final };
  const partial = fileSize(path + PARTIAL_SUFFIX);
  if (partial !== undefined) return { state: 'partial', path: path + PARTIAL_SUFFIX, bytes: partial };
  return { state: 'missing', path };
}

function fileSize(path: string): number | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

/** What the service should load, decided from `BRIER_MODEL`. */
export type ModelSpec =
  | { kind: 'embedded'; entry: EmbeddedCatalogEntry }
  /** `entry` is set when the file came from the catalog (its description then names the model). */
  | { kind: 'gguf'; path: string; entry?: GgufCatalogEntry }
  /** Another System One server (e.g. a hosted Jev endpoint or another Brier), by base URL. */
  | { kind: 'upstream'; baseUrl: string }
  /** An OpenAI-compatible completions server with log-probabilities (vLLM, SGLang, llama.cpp server), by base URL. */
  | { kind: 'openai'; baseUrl: string };

/**
 * Maps a `BRIER_MODEL` value to what to load:
 * - unset, empty or `brier-lite`: the embedded model;
 * - a catalog name: that GGUF under `modelsDir` (throws, naming the pull command, when not downloaded);
 * - a path ending in `.gguf`: that file, resolved against the working directory (throws when missing);
 * - an `http://` or `https://` URL: an upstream System One server at that base URL;
 * - `openai+http://` or `openai+https://` and a base URL without /v1: an OpenAI-compatible completions
 *   server (vLLM, SGLang, llama.cpp server) at that base URL;
 * - anything else: throws, listing the catalog names.
 * Checks presence only: content is verified by `models pull`, and loading a bad file fails in the engine.
 */
export function resolveModelSpec(
  value: string | undefined,
  modelsDir: string,
  catalog: readonly CatalogEntry[] = MODEL_CATALOG,
): ModelSpec {
  const raw = value?.trim() ?? '';
  if (raw === '') {
    const lite = catalog.find((entry): entry is EmbeddedCatalogEntry => entry.engine === 'embedded');
    if (lite === undefined) throw new Error('BRIER_MODEL is unset and the catalog has no embedded model');
    return { kind: 'embedded', entry: lite };
  }

  const entry = findModel(raw, catalog);
  if (entry !== undefined) {
    if (entry.engine === 'embedded') return { kind: 'embedded', entry };
    const path = modelFilePath(entry, modelsDir);
    if (fileSize(path) !== undefined) return { kind: 'gguf', path, entry };
    const partial = fileSize(path + PARTIAL_SUFFIX);
    const state =
      partial === undefined
        ? 'is not downloaded'
        : `is only partly downloaded (${partial} bytes in ${path + PARTIAL_SUFFIX})`;
    throw new Error(
      `BRIER_MODEL=${entry.name}: the model ${state}; expected ${path}. ` +
        `Run \`npm run brier -- models pull ${entry.name}\` first` +
        (partial === undefined ? '' : ' (it resumes)') +
        ', or set BRIER_DATA_DIR to the data dir that holds it.',
    );
  }

  const openai = /^openai\+(https?:\/\/.*)$/i.exec(raw);
  if (openai) {
    const baseUrl = upstreamBaseUrl(raw, openai[1] ?? '', 'an OpenAI-compatible completions server');
    if (/\/v1$/i.test(baseUrl)) {
      throw new Error(
        `BRIER_MODEL=${raw}: give the server's base URL without /v1 (Brier adds /v1/models and /v1/completions)`,
      );
    }
    return { kind: 'openai', baseUrl };
  }

  if (/^https?:\/\//i.test(raw)) {
    return { kind: 'upstream', baseUrl: upstreamBaseUrl(raw, raw, 'an upstream System One server') };
  }

  if (raw.toLowerCase().endsWith('.gguf')) {
    const path = resolve(raw);
    if (fileSize(path) === undefined) {
      throw new Error(`BRIER_MODEL=${raw}: no GGUF file at ${path}`);
    }
    return { kind: 'gguf', path };
  }

  throw new Error(
    `BRIER_MODEL=${raw} is not a known model. Use one of: ${catalogNames(catalog).join(', ')}; ` +
      'or a path to a .gguf file; or the http(s):// base URL of an upstream System One server; ' +
      'or openai+http(s):// and the base URL of an OpenAI-compatible completions server. ' +
      'See `npm run brier -- models list`.',
  );
}

/** An upstream base URL without a trailing slash; throws, naming `what`, on a bad URL, query or fragment. */
function upstreamBaseUrl(raw: string, value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`BRIER_MODEL=${raw}: not a valid URL for ${what}`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new Error(`BRIER_MODEL=${raw}: an upstream base URL takes no query or fragment`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * A plain description of what a spec loads, for /v1/models, the console and the startup log:
 * the catalog description for catalog models, an honest generic line otherwise.
 */
export function describeModelSpec(spec: ModelSpec): { name: string; description: string } {
  switch (spec.kind) {
    case 'embedded':
      return { name: spec.entry.name, description: spec.entry.description };
    case 'gguf':
      if (spec.entry !== undefined) {
        return { name: spec.entry.name, description: `${spec.entry.title}. ${spec.entry.description}` };
      }
      return {
        name: basename(spec.path).replace(/\.gguf$/i, ''),
        description:
          `A custom GGUF model loaded from ${basename(spec.path)}, not from the Brier catalog: what it is good ` +
          'for depends on that model. Instruct (chat) models give the most useful probabilities.',
      };
    case 'upstream':
      return {
        name: 'upstream',
        description: `Answers come from the upstream System One server at ${new URL(spec.baseUrl).host}.`,
      };
    case 'openai':
      return {
        name: 'openai-completions',
        description: `Answers come from the OpenAI-compatible completions server at ${new URL(spec.baseUrl).host}.`,
      };
  }
}
