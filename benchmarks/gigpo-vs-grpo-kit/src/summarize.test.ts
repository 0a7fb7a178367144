import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type BenchBudget, SEEDS } from './config.ts';
import { summaryMarkdown } from './markdown.ts';
import { meanStd, pairedDifference } from './stats.ts';
import { readSummary, type SummarySpec } from './summarize.ts';

const root = mkdtempSync(join(tmpdir(), 'agentrl-bench-summary-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const N = 480;
const budget = { iterations: 16 } as BenchBudget;
const plain: SummarySpec = { workload: 'test', budget, finalEvalEpisodes: N };
const scored: SummarySpec = {
  ...plain,
  heldOutNoun: 'goals',
  metrics: [{ name: 'score', label: 'WebShop score' }],
};

interface Model {
  readonly wins: number;
  readonly score?: number;
}

/**
 * Runs of `seeds` as the jobs write them: 96-episode validations at iterations 0 and 16 (scores
 * where given), and a final evaluation of the warm start and both arms on `N` episodes.
 */
function writeRuns(
  out: string,
  seeds: readonly number[],
  final: (seed: number) => Record<'warm' | 'gigpo' | 'grpo', Model>,
): void {
  for (const seed of seeds) {
    const dir = join(out, `seed-${seed}`);
    mkdirSync(join(dir, 'warm'), { recursive: true });
    writeFileSync(join(dir, 'warm', 'warm.json'), JSON.stringify({ seed }));
    const models = final(seed);
    for (const arm of ['gigpo', 'grpo'] as const) {
      const withScore = (m: Model, wins: number) =>
        m.score === undefined ? {} : { score: (m.score * wins) / m.wins };
      const validation = [
        { iteration: 0, wins: 24, episodes: 96, ...withScore(models.warm, 24) },
        { iteration: 16, wins: 28 + seed, episodes: 96, ...withScore(models[arm], 28 + seed) },
      ];
      writeFileSync(
        join(dir, `${arm}.json`),
        JSON.stringify({ seed, arm, validation, train: [], seconds: 1 }),
      );
    }
    const result = (m: Model) => ({
      wins: m.wins,
      episodes: N,
      ...(m.score === undefined ? {} : { score: m.score }),
    });
    writeFileSync(
      join(dir, 'eval.json'),
      JSON.stringify({
        seed,
        episodes: N,
        results: {
          warm: result(models.warm),
          gigpo: result(models.gigpo),
          grpo: result(models.grpo),
        },
      }),
    );
  }
}

describe('the benchmark summary', () => {
  it('reports the final evaluation per seed, whether RL clears the warm start, and the paired difference', () => {
    const out = join(root, 'plain');
    const warm = Math.round(0.25 * N);
    // Seed 0: +25 % of the episodes, far above the warm start; the others: +1 episode.
    writeRuns(out, SEEDS, (seed) => ({
      warm: { wins: warm },
      gigpo: { wins: seed === 0 ? warm + Math.round(0.25 * N) : warm + 1 },
      grpo: { wins: warm },
    }));
    const summary = readSummary(plain, out, SEEDS);
    const perSeed = summary.finalEval.perSeed;
    expect(perSeed.map((p) => p.arms.gigpo?.separatesFromWarm)).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(perSeed.every((p) => p.arms.grpo?.separatesFromWarm === false)).toBe(true);
    const expectedMean = (0.25 * N + 4) / N / SEEDS.length;
    expect(summary.finalEval.paired.mean).toBeCloseTo(expectedMean, 10);
    expect(summary.finalEval.paired.n).toBe(SEEDS.length);
    expect(summary.finalEval.metrics).toBeUndefined();
    const markdown = summaryMarkdown(summary, plain);
    expect(markdown).toContain(`Final evaluation on ${N} held-out games per seed`);
    expect(markdown).toContain('✓');
    expect(markdown).not.toContain('score');
  });

  it("pairs the env's metric per seed: each model's value, GiGPO − GRPO, and what RL adds in each arm", () => {
    const out = join(root, 'scored');
    const seeds = [0, 1, 2];
    const scores = { warm: [10, 12, 14], gigpo: [15, 13, 20], grpo: [11, 14, 16] };
    writeRuns(out, seeds, (seed) => ({
      warm: { wins: 30, score: scores.warm[seed] as number },
      gigpo: { wins: 40, score: scores.gigpo[seed] as number },
      grpo: { wins: 35, score: scores.grpo[seed] as number },
    }));
    const summary = readSummary(scored, out, seeds);
    const score = summary.finalEval.metrics?.score;
    expect(score?.label).toBe('WebShop score');
    expect(score?.perSeed.map((p) => p.values)).toEqual(
      seeds.map((s) => ({
        warm: scores.warm[s],
        gigpo: scores.gigpo[s],
        grpo: scores.grpo[s],
      })),
    );
    expect(score?.paired.perSeed.map((p) => p.diff)).toEqual([4, -1, 4]);
    expect(score?.paired.mean).toBeCloseTo(7 / 3, 10);
    expect(score?.rlGain.map((g) => g.perSeed.map((p) => p.diff))).toEqual([
      [5, 1, 6],
      [1, 2, 2],
    ]);
    // The validation curve of the metric: iteration 0 is the warm start's value on every seed.
    const curve = summary.arms[0]?.metricCurves?.score;
    expect(curve?.map((c) => c.iteration)).toEqual([0, 16]);
    expect(curve?.[0]?.perSeed).toHaveLength(seeds.length);
    const markdown = summaryMarkdown(summary, scored);
    expect(markdown).toContain('WebShop score in the final evaluation on 480 held-out goals');
    expect(markdown).toContain('| 0 | 10.0 | 15.0 | 11.0 | 4.0 | 5.0 | 1.0 |');
    expect(markdown).toContain('WebShop score on these goals: gigpo − grpo 2.3 [');
    expect(markdown).toContain('gigpo held-out WebShop score (mean ± std)');
  });

  it('summarizes the seeds that finished and marks the others', () => {
    const out = join(root, 'partial');
    writeRuns(out, [0, 2], () => ({
      warm: { wins: 100 },
      gigpo: { wins: 120 },
      grpo: { wins: 110 },
    }));
    const summary = readSummary(plain, out, SEEDS);
    expect(summary.paired.n).toBe(2);
    expect(summary.finalEval.perSeed.map((p) => p.seed)).toEqual([0, 2]);
    expect(summaryMarkdown(summary, plain)).toContain('| 1 | – | – | – |');
    const single = summaryMarkdown(readSummary(plain, out, [0]), plain);
    expect(single).toContain('(one seed: no interval)');
    expect(single).not.toContain('NaN');
  });
});

describe('the paired difference over seeds', () => {
  const seedValues = fc
    .array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 12 })
    .chain((a) =>
      fc
        .array(fc.double({ min: 0, max: 1, noNaN: true }), {
          minLength: a.length,
          maxLength: a.length,
        })
        .map((b) => [a, b] as const),
    );
  const byIndex = (xs: readonly number[]) => new Map(xs.map((x, i) => [i, x] as const));

  it('has the mean of the per-seed differences, inside its interval, and changes sign with the arms', () => {
    fc.assert(
      fc.property(seedValues, ([a, b]) => {
        const d = pairedDifference(byIndex(a), byIndex(b));
        const back = pairedDifference(byIndex(b), byIndex(a));
        expect(d.n).toBe(a.length);
        expect(d.mean).toBeCloseTo(meanStd(a).mean - meanStd(b).mean, 9);
        expect(d.low).toBeLessThanOrEqual(d.mean + 1e-12);
        expect(d.high).toBeGreaterThanOrEqual(d.mean - 1e-12);
        expect(back.mean).toBeCloseTo(-d.mean, 9);
        expect(back.high - back.low).toBeCloseTo(d.high - d.low, 9);
      }),
    );
  });

  it('pairs only the seeds both sides have', () => {
    const d = pairedDifference(
      new Map([
        [0, 0.5],
        [3, 0.4],
        [7, 0.2],
      ]),
      new Map([
        [3, 0.1],
        [7, 0.3],
      ]),
    );
    expect(d.perSeed.map((p) => p.seed)).toEqual([3, 7]);
    expect(d.mean).toBeCloseTo(0.1, 12);
  });
});
