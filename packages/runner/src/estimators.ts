/**
 * The advantage estimators of `@agentrl/algorithms`, selected by name from the package's registry
 * (`ESTIMATORS`): the options are the estimator's declared ones, checked before any work.
 */
import {
  ESTIMATOR_NAMES,
  ESTIMATORS,
  type EstimatorName,
  type PPOOptions,
  resolvePPOOptions,
} from '@agentrl/algorithms';
import { ConfigError, checkOptionKeys, isAgentRLError, type StepBatch } from '@agentrl/core';
import type { AdvantageEstimator } from './trainer.ts';

// The registry's names, re-exported for existing imports.
export { ESTIMATOR_NAMES, type EstimatorName };

const EMPTY: StepBatch = {
  groupIds: [],
  trajectoryIds: [],
  stepIndices: [],
  anchors: [],
  envRewards: [],
  actionValid: [],
};

/**
 * The estimator `name` with `options` (e.g. `{ mode: 'mean_std_norm', gamma: 0.95 }` for GiGPO).
 * For `ppo` (which needs a critic) the returned function carries `critic`, its settings.
 * A key the estimator does not declare fails naming `algorithm.options` and the closest declared
 * key; the values are checked at once on an empty batch, so a bad option fails before any work.
 */
export function createEstimator(
  name: EstimatorName,
  options: Record<string, unknown> = {},
): AdvantageEstimator {
  const registration = ESTIMATORS[name];
  if (registration === undefined) {
    throw new ConfigError(
      `algorithm.name "${String(name)}" is unknown; use one of ${ESTIMATOR_NAMES.join(', ')}`,
      { details: { field: 'algorithm.name', value: name } },
    );
  }
  checkOptionKeys(options, registration.options, 'algorithm.options');
  try {
    registration.estimate(EMPTY, options);
  } catch (error) {
    if (!isAgentRLError(error)) throw error;
    throw new ConfigError(`algorithm.options: ${error.message}`, {
      details: { field: 'algorithm.options' },
      cause: error,
    });
  }
  const estimate = (batch: StepBatch) => registration.estimate(batch, options);
  if (!('critic' in registration && registration.critic === true)) return estimate;
  // PPO with GAE: the trainer trains a critic with these settings.
  const given = options as PPOOptions;
  return Object.assign(estimate, {
    critic: { options: given, resolved: resolvePPOOptions(given) },
  });
}
