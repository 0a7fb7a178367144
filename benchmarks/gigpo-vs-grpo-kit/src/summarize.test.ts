import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ARMS, type BenchBudget, resolvedAlgorithm, SEEDS } from './config.ts';
import { summaryMarkdown } from './markdown.ts';
import {
  type MeanInterval,
  meanStd,
  pairedDifference,
  t95,
  tInterval,
  wilsonInterval,
} from './stats.ts';
import { evalNoiseOf, type PooledSuccess, readSummary, type SummarySpec } from './summarize.ts';

const root = mkdtempSync(join(tmpdir(), 'agentrl-bench-summary-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const budget = { iterations: 16, invalidActionPenalty: 0 } as BenchBudget;

/** Episodes of the budget-sized evaluation that `writeSeed` writes where a test needs another file beside it. */
const N_PLAIN = 8;

/** One model's final evaluation on one seed. */
interface Model {
  readonly wins: number;
  readonly pick?: { wins: number; episodes: number };
  readonly score?: number;
}

/**
 * One seed's jobs as they write their files: the warm start, each arm's result (validations at
 * iterations 0 and 16, the job's wall and CPU seconds) and the final evaluation on `episodes`.
 */
function writeSeed(
  out: string,
  seed: number,
  episodes: number,
  models: Readonly<Record<string, Model>>,
): void {
  const dir = join(out, `seed-${seed}`);
  mkdirSync(join(dir, 'warm'), { recursive: true });
  writeFileSync(
    join(dir, 'warm', 'warm.json'),
    JSON.stringify({ seed, wallSeconds: 50, cpuSeconds: 60 }),
  );
  const results: Record<string, unknown> = {};
  for (const [name, m] of Object.entries(models)) {
    results[name] = {
      wins: m.wins,
      episodes,
      ...(m.pick ? { taskTypes: { pick_and_place_simple: m.pick } } : {}),
      ...(m.score === undefined ? {} : { score: m.score }),
      ...(name === 'warm' ? {} : { algorithm: resolvedAlgorithm(name, budget) }),
      model: `${name}/model`,
    };
    if (name === 'warm') continue;
    const validation = [
      { iteration: 0, wins: 24, episodes: 96 },
      { iteration: 16, wins: 28 + seed, episodes: 96 },
    ];
    writeFileSync(
      join(dir, `${name}.json`),
      JSON.stringify({
        seed,
        arm: name,
        budget,
        algorithm: resolvedAlgorithm(name, budget),
        validation,
        train: [],
        seconds: 99,
        wallSeconds: 100 + 10 * seed,
        cpuSeconds: 190 + 20 * seed,
      }),
    );
  }
  writeFileSync(
    join(dir, 'eval.json'),
    JSON.stringify({ seed, budget, episodes, results, wallSeconds: 30, cpuSeconds: 31 }),
  );
}

describe("the results table (the paper's Table 1 over the final evaluation)", () => {
  // Three seeds of 100 held-out games; 20 of them pick-and-place games.
  const spec: SummarySpec = {
    workload: 'test',
    budget,
    finalEvalEpisodes: 100,
    taskTypes: [{ name: 'pick_and_place_simple', label: 'pick' }],
    successLabel: 'All',
    metrics: [{ name: 'score', label: 'score' }],
    paper: { source: 'test numbers', rows: { grpo: { success: 72.8 } } },
  };
  const arms = ['rloo', 'grpo', 'gigpo-mean_norm'];
  const out = join(root, 'table');
  const wins = { warm: [20, 25, 30], rloo: [28, 41, 45], grpo: [30, 40, 50], gmn: [35, 48, 53] };
  const pick = { grpo: [6, 8, 10], gmn: [9, 12, 10] };
  const score = { grpo: [20, 24, 31], gmn: [22, 30, 33] };
  for (const seed of [0, 1, 2])
    writeSeed(out, seed, 100, {
      warm: { wins: wins.warm[seed] as number },
      rloo: { wins: wins.rloo[seed] as number, pick: { wins: 5, episodes: 20 }, score: 20 },
      grpo: {
        wins: wins.grpo[seed] as number,
        pick: { wins: pick.grpo[seed] as number, episodes: 20 },
        score: score.grpo[seed] as number,
      },
      'gigpo-mean_norm': {
        wins: wins.gmn[seed] as number,
        pick: { wins: pick.gmn[seed] as number, episodes: 20 },
        score: score.gmn[seed] as number,
      },
    });
  const summary = readSummary(spec, out, [0, 1, 2], arms);

  it('holds one record per arm and seed: wins, episodes, per task type, the score, the algorithm and the job time', () => {
    expect(summary.records.map((r) => `${r.arm}/${r.seed}`)).toEqual(
      [0, 1, 2].flatMap((seed) => arms.map((arm) => `${arm}/${seed}`)),
    );
    expect(summary.records.find((r) => r.arm === 'grpo' && r.seed === 1)).toEqual({
      arm: 'grpo',
      seed: 1,
      wins: 40,
      episodes: 100,
      taskTypes: { pick_and_place_simple: { wins: 8, episodes: 20 } },
      score: 24,
      algorithm: { name: 'grpo', options: { normalizeByStd: true, invalidActionPenalty: 0 } },
      wallSeconds: 110,
      cpuSeconds: 210,
    });
  });

  it('pools every seed into each success cell with its Wilson interval (computed by hand)', () => {
    const cells = summary.table.rows.find((r) => r.arm === 'grpo')?.cells ?? {};
    const success = cells.success as PooledSuccess;
    const pickCell = cells.pick_and_place_simple as PooledSuccess;
    const scoreCell = cells.score as MeanInterval;
    // 120 of 300: p = 0.4, centre (p + z²/2n) / (1 + z²/n), half-width z √(p(1−p)/n + z²/4n²) / (1 + z²/n).
    expect(success).toMatchObject({ wins: 120, n: 300, rate: 0.4 });
    expect(success.low).toBeCloseTo(0.346164, 5);
    expect(success.high).toBeCloseTo(0.456364, 5);
    // Pick-and-place: 24 of 60.
    expect(pickCell.low).toBeCloseTo(0.285693, 5);
    expect(pickCell.high).toBeCloseTo(0.526342, 5);
    // The score: mean 25 of 20, 24, 31, sd 5.5678, t(2) = 4.303: 25 ± 13.832.
    expect(scoreCell.low).toBeCloseTo(11.16779, 4);
    expect(scoreCell.high).toBeCloseTo(38.83221, 4);
    expect(summary.table.rows.map((r) => r.label)).toEqual([
      'warm start (SFT)',
      'RLOO',
      'GRPO',
      'GiGPO w/o std',
    ]);
  });

  it('pairs each arm with GRPO by seed, with the t-interval (computed by hand)', () => {
    const rows = summary.table.vsBaseline?.rows ?? [];
    expect(summary.table.vsBaseline?.baseline).toBe('grpo');
    expect(rows.map((r) => r.arm)).toEqual(['rloo', 'gigpo-mean_norm']);
    const gigpo = rows[1]?.cells;
    // Differences 0.05, 0.08, 0.03: mean 0.05333, sd 0.025166, t(2) = 4.303: ± 0.062521.
    expect(gigpo?.success?.perSeed.map((p) => p.diff)).toEqual([
      0.35 - 0.3,
      0.48 - 0.4,
      0.53 - 0.5,
    ]);
    expect(gigpo?.success?.mean).toBeCloseTo(0.053333, 6);
    expect(gigpo?.success?.low).toBeCloseTo(-0.009188, 6);
    expect(gigpo?.success?.high).toBeCloseTo(0.115854, 6);
    // Score differences 2, 6, 2: mean 3.333, sd 2.3094: [−2.404, 9.0707].
    expect(gigpo?.score?.low).toBeCloseTo(-2.404, 3);
    expect(gigpo?.score?.high).toBeCloseTo(9.070667, 5);
    // RLOO: −0.02, 0.01, −0.05: sd 0.03, ± 4.303 · 0.03 / √3.
    expect(rows[0]?.cells.success?.high).toBeCloseTo(-0.02 + (4.303 * 0.03) / Math.sqrt(3), 9);
  });

  it('writes the table as the paper lays it out, with the paper beside ours, the paired table and the time per arm', () => {
    const markdown = summaryMarkdown(summary, spec);
    expect(markdown).toContain('| method | arm | pick | score | All | paper: All |');
    expect(markdown).toContain(
      '| GRPO | `grpo` | 40.0 (28.6–52.6) | 25.0 [11.2, 38.8] | 40.0 (34.6–45.6) | 72.8 |',
    );
    expect(markdown).toContain('| warm start (SFT) | – | – | – | 25.0 (20.4–30.2) | – |');
    expect(markdown).toContain(
      '| GiGPO w/o std | +11.7 [-14.2, 37.5] | +3.3 [-2.4, 9.1] | +5.3 [-0.9, 11.6] |',
    );
    expect(markdown).toContain(
      '- `gigpo-mean_norm` (GiGPO w/o std): `{"name":"gigpo","options":{"mode":"mean_norm","gamma":0.95,"stepAdvantageWeight":1,"invalidActionPenalty":0}}`',
    );
    // GRPO's jobs: wall 100, 110, 120 s; CPU 190, 210, 230 s.
    expect(markdown).toContain('| GRPO (`grpo`) | 3 | 110 ± 10 | 210 ± 20 | 630 |');
    expect(markdown).toContain('| warm start (SFT) | 3 | 50 ± 0 | 60 ± 0 | 180 |');
    expect(markdown.split('\n').filter((l) => l.includes('NaN'))).toEqual([]);
  });
});

describe('the benchmark summary', () => {
  const N = 480;
  const plain: SummarySpec = { workload: 'test', budget, finalEvalEpisodes: N };
  const two = ['gigpo-mean_std_norm', 'grpo'];
  /** One seed of a two-arm run: a warm start winning 100 of N, then GiGPO and GRPO. */
  const writeTwoArms = (out: string, seed: number, gigpo: number, grpo: number) =>
    writeSeed(out, seed, N, {
      warm: { wins: 100 },
      'gigpo-mean_std_norm': { wins: gigpo },
      grpo: { wins: grpo },
    });

  it('reports the final evaluation per seed and whether RL clears the warm start', () => {
    const out = join(root, 'plain');
    const warm = Math.round(0.25 * N);
    // Seed 0: +25 % of the episodes, far above the warm start; the others: +1 episode.
    for (const seed of SEEDS)
      writeSeed(out, seed, N, {
        warm: { wins: warm },
        'gigpo-mean_std_norm': { wins: seed === 0 ? warm + Math.round(0.25 * N) : warm + 1 },
        grpo: { wins: warm },
      });
    const summary = readSummary(plain, out, SEEDS, two);
    const perSeed = summary.finalEval.perSeed;
    expect(perSeed.map((p) => p.arms['gigpo-mean_std_norm']?.separatesFromWarm)).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(perSeed.every((p) => p.arms.grpo?.separatesFromWarm === false)).toBe(true);
    const d = summary.table.vsBaseline?.rows[0]?.cells.success;
    expect(d?.mean).toBeCloseTo((0.25 * N + 4) / N / SEEDS.length, 10);
    expect(d?.n).toBe(SEEDS.length);
    expect(summary.finalEval.metrics).toBeUndefined();
    const markdown = summaryMarkdown(summary, plain);
    expect(markdown).toContain(`Final evaluation on ${N} held-out games per seed`);
    expect(markdown).toContain('| method | arm | success |');
    expect(markdown).toContain('✓');
    expect(markdown).not.toContain('score');
  });

  it("reads a two-arm run's folder (gigpo.json, its estimator, eval.json's gigpo) as the arm it was", () => {
    const out = join(root, 'two-arm');
    const gigpoOptions = ARMS['gigpo-mean_std_norm']?.algorithm.options;
    for (const seed of [0, 1]) {
      const dir = join(out, `seed-${seed}`);
      mkdirSync(join(dir, 'warm'), { recursive: true });
      writeFileSync(join(dir, 'warm', 'warm.json'), JSON.stringify({ seed, seconds: 266 }));
      for (const [arm, estimator] of [
        ['gigpo', { name: 'gigpo', options: gigpoOptions }],
        ['grpo', { name: 'grpo', options: { normalizeByStd: true } }],
      ] as const)
        writeFileSync(
          join(dir, `${arm}.json`),
          JSON.stringify({
            seed,
            arm,
            budget,
            estimator,
            validation: [{ iteration: 16, wins: 30, episodes: 96 }],
            train: [],
            seconds: 300,
          }),
        );
      writeFileSync(
        join(dir, 'eval.json'),
        JSON.stringify({
          seed,
          budget,
          episodes: N,
          results: {
            warm: { wins: 100, episodes: N },
            gigpo: { wins: 150 + seed, episodes: N },
            grpo: { wins: 140, episodes: N },
          },
        }),
      );
    }
    const summary = readSummary(plain, out, [0, 1], two);
    expect(summary.records.map((r) => [r.arm, r.seed, r.wins])).toEqual([
      ['gigpo-mean_std_norm', 0, 150],
      ['grpo', 0, 140],
      ['gigpo-mean_std_norm', 1, 151],
      ['grpo', 1, 140],
    ]);
    expect(summary.records[0]?.algorithm).toEqual(resolvedAlgorithm('gigpo-mean_std_norm', budget));
    expect(summary.records[0]?.wallSeconds).toBe(300);
    expect(summary.arms.map((a) => a.perSeed.length)).toEqual([2, 2]);
    expect(summary.table.vsBaseline?.rows[0]?.cells.success?.perSeed.map((p) => p.diff)).toEqual([
      150 / N - 140 / N,
      151 / N - 140 / N,
    ]);
  });

  it('summarizes the seeds that finished and marks the others', () => {
    const out = join(root, 'partial');
    for (const seed of [0, 2]) writeTwoArms(out, seed, 120, 110);
    const summary = readSummary(plain, out, SEEDS, two);
    expect(summary.validationVsBaseline[0]?.n).toBe(2);
    expect(summary.finalEval.perSeed.map((p) => p.seed)).toEqual([0, 2]);
    expect(summaryMarkdown(summary, plain)).toContain('| 1 | – | – |');
    const single = summaryMarkdown(readSummary(plain, out, [0], two), plain);
    expect(single).toContain('(one seed: no interval)');
    expect(single).not.toContain('NaN');
  });

  it('reads seeds run in separate folders (a table and its replication) as one run, and refuses a seed found twice', () => {
    const first = join(root, 'pool-a');
    const second = join(root, 'pool-b');
    const seeds = { 0: 12, 1: 5, 2: -3 } as const;
    for (const [seed, gain] of Object.entries(seeds))
      writeTwoArms(Number(seed) < 2 ? first : second, Number(seed), 120 + gain, 120);
    const pooled = readSummary(plain, [first, second], [0, 1, 2], two);
    expect(pooled.records.map((r) => `${r.arm}/${r.seed}/${r.wins}`)).toEqual([
      'gigpo-mean_std_norm/0/132',
      'grpo/0/120',
      'gigpo-mean_std_norm/1/125',
      'grpo/1/120',
      'gigpo-mean_std_norm/2/117',
      'grpo/2/120',
    ]);
    // The same seeds in one folder summarize to the same table.
    const together = join(root, 'pool-one');
    for (const [seed, gain] of Object.entries(seeds))
      writeTwoArms(together, Number(seed), 120 + gain, 120);
    expect(pooled.table).toEqual(readSummary(plain, together, [0, 1, 2], two).table);
    expect(() => readSummary(plain, [first, together], [0, 1, 2], two)).toThrow(
      /seed 0 is in more than one folder/,
    );
  });

  it("says per arm how its batches' step groups looked: size, singletons, one-action groups where recorded, zero-advantage rows", () => {
    const out = join(root, 'step-groups');
    for (const seed of [0, 1]) writeTwoArms(out, seed, 120, 110);
    const train = (oneAction: number | undefined) => [
      {
        iteration: 0,
        success: 0.2,
        zeroFraction: 0.7,
        stepGroupSizeMean: 6,
        stepGroupSingletonFraction: 0.1,
        ...(oneAction === undefined ? {} : { stepGroupOneActionFraction: oneAction }),
      },
    ];
    for (const [seed, oneAction] of [
      [0, 0.8],
      [1, 0.6],
    ] as const) {
      const file = join(out, `seed-${seed}`, 'gigpo-mean_std_norm.json');
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...saved, train: train(oneAction) }));
      const grpo = join(out, `seed-${seed}`, 'grpo.json');
      const old = JSON.parse(readFileSync(grpo, 'utf8')) as Record<string, unknown>;
      writeFileSync(grpo, JSON.stringify({ ...old, train: train(undefined) }));
    }
    const markdown = summaryMarkdown(readSummary(plain, out, [0, 1], two), plain);
    expect(markdown).toContain(
      'gigpo-mean_std_norm: mean step-group size 6.00 steps per anchor state, 10.0 % of step groups singletons, 70.0 % of the others one action taken by every member; 70.0 % of rows at zero advantage',
    );
    // Runs recorded before the one-action share was counted say nothing of it.
    expect(markdown).toContain(
      'does not use them): mean step-group size 6.00 steps per anchor state, 10.0 % of step groups singletons; 70.0 % of rows at zero advantage',
    );
  });

  it('names no paired table when the run has no GRPO arm', () => {
    const out = join(root, 'partial');
    const summary = readSummary(plain, out, [0, 2], ['gigpo-mean_std_norm']);
    expect(summary.table.vsBaseline).toBeUndefined();
    expect(summaryMarkdown(summary, plain)).toContain('No `grpo` arm in this run');
  });
});

describe('the intervals', () => {
  it("are the runner's Wilson interval and the t-interval of a mean, as computed by hand", () => {
    // 75 of 300 at z = 1.96.
    const w = wilsonInterval(75, 300);
    expect(w.low).toBeCloseTo(0.204369, 6);
    expect(w.high).toBeCloseTo(0.301953, 6);
    // 20, 24, 31: mean 25, sd √31 = 5.5678, t(2) = 4.303.
    const t = tInterval([20, 24, 31]);
    expect(t.mean).toBe(25);
    expect(t.high - t.mean).toBeCloseTo((4.303 * Math.sqrt(31)) / Math.sqrt(3), 9);
    expect(tInterval([3]).low).toBeNaN();
  });

  it("use Student's t at the seeds' own degrees of freedom, twenty seeds and more included", () => {
    // Published two-sided 95 % quantiles: t(19) = 2.093, t(40) = 2.021, t(60) = 2.000, t(120) = 1.980.
    expect(t95(19)).toBe(2.093);
    for (const [df, t] of [
      [40, 2.021],
      [60, 2.0],
      [120, 1.98],
    ] as const)
      expect(Math.abs(t95(df) - t)).toBeLessThan(0.001);
    expect(t95(0)).toBeNaN();
    // Twenty seeds 0, 1, …, 19: mean 9.5, sd √35, half-width t(19) · sd / √20.
    const xs = Array.from({ length: 20 }, (_, i) => i);
    const t = tInterval(xs);
    expect(t.high - t.mean).toBeCloseTo((2.093 * Math.sqrt(35)) / Math.sqrt(20), 9);
    // The quantile falls with the degrees of freedom towards the normal's 1.96.
    for (let df = 1; df < 200; df += 1) expect(t95(df + 1)).toBeLessThanOrEqual(t95(df));
    expect(t95(10_000)).toBeGreaterThan(1.959);
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

describe("the evaluation's share of the noise", () => {
  const entry = (outcomes: string) => ({
    wins: [...outcomes].filter((x) => x === '1').length,
    episodes: outcomes.length,
    outcomes,
  });
  const results = (arm: string, grpo: string) => ({
    warm: entry('0'.repeat(arm.length)),
    'gigpo-mean_std_norm': entry(arm),
    grpo: entry(grpo),
  });

  it('is the root mean square of each seed’s standard error of its game-by-game differences, beside their spread over seeds', () => {
    // Seed 0: differences 0, 1, 0, 0 (mean 0.25, sd 0.5: squared error 0.25 / 4); seed 1: none.
    const noise = evalNoiseOf(
      [
        { seed: 0, results: results('1100', '1000') },
        { seed: 1, results: results('1111', '1111') },
      ],
      ['gigpo-mean_std_norm', 'grpo'],
      'grpo',
    );
    expect(noise).toHaveLength(1);
    const [n] = noise ?? [];
    expect(n?.arm).toBe('gigpo-mean_std_norm');
    expect([n?.seeds, n?.seedsWithOutcomes]).toEqual([2, 2]);
    expect(n?.evalSd).toBeCloseTo(Math.sqrt(0.0625 / 2), 12);
    expect(n?.observedSd).toBeCloseTo(meanStd([0.25, 0]).std, 12);
  });

  it('takes the spread from every seed and the evaluation’s error from the seeds that kept outcomes', () => {
    const arms = ['gigpo-mean_std_norm', 'grpo'];
    // Seed 1 ran before outcomes were kept: its difference (1/4 − 3/4) counts in the spread only.
    const older = {
      seed: 1,
      results: { 'gigpo-mean_std_norm': { wins: 1, episodes: 4 }, grpo: { wins: 3, episodes: 4 } },
    };
    const [n] =
      evalNoiseOf([{ seed: 0, results: results('1100', '1000') }, older], arms, 'grpo') ?? [];
    expect([n?.seeds, n?.seedsWithOutcomes]).toEqual([2, 1]);
    expect(n?.evalSd).toBeCloseTo(0.25, 12);
    expect(n?.observedSd).toBeCloseTo(meanStd([0.25, -0.5]).std, 12);
    // None kept outcomes, or outcomes of another length than the baseline's: left out.
    expect(evalNoiseOf([older, { ...older, seed: 2 }], arms, 'grpo')).toBeUndefined();
    expect(
      evalNoiseOf([{ seed: 0, results: results('110', '1000') }, older], arms, 'grpo'),
    ).toBeUndefined();
  });

  it('is left out with fewer than two seeds or no baseline', () => {
    const full = { seed: 0, results: results('1100', '1000') };
    expect(evalNoiseOf([full], ['gigpo-mean_std_norm', 'grpo'], 'grpo')).toBeUndefined();
    expect(evalNoiseOf([full, full], ['gigpo-mean_std_norm'], 'grpo')).toBeUndefined();
  });

  it('never exceeds the largest possible per-game spread, and is zero when the arms play every game alike', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.boolean(), { minLength: 2, maxLength: 40 }), {
          minLength: 2,
          maxLength: 6,
        }),
        (games) => {
          const seeds = games.map((g, seed) => {
            const a = g.map((x) => (x ? '1' : '0')).join('');
            return { seed, results: results(a, a) };
          });
          const [same] = evalNoiseOf(seeds, ['gigpo-mean_std_norm', 'grpo'], 'grpo') ?? [];
          expect(same?.evalSd).toBe(0);
          expect(same?.observedSd).toBe(0);
          const flipped = games.map((g, seed) => ({
            seed,
            results: results(
              g.map((x) => (x ? '1' : '0')).join(''),
              g.map((x, i) => (i % 2 === 0 ? (x ? '0' : '1') : '0')).join(''),
            ),
          }));
          const [n] = evalNoiseOf(flipped, ['gigpo-mean_std_norm', 'grpo'], 'grpo') ?? [];
          // A game-by-game difference lies in [-1, 1]: its sd is at most 1 · √(k / (k − 1)).
          const worst = Math.max(
            ...games.map((g) => Math.sqrt(g.length / (g.length - 1) / g.length)),
          );
          expect(n?.evalSd ?? Number.NaN).toBeLessThanOrEqual(worst + 1e-12);
        },
      ),
    );
  });

  it('is read from the evaluation a summary names (eval-N.json), and its outcomes stay out of the records', () => {
    const out = join(root, 'noise');
    const spec: SummarySpec = {
      workload: 'test',
      budget,
      finalEvalEpisodes: 4,
      evalStem: 'eval-4',
    };
    const arms = ['gigpo-mean_std_norm', 'grpo'];
    for (const [seed, mine, theirs] of [
      [0, '1100', '1000'],
      [1, '1111', '1111'],
    ] as const) {
      writeSeed(out, seed, N_PLAIN, {
        warm: { wins: 1 },
        'gigpo-mean_std_norm': { wins: 1 },
        grpo: { wins: 1 },
      });
      writeFileSync(
        join(out, `seed-${seed}`, 'eval-4.json'),
        JSON.stringify({
          seed,
          episodes: 4,
          results: {
            warm: entry('0000'),
            'gigpo-mean_std_norm': {
              ...entry(mine),
              algorithm: resolvedAlgorithm('gigpo-mean_std_norm', budget),
            },
            grpo: { ...entry(theirs), algorithm: resolvedAlgorithm('grpo', budget) },
          },
        }),
      );
    }
    const summary = readSummary(spec, out, [0, 1], arms);
    expect(summary.finalEval.episodes).toBe(4);
    expect(summary.records.map((r) => [r.arm, r.seed, r.wins, r.episodes])).toEqual([
      ['gigpo-mean_std_norm', 0, 2, 4],
      ['grpo', 0, 1, 4],
      ['gigpo-mean_std_norm', 1, 4, 4],
      ['grpo', 1, 4, 4],
    ]);
    expect(summary.records.every((r) => !('outcomes' in r))).toBe(true);
    expect(summary.finalEval.evalNoise?.[0]?.evalSd).toBeCloseTo(Math.sqrt(0.0625 / 2), 12);
    // The budget-sized evaluation (eval.json, 8 episodes here) is not read by this summary.
    expect(readSummary({ ...spec, evalStem: undefined }, out, [0, 1], arms).records).toEqual([]);
    const markdown = summaryMarkdown(summary, spec);
    expect(markdown).toContain(
      "How much of the spread over seeds the evaluation makes (from each seed's per-game outcomes: the sd of its game-by-game differences / √4, root mean square over seeds), against the sd of the per-seed differences in success, in points: GiGPO w/ std 17.7 of 17.7 (the rest, training, 0.0; 2 seeds).",
    );
  });
});
