import { ALFWORLD_TASK_TYPES } from '@agentrl/env-alfworld';
import { FULL_BUDGET as MAIN_JOB_BUDGET } from '@agentrl/example-alfworld-gigpo';
import {
  FINAL_EVAL_EPISODES,
  resolveBench,
  TABLE_1_ARMS,
  warmRecipe,
} from '@agentrl-bench/gigpo-vs-grpo-kit';
import { describe, expect, it } from 'vitest';
import { ALFWORLD, FULL_BUDGET, PAPER_TABLE_1, TASK_TYPES } from './config.ts';

describe('the ALFWorld benchmark budget', () => {
  it("trains with the main job's recipe, validating on fewer games, five times", () => {
    const { valEpisodes, valEvery, maxNewTokens, invalidActionPenalty, ...recipe } = FULL_BUDGET;
    const {
      name: _name,
      valEpisodes: mainEpisodes,
      valEvery: mainEvery,
      ...main
    } = MAIN_JOB_BUDGET;
    expect(recipe).toEqual(main);
    expect(valEpisodes).toBeLessThan(mainEpisodes);
    expect(valEvery).toBeLessThanOrEqual(mainEvery);
    expect(FULL_BUDGET.iterations / valEvery).toBe(4);
    expect(FINAL_EVAL_EPISODES.full).toBe(mainEpisodes);
    expect([maxNewTokens, invalidActionPenalty]).toEqual([12, 0]);
  });

  it('runs three times the iterations on the long budget from the same warm start', () => {
    const { long, smoke } = ALFWORLD.budgets;
    expect(long.iterations).toBe(3 * FULL_BUDGET.iterations);
    expect(warmRecipe(long)).toEqual(warmRecipe(FULL_BUDGET));
    expect(warmRecipe(smoke)).not.toEqual(warmRecipe(FULL_BUDGET));
  });

  it('has no table budget: BENCH_BUDGET=table is refused, naming the budgets it has', () => {
    expect(ALFWORLD.budgets.table).toBeUndefined();
    expect(() => resolveBench(ALFWORLD, { BENCH_BUDGET: 'table' })).toThrow(
      'BENCH_BUDGET=table: the benchmark on generated ALFWorld households has no table budget (its budgets: full, long, smoke)',
    );
  });

  it("counts the six task types as the paper's columns, and quotes the paper's row for every arm", () => {
    expect(TASK_TYPES.map((t) => t.name)).toEqual([...ALFWORLD_TASK_TYPES]);
    expect(TASK_TYPES.map((t) => t.label)).toEqual([
      'pick',
      'look',
      'clean',
      'heat',
      'cool',
      'pick2',
    ]);
    expect(ALFWORLD.successLabel).toBe('All');
    expect(Object.keys(PAPER_TABLE_1.rows)).toEqual(TABLE_1_ARMS);
    expect(ALFWORLD.arms).toBeUndefined();
  });
});
