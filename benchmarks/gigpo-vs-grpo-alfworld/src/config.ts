/**
 * The ALFWorld benchmark: its budget is the main job's recipe (examples/alfworld-gigpo,
 * `FULL_BUDGET`), imported so the two cannot drift apart; its env the main job's generated
 * households. Every arm of a seed starts from the same saved warm start. The jobs, the driver and
 * the summary are the kit's (`@agentrl-bench/gigpo-vs-grpo-kit`); the summary counts wins per
 * task type, the columns of the paper's Table 1.
 */
import { ALFWORLD_TASK_TYPES, type AlfworldTaskType } from '@agentrl/env-alfworld';
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
} from '@agentrl-bench/gigpo-vs-grpo-kit';

/**
 * The budgets: the main job's recipe (decoder, warm start, RL, temperatures, turn limit) with its
 * per-turn token budget of 12, validated on 96 held-out games five times (every quarter of the iterations); the smoke run
 * with the demo kit's smoke sizes, 24 demonstration games and 10 turns (the kit's `benchBudgets`).
 */
export const BUDGETS = benchBudgets(
  MAIN_JOB_BUDGET,
  { maxNewTokens: 12 },
  { demoEpisodes: 24, maxTurns: 10 },
);
export const FULL_BUDGET = BUDGETS.full;

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
export const ALFWORLD: Benchmark<typeof FULL_BUDGET> = {
  workload:
    'generated tiny ALFWorld households (TINY_HOUSEHOLD, 15 steps), 96 held-out games (seed + 1000)',
  subject: 'generated ALFWorld households',
  budgets: BUDGETS,
  taskTypes: TASK_TYPES,
  successLabel: 'All',
  paper: PAPER_TABLE_1,
  agent: (budget, seed) => createTinyAgent(budget, seed),
  trainEnv: (budget) => envSpec(budget.maxTurns),
  expert: expertPolicy,
  formatResponse: expertResponse,
};

/** The benchmark with the budget of this process (`BENCH_SMOKE`, `BENCH_BUDGET`, `BENCH_SET`). */
export const BENCH = resolveBench(ALFWORLD);
