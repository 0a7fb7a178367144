/**
 * GiGPO: Group-in-Group Policy Optimization (Feng et al. 2025, arXiv 2505.10978, Eq. 3–8), as
 * verl-agent's `compute_gigpo_outcome_advantage` at commit 2716b30.
 *
 * A = A^E + ω·A^S: an episode-level relative advantage over each task group (Eq. 3) plus a
 * step-level relative advantage over the rows that acted from the same anchor state (Eq. 6–8).
 */
import { ConfigError, type OptionsSchema, type StepBatch } from '@agentrl/core';
import {
  type EpisodeStatistics,
  episodeStatisticsOption,
  epsilonOption,
  indexBatch,
  numberOption,
  optionsObject,
  penaltyOption,
  SHARED_OPTIONS,
} from './batch.ts';
import { episodeScores } from './episode-scores.ts';
import { groupStatistics } from './group-statistics.ts';
import { episodeRelativeAdvantages } from './grpo.ts';
import { subtractInvalidActionPenalty } from './penalty.ts';
import { GAMMA_OPTION, gammaOption, trajectoryQuantities } from './returns.ts';
import { exactStepGroups, similarityStepGroups } from './step-groups.ts';

/** Normalisation shared by the episode and step levels (reference `mode`). */
export type GiGPOMode = 'mean_norm' | 'mean_std_norm';

/** Options of {@link computeGiGPOAdvantages}; every default is verl-agent's. */
export interface GiGPOOptions {
  /** Discount γ of the step returns (Eq. 5). Default 1.0 (`algorithm.gamma`); the paper's ALFWorld run uses 0.95. */
  gamma?: number;
  /**
   * `mean_norm` (F_norm = 1) or `mean_std_norm` (F_norm = std). Required: the reference's
   * defaults disagree (config `mean_norm`, function and ALFWorld script `mean_std_norm`).
   */
  mode: GiGPOMode;
  /** ω in A = A^E + ω·A^S (Eq. 8). Default 1.0 (`step_advantage_w`). */
  stepAdvantageWeight?: number;
  /** c subtracted from the score and the step return of rows with an invalid action (reference `invalid_action_penalty_coef`). Default 0.1; 0 disables. */
  invalidActionPenalty?: number;
  /**
   * θ ∈ (0, 1): group anchors by difflib ratio ≥ θ (reference `enable_similarity` with
   * `similarity_thresh`, 0.95 when enabled). Absent (the default): exact anchor matching.
   */
  similarityThreshold?: number;
  /** ε added to σ. Default 1e-6. */
  epsilon?: number;
  /** Episode-level population. Default `'per-step-sample'` (reference); `'per-trajectory'` is the paper's Eq. 3. */
  episodeStatistics?: EpisodeStatistics;
}

/** The options {@link computeGiGPOAdvantages} accepts, with verl-agent's defaults. */
export const GIGPO_OPTIONS = {
  mode: {
    description:
      "'mean_norm' or 'mean_std_norm' normalisation of both levels; required (the reference's defaults disagree; the paper's ALFWorld run uses 'mean_std_norm')",
  },
  gamma: GAMMA_OPTION,
  stepAdvantageWeight: {
    description: 'ω in A = A^E + ω·A^S (paper Eq. 8; reference step_advantage_w)',
    default: 1.0,
  },
  similarityThreshold: {
    description:
      'θ in (0, 1): group anchor states by difflib ratio ≥ θ (reference similarity_thresh); absent: exact anchors',
  },
  ...SHARED_OPTIONS,
} as const satisfies OptionsSchema;

/** Per-row outputs, in batch order. */
export interface GiGPOResult {
  /** A = A^E + ω·A^S (Eq. 8). */
  advantages: Float64Array;
  /** A^E (Eq. 3). */
  episodeAdvantages: Float64Array;
  /** A^S (Eq. 7); exactly 0 in a singleton step group. */
  stepAdvantages: Float64Array;
  /** Discounted return R of the row's step, without penalty (Eq. 5). */
  stepReturns: Float64Array;
  /** R − c·[invalid]: the value grouped at the step level. */
  penalizedStepReturns: Float64Array;
  /** E(τ) − c·[invalid]. */
  episodeScores: Float64Array;
  /** Step-group labels, 0, 1, … by first appearance; equal labels ⇔ same step group. */
  stepGroupIds: Int32Array;
}

function modeOption(value: unknown): GiGPOMode {
  if (value === 'mean_norm' || value === 'mean_std_norm') return value;
  throw new ConfigError(
    value === undefined || value === null
      ? "mode is required: pass 'mean_norm' or 'mean_std_norm' (no default, the reference's defaults disagree; the paper's ALFWorld run uses 'mean_std_norm')"
      : `mode must be 'mean_norm' or 'mean_std_norm'; got ${JSON.stringify(value)}`,
    { details: { field: 'mode', value } },
  );
}

function thresholdOption(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !(value > 0 && value < 1)) {
    throw new ConfigError(
      `similarityThreshold must be a number in the open interval (0, 1), or absent for exact anchor matching; got ${String(value)}`,
      { details: { field: 'similarityThreshold', value } },
    );
  }
  return value;
}

/** GiGPO advantages of every row of the batch. */
export function computeGiGPOAdvantages(batch: StepBatch, options: GiGPOOptions): GiGPOResult {
  const o = optionsObject(options, true, GIGPO_OPTIONS, 'GiGPO options');
  const mode = modeOption(o.mode);
  const gamma = gammaOption(o.gamma);
  const omega = numberOption(
    o.stepAdvantageWeight,
    GIGPO_OPTIONS.stepAdvantageWeight.default,
    'stepAdvantageWeight',
  );
  const penalty = penaltyOption(o.invalidActionPenalty);
  const threshold = thresholdOption(o.similarityThreshold);
  const epsilon = epsilonOption(o.epsilon);
  const population = episodeStatisticsOption(o.episodeStatistics);
  const normalizeByStd = mode === 'mean_std_norm';

  const ib = indexBatch(batch, true);
  const { n } = ib;
  const invalid = ib.invalid;

  // Eq. 5: discounted returns over distinct steps; copies take their original's values.
  const { stepReturns, episodeRewards } = trajectoryQuantities(ib, gamma);

  // Eq. 3: episode-level relative advantage; the same computation as GRPO.
  const episode = episodeScores(ib, episodeRewards, penalty, population);
  const episodeAdvantages = episodeRelativeAdvantages(ib, episode, normalizeByStd, epsilon);

  // Eq. 6: anchor-state step groups inside each task group.
  const groups =
    threshold === undefined ? exactStepGroups(ib) : similarityStepGroups(ib, threshold);
  const stepGroupIds = groups.labels;

  // The penalty is subtracted after discounting, from the invalid row's return only (reference
  // `apply_invalid_action_penalty` runs after `compute_step_discounted_returns`).
  const penalizedStepReturns = subtractInvalidActionPenalty(stepReturns, invalid, penalty);

  // Eq. 7: step-level relative advantage over every row of the step group.
  const stats = groupStatistics(penalizedStepReturns, stepGroupIds, groups.count);
  const stepAdvantages = new Float64Array(n);
  const advantages = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = stepGroupIds[i] as number;
    let a = 0;
    // A singleton step group has μ = v, so A^S = 0 in both modes (as in the reference).
    if ((stats.count[s] as number) >= 2) {
      const d = (penalizedStepReturns[i] as number) - (stats.mean[s] as number);
      a = normalizeByStd ? d / ((stats.std[s] as number) + epsilon) : d;
    }
    stepAdvantages[i] = a;
    // Eq. 8: A = A^E + ω·A^S.
    advantages[i] = (episodeAdvantages[i] as number) + omega * a;
  }

  return {
    advantages,
    episodeAdvantages,
    stepAdvantages,
    stepReturns,
    penalizedStepReturns,
    episodeScores: episode.scores,
    stepGroupIds,
  };
}
