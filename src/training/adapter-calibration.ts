/**
 * The calibration candidate of adapter fitting: z_j = a ln p_base_j + b_j, a temperature and a
 * per-class bias on the base model's own log-probabilities (what GGUF and upstream engines get), and
 * the base model itself as the candidate that changes nothing.
 */
import { type Candidate, meanNll, type TrainingRows } from './adapter-data.ts';
import { outOfFold, paramCount } from './adapter-linear.ts';

/** The base model's answer as a head (a = 1, no bias): chosen, it means "serve the base model". */
export function baseCandidate({ data, train, targets, weights }: TrainingRows): Candidate {
  const k = data.k;
  const z = train.map((i) => Array.from(data.logBase.subarray(i * k, (i + 1) * k)));
  const x = new Float64Array(paramCount(data, false));
  x[0] = 1;
  return {
    name: 'base model',
    data,
    probe: false,
    lambda: 0,
    nll: meanNll(z, targets, weights, 1),
    temperature: 1,
    mean: x,
    refit: () => x,
  };
}

/** A temperature and per-class biases on the base model's log-probabilities, cross-validated. */
export function calibrationCandidate(
  { data, train, fold, folds, targets, weights }: TrainingRows,
  maxIterations: number,
): Candidate {
  const cal = outOfFold(data, train, fold, folds, 0, false, maxIterations);
  return {
    name: 'calibration',
    data,
    probe: false,
    lambda: 0,
    nll: meanNll(cal.z, targets, weights, 1),
    temperature: 1,
    mean: cal.mean,
  };
}
