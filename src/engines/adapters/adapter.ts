/**
 * Adapters, the serving side: an account's head on top of the base model for its own question
 * templates, fitted by a training job (src/training/adapter-fit.ts) and applied here. Pure maths, no
 * I/O; training evaluates with these same functions, so the numbers a job reports are the numbers
 * served.
 *
 * Per template, over its classes in canonical order (src/systemone/templates.ts):
 *
 *   z_j = baseWeight * ln p_base_j + bias_j + w_j . s        p = softmax(z / temperature)
 *
 * `s` is the base engine's state features (the embedded engine: the USE-lite state embedding) and
 * `w` a probe on them; a calibration-only head (GGUF and upstream engines, or where the probe did not
 * measure better) has no `w`: a temperature and a per-class bias on the base model's own log-odds.
 */

export const ADAPTER_FORMAT = 'brier-adapter/1';

export type HeadKind = 'probe' | 'calibration';

/** One template's head, as stored (JSON). */
export interface HeadFile {
  template: string;
  type: 'noul' | 'choice' | 'score';
  /** The classes in canonical order. */
  labels: string[];
  kind: HeadKind;
  baseWeight: number;
  bias: number[];
  /** probe: k x dim float32, row-major, base64 (little-endian); calibration: null. */
  weights: string | null;
  dim: number;
  temperature: number;
}

/** The stored artifact of one adapter. */
export interface AdapterFile {
  format: string;
  /** The base model id it was fitted on; it serves only on that model. */
  base: string;
  /** The state features its probe heads read (DecisionEngine.features.id), or null when none do. */
  features: string | null;
  heads: HeadFile[];
}

export interface Head extends Omit<HeadFile, 'weights'> {
  weights: Float32Array | null;
}

export interface Adapter {
  base: string;
  features: string | null;
  /** By template id. */
  heads: Map<string, Head>;
}

function floats(s: string, n: number, what: string): Float32Array {
  const buf = Buffer.from(s, 'base64');
  if (buf.byteLength !== n * 4) throw new Error(`adapter: ${what} has ${buf.byteLength / 4} floats, expected ${n}`);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

export function encodeWeights(w: Float32Array): string {
  return Buffer.from(w.buffer, w.byteOffset, w.byteLength).toString('base64');
}

/** Parses and checks a stored artifact (sizes, finite numbers); throws on anything malformed. */
export function parseAdapter(file: AdapterFile): Adapter {
  if (file.format !== ADAPTER_FORMAT) throw new Error(`adapter: unknown format ${file.format}`);
  const heads = new Map<string, Head>();
  for (const h of file.heads) {
    const k = h.labels.length;
    if (k < 2 || h.bias.length !== k)
      throw new Error(`adapter: ${h.template} has ${h.bias.length} biases for ${k} classes`);
    const numbers = [h.baseWeight, h.temperature, ...h.bias];
    if (!numbers.every(Number.isFinite) || !(h.temperature > 0)) throw new Error(`adapter: ${h.template} is malformed`);
    const weights = h.kind === 'probe' && h.weights ? floats(h.weights, k * h.dim, h.template) : null;
    if (h.kind === 'probe' && (!weights || !(h.dim > 0)))
      throw new Error(`adapter: ${h.template} probe without weights`);
    heads.set(h.template, { ...h, weights });
  }
  return { base: file.base, features: file.features, heads };
}

/** Logits of a head before its temperature, from canonical-order base probabilities and state features. */
export function headLogits(head: Head, base: readonly number[], state: ArrayLike<number> | null): number[] {
  const k = head.labels.length;
  const z = new Array<number>(k);
  for (let j = 0; j < k; j++) {
    let v = head.baseWeight * Math.log(Math.max(1e-12, base[j] ?? 0)) + (head.bias[j] ?? 0);
    if (head.weights && state) {
      const row = j * head.dim;
      for (let d = 0; d < head.dim; d++) v += (head.weights[row + d] ?? 0) * (state[d] ?? 0);
    }
    z[j] = v;
  }
  return z;
}

export function softmax(z: readonly number[], temperature = 1): number[] {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of z) max = Math.max(max, v / temperature);
  const e = z.map((v) => Math.exp(v / temperature - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** The head's answer (canonical order). */
export function applyHead(head: Head, base: readonly number[], state: ArrayLike<number> | null): number[] {
  return softmax(headLogits(head, base, state), head.temperature);
}
