/** Writing the artifact files whose types are in src/engines/embedded/artifacts.ts. */

/** A float32 matrix as weights.json stores it: base64 of its little-endian bytes (artifacts.ts `decodeFloats` reads it). */
export function encodeFloats(a: Float32Array): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
}
