/**
 * The ALFWorld benchmark: its budget is the main job's recipe (examples/alfworld-gigpo,
 * `FULL_BUDGET`), imported so the two cannot drift apart; its env the main job's generated
 * households. Every arm of a seed starts from the same saved warm start. The jobs, the driver and
 * the summary are the kit's (`@agentrl-bench/gigpo-vs-grpo-kit`); the summary counts wins per
 * task type, the columns of the paper's Table 1.
 */
import {
  ALFWORLD_TASK_TYPES,
  type AlfworldGeneratorOptions,
  type AlfworldTaskType,
  TINY_HOUSEHOLD,
} from '@agentrl/env-alfworld';
import {
  createTinyAgent,
  envSpec,
  expertPolicy,
  expertResponse,
  FULL_BUDGET as MAIN_JOB_BUDGET,
} from '@agentrl/example-alfworld-gigpo';
import {
  type Benchmark,
  type BenchTaskType,
  benchBudgets,
  type PaperReference,
  resolveBench,
  tableBudget,
} from '@agentrl-bench/gigpo-vs-grpo-kit';

/** The household fields a budget may set (unset: the main job's {@link TINY_HOUSEHOLD}). */
interface HouseholdFields {
  /** Storage receptacles besides those the task needs (the generator's `storageReceptacles`). */
  readonly storageReceptacles?: number;
  /** Distractor objects (the generator's `distractors`). */
  readonly distractors?: number;
}

const FULL_FIELDS = benchBudgets(
  MAIN_JOB_BUDGET,
  { maxNewTokens: 12 },
  { demoEpisodes: 24, maxTurns: 10 },
);

/** A budget of this benchmark: the kit's fields over the main job's, and the household's size. */
export type AlfworldBenchBudget = typeof FULL_FIELDS.full & HouseholdFields;

/**
 * The regime where credit assignment should matter more than in the main job's short episodes:
 * six storage receptacles and four distractors instead of two and one (an expert win takes 8.4
 * steps instead of 7.3, a prompt about 100 words instead of 76: 100 generated games each) and
 * 30 steps instead of 15, so a policy that has not learnt where things are wanders further, and
 * revisits more states, before it is cut off. Nearer the paper's 50-step episodes in real rooms
 * (its households have 4 to 38 storage receptacles and 20 to 52 distractors), as far as a
 * two-core machine allows.
 */
export const REGIME: Required<HouseholdFields> & { readonly maxTurns: number } = {
  storageReceptacles: 6,
  distractors: 4,
  maxTurns: 30,
};

/**
 * The budgets: the main job's recipe (decoder, warm start, RL, temperatures, turn limit) with its
 * per-turn token budget of 12, validated on 96 held-out games five times (every quarter of the
 * iterations); the smoke run with the demo kit's smoke sizes, 24 demonstration games and 10 turns
 * (the kit's `benchBudgets`); `table` (`BENCH_BUDGET=table`, the kit's `tableBudget`): the same
 * recipe with the five-arm table's length, 8 RL iterations validated every 4 (the same budget as
 * `full` with `BENCH_SET=iterations=8,valEvery=4`, which the committed table's first seeds were
 * run with, so they resume on it); and `regime` (`BENCH_BUDGET=regime`): the table's budget in
 * {@link REGIME}'s households and horizon. `full`, `smoke`, `long` and `table` set no household
 * field, so their recorded budgets, and the committed jobs that resume on them, are unchanged.
 */
export const BUDGETS: {
  readonly full: AlfworldBenchBudget;
  readonly smoke: AlfworldBenchBudget;
  readonly long: AlfworldBenchBudget;
  readonly table: AlfworldBenchBudget;
  readonly regime: AlfworldBenchBudget;
} = {
  ...FULL_FIELDS,
  table: tableBudget(MAIN_JOB_BUDGET, { maxNewTokens: 12 }),
  regime: tableBudget(MAIN_JOB_BUDGET, { maxNewTokens: 12, ...REGIME }),
};
export const FULL_BUDGET = BUDGETS.full;
export const TABLE_BUDGET = BUDGETS.table;
export const REGIME_BUDGET = BUDGETS.regime;

/** The generator settings of `budget`'s households: the main job's, resized where it says. */
export function householdOf(budget: AlfworldBenchBudget): AlfworldGeneratorOptions {
  return {
    ...TINY_HOUSEHOLD,
    storageReceptacles: budget.storageReceptacles ?? TINY_HOUSEHOLD.storageReceptacles,
    distractors: budget.distractors ?? TINY_HOUSEHOLD.distractors,
  };
}

/** The workload line of the main job's households. */
const TINY_WORKLOAD =
  'generated tiny ALFWorld households (TINY_HOUSEHOLD, 15 steps), 96 held-out games (seed + 1000)';

/** The paper's column names of the six task types (Table 1 of Feng et al. 2025). */
const TASK_TYPE_LABELS: Readonly<Record<AlfworldTaskType, string>> = {
  pick_and_place_simple: 'pick',
  look_at_obj_in_light: 'look',
  pick_clean_then_place_in_recep: 'clean',
  pick_heat_then_place_in_recep: 'heat',
  pick_cool_then_place_in_recep: 'cool',
  pick_two_obj_and_place: 'pick2',
};

/** The table's task-type columns: the env's six, in its order (the paper's), with the paper's names. */
export const TASK_TYPES: readonly BenchTaskType[] = ALFWORLD_TASK_TYPES.map((name) => ({
  name,
  label: TASK_TYPE_LABELS[name],
}));

/**
 * The paper's ALFWorld success over all task types (%), Qwen2.5-1.5B-Instruct, per row of its
 * Table 1, printed beside ours. Its per-task-type cells are not carried here.
 */
export const PAPER_TABLE_1: PaperReference = {
  source:
    'Feng et al. 2025, arXiv 2505.10978, Table 1, Qwen2.5-1.5B-Instruct, ALFWorld All; as quoted, not checked against the paper here',
  rows: {
    ppo: { success: 54.4 },
    rloo: { success: 69.7 },
    grpo: { success: 72.8 },
    'gigpo-mean_std_norm': { success: 86.7 },
    'gigpo-mean_norm': { success: 86.1 },
  },
};

/** The benchmark: generated households, the main job's tiny agent, prompt and expert. */
export const ALFWORLD: Benchmark<AlfworldBenchBudget> = {
  workload: (budget) => {
    if (budget.storageReceptacles === undefined && budget.distractors === undefined)
      return TINY_WORKLOAD;
    const { storageReceptacles, distractors } = householdOf(budget);
    return `generated ALFWorld households (${storageReceptacles} storage receptacles, ${distractors} distractors, ${budget.maxTurns} steps), ${budget.valEpisodes} held-out games (seed + 1000)`;
  },
  subject: 'generated ALFWorld households',
  budgets: BUDGETS,
  // A warm start depends on the households it learnt from (unset on the main job's budgets).
  warmFields: ['storageReceptacles', 'distractors'],
  taskTypes: TASK_TYPES,
  successLabel: 'All',
  paper: PAPER_TABLE_1,
  agent: (budget, seed) => createTinyAgent(budget, seed, householdOf(budget)),
  trainEnv: (budget) => envSpec(budget.maxTurns, householdOf(budget)),
  expert: expertPolicy,
  formatResponse: expertResponse,
};

/** The benchmark with the budget of this process (`BENCH_SMOKE`, `BENCH_BUDGET`, `BENCH_SET`). */
export const BENCH = resolveBench(ALFWORLD);
