/** Embeddings cached on disk under .cache/brier-lite (git-ignored): texts.jsonl + vectors.f32 (dim floats each), same order. */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENCODER_WINDOW } from '../engines/embedded/embedder.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import { REPO_ROOT } from './data.ts';

export interface DiskStore {
  get(text: string): Float32Array | undefined;
  set(text: string, v: Float32Array): void;
  flush(): void;
  size(): number;
}

export function openDiskStore(
  // '-int8': brier-lite 4.2's encoders (int8 products); 4.1's float32 vectors were cached without it
  name = `embeddings-w${ENCODER_WINDOW}-int8`,
  readOnly = false,
  dim: number = EMBEDDING_DIM,
): DiskStore {
  const dir = join(REPO_ROOT, '.cache', 'brier-lite');
  mkdirSync(dir, { recursive: true });
  const textsPath = join(dir, `${name}.texts.jsonl`);
  const vecPath = join(dir, `${name}.f32`);
  const map = new Map<string, Float32Array>();
  if (existsSync(textsPath) && existsSync(vecPath)) {
    const texts = readFileSync(textsPath, 'utf8').split('\n').filter(Boolean);
    const buf = readFileSync(vecPath);
    const all = new Float32Array(buf.buffer, buf.byteOffset, Math.floor(buf.byteLength / 4));
    const n = Math.min(texts.length, Math.floor(all.length / dim));
    for (let i = 0; i < n; i++) map.set(JSON.parse(texts[i] ?? '""') as string, all.slice(i * dim, (i + 1) * dim));
    if (!readOnly && (n !== texts.length || n * dim !== all.length)) {
      // an interrupted flush: keep the first n consistent entries
      writeFileSync(textsPath, n > 0 ? `${texts.slice(0, n).join('\n')}\n` : '');
      writeFileSync(vecPath, new Uint8Array(all.slice(0, n * dim).buffer));
    }
  }
  let pendingTexts: string[] = [];
  let pendingVecs: Float32Array[] = [];
  return {
    get: (t) => map.get(t),
    set(t, v) {
      if (map.has(t)) return;
      map.set(t, v);
      pendingTexts.push(t);
      pendingVecs.push(v);
    },
    flush() {
      if (pendingTexts.length === 0) return;
      const buf = new Float32Array(pendingVecs.length * dim);
      pendingVecs.forEach((v, i) => {
        buf.set(v, i * dim);
      });
      // vectors first: a crash between the two writes leaves extra vectors, never missing ones
      appendFileSync(vecPath, new Uint8Array(buf.buffer));
      appendFileSync(textsPath, `${pendingTexts.map((t) => JSON.stringify(t)).join('\n')}\n`);
      pendingTexts = [];
      pendingVecs = [];
    },
    size: () => map.size,
  };
}
