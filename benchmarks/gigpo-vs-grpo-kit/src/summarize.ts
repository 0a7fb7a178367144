/**
 * Reads the per-job JSON files of a benchmark's output folder into its summary: one record per
 * arm and seed of the final evaluation; the paper's Table 1 laid out over them (pooled success
 * with Wilson intervals, per task type, the env's metrics with t-intervals over seeds) and each
 * arm's paired difference against GRPO; each job's wall and CPU seconds; curves as mean ± std
 * over seeds per arm, per-seed values, what RL adds, the final evaluation per seed.
 */
import { existsSync } from 'node:fs';
import { ConfigError } from '@agentrl/core';
import {
  type AlgorithmEntry,
  ARMS,
  BASELINE_ARM,
  type BenchBudget,
  type BenchMetric,
  type Benchmark,
  resolvedAlgorithm,
} from './config.ts';
import type { ValidationPoint } from './job.ts';
import {
  armFile,
  evalEntry,
  evalFile,
  readJsonIfThere,
  recordedAlgorithm,
  seedDir,
  warmFile,
} from './paths.ts';
import {
  type MeanInterval,
  meanStd,
  type PairedDifference,
  pairedDifference,
  tInterval,
  wilsonInterval,
} from './stats.ts';

/** A job's wall and CPU seconds as it recorded them (absent in the two-arm runs' files). */
interface JobSeconds {
  readonly seconds?: number;
  readonly wallSeconds?: number;
  readonly cpuSeconds?: number;
}

/** An arm job's result file (`seed-N/<arm>.json`). */
interface ArmResult extends JobSeconds {
  readonly seed: number;
  readonly arm: string;
  readonly budget?: BenchBudget;
  readonly algorithm?: AlgorithmEntry;
  readonly estimator?: AlgorithmEntry;
  readonly validation: readonly ValidationPoint[];
  readonly train: readonly {
    iteration: number;
    success?: number;
    zeroFraction?: number;
    stepGroupSizeMean?: number;
    stepGroupSingletonFraction?: number;
    /** Share of the step groups of two or more steps whose members all took one action. */
    stepGroupOneActionFraction?: number;
  }[];
}

/** Wins of some episodes. */
interface WinCount {
  readonly wins: number;
  readonly episodes: number;
}

/** One model's entry in an `eval.json`. */
interface EvalResult extends WinCount {
  readonly taskTypes?: Readonly<Record<string, WinCount>>;
  readonly algorithm?: AlgorithmEntry;
  readonly [metric: string]: unknown;
}

/** One seed's `eval` job: wins (and the benchmark's metrics) of the warm start and each arm. */
interface FinalEval extends JobSeconds {
  readonly seed: number;
  readonly episodes: number;
  readonly results: Record<string, EvalResult>;
}

/**
 * One arm on one seed in the final evaluation (`results.json`'s `records`): wins of the held-out
 * episodes, per task type where the benchmark counts them, the env's metrics by name (the WebShop
 * score), the algorithm the arm trained with, and the arm job's wall and CPU seconds.
 */
export interface FinalRecord {
  readonly arm: string;
  readonly seed: number;
  readonly wins: number;
  readonly episodes: number;
  readonly taskTypes?: Readonly<Record<string, WinCount>>;
  readonly algorithm?: AlgorithmEntry;
  readonly wallSeconds?: number;
  readonly cpuSeconds?: number;
  readonly [metric: string]: unknown;
}

/** One job's wall and CPU seconds. */
export interface JobTime {
  readonly seed: number;
  /** `warm`, an arm or `eval`. */
  readonly phase: string;
  readonly wallSeconds: number | undefined;
  readonly cpuSeconds: number | undefined;
}

/** A column of the results table: a task type, one of the env's metrics, or success over all episodes. */
export interface TableColumn {
  /** The task type's or metric's name, or `success`. */
  readonly key: string;
  readonly label: string;
  readonly kind: 'taskType' | 'metric' | 'success';
}

/** A success cell: wins of every seed's episodes pooled, the rate and its 95 % Wilson interval. */
export type PooledSuccess = WinsInterval;

/** One row of the results table: the warm start or an arm, a cell per column. */
export interface TableRow {
  /** `warm` or an arm's name. */
  readonly arm: string;
  readonly label: string;
  /** By column key: pooled success (task types, success) or a mean over seeds (metrics). */
  readonly cells: Readonly<Record<string, PooledSuccess | MeanInterval>>;
  /** Seeds whose final evaluation has this row. */
  readonly seeds: number;
}

/** One arm's paired difference against the baseline in each column, over seeds. */
export interface BaselineRow {
  readonly arm: string;
  readonly label: string;
  readonly cells: Readonly<Record<string, PairedDifference>>;
}

/** The paper's Table 1 laid out over this run's final evaluation. */
export interface ResultsTable {
  readonly columns: readonly TableColumn[];
  readonly rows: readonly TableRow[];
  /** Each arm but the baseline minus the baseline, per seed, in points (absent: no baseline arm). */
  readonly vsBaseline?: { readonly baseline: string; readonly rows: readonly BaselineRow[] };
}

/** Wall and CPU seconds of one kind of job (the warm starts, an arm, the evaluations) over seeds. */
export interface PhaseTime {
  readonly phase: string;
  readonly label: string;
  readonly jobs: number;
  readonly wallSeconds: { mean: number; std: number; n: number };
  readonly cpuSeconds: { mean: number; std: number; n: number };
  readonly cpuTotal: number;
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
  readonly label: string;
  /** The algorithm the arm trained with (as its files record it; the arm's own where none do). */
  readonly algorithm: AlgorithmEntry | undefined;
  /** Held-out success rate at each validation. */
  readonly validationCurve: CurvePoint[];
  readonly trainCurve: { iteration: number; mean: number; std: number; n: number }[];
  readonly perSeed: {
    seed: number;
    validation: readonly ValidationPoint[];
    meanStepGroupSize: number;
    meanSingletonStepGroupFraction: number;
    /** NaN in runs recorded before the trainer counted it. */
    meanOneActionStepGroupFraction: number;
    meanZeroAdvantageFraction: number;
    wallSeconds: number | undefined;
    cpuSeconds: number | undefined;
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

/** One metric of the final evaluation: per seed and model, RL's gain in each arm. */
export interface FinalMetric {
  readonly label: string;
  readonly perSeed: { seed: number; values: Record<string, number> }[];
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
  readonly rlGain: (PairedDifference & { arm: string })[];
  /** The benchmark's metrics, by name (absent when it has none). */
  readonly metrics?: Record<string, FinalMetric>;
  /**
   * How much of the spread of each arm's success minus the baseline's over seeds the evaluation
   * itself makes (the games drawn and the sampling), from the per-game outcomes of the seeds
   * whose evaluations kept them; absent when none did (those run before the outcomes were kept)
   * or there is no baseline arm.
   */
  readonly evalNoise?: EvalNoise[];
}

/**
 * The evaluation's share of the noise in an arm's paired difference against the baseline, in
 * success (a rate): `evalSd`, the root mean over the seeds that kept per-game outcomes
 * (`seedsWithOutcomes`) of the squared standard error of a seed's difference (sd of its
 * game-by-game differences / √episodes); `observedSd`, the sd over all `seeds` of the per-seed
 * differences. What is left, √(observed² − eval²), is the training's.
 */
export interface EvalNoise {
  readonly arm: string;
  readonly baseline: string;
  readonly seeds: number;
  readonly seedsWithOutcomes: number;
  readonly evalSd: number;
  readonly observedSd: number;
}

/** One seed's game-by-game differences `a − b` (outcome strings of equal length), or undefined. */
function gameDifferences(a: unknown, b: unknown): number[] | undefined {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length !== b.length || a.length < 2)
    return undefined;
  return [...a].map((x, i) => Number(x) - Number(b[i]));
}

/**
 * Per arm but the baseline, the evaluation's noise in its difference against the baseline: the
 * spread of the per-seed differences over every seed that scored both, and the evaluation's
 * standard error over those of them that kept both arms' per-game outcomes (an arm with fewer
 * than two seeds, or none with outcomes, is left out).
 */
export function evalNoiseOf(
  evals: readonly Pick<FinalEval, 'seed' | 'results'>[],
  arms: readonly string[],
  baseline: string,
): EvalNoise[] | undefined {
  if (!arms.includes(baseline)) return undefined;
  const success = (r: EvalResult) => r.wins / r.episodes;
  const out: EvalNoise[] = [];
  for (const arm of arms.filter((a) => a !== baseline)) {
    const paired = pairedDifference(
      valuesOf(evals, arm, success),
      valuesOf(evals, baseline, success),
    );
    const withOutcomes = evals.flatMap((e) => {
      const games = gameDifferences(
        evalEntry(e.results, arm)?.outcomes,
        evalEntry(e.results, baseline)?.outcomes,
      );
      return games === undefined ? [] : [games];
    });
    if (paired.perSeed.length < 2 || withOutcomes.length === 0) continue;
    const squaredErrors = withOutcomes.map((d) => meanStd(d).std ** 2 / d.length);
    out.push({
      arm,
      baseline,
      seeds: paired.perSeed.length,
      seedsWithOutcomes: withOutcomes.length,
      evalSd: Math.sqrt(squaredErrors.reduce((x, y) => x + y, 0) / withOutcomes.length),
      observedSd: meanStd(paired.perSeed.map((p) => p.diff)).std,
    });
  }
  return out.length > 0 ? out : undefined;
}

/** Everything `results.json` holds. */
export interface BenchSummary {
  readonly workload: string;
  readonly budget: BenchBudget;
  readonly seeds: readonly number[];
  /** The arms summarized, in the order the run named them. */
  readonly armNames: readonly string[];
  /** One record per arm and seed of the final evaluation. */
  readonly records: readonly FinalRecord[];
  readonly table: ResultsTable;
  /** Every job's wall and CPU seconds, and per kind of job over seeds. */
  readonly jobs: readonly JobTime[];
  readonly times: readonly PhaseTime[];
  readonly warmStarts: Record<string, unknown>[];
  readonly arms: ArmSummary[];
  /** Final validation success of each arm but the baseline minus the baseline's, paired by seed. */
  readonly validationVsBaseline: (PairedDifference & { arm: string; baseline: string })[];
  readonly rlGain: RlGain[];
  readonly finalEval: FinalEvalSummary;
}

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
    meanOneActionStepGroupFraction: finite(r.train.map((t) => t.stepGroupOneActionFraction)),
    meanZeroAdvantageFraction: finite(r.train.map((t) => t.zeroFraction)),
    wallSeconds: r.wallSeconds ?? r.seconds,
    cpuSeconds: r.cpuSeconds,
  }));
  const [recorded] = mine;
  return {
    arm,
    label: ARMS[arm]?.label ?? arm,
    algorithm: recorded === undefined ? ARMS[arm]?.algorithm : recordedAlgorithm(recorded),
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
 * interval clears the warm start's, RL's gain in each arm paired over seeds; the same for each of
 * the benchmark's metrics.
 */
function finalEvalOf(
  evals: readonly FinalEval[],
  episodes: number,
  arms: readonly string[],
  metrics: readonly BenchMetric[],
): FinalEvalSummary {
  const rlGainOfValues = (pick: (r: EvalResult) => unknown) =>
    arms.map((arm) => ({
      arm,
      ...pairedDifference(valuesOf(evals, arm, pick), valuesOf(evals, 'warm', pick)),
    }));
  const perSeed = evals.map((e) => {
    const warmResult = e.results.warm as WinCount;
    const warmCi = wilsonInterval(warmResult.wins, warmResult.episodes);
    return {
      seed: e.seed,
      warm: { wins: warmResult.wins, ...warmCi },
      arms: Object.fromEntries(
        arms.flatMap((arm) => {
          const r = evalEntry(e.results, arm);
          if (r === undefined) return [];
          const ci = wilsonInterval(r.wins, r.episodes);
          return [[arm, { wins: r.wins, ...ci, separatesFromWarm: ci.low > warmCi.high }]];
        }),
      ),
    };
  });
  const metricSummaries = metrics.map((m): [string, FinalMetric] => [
    m.name,
    {
      label: m.label,
      perSeed: evals.map((e) => ({
        seed: e.seed,
        values: Object.fromEntries(
          ['warm', ...arms].flatMap((name) => {
            const x = evalEntry(e.results, name)?.[m.name];
            return typeof x === 'number' ? [[name, x]] : [];
          }),
        ),
      })),
      rlGain: rlGainOfValues((r) => r[m.name]),
    },
  ]);
  const evalNoise = evalNoiseOf(evals, arms, BASELINE_ARM);
  return {
    episodes,
    perSeed,
    rlGain: rlGainOfValues((r) => r.wins / r.episodes),
    ...(metrics.length > 0 ? { metrics: Object.fromEntries(metricSummaries) } : {}),
    ...(evalNoise ? { evalNoise } : {}),
  };
}

/** Per seed, `pick` of the entry `name` (`warm` or an arm) of each evaluation, where it is a number. */
function valuesOf(
  evals: readonly Pick<FinalEval, 'seed' | 'results'>[],
  name: string,
  pick: (r: EvalResult) => unknown,
): Map<number, number> {
  return new Map(
    evals.flatMap((e) => {
      const r = evalEntry(e.results, name);
      const x = r === undefined ? undefined : pick(r);
      return typeof x === 'number' && Number.isFinite(x) ? [[e.seed, x] as const] : [];
    }),
  );
}

/** The table's columns: the benchmark's task types, then its metrics, then success. */
function tableColumns(spec: SummarySpec): TableColumn[] {
  return [
    ...(spec.taskTypes ?? []).map((t) => ({
      key: t.name,
      label: t.label,
      kind: 'taskType' as const,
    })),
    ...(spec.metrics ?? []).map((m) => ({ key: m.name, label: m.label, kind: 'metric' as const })),
    { key: 'success', label: spec.successLabel ?? 'success', kind: 'success' as const },
  ];
}

/** One column's value of a model's entry on one seed: a success rate, or the metric's value. */
function cellValue(column: TableColumn, r: EvalResult): number | undefined {
  if (column.kind === 'success') return r.episodes > 0 ? r.wins / r.episodes : undefined;
  if (column.kind === 'metric') {
    const x = r[column.key];
    return typeof x === 'number' ? x : undefined;
  }
  const c = r.taskTypes?.[column.key];
  return c !== undefined && c.episodes > 0 ? c.wins / c.episodes : undefined;
}

/** The wins a success column counts in a model's entry on one seed. */
function cellCount(column: TableColumn, r: EvalResult): WinCount | undefined {
  return column.kind === 'success' ? r : r.taskTypes?.[column.key];
}

/**
 * The paper's Table 1 over the final evaluation: a row for the warm start and each arm; a success
 * column pools every seed's episodes (Wilson interval), a metric column is the mean over seeds
 * (t-interval); then each arm minus the baseline arm per seed, paired (t-interval).
 */
function resultsTable(
  spec: SummarySpec,
  evals: readonly FinalEval[],
  arms: readonly string[],
): ResultsTable {
  const columns = tableColumns(spec);
  const rowOf = (name: string, label: string): TableRow => {
    const entries = evals.flatMap((e) => {
      const r = evalEntry(e.results, name);
      return r === undefined ? [] : [r];
    });
    const cells: Record<string, PooledSuccess | MeanInterval> = {};
    for (const column of columns) {
      if (column.kind === 'metric') {
        cells[column.key] = tInterval(
          entries.flatMap((r) => {
            const x = cellValue(column, r);
            return x === undefined ? [] : [x];
          }),
        );
        continue;
      }
      const counts = entries.flatMap((r) => {
        const c = cellCount(column, r);
        return c === undefined ? [] : [c];
      });
      const wins = counts.reduce((a, c) => a + c.wins, 0);
      const n = counts.reduce((a, c) => a + c.episodes, 0);
      // No episode of this column (a task type no held-out game drew): no cell.
      if (n === 0) continue;
      cells[column.key] = { wins, ...wilsonInterval(wins, n) };
    }
    return { arm: name, label, cells, seeds: entries.length };
  };
  const rows = [
    rowOf('warm', 'warm start (SFT)'),
    ...arms.map((arm) => rowOf(arm, ARMS[arm]?.label ?? arm)),
  ];
  if (!arms.includes(BASELINE_ARM)) return { columns, rows };
  const baselineRows = arms
    .filter((arm) => arm !== BASELINE_ARM)
    .map((arm) => ({
      arm,
      label: ARMS[arm]?.label ?? arm,
      cells: Object.fromEntries(
        columns.map((column) => {
          const pick = (r: EvalResult) => cellValue(column, r);
          return [
            column.key,
            pairedDifference(valuesOf(evals, arm, pick), valuesOf(evals, BASELINE_ARM, pick)),
          ];
        }),
      ),
    }));
  return { columns, rows, vsBaseline: { baseline: BASELINE_ARM, rows: baselineRows } };
}

/** Every job's seconds, and per kind of job (warm starts, each arm, evaluations) over seeds. */
function timesOf(
  warm: readonly (JobSeconds & { seed?: number })[],
  runs: readonly ArmResult[],
  evals: readonly FinalEval[],
  arms: readonly string[],
): { jobs: JobTime[]; times: PhaseTime[] } {
  const time = (seed: number, phase: string, j: JobSeconds): JobTime => ({
    seed,
    phase,
    wallSeconds: j.wallSeconds ?? j.seconds,
    cpuSeconds: j.cpuSeconds,
  });
  const jobs = [
    ...warm.map((w) => time(w.seed ?? Number.NaN, 'warm', w)),
    ...runs.map((r) => time(r.seed, r.arm, r)),
    ...evals.map((e) => time(e.seed, 'eval', e)),
  ];
  const phases: [string, string][] = [
    ['warm', 'warm start (SFT)'],
    ...arms.map((arm): [string, string] => [arm, ARMS[arm]?.label ?? arm]),
    ['eval', 'final evaluation'],
  ];
  const known = (xs: readonly (number | undefined)[]) =>
    xs.flatMap((x) => (x === undefined ? [] : [x]));
  const times = phases.map(([phase, label]) => {
    const mine = jobs.filter((j) => j.phase === phase);
    const cpu = known(mine.map((j) => j.cpuSeconds));
    return {
      phase,
      label,
      jobs: mine.length,
      wallSeconds: meanStd(known(mine.map((j) => j.wallSeconds))),
      cpuSeconds: meanStd(cpu),
      cpuTotal: cpu.reduce((a, b) => a + b, 0),
    };
  });
  return { jobs, times };
}

/**
 * What the summary needs of a benchmark: its description, metrics, task types and the paper's
 * numbers, and the run's budget.
 */
export interface SummarySpec
  extends Pick<
    Benchmark,
    'metrics' | 'heldOutNoun' | 'taskTypes' | 'successLabel' | 'paper' | 'paperTable'
  > {
  /** The workload in one line, for the run's budget (`Benchmark.workload`). */
  readonly workload: string;
  readonly budget: BenchBudget;
  readonly finalEvalEpisodes: number;
  /** The final evaluations' file stem in each seed's folder (`eval` unless given). */
  readonly evalStem?: string;
}

/**
 * Where each seed's jobs are when a summary reads seeds from several output folders (`from`, in
 * order): the first folder that has the seed's folder (`seed-N`), else the first folder. Folders
 * must not share a seed: a seed run twice would be counted from one of them only, so that is
 * refused.
 */
export function seedFolders(from: string | readonly string[]): (seed: number) => string {
  const folders = typeof from === 'string' ? [from] : [...from];
  if (folders.length === 0) throw new ConfigError('no output folder to read the seeds from');
  return (seed) => {
    const holding = folders.filter((f) => existsSync(seedDir(f, seed)));
    if (holding.length > 1)
      throw new ConfigError(
        `seed ${seed} is in more than one folder (${holding.join(', ')}): a summary counts each seed once, so give folders that do not share seeds`,
      );
    return holding[0] ?? (folders[0] as string);
  };
}

/**
 * Reads the runs of `seeds` and `arms` in `from` (one output folder, or several whose seeds are
 * told apart by {@link seedFolders}) and summarizes them (no files written). The
 * two-arm runs' files (`LEGACY_ARM_NAMES`) are read as the arms they were; an evaluation with
 * another number of episodes than the budget's is left out.
 */
export function readSummary(
  spec: SummarySpec,
  from: string | readonly string[],
  seeds: readonly number[],
  arms: readonly string[],
): BenchSummary {
  const { budget, finalEvalEpisodes } = spec;
  const folderOf = seedFolders(from);
  const metrics = spec.metrics ?? [];
  const runs: ArmResult[] = [];
  const warm: (Record<string, unknown> & JobSeconds)[] = [];
  for (const seed of seeds) {
    const out = folderOf(seed);
    const w = readJsonIfThere<Record<string, unknown>>(warmFile(out, seed));
    if (w !== undefined) warm.push(w);
    for (const arm of arms) {
      const r = readJsonIfThere<ArmResult>(armFile(out, seed, arm));
      if (r !== undefined) runs.push({ ...r, arm });
    }
  }
  const armSummaries = arms.map((arm) =>
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
  const evals = seeds
    .flatMap((seed) => {
      const e = readJsonIfThere<FinalEval>(evalFile(folderOf(seed), seed, spec.evalStem));
      return e === undefined ? [] : [e];
    })
    .filter((e) => e.episodes === finalEvalEpisodes);
  const records: FinalRecord[] = evals.flatMap((e) =>
    arms.flatMap((arm) => {
      const r = evalEntry(e.results, arm);
      if (r === undefined) return [];
      const run = runs.find((x) => x.seed === e.seed && x.arm === arm);
      const { model: _model, algorithm: evaluated, outcomes: _outcomes, ...counts } = r;
      const algorithm =
        evaluated ?? (run === undefined ? resolvedAlgorithm(arm, budget) : recordedAlgorithm(run));
      return [
        {
          arm,
          seed: e.seed,
          ...counts,
          algorithm,
          wallSeconds: run?.wallSeconds ?? run?.seconds,
          cpuSeconds: run?.cpuSeconds,
        },
      ];
    }),
  );
  return {
    workload: spec.workload,
    budget,
    seeds,
    armNames: arms,
    records,
    table: resultsTable(spec, evals, arms),
    ...timesOf(warm, runs, evals, arms),
    warmStarts: warm,
    arms: armSummaries,
    validationVsBaseline: arms.includes(BASELINE_ARM)
      ? arms
          .filter((arm) => arm !== BASELINE_ARM)
          .map((arm) => ({
            arm,
            baseline: BASELINE_ARM,
            ...pairedDifference(finalRates(arm), finalRates(BASELINE_ARM)),
          }))
      : [],
    rlGain: arms.map((arm) => rlGainOf(arm, runs)),
    finalEval: finalEvalOf(evals, finalEvalEpisodes, arms, metrics),
  };
}
