/**
 * Everything `vitepress build docs` needs that is generated from the code: the API reference (from the
 * live OpenAPI document), the calibration page (from the model's report), and the configuration,
 * error, rate-limit and model tables. `node docs/scripts/generate.ts` (part of `npm run build:docs`).
 */
import { generateCalibration } from './model-card.ts';
import { generateReference } from './openapi.ts';
import { generateTables } from './tables.ts';

const started = performance.now();
const ops = await generateReference();
generateCalibration();
generateTables();
console.log(
  `docs: generated the API reference (${ops.length} operations), calibration and reference tables in ${Math.round(performance.now() - started)} ms`,
);
