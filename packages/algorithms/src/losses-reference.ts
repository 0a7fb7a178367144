/**
 * Plain-array float64 versions of the loss functions (`losses.ts`), for tests and for checking a
 * tensor backend. They follow verl-agent's `core_algos.py` / `torch_functional.py` line by line;
 * the tensor versions in `losses.ts` compute the same formulas with tfjs ops.
 *
 * Matrices are `[batch][token]` (logits `[batch][token][vocab]`); masks hold 0/1.
 */
import { ConfigError, InvalidInputError } from '@agentrl/core';
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

/** A `[batch][token]` matrix of numbers. */
export type Matrix = ArrayLike<ArrayLike<number>>;

function shapeOf(m: Matrix, field: string): [number, number] {
  const rows = m.length;
  const cols = rows === 0 ? 0 : (m[0] as ArrayLike<number>).length;
  for (let b = 0; b < rows; b++) {
    if ((m[b] as ArrayLike<number>).length !== cols) {
      throw new InvalidInputError(
        `${field} must be rectangular: row ${b} has ${(m[b] as ArrayLike<number>).length} entries, row 0 has ${cols}`,
        { details: { field, row: b } },
      );
    }
  }
  return [rows, cols];
}

function sameShape(a: Matrix, b: Matrix, fieldA: string, fieldB: string): void {
  const [ra, ca] = shapeOf(a, fieldA);
  const [rb, cb] = shapeOf(b, fieldB);
  if (ra !== rb || ca !== cb) {
    throw new InvalidInputError(
      `${fieldB} has shape [${rb}, ${cb}] but ${fieldA} has [${ra}, ${ca}]; they must match`,
      { details: { field: fieldB } },
    );
  }
}

function mapMatrix(m: Matrix, f: (x: number, b: number, t: number) => number): number[][] {
  const out: number[][] = [];
  for (let b = 0; b < m.length; b++) {
    const row = m[b] as ArrayLike<number>;
    const o = new Array<number>(row.length);
    for (let t = 0; t < row.length; t++) o[t] = f(row[t] as number, b, t);
    out.push(o);
  }
  return out;
}

function at(m: Matrix, b: number, t: number): number {
  return (m[b] as ArrayLike<number>)[t] as number;
}

/** Masked token-mean: Σ(x·mask) / (Σ mask + 1e-8) (reference `masked_mean`). */
export function maskedMeanReference(values: Matrix, mask: Matrix): number {
  sameShape(values, mask, 'values', 'mask');
  let num = 0;
  let den = 0;
  for (let b = 0; b < values.length; b++) {
    const row = values[b] as ArrayLike<number>;
    for (let t = 0; t < row.length; t++) {
      const m = at(mask, b, t);
      num += (row[t] as number) * m;
      den += m;
    }
  }
  return num / (den + TOKEN_MEAN_EPSILON);
}

/** Aggregates a loss matrix into a scalar (reference `agg_loss`). */
export function aggLossReference(
  lossMat: Matrix,
  lossMask: Matrix,
  lossAggMode: LossAggMode = 'token-mean',
): number {
  const mode = parseLossAggMode(lossAggMode);
  const [rows, cols] = shapeOf(lossMat, 'lossMat');
  sameShape(lossMat, lossMask, 'lossMat', 'lossMask');
  if (mode === 'token-mean') return maskedMeanReference(lossMat, lossMask);
  let total = 0;
  for (let b = 0; b < rows; b++) {
    let sum = 0;
    let count = 0;
    for (let t = 0; t < cols; t++) {
      const m = at(lossMask, b, t);
      sum += at(lossMat, b, t) * m;
      count += m;
    }
    // seq-mean-token-mean has no epsilon: a fully masked row gives NaN, as in the reference.
    total += mode === 'seq-mean-token-mean' ? sum / count : sum;
  }
  // seq-mean-token-sum-norm divides by the padded length L, not by the row count (as the reference).
  return mode === 'seq-mean-token-sum-norm' ? total / cols : total / rows;
}

/** Result of the dual-clip PPO policy loss. */
export interface PolicyLossResult<T> {
  /** Aggregated per-token loss. */
  pgLoss: T;
  /** Masked token-mean of `[L2 > L1]` (the clip was active). */
  pgClipfrac: T;
  /** Masked token-mean of `logp_old − logp`. */
  ppoKl: T;
  /** Masked token-mean of `[Lc > L3 and A < 0]` (the dual clip was active). */
  pgClipfracLower: T;
}

/** Inputs of the policy loss, each `[batch][token]`. */
export interface PolicyLossInputs<M> {
  oldLogProb: M;
  logProb: M;
  advantages: M;
  responseMask: M;
}

/** Dual-clip PPO policy loss in float64 (reference `compute_policy_loss`). */
export function policyLossReference(
  inputs: PolicyLossInputs<Matrix>,
  options: PolicyLossOptions = {},
): PolicyLossResult<number> {
  const { clipLow, clipHigh, clipRatioC, lossAggMode } = resolvePolicyLossOptions(options);
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  sameShape(logProb, oldLogProb, 'logProb', 'oldLogProb');
  sameShape(logProb, advantages, 'logProb', 'advantages');
  sameShape(logProb, responseMask, 'logProb', 'responseMask');
  const clipped = mapMatrix(logProb, () => 0);
  const lower = mapMatrix(logProb, () => 0);
  const negKl = mapMatrix(logProb, (lp, b, t) => -(lp - at(oldLogProb, b, t)));
  const loss = mapMatrix(logProb, (lp, b, t) => {
    const a = at(advantages, b, t);
    const ratio = Math.exp(lp - at(oldLogProb, b, t));
    const l1 = -a * ratio;
    const l2 = -a * Math.min(Math.max(ratio, 1 - clipLow), 1 + clipHigh);
    const lc = Math.max(l1, l2);
    const l3 = -a * clipRatioC;
    (clipped[b] as number[])[t] = l2 > l1 ? 1 : 0;
    (lower[b] as number[])[t] = lc > l3 && a < 0 ? 1 : 0;
    // Dual clip only for negative advantages (as the reference).
    return a < 0 ? Math.min(l3, lc) : lc;
  });
  return {
    pgLoss: aggLossReference(loss, responseMask, lossAggMode),
    pgClipfrac: maskedMeanReference(clipped, responseMask),
    ppoKl: maskedMeanReference(negKl, responseMask),
    pgClipfracLower: maskedMeanReference(lower, responseMask),
  };
}

/** One KL estimate per token (reference `kl_penalty`); only `low_var_kl` is clamped. */
export function klPenaltyReference(
  logProb: Matrix,
  refLogProb: Matrix,
  klType: KLPenaltyType,
): number[][] {
  const type = parseKLPenaltyType(klType);
  sameShape(logProb, refLogProb, 'logProb', 'refLogProb');
  return mapMatrix(logProb, (lp, b, t) => {
    const d = lp - at(refLogProb, b, t);
    switch (type) {
      case 'kl':
      case 'k1':
        return d;
      case 'abs':
        return Math.abs(d);
      case 'mse':
      case 'k2':
        return 0.5 * d * d;
      case 'low_var_kl':
      case 'k3': {
        const u = -d;
        const k = Math.exp(u) - u - 1;
        return Math.min(Math.max(k, -LOW_VAR_KL_CLAMP), LOW_VAR_KL_CLAMP);
      }
    }
  });
}

/** Entropy of softmax(z) per token: logsumexp(z) − Σ softmax(z)·z, max-shifted (reference `entropy_from_logits`). */
export function entropyFromLogitsReference(
  logits: ArrayLike<ArrayLike<ArrayLike<number>>>,
): number[][] {
  const out: number[][] = [];
  for (let b = 0; b < logits.length; b++) {
    const row = logits[b] as ArrayLike<ArrayLike<number>>;
    const o: number[] = [];
    for (let t = 0; t < row.length; t++) {
      const z = row[t] as ArrayLike<number>;
      let max = Number.NEGATIVE_INFINITY;
      for (let v = 0; v < z.length; v++) max = Math.max(max, z[v] as number);
      let sumExp = 0;
      let sumExpZ = 0;
      for (let v = 0; v < z.length; v++) {
        const e = Math.exp((z[v] as number) - max);
        sumExp += e;
        sumExpZ += e * (z[v] as number);
      }
      o.push(max + Math.log(sumExp) - sumExpZ / sumExp);
    }
    out.push(o);
  }
  return out;
}

/** Inputs of the actor loss. `logits` and `refLogProb` are needed only for the terms in use. */
export interface ActorLossInputs<M, L> extends PolicyLossInputs<M> {
  refLogProb?: M;
  logits?: L;
}

/** Result of the actor loss. */
export interface ActorLossResult<T> extends PolicyLossResult<T> {
  /** Aggregated entropy (absent when `logits` were not given). */
  entropyLoss?: T;
  /** Aggregated KL penalty (absent when `refLogProb` was not given). */
  klLoss?: T;
  /** pgLoss − entropyCoeff·entropyLoss + klLossCoef·klLoss. */
  policyLoss: T;
}

/** The actor loss of one micro-batch in float64 (reference `dp_actor.update_policy`). */
export function actorLossReference(
  inputs: ActorLossInputs<Matrix, ArrayLike<ArrayLike<ArrayLike<number>>>>,
  options: ActorLossOptions = {},
): ActorLossResult<number> {
  const o = resolveActorLossOptions(options);
  const pg = policyLossReference(inputs, o);
  const result: ActorLossResult<number> = { ...pg, policyLoss: pg.pgLoss };
  if (inputs.logits !== undefined) {
    const entropy = entropyFromLogitsReference(inputs.logits);
    result.entropyLoss = aggLossReference(entropy, inputs.responseMask, o.lossAggMode);
  }
  if (o.entropyCoeff !== 0) {
    if (result.entropyLoss === undefined) throw missing('logits', 'entropyCoeff');
    result.policyLoss = result.policyLoss - result.entropyLoss * o.entropyCoeff;
  }
  if (inputs.refLogProb !== undefined) {
    const kl = klPenaltyReference(inputs.logProb, inputs.refLogProb, o.klLossType);
    result.klLoss = aggLossReference(kl, inputs.responseMask, o.lossAggMode);
  }
  if (o.klLossCoef !== 0) {
    if (result.klLoss === undefined) throw missing('refLogProb', 'klLossCoef');
    result.policyLoss = result.policyLoss + result.klLoss * o.klLossCoef;
  }
  return result;
}

/** Inputs of the clipped value loss, each `[batch][token]`. */
export interface ValueLossInputs<M> {
  /** The current critic's predictions v̂ (differentiated in the tensor version). */
  vpreds: M;
  /** G: the GAE returns. */
  returns: M;
  /** V: the values the returns were computed with (before this update). */
  values: M;
  /** 1 on the positions the loss covers (the PPO trainer passes the critic's shifted mask). */
  responseMask: M;
}

/** Result of the clipped value loss. */
export interface ValueLossResult<T> {
  /** Aggregated `max((v̂ − G)², (clip(v̂, V − c, V + c) − G)²)`; no ½ factor. */
  vfLoss: T;
  /** Masked token-mean of `[(v̂_clip − G)² > (v̂ − G)²]` (strict). */
  vfClipfrac: T;
}

/** The clipped value loss in float64 (reference `compute_value_loss`). */
export function valueLossReference(
  inputs: ValueLossInputs<Matrix>,
  options: ValueLossOptions = {},
): ValueLossResult<number> {
  const { cliprangeValue: c, lossAggMode } = resolveValueLossOptions(options);
  const { vpreds, returns, values, responseMask } = inputs;
  sameShape(vpreds, returns, 'vpreds', 'returns');
  sameShape(vpreds, values, 'vpreds', 'values');
  sameShape(vpreds, responseMask, 'vpreds', 'responseMask');
  const clipped = mapMatrix(vpreds, () => 0);
  const loss = mapMatrix(vpreds, (v, b, t) => {
    const old = at(values, b, t);
    const g = at(returns, b, t);
    // clip_by_value: max(min(x, hi), lo).
    const vc = Math.max(Math.min(v, old + c), old - c);
    const l1 = (v - g) ** 2;
    const l2 = (vc - g) ** 2;
    (clipped[b] as number[])[t] = l2 > l1 ? 1 : 0;
    return Math.max(l1, l2);
  });
  return {
    vfLoss: aggLossReference(loss, responseMask, lossAggMode),
    vfClipfrac: maskedMeanReference(clipped, responseMask),
  };
}

function missing(field: string, coefficient: string): ConfigError {
  return new ConfigError(
    `${field} is required when ${coefficient} is not 0; pass ${field} or set ${coefficient}: 0`,
    { details: { field } },
  );
}
