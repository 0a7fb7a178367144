import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expert } from '@agentrl/env-webshop';
import {
  compactPrompt,
  FULL_BUDGET as DEMO_BUDGET,
  demoShop,
} from '@agentrl/example-webshop-gigpo';
import {
  type BenchSummary,
  FINAL_EVAL_EPISODES,
  jobsOffBudget,
  resolveBench,
  resolvedAlgorithm,
  warmRecipe,
} from '@agentrl-bench/gigpo-vs-grpo-kit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  BENCH_RECIPE,
  BUDGETS,
  benchShop,
  FULL_BUDGET,
  TABLE_BUDGET,
  TABLE_RECIPE,
  WEBSHOP,
  type WebshopBenchBudget,
} from './config.ts';

/**
 * The prompt the held-out env of `budget` shows on seed `seed`'s first test goal once the expert
 * has searched (a results page), with the demo's own compact prompt of the same step.
 */
async function resultsPage(
  budget: WebshopBenchBudget,
  seed: number,
): Promise<{ bench: string; demo: string; asins: Set<string> }> {
  const spec = WEBSHOP.heldOutEnv?.(budget, seed);
  if (spec === undefined) throw new Error('the WebShop benchmark has a held-out env');
  const env = await spec.create();
  const reset = await env.reset({ seed: 0, task: 0 });
  const first = {
    initialObservation: reset.observation,
    history: [],
    current: reset.observation,
    stepIndex: 0,
    info: reset.info,
  };
  const action = expert(first);
  expect(action).toMatch(/^search\[/);
  const step = await env.step(action);
  const context = {
    ...first,
    history: [{ observation: reset.observation, action }],
    current: step.observation,
    stepIndex: 1,
    info: step.info,
  };
  await env.close();
  const asins = new Set(benchShop(budget, seed).products.map((p) => p.asin.toLowerCase()));
  return { bench: spec.prompt(context), demo: compactPrompt(context), asins };
}

/** The entries of a compact results page (`now : results 1 : a | b | …`), each split into words. */
function resultEntries(prompt: string): string[][] {
  const page = /^now : results \d+ : (.*)$/m.exec(prompt)?.[1];
  if (page === undefined) throw new Error(`not a results page:\n${prompt}`);
  return page.split(' | ').map((entry) => entry.split(' '));
}

const bench = fileURLToPath(new URL('bench.ts', import.meta.url));

/** The driver as `pnpm bench` runs it, on the smoke budget; its stderr and exit code. */
function runBench(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@agentrl/source', '--disable-warning=ExperimentalWarning', bench, ...args],
      { env: { ...process.env, BENCH_SMOKE: '1' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', fail);
    child.on('exit', (code) => done({ code, stderr }));
  });
}

describe('the WebShop benchmark', () => {
  it('runs one seed on the smoke budget (warm start, two arms, final evaluation) into a summary with the WebShop score, and keeps every job on a rerun', async () => {
    const out = mkdtempSync(join(tmpdir(), 'agentrl-webshop-bench-'));
    onTestFinished(() => rmSync(out, { recursive: true, force: true }));
    const arms = ['grpo', 'gigpo-mean_std_norm'];
    const flags = ['--seeds', '0', '--arms', arms.join(','), '--out', out];
    const first = await runBench(flags);
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as BenchSummary;
    expect(summary.seeds).toEqual([0]);
    expect(summary.arms.map((a) => a.perSeed.length)).toEqual([1, 1]);
    expect(summary.records.map((r) => [r.arm, r.seed, r.episodes])).toEqual(
      arms.map((arm) => [arm, 0, FINAL_EVAL_EPISODES.smoke]),
    );
    for (const r of summary.records) {
      expect(typeof r.score).toBe('number');
      expect(r.algorithm).toEqual(resolvedAlgorithm(r.arm, summary.budget));
      expect(r.cpuSeconds).toBeGreaterThan(0);
    }
    const [evaluation] = summary.finalEval.perSeed;
    expect(evaluation?.warm.n).toBe(FINAL_EVAL_EPISODES.smoke);
    expect(Object.keys(evaluation?.arms ?? {})).toEqual(arms);
    const scores = summary.finalEval.metrics?.score?.perSeed[0]?.values ?? {};
    expect(Object.keys(scores).sort()).toEqual([...arms, 'warm'].sort());
    for (const value of Object.values(scores)) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(100);
    }
    for (const arm of summary.arms)
      expect(arm.metricCurves?.score?.map((c) => c.iteration)).toEqual(
        arm.validationCurve.map((c) => c.iteration),
      );
    const markdown = readFileSync(join(out, 'results.md'), 'utf8');
    expect(markdown).toContain(
      `WebShop score in the final evaluation on ${FINAL_EVAL_EPISODES.smoke} held-out goals`,
    );
    expect(markdown).toContain(
      '| method | arm | WebShop score | success | paper: WebShop score | paper: success |',
    );
    expect(existsSync(join(out, 'report-compare.html'))).toBe(true);

    const again = await runBench(flags);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr.match(/kept the result already in/g)).toHaveLength(4);
  }, 0);

  it("trains with the WebShop demo's recipe but the pinned warm start and RL length and the generator's default catalogue, validating on fewer goals, five times", () => {
    const { valEpisodes, valEvery, invalidActionPenalty, ...recipe } = FULL_BUDGET;
    const {
      name: _name,
      valEpisodes: demoEpisodes,
      valEvery: _demoEvery,
      optionGroups: _groups,
      optionValues: _values,
      ...demo
    } = DEMO_BUDGET;
    const { valEvery: pinnedEvery, ...pinned } = BENCH_RECIPE;
    expect(recipe).toEqual({ ...demo, ...pinned });
    expect(valEvery).toBe(pinnedEvery);
    expect(valEpisodes).toBeLessThan(demoEpisodes);
    expect(FULL_BUDGET.iterations / valEvery).toBe(4);
    expect(FINAL_EVAL_EPISODES.full).toBe(demoEpisodes);
    expect(invalidActionPenalty).toBe(0);
    // The committed seeds' recipe: no option ranges and no results layout recorded.
    expect(Object.keys(FULL_BUDGET)).not.toContain('optionGroups');
    expect(Object.keys(FULL_BUDGET)).not.toContain('resultsLayout');
  });

  it("gives the table budget (BENCH_BUDGET=table) the demo's recipe field by field, its catalogue and warm start pinned, 8 iterations validated every 4 on 96 goals", () => {
    const { iterations, valEvery, valEpisodes, invalidActionPenalty, resultsLayout, ...recipe } =
      TABLE_BUDGET;
    const {
      name: _name,
      iterations: _demoIterations,
      valEvery: _demoEvery,
      valEpisodes: demoEpisodes,
      ...demo
    } = DEMO_BUDGET;
    expect(Object.keys(recipe).sort()).toEqual(Object.keys(demo).sort());
    // The catalogue and warm start pinned as the table's seeds start; every other field the demo's.
    for (const [field, value] of Object.entries({ ...demo, ...TABLE_RECIPE }))
      expect(recipe[field as keyof typeof recipe], field).toEqual(value);
    // The demo's catalogue shape and warm start, not the full budget's pinned ones.
    expect(demo.optionGroups).toBeDefined();
    expect(recipe.catalogue).not.toBe(FULL_BUDGET.catalogue);
    expect(recipe.demoEpisodes).not.toBe(FULL_BUDGET.demoEpisodes);
    expect([iterations, valEvery, valEpisodes]).toEqual([8, 4, 96]);
    expect(valEpisodes).toBeLessThan(demoEpisodes);
    expect(invalidActionPenalty).toBe(0);
    expect(resultsLayout).toBe('title-first');
    const resolved = resolveBench(WEBSHOP, { BENCH_BUDGET: 'table' });
    expect(resolved.budgetName).toBe('table');
    expect(resolved.budget).toEqual(TABLE_BUDGET);
    expect(resolved.finalEvalEpisodes).toBe(FINAL_EVAL_EPISODES.full);
    // Its warm start is its own (another catalogue and prompt): the full run's is not reused.
    expect(warmRecipe(TABLE_BUDGET, WEBSHOP.warmFields)).toMatchObject({
      optionGroups: DEMO_BUDGET.optionGroups,
      optionValues: DEMO_BUDGET.optionValues,
      resultsLayout: 'title-first',
    });
    expect(warmRecipe(FULL_BUDGET, WEBSHOP.warmFields)).not.toHaveProperty('resultsLayout');
    // The full, smoke and long budgets are unchanged by it.
    expect(resolveBench(WEBSHOP, {}).budget).toBe(FULL_BUDGET);
    expect(resolveBench(WEBSHOP, { BENCH_BUDGET: 'long' }).budget).toBe(BUDGETS.long);
  });

  it('refuses a BENCH_BUDGET it has no budget for, and BENCH_SET on the option ranges', () => {
    expect(() => resolveBench(WEBSHOP, { BENCH_BUDGET: 'tables' })).toThrow(
      /^BENCH_BUDGET=tables: no such budget; did you mean "table"\?/,
    );
    expect(() =>
      resolveBench(WEBSHOP, { BENCH_BUDGET: 'table', BENCH_SET: 'optionGroups=2' }),
    ).toThrow(/optionGroups is not a number field/);
    expect(
      resolveBench(WEBSHOP, { BENCH_BUDGET: 'table', BENCH_SET: 'iterations=16' }).budget,
    ).toEqual({ ...TABLE_BUDGET, iterations: 16 });
  });

  it('resumes the committed table: every job file in jobs/table-8 recorded the table budget', () => {
    const table = fileURLToPath(new URL('../jobs/table-8', import.meta.url));
    expect(jobsOffBudget(table, TABLE_BUDGET)).toEqual([]);
    // The check sees a job that ran on another budget.
    expect(jobsOffBudget(table, { ...TABLE_BUDGET, iterations: 16 }).length).toBe(
      existsSync(table) ? 10 * 6 : 0,
    );
  });

  it("plays the table budget on the demo's catalogue (its size and option ranges) with the demo's prompt, results listed title first; the full budget keeps its catalogue and ASIN-first results", async () => {
    const seed = 33;
    const shop = benchShop(TABLE_BUDGET, seed);
    expect(shop).toBe(demoShop(seed, DEMO_BUDGET.catalogue, DEMO_BUDGET));
    expect(shop.products).toHaveLength(DEMO_BUDGET.catalogue);
    const [minGroups, maxGroups] = DEMO_BUDGET.optionGroups ?? [0, 0];
    const [minValues, maxValues] = DEMO_BUDGET.optionValues ?? [0, 0];
    const groups = shop.products.map((p) => p.options.length);
    expect([Math.min(...groups), Math.max(...groups)]).toEqual([minGroups, maxGroups]);
    const values = shop.products.flatMap((p) => p.options.map((o) => o.values.length));
    expect([Math.min(...values), Math.max(...values)]).toEqual([minValues, maxValues]);
    const old = benchShop(FULL_BUDGET, seed);
    expect(old.products).toHaveLength(BENCH_RECIPE.catalogue);
    expect(old.products.some((p) => p.options.length === 0)).toBe(true);

    const table = await resultsPage(TABLE_BUDGET, seed);
    expect(table.bench).toBe(table.demo);
    const entries = resultEntries(table.bench);
    expect(entries.length).toBeGreaterThan(1);
    for (const words of entries) {
      expect(table.asins.has(words.at(-1) as string), words.join(' ')).toBe(true);
      expect(table.asins.has(words[0] as string)).toBe(false);
      expect(words.at(-2)).toMatch(/^\$/);
    }
    const full = await resultsPage(FULL_BUDGET, seed);
    expect(full.bench).not.toBe(full.demo);
    for (const words of resultEntries(full.bench)) {
      expect(full.asins.has(words[0] as string), words.join(' ')).toBe(true);
      expect(words.at(-1)).toMatch(/^\$/);
    }
  });
});
