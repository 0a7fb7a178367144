/**
 * What a GiGPO-against-GRPO benchmark is made of: its budgets, its env (the agent, the training
 * and held-out env specs, the expert, the task types and the paper's numbers), the arms and seeds, and how the environment variables
 * `BENCH_SMOKE`, `BENCH_BUDGET` and `BENCH_SET` pick and change the budget of a process (budgets
 * `full`, the default; `smoke`; `long`; and `table` where a benchmark defines one).
 */
import { ConfigError, closestName, type Tokenizer, type TrainablePolicy } from '@agentrl/core';
import { type DemoBudgetBase, SMOKE_SIZES, sftStopRule } from '@agentrl/example-demo-kit';
import type { EnvSpec, Expert } from '@agentrl/runner';

/**
 * The budget fields the jobs read: the demos' (decoder, warm start, RL, validation; the demo kit's
 * `DemoBudgetBase` without its name), the per-turn token limit and the invalid-action penalty. A
 * benchmark's budget may add its own fields: numbers, which `BENCH_SET` can change, or other
 * values (a catalogue's option ranges, a prompt layout), which it refuses to.
 */
export interface BenchBudget extends Omit<DemoBudgetBase, 'name'> {
  readonly maxNewTokens: number;
  /** Penalty on the reward of a step whose action did not parse, given to both arms. */
  readonly invalidActionPenalty: number;
}

/** The full budget of a benchmark built on a demo's budget `D` with its own fields `E`. */
export type BenchBudgetOf<D, E> = Omit<D, 'name'> & E & { readonly invalidActionPenalty: number };

/**
 * The RL iterations of a `table` budget ({@link tableBudget}) unless it names others: 8, the length
 * both five-arm tables run at (16 measured 3.9 hours for ten WebShop seeds on two cores, over the
 * three hours a table may take, so the iterations were halved before any seed was dropped).
 */
export const TABLE_ITERATIONS = 8;

/**
 * A demo's recipe as a benchmark runs it: the demo's fields but its name, the benchmark's
 * validation (96 held-out episodes, every quarter of the iterations), the benchmark's `fields`,
 * and no invalid-action penalty.
 */
function benchRecipe<
  D extends { readonly name: string; readonly iterations: number },
  E extends object,
>(demo: D, fields: E): BenchBudgetOf<D, E> {
  const { name: _demoName, ...recipe } = demo;
  return {
    ...recipe,
    valEpisodes: 96,
    valEvery: Math.max(1, Math.round(demo.iterations / 4)),
    ...fields,
    invalidActionPenalty: 0,
  };
}

/**
 * A benchmark's three budgets from the full budget of the demo it measures, imported so the two
 * cannot drift apart.
 * - `full`: the demo's recipe (decoder, warm start, RL iterations, groups, learning rate,
 *   mini-batch, temperatures, limits) with the benchmark's validation, 96 held-out episodes five
 *   times: after iterations 0, ¼, ½ and ¾ of the way and the last (`valEvery` a quarter of the
 *   iterations: 4 of 16, 16 of 64); the curves; the eval jobs score the final policies on `FINAL_EVAL_EPISODES`
 *   instead of the demo's 480-episode validations), the benchmark's `fields`, and no penalty on
 *   the reward of a step whose action did not parse (the paper's runs use 0.1);
 * - `smoke` (`BENCH_SMOKE=1`): every phase in about a minute, to check the wiring (the demo kit's
 *   smoke sizes and `smoke`'s fields);
 * - `long` (`BENCH_BUDGET=long`): three times the RL iterations, a validation every 6, the same
 *   warm start, to see whether the arms separate with a longer RL phase.
 *
 * A benchmark may add a fourth, `table` (`BENCH_BUDGET=table`, {@link tableBudget}); one without
 * it refuses `BENCH_BUDGET=table`.
 */
export function benchBudgets<
  D extends { readonly name: string; readonly iterations: number },
  E extends object,
>(
  demo: D,
  fields: E,
  smoke: Partial<BenchBudgetOf<D, E>>,
): {
  readonly full: BenchBudgetOf<D, E>;
  readonly smoke: BenchBudgetOf<D, E>;
  readonly long: BenchBudgetOf<D, E>;
} {
  const full = benchRecipe(demo, fields);
  return {
    full,
    smoke: { ...full, ...SMOKE_SIZES, ...smoke },
    long: { ...full, iterations: 3 * demo.iterations, valEvery: 6 },
  };
}

/**
 * The optional `table` budget (`BENCH_BUDGET=table`) of a benchmark, for the paper's Table 1 on
 * many seeds: the demo's recipe as it is (warm start, catalogue or households, decoder,
 * temperatures, limits) with `iterations` RL iterations (default {@link TABLE_ITERATIONS}),
 * validated on 96 held-out episodes three times (before RL, halfway and at the end: every 4 of 8),
 * the benchmark's `fields` and no invalid-action penalty; the arms' final policies are scored on
 * `FINAL_EVAL_EPISODES.table` as on the full budget. Three validations instead of the full
 * budget's five keep a seed's validation cost at a tenth of its RL.
 */
export function tableBudget<
  D extends { readonly name: string; readonly iterations: number },
  E extends object,
>(demo: D, fields: E, iterations: number = TABLE_ITERATIONS): BenchBudgetOf<D, E> {
  return benchRecipe(
    { ...demo, iterations },
    { valEvery: Math.max(1, Math.round(iterations / 2)), ...fields },
  );
}

/** The tokenizer, model and trainable policy of one job. */
export interface BenchAgent {
  readonly tokenizer: Tokenizer;
  readonly policy: TrainablePolicy;
  readonly model: { numParameters(): number; readonly backend: string };
}

/** One of the env's own metrics carried through the jobs and the summary (e.g. the WebShop score). */
export interface BenchMetric {
  /** The metric's name in the env spec (`score`: `val/env/score` in the trainer's metrics). */
  readonly name: string;
  /** How the summary names it, e.g. `WebShop score`. */
  readonly label: string;
}

/** One of the env's task types, a column of the results table (ALFWorld's six). */
export interface BenchTaskType {
  /** The episode's task type as the env reports it (`info.taskType`), e.g. `pick_and_place_simple`. */
  readonly name: string;
  /** The column's name, e.g. `pick` (the paper's). */
  readonly label: string;
}

/**
 * The paper's own numbers for the results table (Table 1 of Feng et al. 2025, arXiv 2505.10978),
 * printed beside ours: per arm (a key of `ARMS`), per column (a task type's name, a metric's name,
 * or `success`), in percent or points.
 */
export interface PaperReference {
  /** Where the numbers come from, in one line (model, table, how they were checked). */
  readonly source: string;
  readonly rows: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** One benchmark: what differs between the env packages; everything else is the kit's. */
export interface Benchmark<B extends BenchBudget = BenchBudget> {
  /** The workload of a run on `budget` in one line (results.json, results.md). */
  workload(budget: B): string;
  /** What the overlay report's title names, e.g. `generated ALFWorld households`. */
  readonly subject: string;
  /**
   * The budgets `full` (default), `smoke` (`BENCH_SMOKE=1`), `long` (`BENCH_BUDGET=long`) and,
   * where the benchmark has them, `table` (`BENCH_BUDGET=table`; see {@link tableBudget}) and
   * `regime` (`BENCH_BUDGET=regime`: the table's recipe where credit assignment should matter
   * more, e.g. longer horizons in bigger environments; the benchmark says which).
   */
  readonly budgets: {
    readonly full: B;
    readonly smoke: B;
    readonly long: B;
    readonly table?: B;
    readonly regime?: B;
  };
  /**
   * Budget fields a warm start depends on beyond the decoder, demonstrations, SFT and turns (a
   * field a budget leaves unset is not recorded).
   */
  readonly warmFields?: readonly string[];
  /** What a held-out episode is called in the summary (default `games`; WebShop: `goals`). */
  readonly heldOutNoun?: string;
  /** The env's metrics to carry beside success (none: success only). */
  readonly metrics?: readonly BenchMetric[];
  /**
   * The task types whose wins the final evaluation counts apart, the table's first columns (none:
   * success over all episodes only).
   */
  readonly taskTypes?: readonly BenchTaskType[];
  /** What the table calls success over all episodes (default `success`; ALFWorld: `All`). */
  readonly successLabel?: string;
  /** The paper's numbers for the same table (none: not printed). */
  readonly paper?: PaperReference;
  /** The paper's table the results table is laid out as (default `Table 1`). */
  readonly paperTable?: string;
  /**
   * The arms a run has unless `--arms` picks others, in the table's order (absent:
   * {@link TABLE_1_ARMS}); those the runner cannot train are left out (`defaultArmsOf`).
   */
  readonly arms?: readonly string[];
  /** The seeds a run has unless `--seeds` picks others (absent: {@link SEEDS}). */
  readonly seeds?: readonly number[];
  /** The job's tokenizer and fresh seeded model. */
  agent(budget: B, seed: number): Promise<BenchAgent>;
  /** Where demonstrations are collected and the arms train. */
  trainEnv(budget: B, seed: number): EnvSpec;
  /**
   * Where the validations and the final evaluation play (absent: the training env, whose
   * held-out episodes are told apart by their seeds).
   */
  heldOutEnv?(budget: B, seed: number): EnvSpec;
  /** A fresh demonstration policy for one collection. */
  expert(): Expert;
  /** The expert's action as a response in the paper's format. */
  formatResponse(action: string): string;
}

/**
 * An algorithm entry as a run config writes it (`algorithm.name`, `algorithm.options`): an
 * estimator of `@agentrl/algorithms`' registry `ESTIMATORS` and its options.
 */
export interface AlgorithmEntry {
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
}

/** One arm of the comparison: how the results name it (the paper's row) and its algorithm. */
export interface ArmSpec {
  /** The row of the paper's Table 1 this arm stands for. */
  readonly label: string;
  readonly algorithm: AlgorithmEntry;
}

/** GiGPO's options in both of its arms but the normalisation: γ 0.95, ω 1, exact anchors. */
const GIGPO_SHARED = { gamma: 0.95, stepAdvantageWeight: 1 } as const;

/**
 * The step-grouping threshold of the paper's search-QA setting: GiGPO groups anchor states whose
 * difflib ratio is at least 0.9 instead of equal ones (verl-agent's `similarity_thresh`, whose
 * own default when similarity grouping is on is 0.95).
 */
const SEARCH_SIMILARITY_THRESHOLD = 0.9;

/**
 * The arms: first the rows of the paper's Table 1 in its order (Feng et al. 2025, arXiv
 * 2505.10978), then GiGPO as the paper runs it on search-QA; same warm start, same budget, only
 * the algorithm differs. GiGPO's two Table 1 rows are its two normalisations (`mode`:
 * `mean_std_norm` divides both levels by the group's std, `mean_norm` does not);
 * `gigpo-sim0.9` is the first with anchors grouped by similarity at 0.9. The invalid-action
 * penalty is the budget's, added to every arm's options by the job. `ppo` is PPO with a critic
 * (verl-agent's PPO options, their defaults; the runner's trainer trains the critic); an arm the
 * runner cannot train is refused by name with the runner's reason (`checkArms`).
 */
export const ARMS: Readonly<Record<string, ArmSpec>> = {
  ppo: { label: 'PPO (with critic)', algorithm: { name: 'ppo', options: {} } },
  rloo: { label: 'RLOO', algorithm: { name: 'rloo', options: {} } },
  grpo: { label: 'GRPO', algorithm: { name: 'grpo', options: { normalizeByStd: true } } },
  'gigpo-mean_std_norm': {
    label: 'GiGPO w/ std',
    algorithm: { name: 'gigpo', options: { mode: 'mean_std_norm', ...GIGPO_SHARED } },
  },
  'gigpo-mean_norm': {
    label: 'GiGPO w/o std',
    algorithm: { name: 'gigpo', options: { mode: 'mean_norm', ...GIGPO_SHARED } },
  },
  'gigpo-sim0.9': {
    label: 'GiGPO w/ std, similar anchors (0.9)',
    algorithm: {
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        ...GIGPO_SHARED,
        similarityThreshold: SEARCH_SIMILARITY_THRESHOLD,
      },
    },
  },
};

/**
 * The rows of the paper's Table 1 among {@link ARMS}, in its order: the arms a benchmark runs
 * unless it names its own (`Benchmark.arms`) or `--arms` picks others.
 */
export const TABLE_1_ARMS: readonly string[] = [
  'ppo',
  'rloo',
  'grpo',
  'gigpo-mean_std_norm',
  'gigpo-mean_norm',
];

/**
 * Why the runner cannot train an arm now (its refusal, e.g. an estimator that is not registered or
 * one that needs a critic the trainer does not train), or `undefined` when it can.
 */
export type ArmRefusal = (arm: string) => string | undefined;

/**
 * The arms a run has unless `--arms` picks others: every arm of `candidates` (a benchmark's own
 * list, or {@link TABLE_1_ARMS}), in its order, that the runner can train at run time (`refusal`
 * says why not), so the list follows what the runner trains (PPO with a critic among them once
 * its trainer trained the critic): no list to edit.
 */
export function defaultArmsOf(
  refusal: ArmRefusal,
  candidates: readonly string[] = TABLE_1_ARMS,
): string[] {
  return candidates.filter((arm) => refusal(arm) === undefined);
}

/** The arm the paired table compares every other arm with (the paper's baseline). */
export const BASELINE_ARM = 'grpo';

/**
 * The names the two-arm runs gave their files (`seed-N/gigpo.json`, `seed-N/gigpo/`, the `gigpo`
 * entry of `eval.json`): read as the arm they were, so their run folders still summarize and
 * resume.
 */
export const LEGACY_ARM_NAMES: Readonly<Record<string, string>> = {
  'gigpo-mean_std_norm': 'gigpo',
};

/**
 * `names` checked: each an arm of {@link ARMS} (an unknown one is refused with the closest name)
 * that the runner can train (one that it cannot is refused with the runner's reason), each once.
 */
export function checkArms(names: readonly string[], refusal: ArmRefusal): string[] {
  if (names.length === 0)
    throw new ConfigError(`--arms: name at least one arm (${Object.keys(ARMS).join(', ')})`);
  const seen = new Set<string>();
  for (const name of names) {
    const arm = ARMS[name];
    if (arm === undefined) {
      const closest = closestName(name, Object.keys(ARMS));
      throw new ConfigError(
        `--arms: unknown arm "${name}"${closest === undefined ? '' : `; did you mean "${closest}"?`} (arms: ${Object.keys(ARMS).join(', ')})`,
        { details: { field: 'arms', value: name } },
      );
    }
    const why = refusal(name);
    if (why !== undefined)
      throw new ConfigError(
        `--arms: arm "${name}" (${arm.label}) cannot be trained: ${why}; leave it out, e.g. --arms ${defaultArmsOf(refusal).join(',')}`,
        { details: { field: 'arms', value: name } },
      );
    if (seen.has(name)) throw new ConfigError(`--arms: arm "${name}" is named twice`);
    seen.add(name);
  }
  return [...names];
}

/**
 * The algorithm an arm's job trains with on `budget`: the arm's entry with the budget's
 * invalid-action penalty (recorded beside the arm's result, and compared on resume).
 */
export function resolvedAlgorithm(arm: string, budget: BenchBudget): AlgorithmEntry {
  const spec = ARMS[arm];
  if (spec === undefined) throw new ConfigError(`arm "${arm}" is unknown`);
  // PPO's critic learns at CRITIC_LEARNING_RATE_RATIO times the actor's rate, the ratio of
  // verl-agent's PPO scripts (examples/ppo_trainer/run_alfworld.sh: actor 1e-6, critic 1e-5); their
  // absolute rates are a 1.5B model's, not our tiny model's.
  const critic =
    spec.algorithm.name === 'ppo'
      ? { criticLearningRate: CRITIC_LEARNING_RATE_RATIO * budget.learningRate }
      : {};
  return {
    name: spec.algorithm.name,
    options: {
      ...critic,
      ...spec.algorithm.options,
      invalidActionPenalty: budget.invalidActionPenalty,
    },
  };
}

/** The critic's learning rate over the actor's in the PPO arm (verl-agent's PPO scripts: 1e-5 / 1e-6). */
export const CRITIC_LEARNING_RATE_RATIO = 10;

/** The seeds a run has unless its benchmark names its own (`Benchmark.seeds`) or `--seeds` others. */
export const SEEDS: readonly number[] = [0, 1, 2, 3, 4];

/**
 * Which budget a process runs: `smoke` (`BENCH_SMOKE=1`), `long` (`BENCH_BUDGET=long`), `table`
 * and `regime` (`BENCH_BUDGET=table|regime`, where the benchmark has them) or `full` (the
 * default).
 */
export type BudgetName = 'smoke' | 'long' | 'full' | 'table' | 'regime';

/** The budget names `BENCH_BUDGET` takes. */
export const BUDGET_NAMES: readonly BudgetName[] = ['full', 'long', 'table', 'regime', 'smoke'];

/**
 * The budget name the environment variables ask for: `smoke` when `BENCH_SMOKE=1` (whatever
 * `BENCH_BUDGET` says), else `BENCH_BUDGET` (unset or empty: `full`). A `BENCH_BUDGET` that names
 * no budget is refused, naming the ones there are.
 */
export function budgetName(env: NodeJS.ProcessEnv): BudgetName {
  if (env.BENCH_SMOKE === '1') return 'smoke';
  const asked = env.BENCH_BUDGET;
  if (asked === undefined || asked === '') return 'full';
  const name = BUDGET_NAMES.find((n) => n === asked);
  if (name === undefined) {
    const closest = closestName(asked, BUDGET_NAMES);
    throw new ConfigError(
      `BENCH_BUDGET=${asked}: no such budget${closest === undefined ? '' : `; did you mean "${closest}"?`} (budgets: ${BUDGET_NAMES.join(', ')}; unset: full)`,
      { details: { field: 'BENCH_BUDGET', value: asked } },
    );
  }
  return name;
}

/**
 * `BENCH_SET="key=value,key=value"` overrides budget fields (numbers only), for trying a recipe
 * without editing a file; an unknown key, a field that is not a number (a catalogue's option
 * ranges, a prompt layout) or a value that is not a number is an error naming the fields it
 * changes.
 */
export function withOverrides<B extends BenchBudget>(budget: B, text: string | undefined): B {
  if (!text) return budget;
  const fields = budget as unknown as Record<string, unknown>;
  const numeric = Object.keys(fields).filter((key) => typeof fields[key] === 'number');
  const out: Record<string, unknown> = { ...fields };
  for (const assignment of text.split(',')) {
    const [key, value] = assignment.split('=');
    if (key !== undefined && key in fields && typeof fields[key] !== 'number')
      throw new ConfigError(
        `BENCH_SET ${assignment}: ${key} is not a number field; BENCH_SET changes numbers only (fields: ${numeric.join(', ')})`,
        { details: { field: 'BENCH_SET', value: assignment } },
      );
    if (!key || value === undefined || !(key in fields) || !Number.isFinite(Number(value)))
      throw new ConfigError(
        `BENCH_SET ${assignment}: use a budget field and a number, e.g. BENCH_SET=temperature=1 (fields: ${numeric.join(', ')})`,
      );
    out[key] = Number(value);
  }
  return out as unknown as B;
}

/**
 * Held-out episodes on which each seed's warm start and each arm's final policy are scored once
 * more after training (the `eval` job), at the validation temperature: five times the full
 * validation's 96, for intervals about half as wide. The first `valEpisodes` are the validation's.
 */
export const FINAL_EVAL_EPISODES: Readonly<Record<BudgetName, number>> = {
  smoke: 8,
  long: 480,
  full: 480,
  table: 480,
  regime: 480,
};

/**
 * `BENCH_EVAL_EPISODES=N` scores the same models on N held-out episodes instead of the budget's
 * {@link FINAL_EVAL_EPISODES}: a tighter estimate of each arm's success, worth its CPU where the
 * evaluation makes much of the paired differences' spread over seeds (the summary says how much,
 * from the per-game outcomes); unset or empty: the budget's. A value that is not a whole number
 * of at least 1 is refused.
 */
export function finalEvalEpisodesOf(name: BudgetName, env: NodeJS.ProcessEnv): number {
  const asked = env.BENCH_EVAL_EPISODES;
  if (asked === undefined || asked === '') return FINAL_EVAL_EPISODES[name];
  const n = Number(asked);
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(
      `BENCH_EVAL_EPISODES=${asked}: give a whole number of held-out episodes, at least 1, e.g. BENCH_EVAL_EPISODES=1920 (unset: the budget's ${FINAL_EVAL_EPISODES[name]})`,
      { details: { field: 'BENCH_EVAL_EPISODES', value: asked } },
    );
  return n;
}

/**
 * The file stem of a final evaluation and of its summary: `eval` and `results` at the budget's
 * own number of episodes, `eval-N` and `results-N` at another (`BENCH_EVAL_EPISODES`), so a larger
 * evaluation of the same models sits beside the first instead of replacing it.
 */
export function evalStems(
  name: BudgetName,
  episodes: number,
): { readonly evalStem: string; readonly resultsStem: string } {
  return episodes === FINAL_EVAL_EPISODES[name]
    ? { evalStem: 'eval', resultsStem: 'results' }
    : { evalStem: `eval-${episodes}`, resultsStem: `results-${episodes}` };
}

/** A benchmark with the budget of this process resolved. */
export interface ResolvedBench<B extends BenchBudget = BenchBudget> {
  readonly bench: Benchmark<B>;
  readonly budgetName: BudgetName;
  readonly budget: B;
  /** Held-out episodes of the final evaluation (`BENCH_EVAL_EPISODES`, or the budget's). */
  readonly finalEvalEpisodes: number;
  /** The final evaluation's file stem in a seed's folder (`eval`, or `eval-N`: {@link evalStems}). */
  readonly evalStem: string;
  /** The summary's file stem (`results`, or `results-N`). */
  readonly resultsStem: string;
}

/**
 * Resolves the budget of `bench` from the environment variables (`process.env` by default); a
 * budget the benchmark does not define (`table` on one without it) is refused, naming the
 * budgets it has.
 */
export function resolveBench<B extends BenchBudget>(
  bench: Benchmark<B>,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedBench<B> {
  const name = budgetName(env);
  const budget = bench.budgets[name];
  if (budget === undefined) {
    const has = BUDGET_NAMES.filter((n) => bench.budgets[n] !== undefined);
    throw new ConfigError(
      `BENCH_BUDGET=${name}: the benchmark on ${bench.subject} has no ${name} budget (its budgets: ${has.join(', ')})`,
      { details: { field: 'BENCH_BUDGET', value: name } },
    );
  }
  const finalEvalEpisodes = finalEvalEpisodesOf(name, env);
  return {
    bench,
    budgetName: name,
    budget: withOverrides(budget, env.BENCH_SET),
    finalEvalEpisodes,
    ...evalStems(name, finalEvalEpisodes),
  };
}

/** A warm start's recipe: budget fields by name (numbers, or a benchmark's other values). */
export type WarmRecipe = Record<string, number | string | readonly number[]>;

/**
 * The budget fields a warm start depends on (decoder, demonstrations, SFT and its stopping rule
 * where it has one, turn limit, and the benchmark's `warmFields` that the budget sets). A saved
 * warm start whose recorded recipe equals this one is reused instead of being redone.
 */
export function warmRecipe<B extends BenchBudget>(
  budget: B,
  warmFields: readonly string[] = [],
): WarmRecipe {
  const { hidden, layers, heads, demoEpisodes, sftSteps, sftBatch, sftLearningRate, maxTurns } =
    budget;
  const recipe: WarmRecipe = {
    hidden,
    layers,
    heads,
    demoEpisodes,
    sftSteps,
    sftBatch,
    sftLearningRate,
    maxTurns,
  };
  const rule = sftStopRule(budget);
  if (rule) {
    recipe.sftStopLoss = rule.meanLoss;
    recipe.sftStopWindow = rule.window;
  }
  const fields = budget as unknown as Record<string, WarmRecipe[string] | undefined>;
  for (const field of warmFields) {
    const value = fields[field];
    if (value !== undefined) recipe[field] = value;
  }
  return recipe;
}

/**
 * A budget as results are compared by: fields in name order, and the warm start's stopping-rule
 * fields left out where the rule is off (`sftStopLoss` 0), so results recorded before those
 * fields existed still match a budget that takes every warm-start step.
 */
export function comparableBudget(budget: unknown): string {
  if (budget === null || typeof budget !== 'object') return JSON.stringify(budget);
  const fields = { ...(budget as Record<string, unknown>) };
  if (!sftStopRule(fields as { sftStopLoss?: number })) {
    delete fields.sftStopLoss;
    delete fields.sftStopWindow;
  }
  return JSON.stringify(
    Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1))),
  );
}
