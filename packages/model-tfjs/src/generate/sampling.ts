/**
 * Choosing the next token from one row of logits, in JS. The reported log-prob is that
 * of the chosen token under the untruncated, temperature-scaled distribution `softmax(logits / T)`
 * (verl's convention); greedy decoding (T = 0) reports the temperature-1 log-prob. Score old
 * log-probs with `tokenLogProbs(seqs, { temperature: T })` to match.
 */
import { InvalidInputError, type Rng } from '@agentrl/core';

/** Truncation and temperature settings of one draw. */
export interface TokenSamplingOptions {
  /** 0 = greedy. */
  readonly temperature: number;
  /** Keep the k most likely tokens; 0 disables. */
  readonly topK: number;
  /** Nucleus mass in (0, 1]; 1 disables. */
  readonly topP: number;
}

/** The chosen token and its log-prob. */
export interface SampledToken {
  readonly token: number;
  readonly logProb: number;
}

/** Checks sampling options, naming the bad field. */
export function validateSampling(o: TokenSamplingOptions): void {
  if (!(o.temperature >= 0) || !Number.isFinite(o.temperature)) {
    throw new InvalidInputError(
      `sampling.temperature must be a finite number >= 0, got ${o.temperature}`,
      { details: { field: 'temperature', value: o.temperature } },
    );
  }
  if (!Number.isInteger(o.topK) || o.topK < 0) {
    throw new InvalidInputError(`sampling.topK must be an integer >= 0, got ${o.topK}`, {
      details: { field: 'topK', value: o.topK },
    });
  }
  if (!(o.topP > 0 && o.topP <= 1)) {
    throw new InvalidInputError(`sampling.topP must be in (0, 1], got ${o.topP}`, {
      details: { field: 'topP', value: o.topP },
    });
  }
}

function logSumExp(values: ArrayLike<number>, scale: number): { max: number; lse: number } {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = (values[i] as number) * scale;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += Math.exp((values[i] as number) * scale - max);
  return { max, lse: max + Math.log(sum) };
}

/** Draws one token from `logits` (one row, length V). */
export function sampleToken(
  logits: ArrayLike<number>,
  options: TokenSamplingOptions,
  rng: Rng,
): SampledToken {
  const V = logits.length;
  if (options.temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if ((logits[i] as number) > (logits[best] as number)) best = i;
    return { token: best, logProb: (logits[best] as number) - logSumExp(logits, 1).lse };
  }
  const scale = 1 / options.temperature;
  const { lse } = logSumExp(logits, scale);
  let candidates: number[] | undefined;
  if (options.topK > 0 && options.topK < V) {
    const sorted = Float32Array.from(logits).sort();
    const threshold = sorted[V - options.topK] as number;
    candidates = [];
    for (let i = 0; i < V; i++) if ((logits[i] as number) >= threshold) candidates.push(i);
  }
  if (options.topP < 1) {
    const pool = candidates ?? Array.from({ length: V }, (_, i) => i);
    pool.sort((a, b) => (logits[b] as number) - (logits[a] as number));
    const poolLse = logSumExp(
      pool.map((i) => logits[i] as number),
      scale,
    ).lse;
    const kept: number[] = [];
    let mass = 0;
    for (const i of pool) {
      kept.push(i);
      mass += Math.exp((logits[i] as number) * scale - poolLse);
      if (mass >= options.topP) break;
    }
    candidates = kept;
  }
  let total = 0;
  if (candidates === undefined) {
    total = 1;
  } else {
    for (const i of candidates) total += Math.exp((logits[i] as number) * scale - lse);
  }
  let target = rng.next() * total;
  let chosen = -1;
  const count = candidates === undefined ? V : candidates.length;
  for (let c = 0; c < count; c++) {
    const i = candidates === undefined ? c : (candidates[c] as number);
    target -= Math.exp((logits[i] as number) * scale - lse);
    chosen = i;
    if (target < 0) break;
  }
  return { token: chosen, logProb: (logits[chosen] as number) * scale - lse };
}
