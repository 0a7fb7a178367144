/**
 * The summary's statistics: mean and sample standard deviation, the 95 % t-interval of a mean over
 * seeds, paired differences over seeds, and the Wilson interval of a success rate (the runner's,
 * re-exported so the kit has one place for them).
 */
export { wilsonInterval } from '@agentrl/runner';

/** Mean and sample standard deviation (n − 1). */
export function meanStd(xs: readonly number[]): { mean: number; std: number; n: number } {
  const n = xs.length;
  const mean = n === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / n;
  const std = n < 2 ? 0 : Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  return { mean, std, n };
}

/** Two-sided 95 % quantiles of Student's t for 1–30 degrees of freedom. */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145,
  2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048,
  2.045, 2.042,
];

/**
 * The two-sided 95 % quantile of Student's t with `df` degrees of freedom: the table up to 30,
 * beyond it the Cornish–Fisher expansion around the normal's 1.96 (within 0.001 there).
 */
export function t95(df: number): number {
  if (!Number.isInteger(df) || df < 1) return Number.NaN;
  const tabled = T95[df - 1];
  if (tabled !== undefined) return tabled;
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}

/** A mean over seeds with its 95 % t-interval (NaN bounds with fewer than two values). */
export interface MeanInterval {
  readonly mean: number;
  readonly low: number;
  readonly high: number;
  readonly n: number;
}

/** The mean of `xs` and its two-sided 95 % Student t-interval, mean ± t(n − 1) · sd / √n. */
export function tInterval(xs: readonly number[]): MeanInterval {
  const { mean, std, n } = meanStd(xs);
  const t = t95(n - 1);
  const half = n >= 2 ? (t * std) / Math.sqrt(n) : Number.NaN;
  return { mean, low: mean - half, high: mean + half, n };
}

/** A paired comparison over seeds: each seed's difference, their mean and its 95 % t-interval. */
export interface PairedDifference extends MeanInterval {
  readonly perSeed: { seed: number; diff: number }[];
}

/**
 * Paired comparison of two measurements over seeds: per-seed differences `a − b` (of the seeds
 * both have), their mean and a 95 % t-interval (each seed's arms share a warm start and the
 * held-out episodes). Fewer than two seeds: no interval (NaN).
 */
export function pairedDifference(
  a: ReadonlyMap<number, number>,
  b: ReadonlyMap<number, number>,
): PairedDifference {
  const perSeed = [...a.keys()]
    .filter((seed) => b.has(seed))
    .sort((x, y) => x - y)
    .map((seed) => ({ seed, diff: (a.get(seed) as number) - (b.get(seed) as number) }));
  return { perSeed, ...tInterval(perSeed.map((p) => p.diff)) };
}
