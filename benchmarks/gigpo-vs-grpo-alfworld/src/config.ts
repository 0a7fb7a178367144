/**
 * The benchmark's budget: the main job's recipe (examples/alfworld-gigpo, `FULL_BUDGET`), imported
 * so the two cannot drift apart. Both arms of a seed start from the same saved warm start.
 */
import { FULL_BUDGET as MAIN_JOB_BUDGET } from '@agentrl/example-alfworld-gigpo';
import type { EstimatorName } from '@agentrl/runner';

const { name: _mainJobName, ...MAIN_JOB_RECIPE } = MAIN_JOB_BUDGET;

export const FULL_BUDGET = {
  /**
   * The main job's recipe (decoder, warm start, RL iterations, groups, learning rate, mini-batch,
   * rollout temperature, held-out games and validation interval); PPO clip 0.2, dual clip 3, no
   * KL, no entropy bonus.
   */
  ...MAIN_JOB_RECIPE,
  /**
   * Validation on 96 held-out games every 4 iterations (the curves); the final policies are
   * scored on `FINAL_EVAL_EPISODES` by the eval jobs instead of the main job's 480-game validations.
   */
  valEpisodes: 96,
  valEvery: 4,
  /** The main job's per-turn token budget. */
  maxNewTokens: 12,
  /** Penalty on the reward of a step whose action did not parse (the paper's ALFWorld runs use 0.1). */
  invalidActionPenalty: 0,
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
 * Three times the RL iterations, validation every 6, everything else as `FULL_BUDGET`
 * (`BENCH_BUDGET=long`), to see whether the arms separate with a longer RL phase.
 */
export const LONG_BUDGET: typeof FULL_BUDGET = {
  ...FULL_BUDGET,
  iterations: 3 * FULL_BUDGET.iterations,
  valEvery: 6,
};

/** Which budget this process runs: `smoke` (`BENCH_SMOKE=1`), `long` (`BENCH_BUDGET=long`) or `full`. */
export const BUDGET_NAME: 'smoke' | 'long' | 'full' =
  process.env.BENCH_SMOKE === '1' ? 'smoke' : process.env.BENCH_BUDGET === 'long' ? 'long' : 'full';

const NAMED = { smoke: SMOKE_BUDGET, long: LONG_BUDGET, full: FULL_BUDGET }[BUDGET_NAME];

/**
 * `BENCH_SET="key=value,key=value"` overrides budget fields (numbers only), for trying a recipe
 * without editing this file; an unknown key is an error naming the valid ones.
 */
function withOverrides(budget: typeof FULL_BUDGET, text: string | undefined): typeof FULL_BUDGET {
  if (!text) return budget;
  const out: Record<string, number> = { ...(budget as unknown as Record<string, number>) };
  for (const assignment of text.split(',')) {
    const [key, value] = assignment.split('=');
    if (!key || value === undefined || !(key in budget) || !Number.isFinite(Number(value)))
      throw new Error(
        `BENCH_SET ${assignment}: use a budget field and a number (fields: ${Object.keys(budget).join(', ')})`,
      );
    out[key] = Number(value);
  }
  return out as unknown as typeof FULL_BUDGET;
}

export const BUDGET = withOverrides(NAMED, process.env.BENCH_SET);

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
    },
  },
  grpo: {
    name: 'grpo',
    options: { normalizeByStd: true },
  },
};

export const SEEDS = [0, 1, 2, 3, 4] as const;

/**
 * Held-out games on which each seed's warm start and each arm's final policy are scored once more
 * after training (the `eval` job), at the validation temperature: five times the validation's 96,
 * for intervals about half as wide. The first `valEpisodes` of them are the validation's games.
 */
export const FINAL_EVAL_EPISODES = { smoke: 8, long: 480, full: 480 }[BUDGET_NAME];

/**
 * The budget fields a warm start depends on (decoder, vocabulary, demonstrations, SFT). A saved
 * warm start whose recorded recipe equals this one is reused by `bench` instead of being redone.
 */
export function warmRecipe(budget: typeof FULL_BUDGET): Record<string, number> {
  const { hidden, layers, heads, demoEpisodes, sftSteps, sftBatch, sftLearningRate, maxTurns } =
    budget;
  return { hidden, layers, heads, demoEpisodes, sftSteps, sftBatch, sftLearningRate, maxTurns };
}
