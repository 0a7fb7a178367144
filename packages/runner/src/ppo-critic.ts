/**
 * The critic side of the PPO arm (verl-agent's `compute_gae_advantage_return` and
 * `update_critic`, `verl/trainer/ppo/core_algos.py` and `verl/workers/critic/dp_critic.py`): making
 * the run's critic, valuing an iteration's step rows and GAE over them, and the critic's update.
 * The trainer calls these in order each iteration; they hold no state of their own.
 */
import { computePPOAdvantages, type PPOAdvantages } from '@agentrl/algorithms';
import {
  ConfigError,
  type Critic,
  type StepRecord,
  stepBatchFromRecords,
  type TrainablePolicy,
} from '@agentrl/core';
import type { TrainerSettings } from './config.ts';
import { averageMetrics, type Metrics } from './metrics.ts';
import { mean } from './stats.ts';
import type { CriticEstimatorSettings } from './trainer-options.ts';

/** The PPO (GAE) quantities of one iteration's rows, per token. */
export interface PPOStep extends PPOAdvantages {
  /** Whitened advantages of each row's response tokens (what the actor trains on). */
  readonly tokenAdvantages: number[][];
  /** The mean of each row's token advantages (for the row-level metrics and filters). */
  readonly rowAdvantages: Float64Array;
}

/** A new critic from the policy's `createCritic`, with the estimator's critic settings. */
export async function createRunCritic(
  policy: TrainablePolicy,
  settings: CriticEstimatorSettings,
  seed: number,
): Promise<Critic> {
  if (policy.createCritic === undefined) {
    throw new ConfigError(
      'algorithm.name ppo trains a critic, and this policy has no createCritic; use the tfjs model (@agentrl/runner/tfjs) or pass a critic to the Trainer',
      { details: { field: 'algorithm.name', value: 'ppo' } },
    );
  }
  const r = settings.resolved;
  return policy.createCritic({
    learningRate: r.criticLearningRate,
    weightDecay: r.criticWeightDecay,
    maxGradNorm: r.criticGradClip,
    cliprangeValue: r.cliprangeValue,
    ...(r.criticMicroBatchSize !== undefined ? { microBatchSize: r.criticMicroBatchSize } : {}),
    seed,
  });
}

/**
 * The critic's values of every row (before any update of this iteration) and GAE over them
 * (`computePPOAdvantages` of `@agentrl/algorithms`): rows are env steps, each with its episode's
 * score on its last response token, advantages whitened over the batch's response tokens.
 */
export async function ppoAdvantages(
  critic: Critic,
  settings: CriticEstimatorSettings,
  records: readonly StepRecord[],
  maxResponseLength: number,
): Promise<PPOStep> {
  const values = await critic.values({
    promptTokenIds: records.map((r) => r.promptTokenIds),
    responseTokenIds: records.map((r) => r.responseTokenIds),
  });
  const result = computePPOAdvantages(
    {
      batch: stepBatchFromRecords(records),
      responseLengths: records.map((r) => r.responseTokenIds.length),
      maxResponseLength,
      values,
    },
    settings.options,
  );
  const tokenAdvantages = result.advantages.map((row, i) =>
    row.slice(0, (records[i] as StepRecord).responseTokenIds.length),
  );
  const rowAdvantages = Float64Array.from(tokenAdvantages, (row) => mean(row));
  return { ...result, tokenAdvantages, rowAdvantages };
}

/**
 * The critic's update (verl's `update_critic`): `ppoEpochs` passes over the rows in order, in
 * mini-batches of `training.miniBatchSize` rows, one optimizer step each on the clipped value
 * loss over the critic's positions (the state before each response token and the one after).
 */
export async function updateCritic(
  critic: Critic,
  records: readonly StepRecord[],
  ppo: PPOStep,
  training: Pick<TrainerSettings['training'], 'miniBatchSize' | 'ppoEpochs'>,
): Promise<Metrics> {
  const size = training.miniBatchSize;
  const perBatch: Record<string, number>[] = [];
  for (let epoch = 0; epoch < training.ppoEpochs; epoch++) {
    for (let start = 0; start < records.length; start += size) {
      const end = Math.min(records.length, start + size);
      const rows = records.slice(start, end);
      perBatch.push(
        await critic.trainStep({
          promptTokenIds: rows.map((r) => r.promptTokenIds),
          responseTokenIds: rows.map((r) => r.responseTokenIds),
          oldValues: ppo.values.slice(start, end),
          returns: ppo.returns.slice(start, end),
          mask: ppo.criticMask.slice(start, end),
        }),
      );
    }
  }
  const out: Metrics = {};
  for (const [k, v] of Object.entries(averageMetrics(perBatch))) out[`critic/${k}`] = v;
  out['critic/miniBatches'] = perBatch.length;
  out['critic/optimizerSteps'] = perBatch.filter((m) => !(m.skipped === 1)).length;
  return out;
}
