/**
 * Population statistics per integer group label: mean and unbiased standard deviation, computed
 * in two passes in float64 (`std` = sqrt(Σ(x−mean)²/(m−1)) for m ≥ 2, torch's unbiased std).
 */

/** Per-group population size, mean and unbiased std (std is 0 for m < 2, mean 0 for m = 0). */
export interface GroupStatistics {
  count: Int32Array;
  mean: Float64Array;
  std: Float64Array;
}

/**
 * Statistics of `values[i]` grouped by `label[i]`, counting only rows with `include[i]` (all rows
 * when `include` is absent).
 */
export function groupStatistics(
  values: Float64Array,
  label: Int32Array,
  groupCount: number,
  include?: Uint8Array,
): GroupStatistics {
  const n = values.length;
  const count = new Int32Array(groupCount);
  const mean = new Float64Array(groupCount);
  const std = new Float64Array(groupCount);
  for (let i = 0; i < n; i++) {
    if (include !== undefined && include[i] === 0) continue;
    const g = label[i] as number;
    count[g] = (count[g] as number) + 1;
    mean[g] = (mean[g] as number) + (values[i] as number);
  }
  for (let g = 0; g < groupCount; g++) {
    const m = count[g] as number;
    if (m > 0) mean[g] = (mean[g] as number) / m;
  }
  for (let i = 0; i < n; i++) {
    if (include !== undefined && include[i] === 0) continue;
    const g = label[i] as number;
    const d = (values[i] as number) - (mean[g] as number);
    std[g] = (std[g] as number) + d * d;
  }
  for (let g = 0; g < groupCount; g++) {
    const m = count[g] as number;
    std[g] = m >= 2 ? Math.sqrt((std[g] as number) / (m - 1)) : 0;
  }
  return { count, mean, std };
}
