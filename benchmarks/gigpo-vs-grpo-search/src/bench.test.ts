import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SYNTHETIC_MULTIHOP, SYNTHETIC_SINGLE } from '@agentrl/env-search';
import { FULL_BUDGET as DEMO_BUDGET } from '@agentrl/example-search-gigpo';
import {
  ARMS,
  type BenchSummary,
  FINAL_EVAL_EPISODES,
  parseDriverArgs,
  resolvedAlgorithm,
  warmRecipe,
} from '@agentrl-bench/gigpo-vs-grpo-kit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FULL_BUDGET, SEARCH, SEARCH_ARMS, SEARCH_SEEDS } from './config.ts';

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

/** The seeds the search demo's README reports runs of. */
const DEMO_SEEDS = [0, 7, 11, 12, 13, 40, 41, 42, 43, 44, 45, 46, 47, 48];

describe('the search-QA benchmark', () => {
  it('runs one seed on the smoke budget (warm start, its two arms by default, final evaluation) into a summary with exact match per data source', async () => {
    const out = mkdtempSync(join(tmpdir(), 'agentrl-search-bench-'));
    onTestFinished(() => rmSync(out, { recursive: true, force: true }));
    const seed = SEARCH_SEEDS[0] as number;
    const run = await runBench(['--seeds', String(seed), '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as BenchSummary;
    expect(summary.seeds).toEqual([seed]);
    expect(summary.armNames).toEqual(SEARCH_ARMS);
    expect(summary.records.map((r) => [r.arm, r.seed, r.episodes])).toEqual(
      SEARCH_ARMS.map((arm) => [arm, seed, FINAL_EVAL_EPISODES.smoke]),
    );
    for (const r of summary.records) {
      expect(r.algorithm).toEqual(resolvedAlgorithm(r.arm, summary.budget));
      expect(r.algorithm?.options.similarityThreshold).toBe(
        r.arm === 'gigpo-sim0.9' ? 0.9 : undefined,
      );
      expect(Object.keys(r.taskTypes ?? {}).sort()).toEqual(
        [SYNTHETIC_MULTIHOP, SYNTHETIC_SINGLE].sort(),
      );
      const perSource = Object.values(r.taskTypes ?? {});
      expect(perSource.reduce((a, c) => a + c.episodes, 0)).toBe(r.episodes);
      expect(perSource.reduce((a, c) => a + c.wins, 0)).toBe(r.wins);
      expect(r.cpuSeconds).toBeGreaterThan(0);
    }
    const [evaluation] = summary.finalEval.perSeed;
    expect(evaluation?.warm.n).toBe(FINAL_EVAL_EPISODES.smoke);
    expect(Object.keys(evaluation?.arms ?? {})).toEqual(SEARCH_ARMS);
    const markdown = readFileSync(join(out, 'results.md'), 'utf8');
    expect(markdown).toContain(
      `Final evaluation on ${FINAL_EVAL_EPISODES.smoke} held-out questions per seed, laid out as the paper's search-augmented QA table`,
    );
    expect(markdown).toContain(
      '| method | arm | EM single-hop | EM two-hop | EM (all) | paper: EM (all) |',
    );
    expect(markdown).toContain('| method − GRPO | EM single-hop | EM two-hop | EM (all) |');
    expect(existsSync(join(out, 'report-compare.html'))).toBe(true);
  }, 0);

  it('has GRPO and GiGPO with anchors grouped by similarity at 0.9 (the demo threshold) as its arms, each recorded with its algorithm', () => {
    expect(SEARCH_ARMS).toEqual(['grpo', 'gigpo-sim0.9']);
    expect(parseDriverArgs([], 'full', { arms: SEARCH_ARMS }).arms).toEqual(SEARCH_ARMS);
    const penalty = DEMO_BUDGET.invalidActionPenalty;
    expect(resolvedAlgorithm('grpo', FULL_BUDGET)).toEqual({
      name: 'grpo',
      options: { normalizeByStd: true, invalidActionPenalty: penalty },
    });
    expect(resolvedAlgorithm('gigpo-sim0.9', FULL_BUDGET)).toEqual({
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        gamma: 0.95,
        stepAdvantageWeight: 1,
        similarityThreshold: DEMO_BUDGET.similarity,
        invalidActionPenalty: penalty,
      },
    });
    expect(ARMS['gigpo-sim0.9']?.algorithm.options.similarityThreshold).toBe(0.9);
  });

  it("trains with the search demo's recipe, validating on fewer questions five times, on ten seeds the demo never ran", () => {
    const { valEpisodes, valEvery, maxNewTokens, ...recipe } = FULL_BUDGET;
    const {
      name: _name,
      valEpisodes: demoEpisodes,
      valEvery: _demoEvery,
      similarity: _similarity,
      demoShare,
      ppoEpochs,
      ...demo
    } = DEMO_BUDGET;
    expect(recipe).toEqual(demo);
    // The fields left out of the budget: both phases ask every training question, one pass per
    // iteration (the trainer's default, which the kit's jobs use).
    expect([demoShare, ppoEpochs]).toEqual([1, 1]);
    expect(maxNewTokens).toBe(6);
    expect(valEpisodes).toBeLessThan(demoEpisodes);
    expect(FULL_BUDGET.iterations / valEvery).toBe(4);
    expect(FINAL_EVAL_EPISODES.full).toBe(demoEpisodes);
    expect(SEARCH.seeds).toEqual(SEARCH_SEEDS);
    expect(new Set(SEARCH_SEEDS).size).toBe(10);
    expect(SEARCH_SEEDS.filter((s) => DEMO_SEEDS.includes(s))).toEqual([]);
    const { long, smoke } = SEARCH.budgets;
    expect(long.iterations).toBe(3 * FULL_BUDGET.iterations);
    expect(warmRecipe(long, SEARCH.warmFields)).toEqual(warmRecipe(FULL_BUDGET, SEARCH.warmFields));
    expect(smoke.invalidActionPenalty).toBe(FULL_BUDGET.invalidActionPenalty);
  });
});
