import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@agentrl/core';
import { CPU_RECIPE } from '@agentrl/example-demo-kit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ARMS,
  type BenchBudget,
  type Benchmark,
  benchBudgets,
  budgetName,
  FINAL_EVAL_EPISODES,
  resolveBench,
  SEEDS,
  warmRecipe,
  withOverrides,
} from './config.ts';
import { alreadyDone, benchJobs, parseDriverArgs, runInOrder } from './driver.ts';
import { PHASES, parseJobArgs } from './job.ts';

const root = mkdtempSync(join(tmpdir(), 'agentrl-bench-driver-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The demos' CPU recipe with a catalogue size of its own (as the WebShop benchmark's). */
const budget = (over: Partial<BenchBudget & { catalogue: number }> = {}) => ({
  ...CPU_RECIPE,
  demoEpisodes: 400,
  sftSteps: 480,
  iterations: 16,
  valEpisodes: 96,
  valEvery: 4,
  maxTurns: 15,
  maxNewTokens: 22,
  invalidActionPenalty: 0,
  catalogue: 1000,
  ...over,
});
type Budget = ReturnType<typeof budget>;

/** The parts of a benchmark the budget resolution reads; the env parts are never called here. */
const bench = {
  workload: 'test',
  subject: 'test',
  budgets: {
    full: budget(),
    smoke: budget({ hidden: 32, iterations: 2 }),
    long: budget({ iterations: 48 }),
  },
  warmFields: ['catalogue'],
} as unknown as Benchmark<Budget>;

describe('the budget of a process', () => {
  it('is picked by BENCH_SMOKE and BENCH_BUDGET, full by default', () => {
    expect(budgetName({})).toBe('full');
    expect(budgetName({ BENCH_BUDGET: 'long' })).toBe('long');
    expect(budgetName({ BENCH_SMOKE: '1', BENCH_BUDGET: 'long' })).toBe('smoke');
    const smoke = resolveBench(bench, { BENCH_SMOKE: '1' });
    expect(smoke.budget.hidden).toBe(32);
    expect(smoke.finalEvalEpisodes).toBe(FINAL_EVAL_EPISODES.smoke);
  });

  it("validates five times whatever the demo's iteration count, and runs three times the iterations on the long budget", () => {
    for (const iterations of [16, 32, 64]) {
      const budgets = benchBudgets({ ...budget({ iterations }), name: 'full' }, {}, {});
      expect(budgets.full.iterations / budgets.full.valEvery).toBe(4);
      expect(budgets.full.valEpisodes).toBe(96);
      expect(budgets.long.iterations).toBe(3 * iterations);
      expect(warmRecipe(budgets.long)).toEqual(warmRecipe(budgets.full));
      expect(budgets.smoke.iterations).toBeLessThan(iterations);
    }
  });

  it('takes BENCH_SET overrides of numeric fields', () => {
    const r = resolveBench(bench, { BENCH_SET: 'temperature=1,learningRate=3e-4' });
    expect(r.budget.temperature).toBe(1);
    expect(r.budget.learningRate).toBe(3e-4);
    expect(r.budget.groups).toBe(32);
  });

  it('refuses an unknown field or a value that is not a number, naming the valid fields', () => {
    for (const text of ['temprature=1', 'temperature=hot', 'temperature']) {
      expect(() => withOverrides(budget(), text)).toThrow(ConfigError);
      expect(() => withOverrides(budget(), text)).toThrow(/BENCH_SET .*fields: hidden, layers/);
    }
  });

  it("records in the warm start's recipe the fields it depends on, the benchmark's own included", () => {
    const recipe = warmRecipe(budget(), ['catalogue']);
    expect(Object.keys(recipe)).toEqual([
      'hidden',
      'layers',
      'heads',
      'demoEpisodes',
      'sftSteps',
      'sftBatch',
      'sftLearningRate',
      'maxTurns',
      'catalogue',
    ]);
    expect([recipe.hidden, recipe.sftSteps, recipe.catalogue]).toEqual([
      CPU_RECIPE.hidden,
      480,
      1000,
    ]);
    expect(warmRecipe(budget({ iterations: 3 }), ['catalogue'])).toEqual(recipe);
  });
});

describe('the jobs', () => {
  it('run every phase of every seed once, each after the jobs it waits for', () => {
    const jobs = benchJobs(SEEDS);
    expect(jobs).toHaveLength(SEEDS.length * PHASES.length);
    const seen = new Set<string>();
    for (const job of jobs) {
      for (const before of job.after) expect(seen.has(before)).toBe(true);
      seen.add(`${job.seed}/${job.phase}`);
    }
    const evalJob = jobs.find((j) => j.seed === 3 && j.phase === 'eval');
    expect(evalJob?.after).toEqual(Object.keys(ARMS).map((arm) => `3/${arm}`));
  });

  it('finish seed by seed with two workers: a seed is evaluated before the seed after next starts', async () => {
    const started: string[] = [];
    const done = new Set<string>();
    await runInOrder(benchJobs([0, 1, 2, 3]), 2, async (job) => {
      for (const before of job.after) expect(done.has(before)).toBe(true);
      started.push(`${job.seed}/${job.phase}`);
      await Promise.resolve();
      done.add(`${job.seed}/${job.phase}`);
    });
    expect(started).toHaveLength(4 * PHASES.length);
    expect(started.slice(0, 2)).toEqual(['0/warm', '1/warm']);
    for (const seed of [0, 1])
      expect(started.indexOf(`${seed}/eval`)).toBeLessThan(started.indexOf(`${seed + 2}/warm`));
  });

  it('stop at the first job that fails', async () => {
    const started: string[] = [];
    const run = runInOrder(benchJobs([0, 1]), 2, async (job) => {
      started.push(`${job.seed}/${job.phase}`);
      if (job.seed === 0 && job.phase === 'gigpo') throw new Error('gigpo failed');
    });
    await expect(run).rejects.toThrow('gigpo failed');
    expect(started).not.toContain('0/eval');
  });

  it('keep a result written for the same budget and redo one written for another', () => {
    const out = join(root, 'resume');
    const resolved = resolveBench(bench, {});
    const dir = join(out, 'seed-0');
    mkdirSync(join(dir, 'warm'), { recursive: true });
    const warm = { seed: 0, phase: 'warm', after: [] };
    const gigpo = { seed: 0, phase: 'gigpo', after: ['0/warm'] };
    const evalJob = { seed: 0, phase: 'eval', after: ['0/gigpo', '0/grpo'] };
    expect(alreadyDone(resolved, out, warm)).toBe(false);
    writeFileSync(
      join(dir, 'warm', 'warm.json'),
      JSON.stringify({ recipe: warmRecipe(resolved.budget, ['catalogue']) }),
    );
    writeFileSync(join(dir, 'gigpo.json'), JSON.stringify({ budget: resolved.budget }));
    writeFileSync(
      join(dir, 'eval.json'),
      JSON.stringify({ budget: resolved.budget, episodes: resolved.finalEvalEpisodes }),
    );
    expect(alreadyDone(resolved, out, warm)).toBe(true);
    expect(alreadyDone(resolved, out, gigpo)).toBe(true);
    expect(alreadyDone(resolved, out, evalJob)).toBe(true);
    // Another RL recipe keeps the warm start (same warm-start fields) and redoes the arms.
    const other = resolveBench(bench, { BENCH_SET: 'temperature=1' });
    expect(alreadyDone(other, out, warm)).toBe(true);
    expect(alreadyDone(other, out, gigpo)).toBe(false);
    // Another catalogue changes the warm start too.
    expect(alreadyDone(resolveBench(bench, { BENCH_SET: 'catalogue=60' }), out, warm)).toBe(false);
  });

  it('keep results recorded before the stopping-rule fields existed while the rule is off, and redo them once it is on', () => {
    const out = join(root, 'before-stop-rule');
    const resolved = resolveBench(bench, {});
    const dir = join(out, 'seed-0');
    mkdirSync(join(dir, 'warm'), { recursive: true });
    const {
      sftStopLoss: _loss,
      sftStopWindow: _window,
      ...older
    } = resolved.budget as Record<string, unknown>;
    const olderRecipe = warmRecipe(resolved.budget, ['catalogue']);
    expect(Object.keys(olderRecipe)).not.toContain('sftStopLoss');
    writeFileSync(join(dir, 'warm', 'warm.json'), JSON.stringify({ recipe: olderRecipe }));
    // Fields in another order, as an older budget object wrote them.
    const reordered = Object.fromEntries(Object.entries(older).reverse());
    writeFileSync(join(dir, 'gigpo.json'), JSON.stringify({ budget: reordered }));
    const warm = { seed: 0, phase: 'warm', after: [] };
    const gigpo = { seed: 0, phase: 'gigpo', after: ['0/warm'] };
    expect(alreadyDone(resolved, out, warm)).toBe(true);
    expect(alreadyDone(resolved, out, gigpo)).toBe(true);
    const withRule = resolveBench(bench, { BENCH_SET: 'sftStopLoss=0.25' });
    expect(warmRecipe(withRule.budget)).toMatchObject({ sftStopLoss: 0.25, sftStopWindow: 50 });
    expect(alreadyDone(withRule, out, warm)).toBe(false);
    expect(alreadyDone(withRule, out, gigpo)).toBe(false);
  });

  it('are named on the command line, and a wrong seed, phase or flag is refused with the fix', () => {
    expect(parseJobArgs(['--seed', '3', '--phase', 'grpo', '--out', '/tmp/x'])).toEqual({
      seed: 3,
      phase: 'grpo',
      out: '/tmp/x',
    });
    expect(() => parseJobArgs(['--seed', 'x', '--phase', 'warm'])).toThrow(
      /--seed x: give an integer/,
    );
    expect(() => parseJobArgs(['--seed', '0', '--phase', 'rloo'])).toThrow(
      /--phase rloo: use one of warm, gigpo, grpo, eval/,
    );
    expect(parseDriverArgs(['--seeds', '0,2', '--parallel', '1'], 'full')).toMatchObject({
      seeds: [0, 2],
      parallel: 1,
      summaryOnly: false,
    });
    expect(parseDriverArgs([], 'smoke').out).toMatch(/runs\/smoke$/);
    expect(() => parseDriverArgs(['--seeds', '0,a'], 'full')).toThrow(ConfigError);
    expect(() => parseDriverArgs(['--parallel', '0'], 'full')).toThrow(/--parallel 0/);
  });
});
