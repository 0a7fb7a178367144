import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FULL_BUDGET as DEMO_BUDGET } from '@agentrl/example-webshop-gigpo';
import {
  type BenchSummary,
  FINAL_EVAL_EPISODES,
  resolvedAlgorithm,
} from '@agentrl-bench/gigpo-vs-grpo-kit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BENCH_RECIPE, FULL_BUDGET } from './config.ts';

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
  });
});
