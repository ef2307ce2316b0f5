/**
 * A small L-BFGS minimiser (two-loop recursion, backtracking Armijo line search) for the smooth convex
 * objectives of adapter fitting. Deterministic; no allocation in the inner loops beyond the history.
 */

export interface LbfgsOptions {
  maxIterations?: number;
  /** History pairs kept. */
  memory?: number;
  /** Stop when the gradient's max-norm falls below this. */
  gradientTolerance?: number;
  /** Stop when the relative decrease of the objective in one step falls below this. */
  relativeTolerance?: number;
}

/** `f` writes the gradient at `x` into `g` and returns the objective. */
export type Objective = (x: Float64Array, g: Float64Array) => number;

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] ?? 0) * (b[i] ?? 0);
  return s;
}

function maxAbs(a: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] ?? 0));
  return m;
}

/** Minimises `f` from `x0` (modified in place and returned) and reports the final value and iterations. */
export function lbfgs(
  f: Objective,
  x0: Float64Array,
  options: LbfgsOptions = {},
): { x: Float64Array; value: number; iterations: number } {
  const n = x0.length;
  const m = options.memory ?? 8;
  const maxIterations = options.maxIterations ?? 200;
  const gtol = options.gradientTolerance ?? 1e-6;
  const rtol = options.relativeTolerance ?? 1e-9;
  const x = x0;
  const g = new Float64Array(n);
  let fx = f(x, g);
  const s: Float64Array[] = [];
  const y: Float64Array[] = [];
  const rho: number[] = [];
  const d = new Float64Array(n);
  const xNew = new Float64Array(n);
  const gNew = new Float64Array(n);
  const alpha = new Array<number>(m).fill(0);
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    if (maxAbs(g) < gtol) break;
    // Two-loop recursion: d = -H g.
    for (let i = 0; i < n; i++) d[i] = -(g[i] ?? 0);
    for (let k = s.length - 1; k >= 0; k--) {
      const a = (rho[k] ?? 0) * dot(s[k] as Float64Array, d);
      alpha[k] = a;
      const yk = y[k] as Float64Array;
      for (let i = 0; i < n; i++) d[i] = (d[i] ?? 0) - a * (yk[i] ?? 0);
    }
    if (s.length > 0) {
      const last = s.length - 1;
      const yy = dot(y[last] as Float64Array, y[last] as Float64Array);
      const gamma = yy > 0 ? dot(s[last] as Float64Array, y[last] as Float64Array) / yy : 1;
      for (let i = 0; i < n; i++) d[i] = (d[i] ?? 0) * gamma;
    } else {
      // First step: a unit-length move along the steepest descent.
      const norm = Math.sqrt(dot(d, d));
      if (norm > 0) for (let i = 0; i < n; i++) d[i] = (d[i] ?? 0) / Math.max(1, norm);
    }
    for (let k = 0; k < s.length; k++) {
      const sk = s[k] as Float64Array;
      const b = (rho[k] ?? 0) * dot(y[k] as Float64Array, d);
      const a = alpha[k] ?? 0;
      for (let i = 0; i < n; i++) d[i] = (d[i] ?? 0) + (a - b) * (sk[i] ?? 0);
    }
    let slope = dot(g, d);
    if (!(slope < 0)) {
      // Not a descent direction (numerical trouble): restart from steepest descent.
      s.length = 0;
      y.length = 0;
      rho.length = 0;
      for (let i = 0; i < n; i++) d[i] = -(g[i] ?? 0);
      slope = dot(g, d);
      if (!(slope < 0)) break;
    }
    let step = 1;
    let fNew = Number.POSITIVE_INFINITY;
    for (let tries = 0; tries < 30; tries++) {
      for (let i = 0; i < n; i++) xNew[i] = (x[i] ?? 0) + step * (d[i] ?? 0);
      fNew = f(xNew, gNew);
      if (Number.isFinite(fNew) && fNew <= fx + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(fNew < fx)) break;
    const sk = new Float64Array(n);
    const yk = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      sk[i] = (xNew[i] ?? 0) - (x[i] ?? 0);
      yk[i] = (gNew[i] ?? 0) - (g[i] ?? 0);
    }
    const sy = dot(sk, yk);
    if (sy > 1e-12) {
      s.push(sk);
      y.push(yk);
      rho.push(1 / sy);
      if (s.length > m) {
        s.shift();
        y.shift();
        rho.shift();
      }
    }
    const decrease = fx - fNew;
    x.set(xNew);
    g.set(gNew);
    fx = fNew;
    if (decrease <= rtol * Math.max(1, Math.abs(fx))) {
      iterations++;
      break;
    }
  }
  return { x, value: fx, iterations };
}
