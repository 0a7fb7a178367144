/**
 * What the CPU demos add to the runner's phases (`runPhases` of `@agentrl/runner`, the code
 * `agentrl train` runs): a fresh run directory, worker threads, and a demo's budget as the
 * phases' settings. Each demo keeps its env, prompt, expert, tokenizer and budget, and runs the
 * phases with them.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { Tokenizer } from '@agentrl/core';
import { type CausalLM, defaultWorkerCount, type ThreadWork } from '@agentrl/model-tfjs';
import {
  afterRlLabel,
  type CurvePoint,
  type HeadlineRow,
  type PhaseClock,
  type PhaseSettings,
  type PhasesResult,
  phaseClock,
  phaseSettingsSchema,
  type SftStopRule,
  sftStopRule as settingsStopRule,
} from '@agentrl/runner';
import { CPU_RECIPE } from './model.ts';

export {
  AFTER_WARM_START_LABEL,
  BEFORE_LABEL,
  type CurvePoint,
  type PhaseClock,
  phaseClock,
  validationCurve,
  writeResults,
} from '@agentrl/runner';

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

/** The label of the third row: held-out success after GiGPO. */
export const afterGigpoLabel = (iterations: number) => afterRlLabel('gigpo', iterations);

/**
 * The budget's stopping rule for the warm start as `runSft` takes it, or undefined where the
 * budget has none (`sftStopLoss` 0 or absent: every step of `sftSteps` is taken).
 */
export function sftStopRule(
  b: Pick<DemoBudgetBase, 'sftStopLoss' | 'sftStopWindow'>,
): SftStopRule | undefined {
  return settingsStopRule({
    stopLoss: b.sftStopLoss,
    stopWindow: b.sftStopWindow ?? CPU_RECIPE.sftStopWindow,
  });
}

/** What a demo's budget does not say about its phases. */
export interface DemoPhaseParts {
  readonly seed: number;
  readonly runDir: string;
  /** Most tokens of one response. */
  readonly maxNewTokens: number;
  /** Reward penalty of an invalid action (0: none). */
  readonly invalidActionPenalty: number;
  /** GiGPO's similarity grouping threshold (absent: exact anchors). */
  readonly similarityThreshold?: number;
  /** Passes over an iteration's rows (absent: the trainer's default). */
  readonly ppoEpochs?: number;
}

/**
 * A demo's budget as the runner's phase settings: the expert warm start (demonstrations on env
 * seeds from `seed + 5000`, the budget's steps, batch and stopping rule), GiGPO
 * (`mean_std_norm`, γ 0.95) on groups of the budget's size with zero-advantage rows dropped,
 * held-out validations every `valEvery` iterations, and the headline on the validation's
 * episodes and temperature (so the first and last validations are its rows).
 */
export function demoSettings(b: DemoBudgetBase, parts: DemoPhaseParts): PhaseSettings {
  return phaseSettingsSchema.parse({
    seed: parts.seed,
    runDir: parts.runDir,
    algorithm: {
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        gamma: 0.95,
        invalidActionPenalty: parts.invalidActionPenalty,
        ...(parts.similarityThreshold !== undefined
          ? { similarityThreshold: parts.similarityThreshold }
          : {}),
      },
    },
    rollout: {
      batchSize: b.groups * b.groupSize,
      groupSize: b.groupSize,
      maxTurns: b.maxTurns,
      maxNewTokens: parts.maxNewTokens,
      temperature: b.temperature,
    },
    training: {
      iterations: b.iterations,
      miniBatchSize: b.miniBatchSize,
      ...(parts.ppoEpochs !== undefined ? { ppoEpochs: parts.ppoEpochs } : {}),
      dropZeroAdvantageRows: true,
      checkpointEvery: 5,
      keepCheckpoints: 1,
    },
    validation: { episodes: b.valEpisodes, every: b.valEvery, temperature: b.valTemperature },
    sft: {
      episodes: b.demoEpisodes,
      steps: b.sftSteps,
      batchSize: b.sftBatch,
      seed: parts.seed + 5000,
      ...((b.sftStopLoss ?? 0) > 0 ? { stopLoss: b.sftStopLoss } : {}),
      stopWindow: b.sftStopWindow ?? CPU_RECIPE.sftStopWindow,
    },
    warmStart: { source: 'expert' },
    finalEval: { enabled: true },
  });
}

/** Options of {@link demoResult}. */
export interface DemoResultOptions {
  readonly phases: PhasesResult;
  readonly model: CausalLM;
  readonly tokenizer: Tokenizer;
  readonly workers: number;
}

/** What every demo measured, from the runner's phases and the demo's model. */
export function demoResult(options: DemoResultOptions): DemoResultBase & { curve: CurvePoint[] } {
  const { phases, model } = options;
  return {
    workers: options.workers,
    threadWork: threadWork(model),
    headline: phases.headline,
    curve: phases.curve,
    reportPath: phases.reportPath,
    seconds: phases.seconds,
    vocabSize: options.tokenizer.vocabSize,
    parameters: model.numParameters(),
  };
}
