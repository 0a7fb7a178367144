/**
 * The phases every CPU demo runs in the same order: a fresh run directory, worker threads, the
 * held-out evaluation before the warm start, the supervised warm start on expert demonstrations,
 * GiGPO with held-out validations, and the results (`headline.json`, `timings.json`,
 * `report.html`). Each demo keeps its env, prompt, expert and budget and calls these.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tokenizer } from '@agentrl/core';
import { type CausalLM, defaultWorkerCount, type ThreadWork } from '@agentrl/model-tfjs';
import {
  type ConsoleProgress,
  createEstimator,
  type Demonstration,
  type EnvSpec,
  type EvaluationResult,
  evaluateAgent,
  type HeadlineRow,
  meanLossOfLast,
  policyAgent,
  runSft,
  type SftStopRule,
  Trainer,
  type TrainerOptions,
  type TrainingSummary,
  writeJsonAtomic,
  writeReport,
} from '@agentrl/runner';
import { CPU_RECIPE } from './model.ts';

/** The budget fields every demo has; each demo's budget adds its own. */
export interface DemoBudgetBase {
  readonly name: string;
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly demoEpisodes: number;
  /** Warm-start steps; with a stopping rule (`sftStopLoss`), the most steps. */
  readonly sftSteps: number;
  /**
   * Stop the warm start once the mean loss of its last `sftStopWindow` steps is at or below this
   * (`runSft`'s `stopWhen`); absent or 0: take all `sftSteps`.
   */
  readonly sftStopLoss?: number;
  /** Steps that mean is taken over (absent: `CPU_RECIPE`'s). */
  readonly sftStopWindow?: number;
  readonly sftBatch: number;
  readonly sftLearningRate: number;
  readonly iterations: number;
  readonly groups: number;
  readonly groupSize: number;
  readonly valEpisodes: number;
  readonly valEvery: number;
  readonly learningRate: number;
  /** Rows per PPO mini-batch (one optimizer step each); the kept rows of an iteration make several. */
  readonly miniBatchSize: number;
  /** Sampling temperature of the RL rollouts. */
  readonly temperature: number;
  /** Sampling temperature of every held-out evaluation. */
  readonly valTemperature: number;
  readonly maxTurns: number;
  /** Weight of the KL penalty to the warm start in the RL loss (0: none). */
  readonly klLossCoef: number;
}

/** Options of a demo's `runDemo`. */
export interface DemoOptions<B> {
  readonly runDir: string;
  readonly seed?: number;
  readonly budget?: B;
  /** Progress goes here (default stderr); pass a stream that discards for quiet runs. */
  readonly progress?: NodeJS.WriteStream;
  /**
   * Worker threads beside the main thread, each holding a copy of the weights (model-tfjs
   * `startWorkers`): generation, scoring and train steps split across them. Default: one per
   * extra core (`defaultWorkerCount`); 0 runs everything on the main thread. A run is repeatable
   * for a given seed and worker count.
   */
  readonly workers?: number;
}

/** What every demo measured; each demo's result adds its own. */
export interface DemoResultBase {
  /** Worker threads the run used beside the main thread. */
  readonly workers: number;
  /** Work each thread did (main thread first): generated rows, micro-batches, scored sequences. */
  readonly threadWork: ThreadWork[];
  readonly headline: HeadlineRow[];
  readonly reportPath: string;
  readonly seconds: Record<string, number>;
  readonly vocabSize: number;
  readonly parameters: number;
}

/** The start of a run: its budget, seed, progress stream and phase clock. */
export interface DemoRun<B> {
  readonly budget: B;
  readonly seed: number;
  readonly stream: NodeJS.WriteStream;
  /** Writes a line of progress. */
  say(text: string): void;
  readonly clock: PhaseClock;
}

/** Starts a run: resolves its options and empties (or creates) its run directory. */
export async function startRun<B>(options: DemoOptions<B>, defaultBudget: B): Promise<DemoRun<B>> {
  const stream = options.progress ?? process.stderr;
  const clock = phaseClock();
  await rm(options.runDir, { recursive: true, force: true });
  await mkdir(options.runDir, { recursive: true });
  return {
    budget: options.budget ?? defaultBudget,
    seed: options.seed ?? 0,
    stream,
    say: (text) => stream.write(`${text}\n`),
    clock,
  };
}

/** `N thread(s)` of a run with `workers` workers beside the main thread. */
export const threadsText = (workers: number): string =>
  `${workers + 1} thread${workers === 0 ? '' : 's'}`;

/** Wall and CPU seconds per phase, filled by `lap`. */
export interface PhaseClock {
  readonly seconds: Record<string, number>;
  /** Ends the phase `name` (started at the previous lap) and starts the next. */
  lap(name: string): void;
}

/**
 * A clock of wall seconds (`name`), process CPU seconds (`nameCpu`) and, on Node 23.9+, the main
 * thread's own CPU seconds (`nameMainCpu`): with worker threads, the process's CPU time over the
 * main thread's is the number of cores the phase kept busy on average.
 */
export function phaseClock(): PhaseClock {
  const seconds: Record<string, number> = {};
  const threadCpu = () => {
    const u = process.threadCpuUsage?.();
    return u === undefined ? undefined : u.user + u.system;
  };
  let t0 = performance.now();
  let cpu0 = process.cpuUsage();
  let main0 = threadCpu();
  return {
    seconds,
    lap(name) {
      seconds[name] = Math.round((performance.now() - t0) / 100) / 10;
      const cpu = process.cpuUsage(cpu0);
      seconds[`${name}Cpu`] = Math.round((cpu.user + cpu.system) / 1e5) / 10;
      const main = threadCpu();
      if (main !== undefined && main0 !== undefined)
        seconds[`${name}MainCpu`] = Math.round((main - main0) / 1e5) / 10;
      main0 = main;
      t0 = performance.now();
      cpu0 = process.cpuUsage();
    },
  };
}

/**
 * Runs `body` with `requested` worker threads beside the main thread, each holding a copy of the
 * weights (model-tfjs `startWorkers`: generation, scoring and train steps split across them), and
 * stops them afterwards, whatever happens. Default: one per extra core (`defaultWorkerCount`); 0
 * runs everything on the main thread. A run is repeatable for a given seed and worker count.
 */
export async function withWorkers<T>(
  model: CausalLM,
  requested: number | undefined,
  body: (workers: number) => Promise<T>,
): Promise<T> {
  const workers = requested ?? defaultWorkerCount(model.backend);
  await model.startWorkers(workers);
  try {
    return await body(workers);
  } finally {
    await model.stopWorkers();
  }
}

/** Work each thread did (main thread first): generated rows, micro-batches, scored sequences. */
export function threadWork(model: CausalLM): ThreadWork[] {
  return (model.workerPool?.work ?? []).map((w) => ({ ...w }));
}

/** Options of {@link evaluateBefore}. */
export interface BeforeOptions {
  readonly env: EnvSpec;
  readonly policy: TrainerOptions['policy'];
  readonly tokenizer: Tokenizer;
  readonly budget: DemoBudgetBase;
  readonly seed: number;
  readonly progress: ConsoleProgress;
  /** Most tokens of one response. */
  readonly maxNewTokens: number;
  /** What is evaluated, e.g. `held-out games`. */
  readonly what: string;
  /** What a win is called in the progress line, e.g. `won`. */
  readonly won: string;
}

/** The fresh model's held-out evaluation (metrics prefixed `before/`). */
export async function evaluateBefore(options: BeforeOptions): Promise<EvaluationResult> {
  const b = options.budget;
  const task = options.progress.task(`${options.what} before the warm start`, 1);
  const before = await evaluateAgent({
    env: options.env,
    agent: policyAgent(options.policy, options.tokenizer, {
      sampling: { maxNewTokens: options.maxNewTokens, temperature: b.valTemperature },
    }),
    episodes: b.valEpisodes,
    seed: options.seed,
    maxTurns: b.maxTurns,
    prefix: 'before',
  });
  task.tick(`${before.success.wins}/${before.success.n} ${options.won}`);
  task.done();
  return before;
}

/** The first headline row: the fresh model's held-out wins. */
export function beforeRow(before: EvaluationResult, metrics?: Record<string, number>): HeadlineRow {
  return {
    label: BEFORE_LABEL,
    wins: before.success.wins,
    episodes: before.success.n,
    ...(metrics ? { metrics } : {}),
  };
}

/** Options of {@link warmStart}. */
export interface WarmStartOptions {
  readonly policy: TrainerOptions['policy'];
  readonly tokenizer: Tokenizer;
  readonly demonstrations: readonly Demonstration[];
  readonly budget: DemoBudgetBase;
  readonly seed: number;
  readonly runDir: string;
  readonly progress: ConsoleProgress;
}

/** What {@link warmStart} did. */
export interface WarmStartResult {
  /** Steps taken: `sftSteps`, or fewer where the stopping rule ended the warm start. */
  readonly steps: number;
  /** Whether the stopping rule ended it before `sftSteps`. */
  readonly stopped: boolean;
  /** Mean loss of the last `sftStopWindow` steps (NaN where fewer were taken). */
  readonly meanLoss: number;
}

/** Steps the stopping rule averages the loss over: the budget's, else the recipe's. */
function stopWindow(b: Pick<DemoBudgetBase, 'sftStopWindow'>): number {
  return b.sftStopWindow ?? CPU_RECIPE.sftStopWindow;
}

/**
 * The budget's stopping rule for the warm start as `runSft` takes it, or undefined where the
 * budget has none (`sftStopLoss` 0 or absent: every step of `sftSteps` is taken).
 */
export function sftStopRule(
  b: Pick<DemoBudgetBase, 'sftStopLoss' | 'sftStopWindow'>,
): SftStopRule | undefined {
  const meanLoss = b.sftStopLoss ?? 0;
  if (meanLoss <= 0) return undefined;
  return { meanLoss, window: stopWindow(b) };
}

/**
 * The supervised warm start on the expert's demonstrations, stopped early by the budget's stopping
 * rule where it has one; the losses go to `sft-loss.json` (one per step taken).
 */
export async function warmStart(options: WarmStartOptions): Promise<WarmStartResult> {
  const { budget: b, progress } = options;
  const stopWhen = sftStopRule(b);
  const sftTask = progress.task('warm start', b.sftSteps);
  const sftLosses: number[] = [];
  const history = await runSft({
    policy: options.policy,
    tokenizer: options.tokenizer,
    demonstrations: [...options.demonstrations],
    steps: b.sftSteps,
    batchSize: b.sftBatch,
    seed: options.seed,
    ...(stopWhen ? { stopWhen } : {}),
    onStep: (_, m) => {
      sftLosses.push(m.loss ?? Number.NaN);
      sftTask.tick(`loss ${(m.loss ?? Number.NaN).toFixed(3)}`);
    },
  });
  sftTask.done();
  await writeJsonAtomic(join(options.runDir, 'sft-loss.json'), sftLosses);
  return {
    steps: history.length,
    stopped: history.length < b.sftSteps,
    meanLoss: meanLossOfLast(history, stopWindow(b)),
  };
}

/** Options of {@link runGigpo}. */
export interface GigpoOptions {
  readonly policy: TrainerOptions['policy'];
  readonly tokenizer: Tokenizer;
  readonly trainEnv: EnvSpec;
  /** Held-out env of the validations (default: the training env). */
  readonly valEnv?: EnvSpec;
  readonly budget: DemoBudgetBase;
  readonly seed: number;
  readonly runDir: string;
  readonly progress: ConsoleProgress;
  /** Most tokens of one response. */
  readonly maxNewTokens: number;
  /** Reward penalty of an invalid action (0: none). */
  readonly invalidActionPenalty: number;
  /** GiGPO's similarity grouping threshold (absent: exact anchors). */
  readonly similarityThreshold?: number;
  /** Passes over an iteration's rows (absent: the trainer's default). */
  readonly ppoEpochs?: number;
}

/** What {@link runGigpo} returns: the trainer's summary and every line of `metrics.jsonl`. */
export interface GigpoRun {
  readonly summary: TrainingSummary;
  readonly metrics: Record<string, number>[];
}

/**
 * GiGPO (`mean_std_norm`, γ 0.95) with the trainer of `@agentrl/runner`: groups of the budget's
 * size, zero-advantage rows dropped, held-out validations every `valEvery` iterations.
 */
export async function runGigpo(options: GigpoOptions): Promise<GigpoRun> {
  const b = options.budget;
  const trainer = new Trainer({
    policy: options.policy,
    tokenizer: options.tokenizer,
    trainEnv: options.trainEnv,
    ...(options.valEnv ? { valEnv: options.valEnv } : {}),
    estimator: createEstimator('gigpo', {
      mode: 'mean_std_norm',
      gamma: 0.95,
      invalidActionPenalty: options.invalidActionPenalty,
      ...(options.similarityThreshold !== undefined
        ? { similarityThreshold: options.similarityThreshold }
        : {}),
    }),
    runDir: options.runDir,
    seed: options.seed,
    rollout: {
      batchSize: b.groups * b.groupSize,
      groupSize: b.groupSize,
      maxTurns: b.maxTurns,
      maxNewTokens: options.maxNewTokens,
      temperature: b.temperature,
    },
    training: {
      iterations: b.iterations,
      miniBatchSize: b.miniBatchSize,
      ...(options.ppoEpochs !== undefined ? { ppoEpochs: options.ppoEpochs } : {}),
      dropZeroAdvantageRows: true,
      checkpointEvery: 5,
      keepCheckpoints: 1,
    },
    validation: { episodes: b.valEpisodes, every: b.valEvery, temperature: b.valTemperature },
    onEvent: options.progress.onEvent,
  });
  const summary = await trainer.run();
  options.progress.stop();
  const metrics = readFileSync(trainer.metricsPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
  return { summary, metrics };
}

/** The label of the first row: the fresh model's held-out success. */
export const BEFORE_LABEL = 'before the warm start (random init)';
/** The label of the second row: held-out success right after the warm start. */
export const AFTER_WARM_START_LABEL = 'after the warm start (SFT on expert demos)';
/** The label of the third row: held-out success after GiGPO. */
export const afterGigpoLabel = (iterations: number) => `after GiGPO (${iterations} iterations)`;

/**
 * The validations to report after the warm start and after RL: the first validation (iteration 0,
 * right after the warm start) and the final one, each with its label.
 */
export function validationsToReport(
  run: GigpoRun,
  iterations: number,
): { label: string; metrics: Record<string, number> | undefined }[] {
  return [
    {
      label: AFTER_WARM_START_LABEL,
      metrics: run.metrics.find((m) => m['val/wins'] !== undefined),
    },
    { label: afterGigpoLabel(iterations), metrics: run.summary.finalMetrics },
  ];
}

/** A headline row of a validation's wins, or none where it did not validate. */
export function validationRow(
  label: string,
  m: Record<string, number> | undefined,
  metrics?: (m: Record<string, number>) => Record<string, number>,
): HeadlineRow[] {
  if (m?.['val/wins'] === undefined) return [];
  return [
    {
      label,
      wins: m['val/wins'] as number,
      episodes: m['val/episodes'] as number,
      ...(metrics ? { metrics: metrics(m) } : {}),
    },
  ];
}

/** One point of the held-out curve; iteration 0 is right after the warm start. */
export interface CurvePoint {
  readonly iteration: number;
  readonly wins: number;
  readonly episodes: number;
}

/** The held-out wins at every validation of the run. */
export function validationCurve(run: GigpoRun): CurvePoint[] {
  return run.metrics
    .filter((m) => m['val/wins'] !== undefined)
    .map((m) => ({
      iteration: m.iteration as number,
      wins: m['val/wins'] as number,
      episodes: m['val/episodes'] as number,
    }));
}

/** Options of {@link finishRun}. */
export interface FinishOptions {
  readonly runDir: string;
  /** The report's title. */
  readonly title: string;
  readonly headline: HeadlineRow[];
  readonly run: GigpoRun;
  readonly clock: PhaseClock;
  readonly model: CausalLM;
  readonly tokenizer: Tokenizer;
  readonly workers: number;
}

/**
 * Writes the results (`headline.json`, `timings.json`, `report.html`) and returns what every demo
 * measured, with the held-out curve.
 */
export async function finishRun(
  options: FinishOptions,
): Promise<DemoResultBase & { curve: CurvePoint[] }> {
  const { headline, clock, model } = options;
  const reportPath = await writeResults(options.runDir, {
    title: options.title,
    headline,
    seconds: clock.seconds,
  });
  return {
    workers: options.workers,
    threadWork: threadWork(model),
    headline,
    curve: validationCurve(options.run),
    reportPath,
    seconds: clock.seconds,
    vocabSize: options.tokenizer.vocabSize,
    parameters: model.numParameters(),
  };
}

/** Writes `headline.json`, `timings.json` and `report.html`; returns the report's path. */
export async function writeResults(
  runDir: string,
  results: { title: string; headline: HeadlineRow[]; seconds: Record<string, number> },
): Promise<string> {
  await writeJsonAtomic(join(runDir, 'headline.json'), results.headline);
  await writeJsonAtomic(join(runDir, 'timings.json'), results.seconds);
  return writeReport(runDir, { title: results.title, headline: results.headline });
}
