/**
 * The benchmark's budget: the main job's settings (examples/alfworld-gigpo, `FULL_BUDGET`) with 12
 * RL iterations instead of 10 and validation every 4, so 3 seeds × (warm start + 2 arms) fit in
 * about half an hour on 2 cores. Both arms of a seed start from the same saved warm start.
 */
import type { EstimatorName } from '@agentrl/runner';

export const FULL_BUDGET = {
  /** Decoder size (the main job's: 96 wide, 3 layers, 4 heads). */
  hidden: 96,
  layers: 3,
  heads: 4,
  /** Expert games of the warm start (seed + 5000) and SFT steps (the main job's). */
  demoEpisodes: 400,
  sftSteps: 320,
  sftBatch: 32,
  sftLearningRate: 3e-3,
  /** RL: 8 groups × 8, AdamW 1e-4, PPO clip 0.2, dual clip 3, no KL, no entropy bonus. */
  iterations: 12,
  groups: 8,
  groupSize: 8,
  learningRate: 1e-4,
  temperature: 0.7,
  maxTurns: 15,
  maxNewTokens: 12,
  miniBatchSize: 256,
  /** Validation: 96 held-out games (seed + 1000), temperature 0.4, at 0, 4, 8 and after the last update (12). */
  valEpisodes: 96,
  valEvery: 4,
  valTemperature: 0.4,
};

/** Every phase in about a minute (`BENCH_SMOKE=1`), to check the wiring before the real run. */
export const SMOKE_BUDGET: typeof FULL_BUDGET = {
  ...FULL_BUDGET,
  hidden: 32,
  layers: 1,
  demoEpisodes: 24,
  sftSteps: 4,
  sftBatch: 8,
  iterations: 2,
  groups: 2,
  groupSize: 2,
  valEpisodes: 4,
  valEvery: 1,
  maxTurns: 10,
};

/**
 * Three times the RL iterations (36, validation every 6), everything else as `FULL_BUDGET`
 * (`BENCH_BUDGET=long`): affordable since the wasm matmul made training about twice as fast, to see
 * whether the arms separate with a longer RL phase.
 */
export const LONG_BUDGET: typeof FULL_BUDGET = { ...FULL_BUDGET, iterations: 36, valEvery: 6 };

/** Which budget this process runs: `smoke` (`BENCH_SMOKE=1`), `long` (`BENCH_BUDGET=long`) or `full`. */
export const BUDGET_NAME: 'smoke' | 'long' | 'full' =
  process.env.BENCH_SMOKE === '1' ? 'smoke' : process.env.BENCH_BUDGET === 'long' ? 'long' : 'full';

export const BUDGET = { smoke: SMOKE_BUDGET, long: LONG_BUDGET, full: FULL_BUDGET }[BUDGET_NAME];

/** The two arms: same warm start, same budget, only the advantage estimator differs. */
export const ARMS: Readonly<
  Record<string, { readonly name: EstimatorName; readonly options: Record<string, unknown> }>
> = {
  gigpo: {
    name: 'gigpo',
    // Exact anchors: no similarityThreshold.
    options: {
      mode: 'mean_std_norm',
      gamma: 0.95,
      stepAdvantageWeight: 1,
      invalidActionPenalty: 0,
    },
  },
  grpo: {
    name: 'grpo',
    options: { normalizeByStd: true, invalidActionPenalty: 0 },
  },
};

export const SEEDS = [0, 1, 2] as const;
