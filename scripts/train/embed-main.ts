/** `npm run train:embed`: only the embedding step of `npm run train` (src/training/embed.ts), into .cache/brier-lite. */
import { embedTrainingData } from '../../src/training/embed.ts';

await embedTrainingData();
