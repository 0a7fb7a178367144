/**
 * @agentrl/algorithms — advantage estimators (GiGPO, GRPO, RLOO; PPO's GAE and step-row layout), discounted step returns,
 * Python's difflib ratio, the dynamic-sampling filter and the loss options. Nothing here needs a
 * tensor library: the tfjs losses are the `@agentrl/algorithms/losses` entry point (`losses.ts`),
 * which alone needs the `@tensorflow/tfjs-core` peer; their float64 plain-array oracles (for tests
 * and for checking a tensor backend) are `@agentrl/algorithms/reference` (`losses-reference.ts`).
 */
export type { StepBatch } from '@agentrl/core';
export {
  type SequenceMatcherOptions,
  sequenceMatcherRatio,
} from '@agentrl/core/difflib';
export type { EpisodeStatistics } from './batch.ts';
export { type DynamicSamplingInput, filterGroupsWithEqualRewards } from './dynamic-sampling.ts';
export {
  ESTIMATOR_NAMES,
  ESTIMATORS,
  type EstimatorName,
  type EstimatorRegistration,
} from './estimators.ts';
export {
  computeGaeAdvantageReturn,
  type GaeInputs,
  type GaeOptions,
  type GaeResult,
  gaeAdvantages,
  maskedWhiten,
  WHITEN_EPSILON,
} from './gae.ts';
export {
  computeGiGPOAdvantages,
  GIGPO_OPTIONS,
  type GiGPOMode,
  type GiGPOOptions,
  type GiGPOResult,
} from './gigpo.ts';
export { computeGRPOAdvantages, GRPO_OPTIONS, type GRPOOptions, type GRPOResult } from './grpo.ts';
export {
  type ActorLossOptions,
  type KLPenaltyType,
  LOSS_AGG_MODES,
  type LossAggMode,
  type PolicyLossOptions,
  type ValueLossOptions,
} from './loss-options.ts';
export { applyInvalidActionPenalty } from './penalty.ts';
export {
  computePPOAdvantages,
  PPO_OPTIONS,
  type PPOAdvantageInputs,
  type PPOAdvantages,
  type PPOOptions,
  ppoRowScores,
  type ResolvedPPOOptions,
  resolvePPOOptions,
  type StepRowLayout,
  stepRowLayout,
} from './ppo.ts';
export { computeStepReturns, type StepReturns, type StepReturnsOptions } from './returns.ts';
export { computeRLOOAdvantages, RLOO_OPTIONS, type RLOOOptions, type RLOOResult } from './rloo.ts';
