/**
 * The probe candidates of adapter fitting (when state features exist): the calibration head plus
 * w_j . s, a multinomial logistic probe on the state embedding with an L2 penalty from a grid, then a
 * temperature fitted on the out-of-fold logits; given label features e_j (TemplateData.labelStates),
 * each penalty also with a label prior g * (s . e_j), so that the penalty shrinks w_j toward g * e_j
 * rather than 0, stored folded into w_j.
 */
import { type Candidate, fitSoftTemperature, meanNll, type TrainingRows, withoutLabels } from './adapter-data.ts';
import { outOfFold } from './adapter-linear.ts';

/**
 * Measured (bench:adapt): the old grid's floor, 1e-3, was the choice on most sets; on clinc150 (151
 * intents, under 3 examples each) 3e-4 was chosen in every fold and accuracy went 0.23 -> 0.53.
 */
export const DEFAULT_LAMBDAS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1] as const;

export function probeCandidates(
  { data, train, fold, folds, targets, weights }: TrainingRows,
  options: { lambdas?: readonly number[] | undefined; maxIterations: number },
  progress?: (message: string) => void,
): Candidate[] {
  if (!data.states) return [];
  // With label features, the probe is cross-validated with and without its label prior: the prior
  // helps where a class has few examples (clinc150, 3 a class) and can cost calibration where it has
  // many (bench:adapt, the 4 choice sets at 200 labels: mean ECE 0.048 without, 0.055 always with).
  const variants = data.affinity
    ? [
        { data: withoutLabels(data), suffix: '' },
        { data, suffix: ' + label prior' },
      ]
    : [{ data, suffix: '' }];
  const out: Candidate[] = [];
  for (const variant of variants)
    for (const lambda of options.lambdas ?? DEFAULT_LAMBDAS) {
      const name = `probe${variant.suffix} (L2 ${lambda})`;
      progress?.(`${name}: cross-validating`);
      const { z, mean } = outOfFold(variant.data, train, fold, folds, lambda, true, options.maxIterations);
      const temperature = fitSoftTemperature(z, targets, weights);
      out.push({
        name,
        data: variant.data,
        probe: true,
        lambda,
        nll: meanNll(z, targets, weights, temperature),
        temperature,
        mean,
      });
    }
  return out;
}
