/**
 * Episode scores and their per-group population, shared by GRPO, RLOO and the
 * episode level of GiGPO.
 */
import type { EpisodeStatistics, IndexedBatch } from './batch.ts';
import { type GroupStatistics, groupStatistics } from './group-statistics.ts';
import { subtractInvalidActionPenalty } from './penalty.ts';

/** Row scores and the statistics of each task group's population. */
export interface EpisodeScores {
  /** score_i = E(τ(i)) − c·[actionValid_i is false]. */
  scores: Float64Array;
  /** Population statistics per task group (index = dense group index). */
  stats: GroupStatistics;
}

/**
 * Scores every row and gathers the population of each task group: every row
 * (`'per-step-sample'`, the reference's `compute_mean_std_cross_steps=True`) or the first row in
 * batch order of each (group, trajectory) pair (`'per-trajectory'`, the paper's Eq. 3).
 *
 * The scores are written over `episodeRewards` (callers no longer need it; one 8 MB array less
 * per million rows).
 */
export function episodeScores(
  ib: IndexedBatch,
  episodeRewards: Float64Array,
  penalty: number,
  population: EpisodeStatistics,
): EpisodeScores {
  const { n, groupIndex, trajectoryIndex, trajectoryCount } = ib;
  const invalid = ib.invalid;
  // The penalty lowers the score of the invalid row only (in place), as the reference applies it per row.
  const scores = subtractInvalidActionPenalty(episodeRewards, invalid, penalty, episodeRewards);
  let include: Uint8Array | undefined;
  if (population === 'per-trajectory') {
    include = new Uint8Array(n);
    // The (group, trajectory) pair seen first for each trajectory; a trajectory that (oddly)
    // spans groups falls back to a keyed set.
    const firstGroup = new Int32Array(trajectoryCount).fill(-1);
    let otherPairs: Set<string> | undefined;
    for (let i = 0; i < n; i++) {
      const t = trajectoryIndex[i] as number;
      const g = groupIndex[i] as number;
      if (firstGroup[t] === -1) {
        firstGroup[t] = g;
        include[i] = 1;
      } else if (firstGroup[t] !== g) {
        otherPairs ??= new Set<string>();
        const key = `${g}:${t}`;
        if (!otherPairs.has(key)) {
          otherPairs.add(key);
          include[i] = 1;
        }
      }
    }
  }
  return { scores, stats: groupStatistics(scores, groupIndex, ib.groupCount, include) };
}
