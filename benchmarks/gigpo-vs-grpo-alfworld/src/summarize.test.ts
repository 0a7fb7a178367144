import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FINAL_EVAL_EPISODES, SEEDS } from './config.ts';
import { summarize } from './summarize.ts';

const root = mkdtempSync(join(tmpdir(), 'agentrl-bench-summary-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Synthetic runs: 96-game validations, and final evaluations where only some seeds separate. */
function writeRuns(out: string, finalWins: Record<string, number[]>): void {
  for (const seed of SEEDS) {
    const dir = join(out, `seed-${seed}`);
    mkdirSync(join(dir, 'warm'), { recursive: true });
    writeFileSync(join(dir, 'warm', 'warm.json'), JSON.stringify({ seed }));
    for (const arm of ['gigpo', 'grpo']) {
      const validation = [
        { iteration: 0, wins: 24, episodes: 96 },
        { iteration: 16, wins: 28 + seed, episodes: 96 },
      ];
      writeFileSync(
        join(dir, `${arm}.json`),
        JSON.stringify({ seed, arm, validation, train: [], seconds: 1 }),
      );
    }
    const result = (wins: number) => ({ wins, episodes: FINAL_EVAL_EPISODES });
    writeFileSync(
      join(dir, 'eval.json'),
      JSON.stringify({
        seed,
        episodes: FINAL_EVAL_EPISODES,
        results: {
          warm: result(finalWins.warm?.[seed] as number),
          gigpo: result(finalWins.gigpo?.[seed] as number),
          grpo: result(finalWins.grpo?.[seed] as number),
        },
      }),
    );
  }
}

describe('the benchmark summary', () => {
  it('reports the final evaluation per seed, whether RL clears the warm start, and the paired difference', async () => {
    const out = join(root, 'runs');
    const dest = join(root, 'summary');
    mkdirSync(dest, { recursive: true });
    const n = FINAL_EVAL_EPISODES;
    // Seed 0: +25 % of the games, far above the warm start; the others: +1 game.
    const warm = SEEDS.map(() => Math.round(0.25 * n));
    writeRuns(out, {
      warm,
      gigpo: warm.map((w, s) => (s === 0 ? w + Math.round(0.25 * n) : w + 1)),
      grpo: warm.map((w) => w),
    });
    const { markdown } = await summarize(out, dest);
    const results = JSON.parse(readFileSync(join(dest, 'results.json'), 'utf8'));
    const perSeed = results.finalEval.perSeed as {
      seed: number;
      arms: Record<string, { separatesFromWarm: boolean }>;
    }[];
    expect(perSeed.map((p) => p.arms.gigpo?.separatesFromWarm)).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(perSeed.every((p) => p.arms.grpo?.separatesFromWarm === false)).toBe(true);
    const expectedMean = (0.25 * n + 4) / n / SEEDS.length;
    expect(results.finalEval.paired.mean).toBeCloseTo(expectedMean, 10);
    expect(results.finalEval.paired.n).toBe(SEEDS.length);
    expect(markdown).toContain(`Final evaluation on ${n} held-out games per seed`);
    expect(markdown).toContain('✓');
  });
});
