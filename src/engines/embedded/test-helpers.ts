/** Deterministic stand-ins used by the embedded engine's tests. */
import { hash32 as hash32ForTests } from '../../lib/seeded.ts';
import { seededUnitVector } from './golden.ts';

export { hash32ForTests };

export function seededUnitVectorFromText(text: string): Float32Array {
  return seededUnitVector(hash32ForTests(text));
}
