/**
 * Discounted step returns (paper Eq. 5) and episode rewards, in O(n).
 *
 * Rows are bucketed by trajectory with a stable counting sort; inside a trajectory the distinct
 * steps are ordered by `stepIndex` (rows that repeat a `(trajectoryId, stepIndex)` are the
 * trainer's padding copies and take the values of the first such row in batch order).
 */
import { ConfigError, type OptionSpec, type OptionsSchema, type StepBatch } from '@agentrl/core';
import { type IndexedBatch, indexBatch, numberOption, optionsObject } from './batch.ts';

/** Options of {@link computeStepReturns}. */
export interface StepReturnsOptions {
  /**
   * Discount γ in [0, 1]. Reference default 1.0 (`algorithm.gamma`); the paper's ALFWorld run
   * uses 0.95.
   */
  gamma?: number;
}

/** Per-row trajectory quantities. */
export interface StepReturns {
  /** R_t = Σ_{k≥t} γ^{k−t} r_k of the row's step, no bootstrap. */
  stepReturns: Float64Array;
  /** E(τ) = Σ_t r_t of the row's trajectory, undiscounted. */
  episodeRewards: Float64Array;
}

/** Discounted step returns and episode rewards of every row. */
export function computeStepReturns(batch: StepBatch, options?: StepReturnsOptions): StepReturns {
  const o = optionsObject(options, false, STEP_RETURNS_OPTIONS, 'computeStepReturns options');
  return trajectoryQuantities(indexBatch(batch, false), gammaOption(o.gamma));
}

/** The discount option (paper Eq. 5): reference default 1.0 (`algorithm.gamma`). */
export const GAMMA_OPTION = {
  description:
    "discount γ in [0, 1] of the step returns (paper Eq. 5); the paper's ALFWorld run uses 0.95",
  default: 1.0,
} as const satisfies OptionSpec;

/** Options of {@link computeStepReturns}, declared. */
export const STEP_RETURNS_OPTIONS: OptionsSchema = { gamma: GAMMA_OPTION };

/** γ ∈ [0, 1], default 1.0 (reference `algorithm.gamma`). */
export function gammaOption(value: unknown): number {
  const gamma = numberOption(value, GAMMA_OPTION.default, 'gamma');
  if (gamma < 0 || gamma > 1) {
    throw new ConfigError(`gamma must be in [0, 1]; got ${gamma}`, {
      details: { field: 'gamma', value: gamma },
    });
  }
  return gamma;
}

/** The O(n) pass shared by the estimators. */
export function trajectoryQuantities(ib: IndexedBatch, gamma: number): StepReturns {
  const { n, trajectoryIndex, trajectoryCount } = ib;
  const steps = ib.stepIndices;
  const rewards = ib.rewards;
  const stepReturns = new Float64Array(n);
  const episodeRewards = new Float64Array(n);
  if (ib.trajectoriesContiguous) {
    // Trajectory-major batch (the rollout loop's order): one backward pass when every trajectory's
    // steps are strictly increasing; otherwise the general path below.
    if (contiguousFastPath(ib, gamma, stepReturns, episodeRewards))
      return { stepReturns, episodeRewards };
  }
  // Stable counting sort of the rows by trajectory.
  const start = new Int32Array(trajectoryCount + 1);
  for (let i = 0; i < n; i++) {
    const t = (trajectoryIndex[i] as number) + 1;
    start[t] = (start[t] as number) + 1;
  }
  for (let t = 0; t < trajectoryCount; t++)
    start[t + 1] = (start[t + 1] as number) + (start[t] as number);
  const fill = start.slice(0, trajectoryCount);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const t = trajectoryIndex[i] as number;
    order[fill[t] as number] = i;
    fill[t] = (fill[t] as number) + 1;
  }
  for (let t = 0; t < trajectoryCount; t++) {
    const lo = start[t] as number;
    const hi = start[t + 1] as number;
    let sorted = true;
    for (let k = lo + 1; k < hi; k++) {
      if ((steps[order[k] as number] as number) < (steps[order[k - 1] as number] as number)) {
        sorted = false;
        break;
      }
    }
    if (!sorted) {
      // Rows of a trajectory out of step order (reordered batches): a stable sort keeps the
      // first row of each (trajectory, step) first.
      const rows = Array.from(order.subarray(lo, hi));
      rows.sort((a, b) => (steps[a] as number) - (steps[b] as number));
      order.set(rows, lo);
    }
    // Paper Eq. 5: R_t = r_t + γ·R_{t+1}, R_T = 0, over the distinct steps only; a
    // repeated (trajectory, step) row is a padding copy and takes its original's return.
    let running = 0;
    let k = hi - 1;
    while (k >= lo) {
      const step = steps[order[k] as number] as number;
      let first = k;
      while (first > lo && steps[order[first - 1] as number] === step) first--;
      running = (rewards[order[first] as number] as number) + gamma * running;
      for (let c = first; c <= k; c++) stepReturns[order[c] as number] = running;
      k = first - 1;
    }
    // E(τ) = Σ_t r_t over the distinct steps, in step order.
    let episode = 0;
    for (let c = lo; c < hi; c++) {
      if (c === lo || steps[order[c] as number] !== steps[order[c - 1] as number]) {
        episode += rewards[order[c] as number] as number;
      }
    }
    for (let c = lo; c < hi; c++) episodeRewards[order[c] as number] = episode;
  }
  return { stepReturns, episodeRewards };
}

/**
 * Returns of a batch whose trajectories are contiguous runs of rows with strictly increasing
 * step indices (no copies). Returns false, having written nothing that matters, otherwise.
 */
function contiguousFastPath(
  ib: IndexedBatch,
  gamma: number,
  stepReturns: Float64Array,
  episodeRewards: Float64Array,
): boolean {
  const { n, trajectoryIndex } = ib;
  const steps = ib.stepIndices;
  const rewards = ib.rewards;
  for (let i = 1; i < n; i++) {
    if (
      trajectoryIndex[i] === trajectoryIndex[i - 1] &&
      (steps[i] as number) <= (steps[i - 1] as number)
    ) {
      return false;
    }
  }
  let end = n;
  while (end > 0) {
    const t = trajectoryIndex[end - 1] as number;
    let begin = end - 1;
    while (begin > 0 && trajectoryIndex[begin - 1] === t) begin--;
    // Paper Eq. 5: R_t = r_t + γ·R_{t+1}, R_T = 0.
    let running = 0;
    for (let i = end - 1; i >= begin; i--) {
      running = (rewards[i] as number) + gamma * running;
      stepReturns[i] = running;
    }
    // E(τ) = Σ_t r_t in step order.
    let episode = 0;
    for (let i = begin; i < end; i++) episode += rewards[i] as number;
    for (let i = begin; i < end; i++) episodeRewards[i] = episode;
    end = begin;
  }
  return true;
}
