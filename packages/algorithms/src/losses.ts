/**
 * The PPO actor loss of verl-agent's actor (`verl/trainer/ppo/core_algos.py`) written with `@tensorflow/tfjs-core` ops, so that it runs on any
 * tfjs backend and is differentiable with `tf.grad` / `tf.variableGrads` (load `@tensorflow/tfjs`
 * or a backend package that registers gradients: tfjs-core alone registers none).
 *
 * Tensors are `[batch, token]` (logits `[batch, token, vocab]`), float32; masks hold 0/1 (any
 * numeric or bool dtype). Every function is wrapped in `tf.tidy`: intermediates are disposed and
 * only the returned tensors stay alive (the caller disposes them).
 *
 * `losses-reference.ts` holds float64 plain-array versions of the same formulas.
 */

import { ConfigError, InvalidInputError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs-core';
import {
  type ActorLossOptions,
  type KLPenaltyType,
  LOW_VAR_KL_CLAMP,
  type LossAggMode,
  type PolicyLossOptions,
  parseKLPenaltyType,
  parseLossAggMode,
  resolveActorLossOptions,
  resolvePolicyLossOptions,
  resolveValueLossOptions,
  TOKEN_MEAN_EPSILON,
  type ValueLossOptions,
} from './loss-options.ts';
import type {
  ActorLossInputs,
  ActorLossResult,
  PolicyLossInputs,
  PolicyLossResult,
  ValueLossInputs,
  ValueLossResult,
} from './losses-reference.ts';

// The entry point `@agentrl/algorithms/losses` is this file: the types of its signatures come with it.
export type {
  ActorLossInputs,
  ActorLossOptions,
  ActorLossResult,
  KLPenaltyType,
  LossAggMode,
  PolicyLossInputs,
  PolicyLossOptions,
  PolicyLossResult,
  ValueLossInputs,
  ValueLossOptions,
  ValueLossResult,
};

function asFloat(t: tf.Tensor): tf.Tensor {
  return t.dtype === 'float32' ? t : tf.cast(t, 'float32');
}

function checkSameShape(a: tf.Tensor, b: tf.Tensor, fieldA: string, fieldB: string): void {
  if (a.rank !== b.rank || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new InvalidInputError(
      `${fieldB} has shape [${b.shape.join(', ')}] but ${fieldA} has [${a.shape.join(', ')}]; they must match`,
      { details: { field: fieldB } },
    );
  }
}

/** Masked token-mean: Σ(x·mask) / (Σ mask + 1e-8) (reference `masked_mean`). */
export function maskedMean(values: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  checkSameShape(values, mask, 'values', 'mask');
  return tf.tidy(() => {
    const m = asFloat(mask);
    return tf.div(tf.sum(tf.mul(values, m)), tf.add(tf.sum(m), TOKEN_MEAN_EPSILON)) as tf.Scalar;
  });
}

/** Aggregates a `[batch, token]` loss matrix into a scalar (reference `agg_loss`). */
export function aggLoss(
  lossMat: tf.Tensor,
  lossMask: tf.Tensor,
  lossAggMode: LossAggMode = 'token-mean',
): tf.Scalar {
  const mode = parseLossAggMode(lossAggMode);
  checkSameShape(lossMat, lossMask, 'lossMat', 'lossMask');
  if (lossMat.rank !== 2) {
    throw new InvalidInputError(`lossMat must be [batch, token]; got rank ${lossMat.rank}`, {
      details: { field: 'lossMat' },
    });
  }
  if (mode === 'token-mean') return maskedMean(lossMat, lossMask);
  return tf.tidy(() => {
    const m = asFloat(lossMask);
    const seqSums = tf.sum(tf.mul(lossMat, m), -1);
    switch (mode) {
      case 'seq-mean-token-mean':
        // No epsilon: a fully masked row gives NaN, as in the reference.
        return tf.mean(tf.div(seqSums, tf.sum(m, -1))) as tf.Scalar;
      case 'seq-mean-token-sum':
        return tf.mean(seqSums) as tf.Scalar;
      case 'seq-mean-token-sum-norm':
        // Divided by the padded length L (mask.shape[-1]), not by the row count, as the reference.
        return tf.div(tf.sum(seqSums), lossMat.shape[1] as number) as tf.Scalar;
    }
  });
}

/**
 * Dual-clip PPO policy loss (reference `compute_policy_loss`; dual clip from
 * Ye et al. 2019, arXiv 1912.09729). Differentiable in `logProb`.
 */
export function policyLoss(
  inputs: PolicyLossInputs<tf.Tensor>,
  options: PolicyLossOptions = {},
): PolicyLossResult<tf.Scalar> {
  const { clipLow, clipHigh, clipRatioC, lossAggMode } = resolvePolicyLossOptions(options);
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  checkSameShape(logProb, oldLogProb, 'logProb', 'oldLogProb');
  checkSameShape(logProb, advantages, 'logProb', 'advantages');
  checkSameShape(logProb, responseMask, 'logProb', 'responseMask');
  return tf.tidy(() => {
    const logRatio = tf.sub(logProb, oldLogProb);
    const ratio = tf.exp(logRatio);
    const negAdv = tf.neg(advantages);
    // L1 = −A·ρ, L2 = −A·clamp(ρ, 1−ε_low, 1+ε_high), Lc = max(L1, L2).
    const l1 = tf.mul(negAdv, ratio);
    const l2 = tf.mul(negAdv, tf.clipByValue(ratio, 1 - clipLow, 1 + clipHigh));
    const lc = tf.maximum(l1, l2);
    // L3 = −A·C; the dual clip applies to negative advantages only (as the reference).
    const l3 = tf.mul(negAdv, clipRatioC);
    const isNeg = tf.less(advantages, 0);
    const lossTok = tf.where(isNeg, tf.minimum(l3, lc), lc);
    return {
      pgLoss: aggLoss(lossTok, responseMask, lossAggMode),
      pgClipfrac: maskedMean(tf.cast(tf.greater(l2, l1), 'float32'), responseMask),
      ppoKl: maskedMean(tf.neg(logRatio), responseMask),
      pgClipfracLower: maskedMean(
        tf.cast(tf.logicalAnd(tf.greater(lc, l3), isNeg), 'float32'),
        responseMask,
      ),
    };
  });
}

/**
 * The critic's clipped value loss (reference `compute_value_loss`, after the PPO2 value clip):
 * `max((v̂ − G)², (clip(v̂, V − c, V + c) − G)²)` per token, aggregated, no ½ factor; clipfrac
 * counts the tokens where the clipped error is strictly larger. Differentiable in `vpreds`.
 */
export function valueLoss(
  inputs: ValueLossInputs<tf.Tensor>,
  options: ValueLossOptions = {},
): ValueLossResult<tf.Scalar> {
  const { cliprangeValue: c, lossAggMode } = resolveValueLossOptions(options);
  const { vpreds, returns, values, responseMask } = inputs;
  checkSameShape(vpreds, returns, 'vpreds', 'returns');
  checkSameShape(vpreds, values, 'vpreds', 'values');
  checkSameShape(vpreds, responseMask, 'vpreds', 'responseMask');
  return tf.tidy(() => {
    // clip_by_value(x, lo, hi) = max(min(x, hi), lo), with per-token bounds.
    const clipped = tf.maximum(tf.minimum(vpreds, tf.add(values, c)), tf.sub(values, c));
    const l1 = tf.square(tf.sub(vpreds, returns));
    const l2 = tf.square(tf.sub(clipped, returns));
    return {
      vfLoss: aggLoss(tf.maximum(l1, l2), responseMask, lossAggMode),
      vfClipfrac: maskedMean(tf.cast(tf.greater(l2, l1), 'float32'), responseMask),
    };
  });
}

/** One KL estimate per token (reference `kl_penalty`); only `low_var_kl` is clamped to ±10. */
export function klPenalty(
  logProb: tf.Tensor,
  refLogProb: tf.Tensor,
  klType: KLPenaltyType,
): tf.Tensor {
  const type = parseKLPenaltyType(klType);
  checkSameShape(logProb, refLogProb, 'logProb', 'refLogProb');
  return tf.tidy(() => {
    switch (type) {
      case 'kl':
      case 'k1':
        return tf.sub(logProb, refLogProb);
      case 'abs':
        return tf.abs(tf.sub(logProb, refLogProb));
      case 'mse':
      case 'k2':
        return tf.mul(0.5, tf.square(tf.sub(logProb, refLogProb)));
      case 'low_var_kl':
      case 'k3': {
        // Schulman's k3: exp(u) − u − 1 with u = logp_ref − logp.
        const u = tf.sub(refLogProb, logProb);
        const k3 = tf.sub(tf.sub(tf.exp(u), u), 1);
        return tf.clipByValue(k3, -LOW_VAR_KL_CLAMP, LOW_VAR_KL_CLAMP);
      }
    }
  });
}

/**
 * Entropy of softmax(z) over the last axis: logsumexp(z) − Σ softmax(z)·z (reference
 * `entropy_from_logits`). tfjs's
 * `logSumExp` and `softmax` shift by the maximum, so logits of 100+ do not overflow.
 */
export function entropyFromLogits(logits: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const z = asFloat(logits);
    const lse = tf.logSumExp(z, -1);
    const p = tf.softmax(z, -1);
    return tf.sub(lse, tf.sum(tf.mul(p, z), -1));
  });
}

/**
 * The actor loss of one micro-batch (as verl's `dp_actor.update_policy` forms it):
 * `pgLoss − entropyCoeff·agg(entropy) + klLossCoef·agg(kl)`. The entropy term needs `logits`
 * (already divided by the temperature) when `entropyCoeff ≠ 0`; the KL term needs `refLogProb`
 * when `klLossCoef ≠ 0`. Divide by the number of micro-batches yourself (gradient accumulation).
 */
export function actorLoss(
  inputs: ActorLossInputs<tf.Tensor, tf.Tensor>,
  options: ActorLossOptions = {},
): ActorLossResult<tf.Scalar> {
  const o = resolveActorLossOptions(options);
  if (o.entropyCoeff !== 0 && inputs.logits === undefined) throw missing('logits', 'entropyCoeff');
  if (o.klLossCoef !== 0 && inputs.refLogProb === undefined)
    throw missing('refLogProb', 'klLossCoef');
  return tf.tidy(() => {
    const pg = policyLoss(inputs, o);
    const result: ActorLossResult<tf.Scalar> = { ...pg, policyLoss: pg.pgLoss };
    let total: tf.Tensor = pg.pgLoss;
    if (inputs.logits !== undefined) {
      const entropyLoss = aggLoss(
        entropyFromLogits(inputs.logits),
        inputs.responseMask,
        o.lossAggMode,
      );
      result.entropyLoss = entropyLoss;
      if (o.entropyCoeff !== 0) total = tf.sub(total, tf.mul(entropyLoss, o.entropyCoeff));
    }
    if (inputs.refLogProb !== undefined) {
      const klLoss = aggLoss(
        klPenalty(inputs.logProb, inputs.refLogProb, o.klLossType),
        inputs.responseMask,
        o.lossAggMode,
      );
      result.klLoss = klLoss;
      if (o.klLossCoef !== 0) total = tf.add(total, tf.mul(klLoss, o.klLossCoef));
    }
    result.policyLoss = total as tf.Scalar;
    return { ...result };
  });
}

function missing(field: string, coefficient: string): ConfigError {
  return new ConfigError(
    `${field} is required when ${coefficient} is not 0; pass ${field} or set ${coefficient}: 0`,
    { details: { field } },
  );
}
