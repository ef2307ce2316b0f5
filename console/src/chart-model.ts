/**
 * The console's charts are drawn at the width they are shown at (one SVG unit is one CSS pixel),
 * so that their labels keep their size on a phone. Tested in test/console/chart-model.test.ts.
 */

/** Room an axis label of a date ("05-12") takes at 11 px, with a gap. */
export const DATE_LABEL_PX = 44;

/** Every how many points an axis is labelled, so that `count` labels fit in `width` pixels. */
export function labelEvery(count: number, width: number, perLabel = DATE_LABEL_PX): number {
  const fit = Math.max(1, Math.floor(width / perLabel));
  return Math.max(1, Math.ceil(count / fit));
}
