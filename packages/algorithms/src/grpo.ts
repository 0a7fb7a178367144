/**
 * GRPO's group-relative outcome advantage (Shao et al. 2024, DeepSeekMath Eq. 3 / outcome
 * supervision), as verl-agent's `compute_grpo_outcome_advantage`, which is also the
 * episode-level advantage A^E of GiGPO (paper Eq. 3).
 */
import type { OptionsSchema, StepBatch } from '@agentrl/core';
import {
  booleanOption,
  type EpisodeStatistics,
  episodeStatisticsOption,
  epsilonOption,
  type IndexedBatch,
  indexBatch,
  optionsObject,
  penaltyOption,
  SHARED_OPTIONS,
} from './batch.ts';
import type { EpisodeScores } from './episode-scores.ts';
import { episodeScores } from './episode-scores.ts';
import { trajectoryQuantities } from './returns.ts';

/** Options of {@link computeGRPOAdvantages}; defaults are verl-agent's. */
export interface GRPOOptions {
  /** Divide by the group's std (+ε). Default true (`norm_adv_by_std_in_grpo`); false is Dr.GRPO. */
  normalizeByStd?: boolean;
  /** Coefficient c subtracted from the score of rows with an invalid action. Default 0.1; 0 disables. */
  invalidActionPenalty?: number;
  /** ε added to σ. Default 1e-6. */
  epsilon?: number;
  /** Population of the group statistics. Default `'per-step-sample'` (the reference's). */
  episodeStatistics?: EpisodeStatistics;
}

/** The options {@link computeGRPOAdvantages} accepts, with verl-agent's defaults. */
export const GRPO_OPTIONS = {
  normalizeByStd: {
    description:
      "divide by the group's standard deviation + ε (reference norm_adv_by_std_in_grpo); false is Dr.GRPO",
    default: true,
  },
  ...SHARED_OPTIONS,
} as const satisfies OptionsSchema;

/** GRPO advantages of every row. */
export interface GRPOResult {
  /** A_i. */
  advantages: Float64Array;
  /** score_i = E(τ) − c·[invalid]. */
  episodeScores: Float64Array;
}

/** Group-relative advantages A_i = (score_i − μ_g) / (σ_g + ε) (or without the division). */
export function computeGRPOAdvantages(batch: StepBatch, options?: GRPOOptions): GRPOResult {
  const o = optionsObject(options, false, GRPO_OPTIONS, 'GRPO options');
  const normalizeByStd = booleanOption(
    o.normalizeByStd,
    GRPO_OPTIONS.normalizeByStd.default,
    'normalizeByStd',
  );
  const penalty = penaltyOption(o.invalidActionPenalty);
  const epsilon = epsilonOption(o.epsilon);
  const population = episodeStatisticsOption(o.episodeStatistics);
  const ib = indexBatch(batch, false);
  const { episodeRewards } = trajectoryQuantities(ib, 1.0);
  const ep = episodeScores(ib, episodeRewards, penalty, population);
  return {
    advantages: episodeRelativeAdvantages(ib, ep, normalizeByStd, epsilon),
    episodeScores: ep.scores,
  };
}

/**
 * A^E_i of every row (paper Eq. 3). A group whose population is a single value uses μ = 0,
 * σ = 1, as the reference does: the advantage is the raw score, not 0.
 */
export function episodeRelativeAdvantages(
  ib: IndexedBatch,
  ep: EpisodeScores,
  normalizeByStd: boolean,
  epsilon: number,
): Float64Array {
  const { n, groupIndex } = ib;
  const { scores, stats } = ep;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const g = groupIndex[i] as number;
    const single = stats.count[g] === 1;
    const mu = single ? 0 : (stats.mean[g] as number);
    const sigma = single ? 1 : (stats.std[g] as number);
    // A^E = (score − μ) / (σ + ε) for mean_std_norm, score − μ for mean_norm (Eq. 3, F_norm ∈ {std, 1}).
    out[i] = normalizeByStd
      ? ((scores[i] as number) - mu) / (sigma + epsilon)
      : (scores[i] as number) - mu;
  }
  return out;
}
