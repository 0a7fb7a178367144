/**
 * Reads the per-job JSON files of a benchmark's output folder into its summary: curves as mean ±
 * std over seeds per arm, per-seed values, paired differences, what RL adds, the final evaluation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { wilsonInterval } from '@agentrl/runner';
import { ARMS, type BenchBudget, type BenchMetric, type Benchmark } from './config.ts';
import type { ValidationPoint } from './job.ts';
import { meanStd, type PairedDifference, pairedDifference } from './stats.ts';

/** An arm job's result file (`seed-N/<arm>.json`). */
interface ArmResult {
  readonly seed: number;
  readonly arm: string;
  readonly validation: readonly ValidationPoint[];
  readonly train: readonly {
    iteration: number;
    success?: number;
    zeroFraction?: number;
    stepGroupSizeMean?: number;
    stepGroupSingletonFraction?: number;
  }[];
  readonly seconds: number;
}

/** One seed's `eval` job: wins (and the benchmark's metrics) of the warm start and each arm. */
interface FinalEval {
  readonly seed: number;
  readonly episodes: number;
  readonly results: Record<string, { wins: number; episodes: number; [metric: string]: unknown }>;
}

/** Wins with their 95 % Wilson interval. */
export interface WinsInterval {
  readonly wins: number;
  readonly rate: number;
  readonly low: number;
  readonly high: number;
  readonly n: number;
}

/** A curve point over seeds: mean ± sample sd, and each seed's value. */
export interface CurvePoint {
  readonly iteration: number;
  readonly mean: number;
  readonly std: number;
  readonly n: number;
  readonly perSeed: number[];
}

/** One arm over the seeds. */
export interface ArmSummary {
  readonly arm: string;
  readonly estimator: (typeof ARMS)[string] | undefined;
  /** Held-out success rate at each validation. */
  readonly validationCurve: CurvePoint[];
  readonly trainCurve: { iteration: number; mean: number; std: number; n: number }[];
  readonly perSeed: {
    seed: number;
    validation: readonly ValidationPoint[];
    meanStepGroupSize: number;
    meanSingletonStepGroupFraction: number;
    meanZeroAdvantageFraction: number;
    seconds: number;
  }[];
  /** The benchmark's metrics at each validation, by metric name. */
  readonly metricCurves?: Record<string, CurvePoint[]>;
}

/** What RL adds in an arm on the validations: final against iteration 0, paired and pooled. */
export interface RlGain {
  readonly arm: string;
  readonly paired: PairedDifference;
  readonly pooledWarm: WinsInterval;
  readonly pooledFinal: WinsInterval;
}

/** One metric of the final evaluation: per seed and model, the arms' paired difference, RL's gain. */
export interface FinalMetric {
  readonly label: string;
  readonly perSeed: { seed: number; values: Record<string, number> }[];
  readonly paired: PairedDifference & { arms: string[] };
  readonly rlGain: (PairedDifference & { arm: string })[];
}

/** The final evaluation on more held-out episodes (the `eval` jobs). */
export interface FinalEvalSummary {
  readonly episodes: number;
  readonly perSeed: {
    seed: number;
    warm: WinsInterval;
    arms: Record<string, WinsInterval & { separatesFromWarm: boolean }>;
  }[];
  readonly paired: PairedDifference & { arms: string[] };
  readonly rlGain: (PairedDifference & { arm: string })[];
  /** The benchmark's metrics, by name (absent when it has none). */
  readonly metrics?: Record<string, FinalMetric>;
}

/** Everything `results.json` holds. */
export interface BenchSummary {
  readonly workload: string;
  readonly budget: BenchBudget;
  readonly seeds: readonly number[];
  readonly warmStarts: Record<string, unknown>[];
  readonly arms: ArmSummary[];
  readonly paired: PairedDifference & { arms: string[] };
  readonly rlGain: RlGain[];
  readonly finalEval: FinalEvalSummary;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** The curve of `value` over the validations of `runs` (one per seed). */
function curveOf(runs: readonly ArmResult[], value: (v: ValidationPoint) => number | undefined) {
  const iterations = [...new Set(runs.flatMap((r) => r.validation.map((v) => v.iteration)))].sort(
    (a, b) => a - b,
  );
  return iterations.map((iteration) => {
    const values = runs.flatMap((r) =>
      r.validation
        .filter((v) => v.iteration === iteration)
        .flatMap((v) => {
          const x = value(v);
          return x === undefined ? [] : [x];
        }),
    );
    return { iteration, ...meanStd(values), perSeed: values };
  });
}

const finite = (xs: readonly (number | undefined)[]) =>
  meanStd(xs.flatMap((x) => (x === undefined ? [] : [x]))).mean;

function armSummary(
  arm: string,
  mine: readonly ArmResult[],
  iterations: number,
  metrics: readonly BenchMetric[],
): ArmSummary {
  const trainIterations = [...new Set(mine.flatMap((r) => r.train.map((t) => t.iteration)))]
    .filter((i) => i < iterations)
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
    meanStepGroupSize: finite(r.train.map((t) => t.stepGroupSizeMean)),
    meanSingletonStepGroupFraction: finite(r.train.map((t) => t.stepGroupSingletonFraction)),
    meanZeroAdvantageFraction: finite(r.train.map((t) => t.zeroFraction)),
    seconds: r.seconds,
  }));
  return {
    arm,
    estimator: ARMS[arm],
    validationCurve: curveOf(mine, (v) => v.wins / v.episodes),
    trainCurve,
    perSeed,
    ...(metrics.length > 0
      ? {
          metricCurves: Object.fromEntries(
            metrics.map((m) => [m.name, curveOf(mine, (v) => v[m.name])]),
          ),
        }
      : {}),
  };
}

/**
 * What RL adds in each arm on the validations: final against the warm start (iteration 0) of the
 * same seed, paired over seeds, and the held-out episodes of all seeds pooled.
 */
function rlGainOf(arm: string, runs: readonly ArmResult[]): RlGain {
  const mine = runs.filter((r) => r.arm === arm && r.validation.length > 1);
  const first = (r: ArmResult) => r.validation[0] as ValidationPoint;
  const final = (r: ArmResult) => r.validation.at(-1) as ValidationPoint;
  const at = (pick: typeof first) =>
    new Map(mine.map((r) => [r.seed, pick(r).wins / pick(r).episodes] as const));
  const pooled = (pick: typeof first) => {
    const wins = mine.reduce((a, r) => a + pick(r).wins, 0);
    const episodes = mine.reduce((a, r) => a + pick(r).episodes, 0);
    return { wins, ...wilsonInterval(wins, episodes) };
  };
  return {
    arm,
    paired: pairedDifference(at(final), at(first)),
    pooledWarm: pooled(first),
    pooledFinal: pooled(final),
  };
}

/**
 * The final evaluation: per seed the warm start and each arm with Wilson intervals, whether RL's
 * interval clears the warm start's, the arms' paired difference over seeds and RL's gain in each
 * arm; the same for each of the benchmark's metrics.
 */
function finalEvalOf(
  evals: readonly FinalEval[],
  episodes: number,
  metrics: readonly BenchMetric[],
): FinalEvalSummary {
  const arms = Object.keys(ARMS);
  const [armA, armB] = arms as [string, string];
  const valuesOf = (name: string, pick: (r: { wins: number; episodes: number }) => unknown) =>
    new Map(
      evals.flatMap((e) => {
        const r = e.results[name];
        const x = r === undefined ? undefined : pick(r);
        return typeof x === 'number' ? [[e.seed, x] as const] : [];
      }),
    );
  const compare = (pick: (r: { wins: number; episodes: number }) => unknown) => ({
    paired: { arms: [armA, armB], ...pairedDifference(valuesOf(armA, pick), valuesOf(armB, pick)) },
    rlGain: arms.map((arm) => ({
      arm,
      ...pairedDifference(valuesOf(arm, pick), valuesOf('warm', pick)),
    })),
  });
  const perSeed = evals.map((e) => {
    const warmResult = e.results.warm as { wins: number; episodes: number };
    const warmCi = wilsonInterval(warmResult.wins, warmResult.episodes);
    return {
      seed: e.seed,
      warm: { wins: warmResult.wins, ...warmCi },
      arms: Object.fromEntries(
        arms.flatMap((arm) => {
          const r = e.results[arm];
          if (r === undefined) return [];
          const ci = wilsonInterval(r.wins, r.episodes);
          return [[arm, { wins: r.wins, ...ci, separatesFromWarm: ci.low > warmCi.high }]];
        }),
      ),
    };
  });
  const metricSummaries = metrics.map((m): [string, FinalMetric] => {
    const pick = (r: Record<string, unknown>) => r[m.name];
    return [
      m.name,
      {
        label: m.label,
        perSeed: evals.map((e) => ({
          seed: e.seed,
          values: Object.fromEntries(
            Object.entries(e.results).flatMap(([name, r]) =>
              typeof r[m.name] === 'number' ? [[name, r[m.name] as number]] : [],
            ),
          ),
        })),
        ...compare(pick),
      },
    ];
  });
  return {
    episodes,
    perSeed,
    ...compare((r) => r.wins / r.episodes),
    ...(metrics.length > 0 ? { metrics: Object.fromEntries(metricSummaries) } : {}),
  };
}

/** What the summary needs of a benchmark: its description and metrics, and the run's budget. */
export interface SummarySpec extends Pick<Benchmark, 'workload' | 'metrics' | 'heldOutNoun'> {
  readonly budget: BenchBudget;
  readonly finalEvalEpisodes: number;
}

/** Reads the runs of `seeds` in `out` and summarizes them (no files written). */
export function readSummary(
  spec: SummarySpec,
  out: string,
  seeds: readonly number[],
): BenchSummary {
  const { budget, finalEvalEpisodes } = spec;
  const metrics = spec.metrics ?? [];
  const runs: ArmResult[] = [];
  const warm: Record<string, unknown>[] = [];
  for (const seed of seeds) {
    const w = join(out, `seed-${seed}`, 'warm', 'warm.json');
    if (existsSync(w)) warm.push(readJson<Record<string, unknown>>(w));
    for (const arm of Object.keys(ARMS)) {
      const file = join(out, `seed-${seed}`, `${arm}.json`);
      if (existsSync(file)) runs.push(readJson<ArmResult>(file));
    }
  }
  const arms = Object.keys(ARMS).map((arm) =>
    armSummary(
      arm,
      runs.filter((r) => r.arm === arm),
      budget.iterations,
      metrics,
    ),
  );
  const finalRates = (arm: string) =>
    new Map(
      runs
        .filter((r) => r.arm === arm && r.validation.length > 0)
        .map((r) => {
          const v = r.validation.at(-1) as ValidationPoint;
          return [r.seed, v.wins / v.episodes] as const;
        }),
    );
  const [armA, armB] = Object.keys(ARMS) as [string, string];
  const evals = seeds
    .map((seed) => join(out, `seed-${seed}`, 'eval.json'))
    .filter((f) => existsSync(f))
    .map((f) => readJson<FinalEval>(f))
    .filter((e) => e.episodes === finalEvalEpisodes);
  return {
    workload: spec.workload,
    budget,
    seeds,
    warmStarts: warm,
    arms,
    paired: { arms: [armA, armB], ...pairedDifference(finalRates(armA), finalRates(armB)) },
    rlGain: Object.keys(ARMS).map((arm) => rlGainOf(arm, runs)),
    finalEval: finalEvalOf(evals, finalEvalEpisodes, metrics),
  };
}
