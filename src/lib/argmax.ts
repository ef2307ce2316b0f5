/** Index of the largest entry (the first on ties; 0 for an empty vector). Missing entries count as 0. */
export function argmax(v: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < v.length; i++) if ((v[i] ?? 0) > (v[best] ?? 0)) best = i;
  return best;
}
