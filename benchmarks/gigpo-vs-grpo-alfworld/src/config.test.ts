import { fileURLToPath } from 'node:url';
import { ALFWORLD_TASK_TYPES, TINY_HOUSEHOLD } from '@agentrl/env-alfworld';
import { FULL_BUDGET as MAIN_JOB_BUDGET } from '@agentrl/example-alfworld-gigpo';
import {
  comparableBudget,
  FINAL_EVAL_EPISODES,
  jobsOffBudget,
  resolveBench,
  TABLE_1_ARMS,
  warmRecipe,
} from '@agentrl-bench/gigpo-vs-grpo-kit';
import { describe, expect, it } from 'vitest';
import {
  ALFWORLD,
  type AlfworldBenchBudget,
  FULL_BUDGET,
  householdOf,
  PAPER_TABLE_1,
  REGIME,
  REGIME_BUDGET,
  TABLE_BUDGET,
  TASK_TYPES,
} from './config.ts';

/** Receptacles the agent can go to at the start of game `seed` of `budget`'s training env. */
async function receptaclesAt(budget: AlfworldBenchBudget, seed: number): Promise<number> {
  const env = await ALFWORLD.trainEnv(budget, 0).create();
  const { observation } = await env.reset({ seed });
  await env.close();
  return (observation.admissibleActions ?? []).filter((a: string) => a.startsWith('go to ')).length;
}

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

  it("runs the table at 8 iterations validated every 4: the budget the committed table's seeds ran with as full + BENCH_SET, so they resume on it", () => {
    const table = resolveBench(ALFWORLD, { BENCH_BUDGET: 'table' });
    expect(table.budget).toBe(TABLE_BUDGET);
    expect([TABLE_BUDGET.iterations, TABLE_BUDGET.valEvery, TABLE_BUDGET.valEpisodes]).toEqual([
      8, 4, 96,
    ]);
    // The driver keeps a job whose recorded budget compares equal to the one it resolves.
    const asRun = resolveBench(ALFWORLD, { BENCH_SET: 'iterations=8,valEvery=4' }).budget;
    expect(comparableBudget(TABLE_BUDGET)).toBe(comparableBudget(asRun));
    expect(warmRecipe(TABLE_BUDGET, ALFWORLD.warmFields)).toEqual(
      warmRecipe(FULL_BUDGET, ALFWORLD.warmFields),
    );
    expect(table.finalEvalEpisodes).toBe(FINAL_EVAL_EPISODES.full);
    // Every committed job of the table and its replication resumes on it.
    for (const folder of ['table-8', 'replication-8']) {
      const jobs = fileURLToPath(new URL(`../jobs/${folder}`, import.meta.url));
      expect(jobsOffBudget(jobs, TABLE_BUDGET), folder).toEqual([]);
    }
    // The chosen regime's fresh seeds ran the table's budget at rollout temperature 1, as its
    // README command sets it, so its committed jobs resume on that command.
    const t1 = resolveBench(ALFWORLD, { BENCH_BUDGET: 'table', BENCH_SET: 'temperature=1' });
    expect(t1.budget.temperature).toBe(1);
    const t1Jobs = fileURLToPath(new URL('../jobs/t1-fresh', import.meta.url));
    expect(jobsOffBudget(t1Jobs, t1.budget)).toEqual([]);
    expect(jobsOffBudget(t1Jobs, TABLE_BUDGET).length).toBeGreaterThan(0);
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

  it("runs the regime budget in bigger households and longer episodes, from its own warm start, on the table's length", () => {
    const {
      maxTurns,
      storageReceptacles,
      distractors,
      iterations,
      valEvery,
      valEpisodes,
      ...rest
    } = REGIME_BUDGET;
    expect({ storageReceptacles, distractors, maxTurns }).toEqual(REGIME);
    expect([iterations, valEvery, valEpisodes]).toEqual([8, 4, 96]);
    // Everything else is the full budget's (the main job's recipe).
    const { maxTurns: _t, iterations: _i, valEvery: _e, valEpisodes: _v, ...full } = FULL_BUDGET;
    expect(rest).toEqual(full);
    expect(resolveBench(ALFWORLD, { BENCH_BUDGET: 'regime' }).budget).toBe(REGIME_BUDGET);
    expect(
      resolveBench(ALFWORLD, { BENCH_BUDGET: 'regime', BENCH_SET: 'storageReceptacles=4' }).budget,
    ).toEqual({ ...REGIME_BUDGET, storageReceptacles: 4 });
    // Its warm start records the households; the main job's budgets record none, as before.
    expect(warmRecipe(REGIME_BUDGET, ALFWORLD.warmFields)).toMatchObject(REGIME);
    expect(Object.keys(warmRecipe(FULL_BUDGET, ALFWORLD.warmFields))).not.toContain(
      'storageReceptacles',
    );
    expect(Object.keys(FULL_BUDGET)).not.toContain('distractors');
    expect(householdOf(FULL_BUDGET)).toEqual(TINY_HOUSEHOLD);
    expect(householdOf(REGIME_BUDGET)).toEqual({
      ...TINY_HOUSEHOLD,
      storageReceptacles: 6,
      distractors: 4,
    });
    expect(ALFWORLD.workload(FULL_BUDGET)).toBe(
      'generated tiny ALFWorld households (TINY_HOUSEHOLD, 15 steps), 96 held-out games (seed + 1000)',
    );
    expect(ALFWORLD.workload(REGIME_BUDGET)).toBe(
      'generated ALFWorld households (6 storage receptacles, 4 distractors, 30 steps), 96 held-out games (seed + 1000)',
    );
  });

  it("plays the regime's households: more receptacles to visit on the same seeds, and the expert still wins them", async () => {
    let tiny = 0;
    let regime = 0;
    for (let seed = 0; seed < 10; seed++) {
      tiny += await receptaclesAt(FULL_BUDGET, seed);
      regime += await receptaclesAt(REGIME_BUDGET, seed);
    }
    // Four more storage receptacles a household (those the task needs come on top of both).
    expect(regime - tiny).toBe(10 * 4);
    const spec = ALFWORLD.trainEnv(REGIME_BUDGET, 0);
    const env = await spec.create();
    let wins = 0;
    for (let seed = 0; seed < 10; seed++) {
      const expert = ALFWORLD.expert();
      let { observation } = await env.reset({ seed });
      for (let stepIndex = 0; stepIndex < REGIME_BUDGET.maxTurns; stepIndex++) {
        const action = await expert({ current: observation, stepIndex } as Parameters<
          typeof expert
        >[0]);
        const step = await env.step(action);
        observation = step.observation;
        if (step.terminated) {
          if (step.reward > 0) wins++;
          break;
        }
      }
    }
    await env.close();
    expect(wins).toBe(10);
  });
});
