/** Deterministic stand-ins used by the embedded engine's tests. */
import { seededUnitVector } from './golden.ts';

export function hash32ForTests(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function seededUnitVectorFromText(text: string): Float32Array {
  return seededUnitVector(hash32ForTests(text));
}
