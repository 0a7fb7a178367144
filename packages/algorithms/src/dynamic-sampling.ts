/**
 * The DAPO-style dynamic-sampling filter (Yu et al. 2025, arXiv 2503.14476), as
 * verl-agent's `filter_group_data`: drop every group whose episode rewards are all equal.
 */
import { InvalidInputError } from '@agentrl/core';

/** Input of {@link filterGroupsWithEqualRewards}. */
export interface DynamicSamplingInput {
  /** E(τ) per trajectory, in group order: trajectory k belongs to group ⌊k / groupSize⌋. */
  episodeRewards: ArrayLike<number>;
  /** Trajectories per group (n, `env.rollout.n`). */
  groupSize: number;
  /** On the last try (`max_num_gen_batches` reached) nothing is filtered. Default false. */
  lastTry?: boolean;
}

/**
 * Indices of the trajectories kept, increasing. Rewards are compared after rounding to float32,
 * as the reference does (0.1 + 0.2 and 0.3 count as equal).
 */
export function filterGroupsWithEqualRewards(input: DynamicSamplingInput): Int32Array {
  const { episodeRewards, groupSize } = input;
  const n = episodeRewards.length;
  if (!Number.isInteger(groupSize) || groupSize < 1) {
    throw new InvalidInputError(`groupSize must be a positive integer; got ${String(groupSize)}`, {
      details: { field: 'groupSize', value: groupSize },
    });
  }
  if (n % groupSize !== 0) {
    throw new InvalidInputError(
      `episodeRewards has ${n} entries, not a multiple of groupSize ${groupSize}; pass whole groups`,
      { details: { field: 'episodeRewards', length: n, groupSize } },
    );
  }
  for (let k = 0; k < n; k++) {
    if (!Number.isFinite(episodeRewards[k])) {
      throw new InvalidInputError(
        `episodeRewards[${k}] must be a finite number; got ${String(episodeRewards[k])}`,
        { details: { field: 'episodeRewards', index: k } },
      );
    }
  }
  if (input.lastTry === true) return Int32Array.from({ length: n }, (_, k) => k);
  const kept: number[] = [];
  for (let start = 0; start < n; start += groupSize) {
    const first = Math.fround(episodeRewards[start] as number);
    let varied = false;
    for (let k = start + 1; k < start + groupSize; k++) {
      if (Math.fround(episodeRewards[k] as number) !== first) {
        varied = true;
        break;
      }
    }
    if (varied) for (let k = start; k < start + groupSize; k++) kept.push(k);
  }
  return Int32Array.from(kept);
}
