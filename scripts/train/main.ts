/**
 * `npm run train [-- --seeds 4,5,6] [-- --no-latency] [-- --no-paraphrase] [-- --no-coherence]`: trains brier-lite into models/brier-lite
 * (src/training/train.ts). `--seeds 4` or `--seeds 4,5,6`: stage A with other seeds for every type
 * (each type's head their mean), written to .cache/brier-lite/seeds-4-5-6 (never over the shipped
 * artifact), to measure how much the reported numbers move with training randomness alone.
 * `--no-latency`: skip the latency measurement. `--no-paraphrase`: skip the paraphrase suite.
 * `--no-coherence`: skip the coherence suite.
 */
import { parseSeedList, train } from '../../src/training/train.ts';

const argv = process.argv.slice(2);
const seedsAt = argv.indexOf('--seeds');
await train({
  ...(seedsAt >= 0 ? { seeds: parseSeedList(String(argv[seedsAt + 1])) } : {}),
  latency: !argv.includes('--no-latency'),
  paraphrase: !argv.includes('--no-paraphrase'),
  coherence: !argv.includes('--no-coherence'),
});
