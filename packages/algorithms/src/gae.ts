/**
 * Generalized Advantage Estimation (Schulman et al. 2016, *High-Dimensional Continuous Control
 * Using Generalized Advantage Estimation*, arXiv 1506.02438, Eq. 16) as verl-agent's PPO computes it
 * (`compute_gae_advantage_return` in `verl/trainer/ppo/core_algos.py`, whitening from
 * `masked_whiten` / `masked_var` in `verl/utils/torch_functional.py`), in float64 over plain arrays.
 *
 * One row is one response (one env step of an agent); the recursion runs along that response's
 * tokens and never crosses into another row. Reference behaviour kept on purpose:
 * - the recursion ignores the mask: rewards and values at positions whose mask is 0 enter it like
 *   any others (so a value just after the last valid token leaks into that token's advantage when
 *   λ < 1);
 * - returns are the raw (unwhitened) advantages plus the values, at every position;
 * - whitening is over the whole batch, token-weighted, with the unbiased variance and the two
 *   separate 1e-8 terms, and is applied to every position, masked ones included (they are not
 *   zeroed: the losses mask them out).
 *
 * Rows may have different lengths (a ragged batch), as long as a row's rewards, values and mask
 * have the same length; a rectangular batch is the reference's layout.
 */
import { ConfigError, InvalidInputError } from '@agentrl/core';
import type { Matrix } from './losses-reference.ts';

/** The epsilon of `masked_mean`'s denominator and the one under the whitening's square root. */
export const WHITEN_EPSILON = 1e-8;

/** Inputs of {@link computeGaeAdvantageReturn}, each `[batch][token]` (rows may be ragged). */
export interface GaeInputs {
  /** r_t: token-level rewards (in agentrl's PPO: the row's score on its last valid token). */
  readonly tokenLevelRewards: Matrix;
  /** V_t: the critic's values of the state before token t. */
  readonly values: Matrix;
  /** 1 on the tokens whose advantages count (the whitening's statistics), else 0. */
  readonly responseMask: Matrix;
}

/** γ and λ of GAE; both act along the tokens of one response. */
export interface GaeOptions {
  /** Discount γ in [0, 1]. */
  readonly gamma: number;
  /** GAE λ in [0, 1]. */
  readonly lam: number;
}

/** What {@link computeGaeAdvantageReturn} returns, `[batch][token]`, float64. */
export interface GaeResult {
  /** The whitened advantages Â at every position (masked positions included, not zeroed). */
  readonly advantages: number[][];
  /** returns = A + V with the raw advantages A, at every position (not masked, not whitened). */
  readonly returns: number[][];
}

function rowsOf(m: Matrix, field: string): ArrayLike<number>[] {
  if (m === null || typeof m !== 'object' || typeof m.length !== 'number') {
    throw new InvalidInputError(`${field} must be an array of rows; got ${String(m)}`, {
      details: { field },
    });
  }
  return Array.from({ length: m.length }, (_, b) => m[b] as ArrayLike<number>);
}

function checkRows(
  rows: readonly ArrayLike<number>[],
  like: readonly ArrayLike<number>[],
  field: string,
): void {
  if (rows.length !== like.length) {
    throw new InvalidInputError(
      `${field} has ${rows.length} rows but tokenLevelRewards has ${like.length}; they must match`,
      { details: { field } },
    );
  }
  for (let b = 0; b < rows.length; b++) {
    const n = (rows[b] as ArrayLike<number>).length;
    const want = (like[b] as ArrayLike<number>).length;
    if (n !== want) {
      throw new InvalidInputError(
        `${field} row ${b} has ${n} entries but tokenLevelRewards row ${b} has ${want}; they must match`,
        { details: { field, row: b } },
      );
    }
  }
}

function unitInterval(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new ConfigError(`${field} must be a number in [0, 1]; got ${String(value)}`, {
      details: { field, value },
    });
  }
  return value;
}

/**
 * Whitens `values` with the masked mean and the unbiased masked variance over the whole batch:
 * `(x − μ) / sqrt(s² + 1e-8)` at every position (reference `masked_whiten` with `shift_mean`).
 * Throws `InvalidInputError` when the mask sums to less than 2, as the reference raises.
 */
export function maskedWhiten(values: Matrix, mask: Matrix): number[][] {
  const x = rowsOf(values, 'values');
  const m = rowsOf(mask, 'mask');
  checkRows(m, x, 'mask');
  let n = 0;
  let sum = 0;
  for (let b = 0; b < x.length; b++) {
    const xr = x[b] as ArrayLike<number>;
    const mr = m[b] as ArrayLike<number>;
    for (let t = 0; t < xr.length; t++) {
      n += mr[t] as number;
      sum += (xr[t] as number) * (mr[t] as number);
    }
  }
  if (n === 0 || n === 1) {
    throw new InvalidInputError(
      `the mask sums to ${n}: whitening needs at least two masked tokens (the unbiased variance divides by n − 1); train on more rows or tokens`,
      { details: { field: 'responseMask', value: n } },
    );
  }
  const mean = sum / (n + WHITEN_EPSILON);
  let sq = 0;
  for (let b = 0; b < x.length; b++) {
    const xr = x[b] as ArrayLike<number>;
    const mr = m[b] as ArrayLike<number>;
    for (let t = 0; t < xr.length; t++) {
      const d = (xr[t] as number) - mean;
      sq += d * d * (mr[t] as number);
    }
  }
  const variance = (sq / (n + WHITEN_EPSILON)) * (n / (n - 1));
  const scale = 1 / Math.sqrt(variance + WHITEN_EPSILON);
  return x.map((row) => Array.from(row, (v) => (v - mean) * scale));
}

/**
 * The raw GAE advantages of every row (before whitening), from the last position back:
 * `δ_t = r_t + γ·V_{t+1} − V_t` (V past the row's end is 0) and `A_t = δ_t + γλ·A_{t+1}`.
 */
export function gaeAdvantages(
  tokenLevelRewards: Matrix,
  values: Matrix,
  options: GaeOptions,
): number[][] {
  const gamma = unitInterval(options?.gamma, 'gamma');
  const lam = unitInterval(options?.lam, 'lam');
  const r = rowsOf(tokenLevelRewards, 'tokenLevelRewards');
  const v = rowsOf(values, 'values');
  checkRows(v, r, 'values');
  return r.map((rr, b) => {
    const vr = v[b] as ArrayLike<number>;
    const out = new Array<number>(rr.length);
    let next = 0;
    for (let t = rr.length - 1; t >= 0; t--) {
      const nextValue = t < rr.length - 1 ? (vr[t + 1] as number) : 0;
      const delta = (rr[t] as number) + gamma * nextValue - (vr[t] as number);
      next = delta + gamma * lam * next;
      out[t] = next;
    }
    return out;
  });
}

/**
 * GAE advantages (whitened over the batch) and returns (raw advantages + values), as the
 * reference's `compute_gae_advantage_return`.
 */
export function computeGaeAdvantageReturn(inputs: GaeInputs, options: GaeOptions): GaeResult {
  const raw = gaeAdvantages(inputs.tokenLevelRewards, inputs.values, options);
  const v = rowsOf(inputs.values, 'values');
  const returns = raw.map((row, b) =>
    row.map((a, t) => a + ((v[b] as ArrayLike<number>)[t] as number)),
  );
  const mask = rowsOf(inputs.responseMask, 'responseMask');
  checkRows(mask, raw, 'responseMask');
  return { advantages: maskedWhiten(raw, mask), returns };
}
