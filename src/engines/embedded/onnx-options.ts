/**
 * The onnxruntime session options of every encoder graph (USE-lite and MiniLM), in one place.
 *
 * `session.x64quantprecision`: on x86 CPUs without VNNI (AVX2 or AVX-512 alone: AMD Zen 3, older
 * Intel), onnxruntime's default int8 product (uint8 activations x int8 weights) adds pairs of products
 * in 16 bits, which saturate; with this entry it uses uint8 x uint8 products there, which do not (on
 * CPUs with VNNI, and on ARM, it changes nothing). Measured on an AMD EPYC (Zen 3, AVX2, no VNNI):
 * MiniLM's cosine to the float32 reference went 0.9965 -> above 0.998 on ../shared's golden texts, and
 * USE-lite's to its float32 graph 0.989 -> above 0.998, as on the VNNI machines the int8 graphs were
 * built and measured on (minilm.test.ts, use-onnx.test.ts).
 */
import type { InferenceSession } from 'onnxruntime-node';

export function encoderSessionOptions(threads = 1): InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: Math.max(1, threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { x64quantprecision: '1' } },
  };
}
