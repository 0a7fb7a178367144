/**
 * Reads the per-run JSON files of a benchmark output folder and writes `results.json` (curves as
 * mean ± std over seeds per arm, per-seed values) and `results.md` (the README table).
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { wilsonInterval } from '@agentrl/runner';
import { ARMS, BUDGET, FINAL_EVAL_EPISODES, SEEDS } from './config.ts';

interface ArmResult {
  readonly seed: number;
  readonly arm: string;
  readonly validation: readonly { iteration: number; wins: number; episodes: number }[];
  readonly train: readonly {
    iteration: number;
    success?: number;
    zeroFraction?: number;
    stepGroupSizeMean?: number;
    stepGroupSingletonFraction?: number;
  }[];
  readonly seconds: number;
}

/** One seed's `eval` job: wins of the warm start and of each arm's final policy. */
interface FinalEval {
  readonly seed: number;
  readonly episodes: number;
  readonly results: Record<string, { wins: number; episodes: number }>;
}

/** Mean and sample standard deviation (n − 1). */
function meanStd(xs: readonly number[]): { mean: number; std: number; n: number } {
  const n = xs.length;
  const mean = n === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / n;
  const std = n < 2 ? 0 : Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  return { mean, std, n };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}`;

/** Two-sided 95 % quantiles of Student's t for 1–10 degrees of freedom. */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

/**
 * Paired comparison of two arms over seeds: per-seed differences `a − b` of final held-out
 * success, their mean and a 95 % t-interval (each seed's two arms share a warm start and games).
 */
export function pairedDifference(
  a: ReadonlyMap<number, number>,
  b: ReadonlyMap<number, number>,
): {
  perSeed: { seed: number; diff: number }[];
  mean: number;
  low: number;
  high: number;
  n: number;
} {
  const perSeed = [...a.keys()]
    .filter((seed) => b.has(seed))
    .sort((x, y) => x - y)
    .map((seed) => ({ seed, diff: (a.get(seed) as number) - (b.get(seed) as number) }));
  const { mean, std, n } = meanStd(perSeed.map((p) => p.diff));
  const t = n >= 2 ? (T95[Math.min(n - 2, T95.length - 1)] as number) : Number.NaN;
  const half = n >= 2 ? (t * std) / Math.sqrt(n) : Number.NaN;
  return { perSeed, mean, low: mean - half, high: mean + half, n };
}

export async function summarize(out: string, packageDir: string): Promise<{ markdown: string }> {
  const runs: ArmResult[] = [];
  const warm: Record<string, unknown>[] = [];
  for (const seed of SEEDS) {
    const w = join(out, `seed-${seed}`, 'warm', 'warm.json');
    if (existsSync(w)) warm.push(JSON.parse(readFileSync(w, 'utf8')) as Record<string, unknown>);
    for (const arm of Object.keys(ARMS)) {
      const file = join(out, `seed-${seed}`, `${arm}.json`);
      if (existsSync(file)) runs.push(JSON.parse(readFileSync(file, 'utf8')) as ArmResult);
    }
  }
  const arms = Object.keys(ARMS).map((arm) => {
    const mine = runs.filter((r) => r.arm === arm);
    const iterations = [...new Set(mine.flatMap((r) => r.validation.map((v) => v.iteration)))].sort(
      (a, b) => a - b,
    );
    const curve = iterations.map((iteration) => {
      const rates = mine.flatMap((r) =>
        r.validation.filter((v) => v.iteration === iteration).map((v) => v.wins / v.episodes),
      );
      return { iteration, ...meanStd(rates), perSeed: rates };
    });
    const trainIterations = [...new Set(mine.flatMap((r) => r.train.map((t) => t.iteration)))]
      .filter((i) => i < BUDGET.iterations)
      .sort((a, b) => a - b);
    const trainCurve = trainIterations.map((iteration) => {
      const rates = mine.flatMap((r) =>
        r.train
          .filter((t) => t.iteration === iteration && t.success !== undefined)
          .map((t) => t.success as number),
      );
      return { iteration, ...meanStd(rates) };
    });
    const perSeed = mine.map((r) => ({
      seed: r.seed,
      validation: r.validation,
      meanStepGroupSize: meanStd(
        r.train.flatMap((t) => (t.stepGroupSizeMean === undefined ? [] : [t.stepGroupSizeMean])),
      ).mean,
      meanSingletonStepGroupFraction: meanStd(
        r.train.flatMap((t) =>
          t.stepGroupSingletonFraction === undefined ? [] : [t.stepGroupSingletonFraction],
        ),
      ).mean,
      meanZeroAdvantageFraction: meanStd(
        r.train.flatMap((t) => (t.zeroFraction === undefined ? [] : [t.zeroFraction])),
      ).mean,
      seconds: r.seconds,
    }));
    return { arm, estimator: ARMS[arm], validationCurve: curve, trainCurve, perSeed };
  });
  const finalRates = (arm: string) =>
    new Map(
      runs
        .filter((r) => r.arm === arm && r.validation.length > 0)
        .map((r) => {
          const v = r.validation.at(-1) as { wins: number; episodes: number };
          return [r.seed, v.wins / v.episodes] as const;
        }),
    );
  const [armA, armB] = Object.keys(ARMS) as [string, string];
  const paired = pairedDifference(finalRates(armA), finalRates(armB));
  // What RL adds in each arm: final against the warm start (iteration 0) of the same seed, paired
  // over seeds, and the held-out games of all seeds pooled (each seed has its own 96 games).
  const rlGain = Object.keys(ARMS).map((arm) => {
    const mine = runs.filter((r) => r.arm === arm && r.validation.length > 1);
    const at = (pick: (r: ArmResult) => { wins: number; episodes: number }) =>
      new Map(mine.map((r) => [r.seed, pick(r).wins / pick(r).episodes] as const));
    const first = (r: ArmResult) => r.validation[0] as { wins: number; episodes: number };
    const final = (r: ArmResult) => r.validation.at(-1) as { wins: number; episodes: number };
    const sum = (pick: typeof first, key: 'wins' | 'episodes') =>
      mine.reduce((a, r) => a + pick(r)[key], 0);
    return {
      arm,
      paired: pairedDifference(at(final), at(first)),
      pooledWarm: {
        wins: sum(first, 'wins'),
        ...wilsonInterval(sum(first, 'wins'), sum(first, 'episodes')),
      },
      pooledFinal: {
        wins: sum(final, 'wins'),
        ...wilsonInterval(sum(final, 'wins'), sum(final, 'episodes')),
      },
    };
  });
  // The final evaluation on more held-out games (the `eval` jobs): per seed, the warm start and
  // each arm with Wilson intervals, whether RL's interval clears the warm start's, and the arms'
  // paired difference over seeds on these games.
  const evals: FinalEval[] = SEEDS.map((seed) => join(out, `seed-${seed}`, 'eval.json'))
    .filter((f) => existsSync(f))
    .map((f) => JSON.parse(readFileSync(f, 'utf8')) as FinalEval)
    .filter((e) => e.episodes === FINAL_EVAL_EPISODES);
  const evalRate = (name: string) =>
    new Map(
      evals.flatMap((e) => {
        const r = e.results[name];
        return r === undefined ? [] : [[e.seed, r.wins / r.episodes] as const];
      }),
    );
  const finalEval = {
    episodes: FINAL_EVAL_EPISODES,
    perSeed: evals.map((e) => {
      const warmResult = e.results.warm as { wins: number; episodes: number };
      const warmCi = wilsonInterval(warmResult.wins, warmResult.episodes);
      return {
        seed: e.seed,
        warm: { wins: warmResult.wins, ...warmCi },
        arms: Object.fromEntries(
          Object.keys(ARMS).flatMap((arm) => {
            const r = e.results[arm];
            if (r === undefined) return [];
            const ci = wilsonInterval(r.wins, r.episodes);
            return [[arm, { wins: r.wins, ...ci, separatesFromWarm: ci.low > warmCi.high }]];
          }),
        ),
      };
    }),
    paired: { arms: [armA, armB], ...pairedDifference(evalRate(armA), evalRate(armB)) },
    rlGain: Object.keys(ARMS).map((arm) => ({
      arm,
      ...pairedDifference(evalRate(arm), evalRate('warm')),
    })),
  };
  const results = {
    workload:
      'generated tiny ALFWorld households (TINY_HOUSEHOLD, 15 steps), 96 held-out games (seed + 1000)',
    budget: BUDGET,
    seeds: SEEDS,
    warmStarts: warm,
    arms,
    paired: { arms: [armA, armB], ...paired },
    rlGain,
    finalEval,
  };
  await writeFile(join(packageDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);

  const first = (arm: (typeof arms)[number]) => arm.validationCurve[0];
  const last = (arm: (typeof arms)[number]) => arm.validationCurve.at(-1);
  const cell = (c: { mean: number; std: number; n: number } | undefined) =>
    c ? `${pct(c.mean)} ± ${pct(c.std)} (n=${c.n})` : '–';
  const seedsOf = (c: { perSeed: number[] } | undefined) =>
    c ? c.perSeed.map(pct).join(' / ') : '–';
  const lines = [
    '| arm | after warm start (iter 0) | after RL (final) | per seed, warm → final (%) |',
    '| --- | --- | --- | --- |',
    ...arms.map(
      (a) =>
        `| ${a.arm} | ${cell(first(a))} | ${cell(last(a))} | ${seedsOf(first(a))} → ${seedsOf(last(a))} |`,
    ),
    '',
    '| iteration | ' +
      arms.map((a) => `${a.arm} held-out success % (mean ± std)`).join(' | ') +
      ' |',
    '| --- | ' + arms.map(() => '---').join(' | ') + ' |',
    ...(arms[0]?.validationCurve ?? []).map(
      (row) =>
        `| ${row.iteration} | ${arms
          .map((a) => cell(a.validationCurve.find((c) => c.iteration === row.iteration)))
          .join(' | ')} |`,
    ),
  ];
  lines.push(
    '',
    '| seed | ' +
      arms.map((a) => `${a.arm} held-out wins per validation`).join(' | ') +
      ` | final ${armA} − ${armB} (points) |`,
    '| --- | ' + arms.map(() => '---').join(' | ') + ' | --- |',
    ...SEEDS.map((seed) => {
      const curves = arms.map((a) => {
        const r = a.perSeed.find((p) => p.seed === seed);
        return r ? r.validation.map((v) => v.wins).join(', ') : '–';
      });
      const d = paired.perSeed.find((p) => p.seed === seed);
      return `| ${seed} | ${curves.join(' | ')} | ${d ? pct(d.diff) : '–'} |`;
    }),
    '',
    `Paired difference of final held-out success, ${armA} − ${armB}: ${pct(paired.mean)} points, 95 % t-interval [${pct(paired.low)}, ${pct(paired.high)}] over ${paired.n} seeds.`,
  );
  lines.push(
    '',
    '| arm | held-out wins after the warm start, all seeds pooled (95 % Wilson) | after RL, pooled | RL gain per seed (points) | mean gain, 95 % t-interval over seeds |',
    '| --- | --- | --- | --- | --- |',
    ...rlGain.map(
      (g) =>
        `| ${g.arm} | ${g.pooledWarm.wins} / ${g.pooledWarm.n} = ${pct(g.pooledWarm.rate)} % (${pct(g.pooledWarm.low)}–${pct(g.pooledWarm.high)}) | ${g.pooledFinal.wins} / ${g.pooledFinal.n} = ${pct(g.pooledFinal.rate)} % (${pct(g.pooledFinal.low)}–${pct(g.pooledFinal.high)}) | ${g.paired.perSeed.map((p) => pct(p.diff)).join(', ')} | ${pct(g.paired.mean)} [${pct(g.paired.low)}, ${pct(g.paired.high)}] |`,
    ),
  );
  for (const a of arms) {
    const sizes = a.perSeed.map((p) => p.meanStepGroupSize).filter((x) => Number.isFinite(x));
    if (sizes.length > 0)
      lines.push(
        '',
        `${a.arm}${ARMS[a.arm]?.name === 'gigpo' ? '' : ' (anchor groups counted in its batches; GRPO does not use them)'}: mean step-group size ${meanStd(sizes).mean.toFixed(2)} steps per anchor state, ${pct(meanStd(a.perSeed.map((p) => p.meanSingletonStepGroupFraction).filter((x) => Number.isFinite(x))).mean)} % of step groups singletons (averaged over iterations and seeds).`,
      );
  }
  if (finalEval.perSeed.length > 0) {
    const ci = (c: { wins: number; n: number; low: number; high: number }) =>
      `${c.wins} / ${c.n} (${pct(c.low)}–${pct(c.high)} %)`;
    lines.push(
      '',
      `Final evaluation on ${FINAL_EVAL_EPISODES} held-out games per seed (the validation's games and more; 95 % Wilson intervals; ✓: the arm's interval lies above the warm start's):`,
      '',
      `| seed | warm start | ${Object.keys(ARMS).join(' | ')} | ${armA} − ${armB} (points) |`,
      `| --- | --- | ${Object.keys(ARMS)
        .map(() => '---')
        .join(' | ')} | --- |`,
      ...finalEval.perSeed.map((p) => {
        const cells = Object.keys(ARMS).map((arm) => {
          const a = p.arms[arm];
          return a === undefined ? '–' : `${ci(a)}${a.separatesFromWarm ? ' ✓' : ''}`;
        });
        const d = finalEval.paired.perSeed.find((x) => x.seed === p.seed);
        return `| ${p.seed} | ${ci(p.warm)} | ${cells.join(' | ')} | ${d ? pct(d.diff) : '–'} |`;
      }),
      '',
      `On these games: ${armA} − ${armB} ${pct(finalEval.paired.mean)} points, 95 % t-interval [${pct(finalEval.paired.low)}, ${pct(finalEval.paired.high)}] over ${finalEval.paired.n} seeds; RL gain over the warm start ${finalEval.rlGain.map((g) => `${g.arm} ${pct(g.mean)} [${pct(g.low)}, ${pct(g.high)}]`).join(', ')}.`,
    );
  }
  const markdown = lines.join('\n');
  await writeFile(join(packageDir, 'results.md'), `${markdown}\n`);
  return { markdown };
}
