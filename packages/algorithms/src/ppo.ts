/**
 * PPO with a critic for multi-turn agents, as verl-agent runs it (`adv_estimator=gae`,
 * `examples/ppo_trainer/run_alfworld.sh`): rows are env steps; every step row carries its
 * trajectory's undiscounted total reward on its last valid response token
 * (`agent_system/reward_manager/episode.py`), minus the invalid-action penalty on that row
 * (`apply_invalid_action_penalty` in `verl/trainer/ppo/ray_trainer.py`); GAE (`gae.ts`) then runs
 * along that one response's tokens with the critic's values. This file holds the options and the
 * step-row layout; the critic itself is model code (a model package implements `Critic` of
 * `@agentrl/core`), and its loss is `valueLoss` of `@agentrl/algorithms/losses`.
 */
import { ConfigError, InvalidInputError, type OptionsSchema, type StepBatch } from '@agentrl/core';
import { indexBatch, numberOption, optionsObject, penaltyOption, SHARED_OPTIONS } from './batch.ts';
import { computeGaeAdvantageReturn, type GaeResult } from './gae.ts';
import { subtractInvalidActionPenalty } from './penalty.ts';
import { trajectoryQuantities } from './returns.ts';

/** Options of the PPO arm; defaults are verl-agent's PPO example scripts (`ppo_trainer.yaml`). */
export interface PPOOptions {
  /** γ of GAE, along the tokens of one response (not across steps). Default 1.0. */
  gamma?: number;
  /** λ of GAE. Default 1.0. */
  lam?: number;
  /** c subtracted from the score of rows with an invalid action. Default 0.1; 0 disables. */
  invalidActionPenalty?: number;
  /** Value clip range c of the clipped value loss. Default 0.5. */
  cliprangeValue?: number;
  /** The actor first updates at iteration k (0-based) with `criticWarmup ≤ k + 1`. Default 0. */
  criticWarmup?: number;
  /** The critic's AdamW learning rate. Default 1e-5. */
  criticLearningRate?: number;
  /** The critic's AdamW decoupled weight decay. Default 0.01. */
  criticWeightDecay?: number;
  /** The critic's global gradient-norm clip. Default 1.0. */
  criticGradClip?: number;
  /** Rows per critic forward/backward pass (gradient accumulation). Default: the whole mini-batch. */
  criticMicroBatchSize?: number;
}

/** The options of the PPO arm, with verl-agent's defaults (one place each). */
export const PPO_OPTIONS = {
  gamma: {
    description:
      'GAE discount γ along the tokens of one response, never across env steps (verl algorithm.gamma; the PPO scripts leave 1.0; GiGPO’s 0.95 step discount would discount over tokens here)',
    default: 1.0,
  },
  lam: {
    description: 'GAE λ (verl algorithm.lam; the PPO scripts leave 1.0: Monte-Carlo targets)',
    default: 1.0,
  },
  invalidActionPenalty: SHARED_OPTIONS.invalidActionPenalty,
  cliprangeValue: {
    description:
      'clip range of the value loss: predictions are clipped to old value ± c (verl critic.cliprange_value)',
    default: 0.5,
  },
  criticWarmup: {
    description:
      'iterations of critic-only updates: the actor updates at 0-based iteration k when criticWarmup <= k + 1, so 0 and 1 both mean none (verl trainer.critic_warmup)',
    default: 0,
  },
  criticLearningRate: {
    description: 'AdamW learning rate of the critic (verl critic.optim.lr)',
    default: 1e-5,
  },
  criticWeightDecay: {
    description: 'AdamW decoupled weight decay of the critic (verl critic.optim.weight_decay)',
    default: 0.01,
  },
  criticGradClip: {
    description: 'global gradient-norm clip of the critic (verl critic.grad_clip)',
    default: 1.0,
  },
  criticMicroBatchSize: {
    description:
      'rows per critic forward/backward pass, gradients accumulated (verl critic.ppo_micro_batch_size_per_gpu); absent: the whole mini-batch (training.miniBatchSize rows)',
  },
} as const satisfies OptionsSchema;

/** {@link PPOOptions} with every default filled in and checked. */
export interface ResolvedPPOOptions {
  readonly gamma: number;
  readonly lam: number;
  readonly invalidActionPenalty: number;
  readonly cliprangeValue: number;
  readonly criticWarmup: number;
  readonly criticLearningRate: number;
  readonly criticWeightDecay: number;
  readonly criticGradClip: number;
  readonly criticMicroBatchSize: number | undefined;
}

function inRange(value: number, field: string, ok: boolean, want: string): number {
  if (!ok) {
    throw new ConfigError(`${field} must be ${want}; got ${value}`, {
      details: { field, value },
    });
  }
  return value;
}

/** Checks the options (unknown keys name the closest declared one) and fills in the defaults. */
export function resolvePPOOptions(options?: PPOOptions): ResolvedPPOOptions {
  const o = optionsObject(options, false, PPO_OPTIONS, 'PPO options');
  const d = PPO_OPTIONS;
  const gamma = numberOption(o.gamma, d.gamma.default, 'gamma');
  const lam = numberOption(o.lam, d.lam.default, 'lam');
  const clip = numberOption(o.cliprangeValue, d.cliprangeValue.default, 'cliprangeValue');
  const warmup = numberOption(o.criticWarmup, d.criticWarmup.default, 'criticWarmup');
  const lr = numberOption(o.criticLearningRate, d.criticLearningRate.default, 'criticLearningRate');
  const wd = numberOption(o.criticWeightDecay, d.criticWeightDecay.default, 'criticWeightDecay');
  const gc = numberOption(o.criticGradClip, d.criticGradClip.default, 'criticGradClip');
  const micro =
    o.criticMicroBatchSize === undefined || o.criticMicroBatchSize === null
      ? undefined
      : numberOption(o.criticMicroBatchSize, 1, 'criticMicroBatchSize');
  return {
    gamma: inRange(gamma, 'gamma', gamma >= 0 && gamma <= 1, 'in [0, 1]'),
    lam: inRange(lam, 'lam', lam >= 0 && lam <= 1, 'in [0, 1]'),
    invalidActionPenalty: penaltyOption(o.invalidActionPenalty),
    cliprangeValue: inRange(clip, 'cliprangeValue', clip >= 0, '>= 0'),
    criticWarmup: inRange(
      warmup,
      'criticWarmup',
      Number.isInteger(warmup) && warmup >= 0,
      'a non-negative integer',
    ),
    criticLearningRate: inRange(lr, 'criticLearningRate', lr > 0, '> 0'),
    criticWeightDecay: inRange(wd, 'criticWeightDecay', wd >= 0, '>= 0'),
    criticGradClip: inRange(gc, 'criticGradClip', gc > 0, '> 0'),
    criticMicroBatchSize:
      micro === undefined
        ? undefined
        : inRange(
            micro,
            'criticMicroBatchSize',
            Number.isInteger(micro) && micro > 0,
            'a positive integer',
          ),
  };
}

/**
 * The score of every row: its trajectory's undiscounted total env reward E(τ) (padding copies
 * count once, by `(trajectoryId, stepIndex)`), minus c on rows whose action was invalid. The
 * reward the PPO arm writes on each row's last valid response token.
 */
export function ppoRowScores(batch: StepBatch, options?: PPOOptions): Float64Array {
  const o = resolvePPOOptions(options);
  const ib = indexBatch(batch, false);
  const { episodeRewards } = trajectoryQuantities(ib, 1.0);
  return subtractInvalidActionPenalty(episodeRewards, ib.invalid, o.invalidActionPenalty);
}

/** The token layout of PPO step rows (what GAE and the critic's loss see), `[row][position]`. */
export interface StepRowLayout {
  /** 0 everywhere except the row's score on its last valid token (position L − 1). */
  readonly tokenLevelRewards: number[][];
  /** The actor's mask: 1 on the L response tokens. */
  readonly responseMask: number[][];
  /**
   * The critic's mask, the response mask shifted right by one: 1 on positions 0..L (the state
   * before each response token and the state after the last), cut at `maxResponseLength`.
   */
  readonly criticMask: number[][];
}

/**
 * Lays out step rows as verl-agent's PPO trainer does, ragged: row i has `min(L_i + 1, R)`
 * positions for L_i response tokens and R = `maxResponseLength` (the padded length of the
 * reference: a row that fills it has no position after its last token), rewards zero except
 * `scores[i]` at L_i − 1. Positions past a row's length would hold zero rewards, zero values and
 * zero masks in the reference's rectangular batch, which change nothing.
 */
export function stepRowLayout(
  scores: ArrayLike<number>,
  responseLengths: ArrayLike<number>,
  maxResponseLength: number,
): StepRowLayout {
  if (scores.length !== responseLengths.length) {
    throw new InvalidInputError(
      `responseLengths has ${responseLengths.length} entries but scores has ${scores.length}; one per row`,
      { details: { field: 'responseLengths' } },
    );
  }
  if (!Number.isInteger(maxResponseLength) || maxResponseLength < 1) {
    throw new InvalidInputError(
      `maxResponseLength must be a positive integer; got ${maxResponseLength}`,
      { details: { field: 'maxResponseLength', value: maxResponseLength } },
    );
  }
  const tokenLevelRewards: number[][] = [];
  const responseMask: number[][] = [];
  const criticMask: number[][] = [];
  for (let i = 0; i < scores.length; i++) {
    const L = responseLengths[i] as number;
    if (!Number.isInteger(L) || L < 1 || L > maxResponseLength) {
      throw new InvalidInputError(
        `row ${i} has ${L} response tokens; every step row needs 1..${maxResponseLength} (maxResponseLength) response tokens to carry its score`,
        { details: { field: 'responseLengths', row: i, value: L } },
      );
    }
    const n = Math.min(L + 1, maxResponseLength);
    const r = new Array<number>(n).fill(0);
    r[L - 1] = scores[i] as number;
    tokenLevelRewards.push(r);
    responseMask.push(Array.from({ length: n }, (_, t) => (t < L ? 1 : 0)));
    criticMask.push(new Array<number>(n).fill(1));
  }
  return { tokenLevelRewards, responseMask, criticMask };
}

/** Inputs of {@link computePPOAdvantages}. */
export interface PPOAdvantageInputs {
  /** The step rows (one entry per row). */
  readonly batch: StepBatch;
  /** Response tokens of each row. */
  readonly responseLengths: ArrayLike<number>;
  /** The reference's padded response length (a run's max new tokens). */
  readonly maxResponseLength: number;
  /** The critic's values per row, at least the layout's positions (`min(L + 1, R)`) each. */
  readonly values: ArrayLike<ArrayLike<number>>;
}

/** What {@link computePPOAdvantages} returns: the layout, GAE's outputs and the row scores. */
export interface PPOAdvantages extends StepRowLayout, GaeResult {
  readonly scores: Float64Array;
  /** The values actually used, cut to each row's layout length. */
  readonly values: number[][];
}

/** Scores → step-row layout → GAE with the critic's values: the whole advantage step of PPO. */
export function computePPOAdvantages(
  inputs: PPOAdvantageInputs,
  options?: PPOOptions,
): PPOAdvantages {
  const o = resolvePPOOptions(options);
  const scores = ppoRowScores(inputs.batch, options);
  const layout = stepRowLayout(scores, inputs.responseLengths, inputs.maxResponseLength);
  if (inputs.values.length !== scores.length) {
    throw new InvalidInputError(
      `values has ${inputs.values.length} rows but the batch has ${scores.length}; one per row`,
      { details: { field: 'values' } },
    );
  }
  const values = layout.tokenLevelRewards.map((row, i) => {
    const v = inputs.values[i] as ArrayLike<number>;
    if (v.length < row.length) {
      throw new InvalidInputError(
        `values row ${i} has ${v.length} entries; the critic must value ${row.length} positions (the state before each response token, and the one after the last)`,
        { details: { field: 'values', row: i } },
      );
    }
    return Array.from({ length: row.length }, (_, t) => v[t] as number);
  });
  const gae = computeGaeAdvantageReturn(
    { tokenLevelRewards: layout.tokenLevelRewards, values, responseMask: layout.responseMask },
    { gamma: o.gamma, lam: o.lam },
  );
  return { ...layout, ...gae, scores, values };
}
