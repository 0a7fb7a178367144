/**
 * The advantage estimators by name, each with its declared options: the registry the runner's
 * config (`algorithm.name`, `algorithm.options`), the CLI and the docs read.
 */
import type { OptionsSchema, StepBatch } from '@agentrl/core';
import { computeGiGPOAdvantages, GIGPO_OPTIONS, type GiGPOOptions } from './gigpo.ts';
import { computeGRPOAdvantages, GRPO_OPTIONS, type GRPOOptions } from './grpo.ts';
import { PPO_OPTIONS, type PPOOptions, ppoRowScores } from './ppo.ts';
import { computeRLOOAdvantages, RLOO_OPTIONS, type RLOOOptions } from './rloo.ts';

/** One registered estimator. */
export interface EstimatorRegistration {
  /** One sentence for listings. */
  readonly description: string;
  /** The options it accepts; any other key is a `BAD_CONFIG` error naming the closest one. */
  readonly options: OptionsSchema;
  /**
   * One value per row of `batch`; throws a typed error on bad options or a bad batch. For the
   * group estimators it is the row's advantage; for one with {@link EstimatorRegistration.critic}
   * it is the row's score (the reward GAE starts from), and the advantages per token come from
   * `computePPOAdvantages` with a critic's values.
   */
  readonly estimate: (batch: StepBatch, options: Record<string, unknown>) => Float64Array;
  /**
   * True for an estimator that needs a critic (a value model trained beside the policy): PPO
   * with GAE. A trainer then scores the rows with the critic and computes per-token advantages.
   */
  readonly critic?: boolean;
}

/** The estimators of this package by name. */
export const ESTIMATORS = {
  gigpo: {
    description:
      'GiGPO (Feng et al. 2025, arXiv 2505.10978): episode-level plus anchor-state step-level relative advantages',
    options: GIGPO_OPTIONS,
    estimate: (batch, options) =>
      computeGiGPOAdvantages(batch, options as unknown as GiGPOOptions).advantages,
  },
  grpo: {
    description: 'GRPO (Shao et al. 2024): group-relative episode advantages',
    options: GRPO_OPTIONS,
    estimate: (batch, options) => computeGRPOAdvantages(batch, options as GRPOOptions).advantages,
  },
  rloo: {
    description: 'RLOO (Ahmadian et al. 2024): leave-one-out episode advantages',
    options: RLOO_OPTIONS,
    estimate: (batch, options) => computeRLOOAdvantages(batch, options as RLOOOptions).advantages,
  },
  ppo: {
    description:
      'PPO with a critic (Schulman et al. 2017; GAE, Schulman et al. 2016) as verl-agent runs it: step rows carry the episode reward on their last token, GAE along each response, clipped value loss',
    options: PPO_OPTIONS,
    estimate: (batch, options) => ppoRowScores(batch, options as PPOOptions),
    critic: true,
  },
} as const satisfies Record<string, EstimatorRegistration>;

/** A registered estimator's name. */
export type EstimatorName = keyof typeof ESTIMATORS;

/** The registered names, in registry order. */
export const ESTIMATOR_NAMES = Object.keys(ESTIMATORS) as EstimatorName[];
