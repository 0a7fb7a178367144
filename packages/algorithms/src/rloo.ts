/**
 * RLOO's leave-one-out outcome advantage (Ahmadian et al. 2024), as verl-agent's
 * `compute_rloo_outcome_advantage`.
 */
import type { OptionsSchema, StepBatch } from '@agentrl/core';
import {
  type EpisodeStatistics,
  episodeStatisticsOption,
  epsilonOption,
  indexBatch,
  optionsObject,
  penaltyOption,
  SHARED_OPTIONS,
} from './batch.ts';
import { episodeScores } from './episode-scores.ts';
import { trajectoryQuantities } from './returns.ts';

/** Options of {@link computeRLOOAdvantages}; defaults are verl-agent's. */
export interface RLOOOptions {
  /** Coefficient c subtracted from the score of rows with an invalid action. Default 0.1; 0 disables. */
  invalidActionPenalty?: number;
  /** Accepted for symmetry with GRPO; RLOO does not divide by anything. Default 1e-6. */
  epsilon?: number;
  /**
   * Population of the group mean. Default `'per-step-sample'` (the reference's): m then counts
   * step samples, not trajectories (as the reference counts them).
   */
  episodeStatistics?: EpisodeStatistics;
}

/** The options {@link computeRLOOAdvantages} accepts, with verl-agent's defaults. */
export const RLOO_OPTIONS = {
  invalidActionPenalty: SHARED_OPTIONS.invalidActionPenalty,
  epsilon: {
    description: 'accepted for symmetry with GRPO; RLOO divides by nothing',
    default: SHARED_OPTIONS.epsilon.default,
  },
  episodeStatistics: SHARED_OPTIONS.episodeStatistics,
} as const satisfies OptionsSchema;

/** RLOO advantages of every row. */
export interface RLOOResult {
  /** A_i. */
  advantages: Float64Array;
  /** score_i = E(τ) − c·[invalid]. */
  episodeScores: Float64Array;
}

/** Leave-one-out advantages: A_i = score_i − mean of the other m − 1 values of the group. */
export function computeRLOOAdvantages(batch: StepBatch, options?: RLOOOptions): RLOOResult {
  const o = optionsObject(options, false, RLOO_OPTIONS, 'RLOO options');
  const penalty = penaltyOption(o.invalidActionPenalty);
  epsilonOption(o.epsilon);
  const population = episodeStatisticsOption(o.episodeStatistics);
  const ib = indexBatch(batch, false);
  const { episodeRewards } = trajectoryQuantities(ib, 1.0);
  const { scores, stats } = episodeScores(ib, episodeRewards, penalty, population);
  const advantages = new Float64Array(ib.n);
  for (let i = 0; i < ib.n; i++) {
    const g = ib.groupIndex[i] as number;
    const m = stats.count[g] as number;
    const s = scores[i] as number;
    // In the reference's float64 evaluation order: s·m/(m−1) − μ·m/(m−1); m = 1 keeps s.
    advantages[i] = m > 1 ? (s * m) / (m - 1) - ((stats.mean[g] as number) * m) / (m - 1) : s;
  }
  return { advantages, episodeScores: scores };
}
