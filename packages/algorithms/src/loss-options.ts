/**
 * Options and validation shared by the tensor losses (`losses.ts`) and their float64 reference
 * versions (`losses-reference.ts`). Defaults are verl-agent's `ppo_trainer.yaml`.
 */
import { ConfigError } from '@agentrl/core';

/** How a [batch, token] loss matrix becomes a scalar (reference `loss_agg_mode`). */
export type LossAggMode =
  | 'token-mean'
  | 'seq-mean-token-mean'
  | 'seq-mean-token-sum'
  | 'seq-mean-token-sum-norm';

/** Every aggregation mode of the reference's `agg_loss`. */
export const LOSS_AGG_MODES: readonly LossAggMode[] = [
  'token-mean',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-sum-norm',
];

/** KL estimators of the reference's `kl_penalty` (aliases included; `full` is not supported, as in the reference). */
export type KLPenaltyType = 'kl' | 'k1' | 'abs' | 'mse' | 'k2' | 'low_var_kl' | 'k3';

const KL_TYPES: readonly KLPenaltyType[] = ['kl', 'k1', 'abs', 'mse', 'k2', 'low_var_kl', 'k3'];

/** The epsilon of the masked token-mean (reference `masked_mean`). */
export const TOKEN_MEAN_EPSILON = 1e-8;

/** The clamp applied to `low_var_kl` only (as the reference). */
export const LOW_VAR_KL_CLAMP = 10;

/** Options of the dual-clip PPO policy loss. */
export interface PolicyLossOptions {
  /** Symmetric clip range ε used when `clipRatioLow`/`clipRatioHigh` are absent. Reference default 0.2. */
  clipRatio?: number;
  /** Lower clip range: the ratio is clamped at `1 − clipRatioLow`. Default: `clipRatio`. */
  clipRatioLow?: number | null;
  /** Upper clip range: the ratio is clamped at `1 + clipRatioHigh`. Default: `clipRatio`. */
  clipRatioHigh?: number | null;
  /** Dual-clip constant C (> 1), bounding the loss of negative-advantage tokens. Default 3.0. */
  clipRatioC?: number;
  /** Aggregation of the per-token loss. Default `'token-mean'`. */
  lossAggMode?: LossAggMode;
}

/** Options of the combined actor loss. */
export interface ActorLossOptions extends PolicyLossOptions {
  /** Weight of the entropy bonus; 0 skips the entropy term. Reference default 0.001. */
  entropyCoeff?: number;
  /** Weight of the KL loss; 0 skips the KL term. Reference: `use_kl_loss` false (0 here); the paper's ALFWorld run uses 0.01. */
  klLossCoef?: number;
  /** KL estimator of the KL loss. Default `'low_var_kl'`. */
  klLossType?: KLPenaltyType;
}

/** Resolved policy-loss options. */
export interface ResolvedPolicyLossOptions {
  clipLow: number;
  clipHigh: number;
  clipRatioC: number;
  lossAggMode: LossAggMode;
}

/** Checks an aggregation mode and returns it typed. */
export function parseLossAggMode(mode: unknown, field = 'lossAggMode'): LossAggMode {
  if (typeof mode === 'string' && (LOSS_AGG_MODES as readonly string[]).includes(mode)) {
    return mode as LossAggMode;
  }
  throw new ConfigError(
    `${field} must be one of ${LOSS_AGG_MODES.join(', ')}; got ${JSON.stringify(mode)}`,
    { details: { field, value: mode } },
  );
}

/** Checks a KL estimator name and returns it typed (`full` is rejected, as in the reference). */
export function parseKLPenaltyType(type: unknown, field = 'klType'): KLPenaltyType {
  if (typeof type === 'string' && (KL_TYPES as readonly string[]).includes(type)) {
    return type as KLPenaltyType;
  }
  throw new ConfigError(
    `${field} must be one of ${KL_TYPES.join(', ')} ('full' has no implementation in the reference); got ${JSON.stringify(type)}`,
    { details: { field, value: type } },
  );
}

function finiteOption(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ConfigError(`${field} must be a finite number; got ${String(value)}`, {
      details: { field, value },
    });
  }
  return value;
}

/** Applies the reference's defaults and validates (C > 1, as the reference asserts). */
export function resolvePolicyLossOptions(
  options: PolicyLossOptions = {},
): ResolvedPolicyLossOptions {
  const clipRatio = finiteOption(options.clipRatio ?? 0.2, 'clipRatio');
  const clipLow = finiteOption(options.clipRatioLow ?? clipRatio, 'clipRatioLow');
  const clipHigh = finiteOption(options.clipRatioHigh ?? clipRatio, 'clipRatioHigh');
  const clipRatioC = finiteOption(options.clipRatioC ?? 3.0, 'clipRatioC');
  if (!(clipRatioC > 1)) {
    throw new ConfigError(
      `clipRatioC (the dual-clip constant) must be greater than 1; got ${clipRatioC}`,
      { details: { field: 'clipRatioC', value: clipRatioC } },
    );
  }
  return {
    clipLow,
    clipHigh,
    clipRatioC,
    lossAggMode: parseLossAggMode(options.lossAggMode ?? 'token-mean'),
  };
}

/** Resolved actor-loss coefficients. */
export interface ResolvedActorLossOptions extends ResolvedPolicyLossOptions {
  entropyCoeff: number;
  klLossCoef: number;
  klLossType: KLPenaltyType;
}

/** Applies the reference's defaults. */
export function resolveActorLossOptions(options: ActorLossOptions = {}): ResolvedActorLossOptions {
  return {
    ...resolvePolicyLossOptions(options),
    entropyCoeff: finiteOption(options.entropyCoeff ?? 0.001, 'entropyCoeff'),
    klLossCoef: finiteOption(options.klLossCoef ?? 0, 'klLossCoef'),
    klLossType: parseKLPenaltyType(options.klLossType ?? 'low_var_kl', 'klLossType'),
  };
}

/** Options of the clipped value loss (reference `compute_value_loss`). */
export interface ValueLossOptions {
  /** Clip range c: predictions are clipped to old value ± c. Reference default 0.5 (`critic.cliprange_value`). */
  cliprangeValue?: number;
  /** Aggregation of the per-token loss. Default `'token-mean'` (the reference takes the actor's). */
  lossAggMode?: LossAggMode;
}

/** Resolved value-loss options. */
export interface ResolvedValueLossOptions {
  cliprangeValue: number;
  lossAggMode: LossAggMode;
}

/** Applies the reference's defaults and validates (c ≥ 0). */
export function resolveValueLossOptions(options: ValueLossOptions = {}): ResolvedValueLossOptions {
  const c = finiteOption(options.cliprangeValue ?? 0.5, 'cliprangeValue');
  if (c < 0) {
    throw new ConfigError(`cliprangeValue must be >= 0; got ${c}`, {
      details: { field: 'cliprangeValue', value: c },
    });
  }
  return { cliprangeValue: c, lossAggMode: parseLossAggMode(options.lossAggMode ?? 'token-mean') };
}
