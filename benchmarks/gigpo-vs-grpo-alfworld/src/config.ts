/**
 * The ALFWorld benchmark: its budget is the main job's recipe (examples/alfworld-gigpo,
 * `FULL_BUDGET`), imported so the two cannot drift apart; its env the main job's generated
 * households. Both arms of a seed start from the same saved warm start. The jobs, the driver and
 * the summary are the kit's (`@agentrl-bench/gigpo-vs-grpo-kit`).
 */

import {
  createTinyAgent,
  envSpec,
  expertPolicy,
  expertResponse,
  FULL_BUDGET as MAIN_JOB_BUDGET,
} from '@agentrl/example-alfworld-gigpo';
import { type Benchmark, benchBudgets, resolveBench } from '@agentrl-bench/gigpo-vs-grpo-kit';

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

/** The benchmark: generated households, the main job's tiny agent, prompt and expert. */
export const ALFWORLD: Benchmark<typeof FULL_BUDGET> = {
  workload:
    'generated tiny ALFWorld households (TINY_HOUSEHOLD, 15 steps), 96 held-out games (seed + 1000)',
  subject: 'generated ALFWorld households',
  budgets: BUDGETS,
  agent: (budget, seed) => createTinyAgent(budget, seed),
  trainEnv: (budget) => envSpec(budget.maxTurns),
  expert: expertPolicy,
  formatResponse: expertResponse,
};

/** The benchmark with the budget of this process (`BENCH_SMOKE`, `BENCH_BUDGET`, `BENCH_SET`). */
export const BENCH = resolveBench(ALFWORLD);
