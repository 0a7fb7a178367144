/** Metrics of rollouts: success overall and per task type, lengths, validity, the env's own metrics. */
import type { StepRecord } from '@agentrl/core';
import type { RolloutResult } from './rollout.ts';
import { mean, summary } from './stats.ts';

/** A flat metrics record: names like `train/success` or `val/success/pick_and_place`. */
export type Metrics = Record<string, number>;

/** Episode metrics of a rollout under `prefix` (`train`, `val`). */
export function episodeMetrics(prefix: string, result: RolloutResult): Metrics {
  const started = result.episodes;
  const out: Metrics = {};
  out[`${prefix}/episodes`] = started.length;
  out[`${prefix}/success`] = mean(started.map((e) => (e.won ? 1 : 0)));
  out[`${prefix}/wins`] = started.filter((e) => e.won).length;
  out[`${prefix}/episodeLength`] = mean(started.map((e) => e.length));
  out[`${prefix}/episodeReward`] = mean(started.map((e) => e.episodeReward));
  const steps = started.reduce((s, e) => s + e.length, 0);
  const valid = started.reduce((s, e) => s + e.validActions, 0);
  out[`${prefix}/validActionRatio`] = steps === 0 ? 0 : valid / steps;
  out[`${prefix}/envFailures`] = result.envFailures;
  out[`${prefix}/promptTruncations`] = result.promptTruncations;
  // The env's own metrics (WebShop score, EM per data source): each over the episodes that hold it.
  const names = [...new Set(started.flatMap((e) => Object.keys(e.metrics ?? {})))].sort();
  for (const name of names) {
    const values = started
      .map((e) => e.metrics?.[name])
      .filter((v): v is number => v !== undefined);
    out[`${prefix}/env/${name}`] = mean(values);
  }
  const types = [...new Set(started.map((e) => e.taskType))].sort();
  if (types.length > 1 || (types.length === 1 && types[0] !== 'all')) {
    for (const t of types) {
      const of = started.filter((e) => e.taskType === t);
      out[`${prefix}/success/${t}`] = mean(of.map((e) => (e.won ? 1 : 0)));
    }
  }
  return out;
}

/**
 * Step-group statistics (exact anchor matching, paper Eq. 6): rows sharing a task group and an anchor
 * form one step group. `stepGroups/oneActionFraction` is the share of the groups of two or more
 * steps whose members all took the same action: there the step-level advantage can only tell
 * apart what happened after the action, not the choice of action (low rollout temperatures make
 * such groups common).
 */
export function stepGroupMetrics(records: readonly StepRecord[]): Metrics {
  const sizes = new Map<string, number>();
  const actions = new Map<string, Set<string>>();
  for (const r of records) {
    const key = `${r.groupId}\u0000${r.anchor}`;
    sizes.set(key, (sizes.get(key) ?? 0) + 1);
    const taken = actions.get(key) ?? new Set<string>();
    taken.add(r.action);
    actions.set(key, taken);
  }
  const s = summary([...sizes.values()]);
  const shared = [...sizes].filter(([, size]) => size > 1).map(([key]) => key);
  return {
    'stepGroups/count': sizes.size,
    'stepGroups/sizeMean': s.mean,
    'stepGroups/sizeMin': s.min,
    'stepGroups/sizeMax': s.max,
    'stepGroups/singletonFraction':
      sizes.size === 0 ? 0 : [...sizes.values()].filter((v) => v === 1).length / sizes.size,
    'stepGroups/oneActionFraction':
      shared.length === 0
        ? 0
        : shared.filter((key) => actions.get(key)?.size === 1).length / shared.length,
  };
}

/** Mean of each named value over a list of metric records (names missing in some are averaged over those that have them). */
export function averageMetrics(list: readonly Record<string, number>[]): Metrics {
  const sums = new Map<string, { s: number; n: number }>();
  for (const m of list) {
    for (const [k, v] of Object.entries(m)) {
      if (!Number.isFinite(v)) continue;
      const e = sums.get(k) ?? { s: 0, n: 0 };
      e.s += v;
      e.n++;
      sums.set(k, e);
    }
  }
  const out: Metrics = {};
  for (const [k, { s, n }] of sums) out[k] = s / n;
  return out;
}

/**
 * How far one update moved the policy on the rows it trained on, per response token: `before`
 * are the log-probs the tokens were sampled with, `after` the updated policy's log-probs of the
 * same tokens (same temperature). `policy/klBeforeAfter` is the k3 estimate of KL(π_before ‖
 * π_after), `exp(Δ) − Δ − 1` with `Δ = after − before` (Schulman, "Approximating KL divergence";
 * never negative, unbiased for tokens drawn from π_before); `policy/absDeltaLogProb` is the mean
 * |Δ|; `policy/entropy` the mean full-distribution entropy of the updated policy when given.
 */
export function policyShiftMetrics(
  before: readonly (readonly number[])[],
  after: readonly (readonly number[])[],
  entropies?: readonly (readonly number[])[],
): Metrics {
  let tokens = 0;
  let kl = 0;
  let abs = 0;
  let maxAbs = 0;
  for (let i = 0; i < before.length; i++) {
    const b = before[i] as readonly number[];
    const a = after[i] ?? [];
    const n = Math.min(b.length, a.length);
    for (let j = 0; j < n; j++) {
      const d = (a[j] as number) - (b[j] as number);
      if (!Number.isFinite(d)) continue;
      tokens++;
      kl += Math.expm1(d) - d;
      abs += Math.abs(d);
      if (Math.abs(d) > maxAbs) maxAbs = Math.abs(d);
    }
  }
  if (tokens === 0) return {};
  const out: Metrics = {
    'policy/klBeforeAfter': kl / tokens,
    'policy/absDeltaLogProb': abs / tokens,
    'policy/maxAbsDeltaLogProb': maxAbs,
  };
  if (entropies !== undefined) {
    let s = 0;
    let n = 0;
    for (const row of entropies)
      for (const v of row)
        if (Number.isFinite(v)) {
          s += v;
          n++;
        }
    if (n > 0) out['policy/entropy'] = s / n;
  }
  return out;
}

/**
 * Mean −log π(token) of the sampled response tokens: an estimate of the per-token entropy of the
 * sampling distribution (exact in expectation for untruncated sampling), free from the rollout.
 */
export function sampledNegLogProb(records: readonly StepRecord[]): number {
  let s = 0;
  let n = 0;
  for (const r of records)
    for (const v of r.responseLogProbs)
      if (Number.isFinite(v)) {
        s -= v;
        n++;
      }
  return n === 0 ? 0 : s / n;
}
