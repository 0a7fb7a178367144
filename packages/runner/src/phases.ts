/**
 * The phases of a training run, in order: a held-out evaluation of the model as it starts, the
 * warm start (supervised fine-tuning on the env's expert demonstrations, or a checkpoint's
 * weights), RL with held-out validations, and the headline: held-out success before the warm
 * start, after it and after RL, each with its Wilson interval and the env's own metrics
 * (`headline.json`, `timings.json`, `report.html`). `agentrl train` runs them from a config's
 * `warmStart` and `finalEval` sections; the CPU demos run the same code with their own env parts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ConfigError,
  isAgentRLError,
  type PromptContext,
  type RolloutEngine,
  type Tokenizer,
  type TrainablePolicy,
} from '@agentrl/core';
import type { z } from 'zod';
import { policyAgent, rolloutAgentOptions } from './agent.ts';
import {
  algorithmSchema,
  finalEvalSchema,
  formatResponse,
  sftSchema,
  trainerSettingsSchema,
  warmStartSchema,
} from './config.ts';
import { createEstimator } from './estimators.ts';
import { type EvaluationResult, envMetricValues, evaluateAgent } from './evaluate.ts';
import { writeJsonAtomic } from './files.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { ConsoleProgress } from './progress.ts';
import { type HeadlineRow, writeReport } from './report.ts';
import type { EnvSpec } from './rollout.ts';
import {
  collectDemonstrations,
  type Expert,
  meanLossOfLast,
  runSft,
  type SftStopRule,
} from './sft.ts';
import { wilsonInterval } from './stats.ts';
import {
  type AdvantageEstimator,
  latestCheckpointDir,
  Trainer,
  type TrainerEvent,
  type TrainingSummary,
} from './trainer.ts';

/** The label of the first row: held-out success of a fresh model. */
export const BEFORE_LABEL = 'before the warm start (random init)';
/** The label of the second row: held-out success right after the expert warm start. */
export const AFTER_WARM_START_LABEL = 'after the warm start (SFT on expert demos)';
/** The label of the second row when the warm start loaded a checkpoint. */
export const AFTER_CHECKPOINT_LABEL = 'after the warm start (checkpoint)';

const ALGORITHM_NAMES: Readonly<Record<string, string>> = {
  gigpo: 'GiGPO',
  grpo: 'GRPO',
  rloo: 'RLOO',
  ppo: 'PPO',
};

/** The label of the last row: held-out success after `iterations` of RL with `algorithm`. */
export const afterRlLabel = (algorithm: string, iterations: number): string =>
  `after ${ALGORITHM_NAMES[algorithm] ?? algorithm} (${iterations} iteration${iterations === 1 ? '' : 's'})`;

/** The settings the phases read: the trainer's, the algorithm, the warm start, the headline. */
export const phaseSettingsSchema = trainerSettingsSchema.extend({
  algorithm: algorithmSchema.default({ name: 'gigpo', options: {} }),
  sft: sftSchema.default(sftSchema.parse({})),
  warmStart: warmStartSchema.default(warmStartSchema.parse({})),
  finalEval: finalEvalSchema.default(finalEvalSchema.parse({})),
});

/** The phases' settings after parsing; a parsed run config is one. */
export type PhaseSettings = z.output<typeof phaseSettingsSchema>;
/** The phases' settings as given (every section with a default may be left out). */
export type PhaseSettingsInput = z.input<typeof phaseSettingsSchema>;

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
 * The `sft` section's stopping rule as `runSft` takes it, or undefined where it has none
 * (`stopLoss` absent or 0: every step of `steps` is taken).
 */
export function sftStopRule(sft: {
  readonly stopLoss?: number | undefined;
  readonly stopWindow: number;
}): SftStopRule | undefined {
  const meanLoss = sft.stopLoss ?? 0;
  if (meanLoss <= 0) return undefined;
  return { meanLoss, window: sft.stopWindow };
}

/** The episodes and temperature of the headline's held-out evaluations. */
export function headlineEvaluation(s: Pick<PhaseSettings, 'finalEval' | 'validation'>): {
  episodes: number;
  temperature: number;
} {
  return {
    episodes: s.finalEval.episodes ?? s.validation.episodes,
    temperature: s.finalEval.temperature ?? s.validation.temperature,
  };
}

/**
 * Whether the trainer's validations are the headline's evaluations (same episodes, same
 * temperature, one right after the warm start and one after the last update): then the headline
 * reads them instead of playing the same games twice.
 */
function validationsAreHeadline(s: PhaseSettings): boolean {
  const h = headlineEvaluation(s);
  return (
    s.validation.every > 0 &&
    h.episodes === s.validation.episodes &&
    h.temperature === s.validation.temperature
  );
}

/** The env's own metrics of a metrics record under `prefix`, by label (a headline row's). */
export function envMetricsOf(
  metrics: Metrics,
  prefix: string,
  env: EnvSpec,
): Record<string, number> | undefined {
  const values = envMetricValues(metrics, prefix, env.metrics ?? []);
  return values.length === 0
    ? undefined
    : Object.fromEntries(values.map((v) => [v.label, v.value]));
}

/** A headline row of held-out metrics under `prefix` (`val`, `before`), or none without them. */
export function headlineRow(
  label: string,
  metrics: Metrics | undefined,
  prefix: string,
  rowMetrics: ((m: Metrics, prefix: string) => Record<string, number> | undefined) | undefined,
): HeadlineRow[] {
  const wins = metrics?.[`${prefix}/wins`];
  const episodes = metrics?.[`${prefix}/episodes`];
  if (metrics === undefined || wins === undefined || episodes === undefined) return [];
  const extra = rowMetrics?.(metrics, prefix);
  return [{ label, wins, episodes, ...(extra ? { metrics: extra } : {}) }];
}

/** One point of the held-out curve; iteration 0 is right after the warm start. */
export interface CurvePoint {
  readonly iteration: number;
  readonly wins: number;
  readonly episodes: number;
}

/** The held-out wins at every validation of a run's `metrics.jsonl` lines. */
export function validationCurve(metrics: readonly Metrics[]): CurvePoint[] {
  return metrics
    .filter((m) => m['val/wins'] !== undefined)
    .map((m) => ({
      iteration: m.iteration as number,
      wins: m['val/wins'] as number,
      episodes: m['val/episodes'] as number,
    }));
}

/**
 * The headline as a table: each row's wins, rate and Wilson 95 % interval, then `suffix(row)`
 * (the env's metrics by default: `WebShop score 61.3`).
 */
export function formatHeadline(
  heading: string,
  rows: readonly HeadlineRow[],
  suffix: (row: HeadlineRow) => string = metricsSuffix,
): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [`${heading}:`];
  for (const row of rows) {
    const ci = wilsonInterval(row.wins, row.episodes);
    lines.push(
      `  ${row.label.padEnd(44)} ${String(row.wins).padStart(3)}/${row.episodes}  ${pct(ci.rate).padStart(6)}  [${pct(ci.low)}, ${pct(ci.high)}]${suffix(row)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function metricsSuffix(row: HeadlineRow): string {
  return Object.entries(row.metrics ?? {})
    .map(([k, v]) => `  ${k} ${v.toFixed(2)}`)
    .join('');
}

/** Writes `headline.json`, `timings.json` and `report.html`; returns the report's path. */
export async function writeResults(
  runDir: string,
  results: { title?: string; headline: readonly HeadlineRow[]; seconds: Record<string, number> },
): Promise<string> {
  await writeJsonAtomic(join(runDir, 'headline.json'), results.headline);
  await writeJsonAtomic(join(runDir, 'timings.json'), results.seconds);
  return writeReport(runDir, {
    ...(results.title !== undefined ? { title: results.title } : {}),
    headline: results.headline,
  });
}

/** What the warm start did. */
export interface WarmStartResult {
  readonly source: PhaseSettings['warmStart']['source'];
  /** Expert episodes played and won (expert source only). */
  readonly expert?: { readonly episodes: number; readonly wins: number; readonly steps: number };
  /** SFT steps taken: `sft.steps`, or fewer where the stopping rule ended the warm start. */
  readonly steps: number;
  /** Whether the stopping rule ended it before `sft.steps`. */
  readonly stopped: boolean;
  /** Mean loss of the last `sft.stopWindow` steps (NaN where fewer were taken). */
  readonly meanLoss: number;
}

/** The folder of a checkpoint's weights: its `model/` folder where it has one. */
export function checkpointModelDir(dir: string): string {
  return existsSync(join(dir, 'model')) ? join(dir, 'model') : dir;
}

/** Options of {@link runPhases}. */
export interface PhasesOptions {
  readonly settings: PhaseSettings;
  readonly policy: TrainablePolicy;
  readonly tokenizer: Tokenizer;
  readonly trainEnv: EnvSpec;
  /** Held-out env of the evaluations and validations (default: the training env). */
  readonly valEnv?: EnvSpec;
  /** The env the expert demonstrations are played on (default: the training env). */
  readonly demoEnv?: EnvSpec;
  /** The expert of an `expert` warm start (default: the training env's). */
  readonly expert?: Expert;
  /** The response an expert's action is taught as (default: the `sft` section's template). */
  readonly formatResponse?: (action: string, context: PromptContext) => string;
  /** Default: the `algorithm` section's. */
  readonly estimator?: AdvantageEstimator;
  readonly rolloutEngine?: RolloutEngine;
  /** The model's positions: a longer demonstration is refused before any SFT step. */
  readonly maxSequenceTokens?: number;
  readonly progress: ConsoleProgress;
  /** A line of progress: each phase's name and counts. */
  readonly say: (line: string) => void;
  readonly logger?: Logger;
  readonly onEvent?: (event: TrainerEvent) => void;
  /** Continue from the run folder's latest checkpoint (the warm start is not redone). */
  readonly resume?: boolean;
  /** The first row's label (default: {@link BEFORE_LABEL}). */
  readonly beforeLabel?: string;
  /** A headline row's env metrics (default: the held-out env's, by label). */
  readonly rowMetrics?: (m: Metrics, prefix: string) => Record<string, number> | undefined;
  /** Laps `evalBefore`, `warmStart`, `rl` (default: a clock of its own). */
  readonly clock?: PhaseClock;
  /** The report's title. */
  readonly title?: string;
}

/** What {@link runPhases} measured. */
export interface PhasesResult {
  /** The held-out rows: before the warm start, after it (where there was one), after RL. */
  readonly headline: HeadlineRow[];
  /** The evaluation before the warm start (absent on a resumed run or without `finalEval`). */
  readonly before?: EvaluationResult;
  readonly warmStart?: WarmStartResult;
  readonly summary: TrainingSummary;
  /** Every line of `metrics.jsonl`. */
  readonly metrics: Metrics[];
  readonly curve: CurvePoint[];
  readonly seconds: Record<string, number>;
  /** `report.html`. */
  readonly reportPath: string;
  /** `headline.json` (absent without `finalEval`). */
  readonly headlinePath?: string;
}

/** What a run folder keeps of its phases, so that a resumed run's headline has every row. */
interface SavedPhases {
  readonly before?: HeadlineRow[];
  readonly afterWarmStart?: HeadlineRow[];
  readonly warmStart?: WarmStartResult;
}

const PHASES_FILE = 'phases.json';

function readSavedPhases(runDir: string): SavedPhases {
  const path = join(runDir, PHASES_FILE);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as SavedPhases) : {};
}

/**
 * Runs a training run's phases: the held-out evaluation before the warm start (with
 * `finalEval.enabled`), the warm start of `warmStart.source`, RL with the trainer, and the
 * headline with its results files. A resumed run (with a checkpoint) goes straight to RL and
 * takes its earlier rows from the run folder.
 */
export async function runPhases(options: PhasesOptions): Promise<PhasesResult> {
  const s = options.settings;
  const { policy, tokenizer, say, progress } = options;
  const clock = options.clock ?? phaseClock();
  const valEnv = options.valEnv ?? options.trainEnv;
  const rowMetrics = options.rowMetrics ?? ((m, prefix) => envMetricsOf(m, prefix, valEnv));
  const headlineOn = s.finalEval.enabled;
  const evaluation = headlineEvaluation(s);
  const reuse = validationsAreHeadline(s);
  const resuming = options.resume === true && (await latestCheckpointDir(s.runDir)) !== undefined;
  const saved: SavedPhases = resuming ? readSavedPhases(s.runDir) : {};
  const total = (headlineOn ? 2 : 0) + (s.warmStart.source === 'none' ? 0 : 1) + 1;
  // A resumed run starts at RL: the phases before it are in the run folder.
  let phase = resuming ? total - (headlineOn ? 2 : 1) : 0;
  const announce = (text: string) => {
    phase++;
    say(`phase ${phase}/${total}: ${text}`);
  };

  const heldOut = async (prefix: string, what: string): Promise<EvaluationResult> => {
    const task = progress.task(`held-out evaluation ${what}`, 1);
    const result = await evaluateAgent({
      env: valEnv,
      agent: policyAgent(policy, tokenizer, rolloutAgentOptions(s.rollout, evaluation.temperature)),
      episodes: evaluation.episodes,
      seed: s.seed,
      maxTurns: s.rollout.maxTurns,
      stepTimeoutMs: s.env.stepTimeoutMs,
      prefix,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    task.tick(`${result.success.wins}/${result.success.n} won`);
    task.done();
    return result;
  };

  let before: EvaluationResult | undefined;
  let beforeRows = saved.before ?? [];
  const beforeLabel =
    options.beforeLabel ?? (s.warmStart.source === 'none' ? 'before RL' : BEFORE_LABEL);
  if (headlineOn && !resuming) {
    announce(`held-out evaluation before the warm start (${evaluation.episodes} episodes)`);
    before = await heldOut('before', 'before the warm start');
    beforeRows = headlineRow(beforeLabel, before.metrics, 'before', rowMetrics);
  }
  clock.lap('evalBefore');

  let warm: WarmStartResult | undefined = saved.warmStart;
  if (!resuming && s.warmStart.source !== 'none') warm = await warmStart(options, announce);
  clock.lap('warmStart');

  let afterWarmRows = saved.afterWarmStart ?? [];
  const warmLabel =
    s.warmStart.source === 'checkpoint' ? AFTER_CHECKPOINT_LABEL : AFTER_WARM_START_LABEL;
  if (headlineOn && !reuse && !resuming && s.warmStart.source !== 'none') {
    const r = await heldOut('warm', 'after the warm start');
    afterWarmRows = headlineRow(warmLabel, r.metrics, 'warm', rowMetrics);
  }
  if (!resuming && (headlineOn || warm !== undefined))
    await writeJsonAtomic(join(s.runDir, PHASES_FILE), {
      before: beforeRows,
      afterWarmStart: afterWarmRows,
      ...(warm ? { warmStart: warm } : {}),
    } satisfies SavedPhases);

  announce(
    `RL (${ALGORITHM_NAMES[s.algorithm.name] ?? s.algorithm.name}, ${s.training.iterations} iterations of ${s.rollout.batchSize / s.rollout.groupSize} groups × ${s.rollout.groupSize})`,
  );
  const trainer = new Trainer({
    policy,
    tokenizer,
    trainEnv: options.trainEnv,
    ...(options.valEnv ? { valEnv: options.valEnv } : {}),
    estimator: options.estimator ?? createEstimator(s.algorithm.name, s.algorithm.options),
    seed: s.seed,
    runDir: s.runDir,
    rollout: s.rollout,
    training: s.training,
    validation: s.validation,
    report: s.report,
    env: s.env,
    ...(options.rolloutEngine ? { rolloutEngine: options.rolloutEngine } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    onEvent: (e) => {
      progress.onEvent(e);
      options.onEvent?.(e);
    },
  });
  let summary: TrainingSummary;
  try {
    summary = await trainer.run({ resume: options.resume === true });
  } finally {
    progress.stop();
  }
  const metrics = readFileSync(trainer.metricsPath, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Metrics);
  clock.lap('rl');

  const afterLabel = afterRlLabel(s.algorithm.name, s.training.iterations);
  let afterRows: HeadlineRow[] = [];
  if (headlineOn && reuse) {
    if (s.warmStart.source !== 'none')
      afterWarmRows = headlineRow(
        warmLabel,
        metrics.find((m) => m['val/wins'] !== undefined && m.iteration === 0),
        'val',
        rowMetrics,
      );
    afterRows = headlineRow(afterLabel, summary.finalMetrics, 'val', rowMetrics);
  } else if (headlineOn) {
    announce(`final held-out evaluation (${evaluation.episodes} episodes)`);
    const r = await heldOut('final', 'after RL');
    afterRows = headlineRow(afterLabel, r.metrics, 'final', rowMetrics);
  }
  if (headlineOn && reuse) announce('final held-out evaluation (the last validation)');
  const headline = [...beforeRows, ...afterWarmRows, ...afterRows];
  const title = options.title !== undefined ? { title: options.title } : {};
  let reportPath: string;
  let headlinePath: string | undefined;
  if (headlineOn) {
    reportPath = await writeResults(s.runDir, { ...title, headline, seconds: clock.seconds });
    headlinePath = join(s.runDir, 'headline.json');
  } else reportPath = await writeReport(s.runDir, title);
  return {
    headline,
    ...(before ? { before } : {}),
    ...(warm ? { warmStart: warm } : {}),
    summary,
    metrics,
    curve: validationCurve(metrics),
    seconds: clock.seconds,
    reportPath,
    ...(headlinePath ? { headlinePath } : {}),
  };
}

/**
 * The warm start of `warmStart.source`: SFT on the expert's won episodes (the `sft` section's
 * episodes, steps, batch and stopping rule; the losses to `sft-loss.json`), or a checkpoint's
 * weights loaded into the policy.
 */
async function warmStart(
  options: PhasesOptions,
  announce: (text: string) => void,
): Promise<WarmStartResult> {
  const s = options.settings;
  const { policy } = options;
  if (s.warmStart.source === 'checkpoint') {
    const dir = s.warmStart.checkpoint as string;
    announce(`warm start from the checkpoint ${dir}`);
    try {
      await policy.load(checkpointModelDir(dir));
    } catch (error) {
      if (isAgentRLError(error)) throw error;
      throw new ConfigError(
        `warmStart.checkpoint ${dir}: its weights do not fit the model this config builds (${(error as Error).message.split('\n')[0]}); give a checkpoint written by a run of the same model section, e.g. <run>/sft/model or <run>/checkpoints/iter-NNNNNN`,
        { details: { field: 'warmStart.checkpoint', value: dir }, cause: error },
      );
    }
    return { source: 'checkpoint', steps: 0, stopped: false, meanLoss: Number.NaN };
  }
  const expert = options.expert ?? options.trainEnv.expert;
  if (expert === undefined)
    throw new ConfigError(
      'warmStart.source is "expert" but the env module exports no expert: set warmStart.source to "checkpoint" with warmStart.checkpoint (e.g. a folder `agentrl sft --demos FILE` wrote), or to "none"',
      { details: { field: 'warmStart.source', value: 'expert' } },
    );
  announce(
    `warm start: ${s.sft.episodes} expert episodes, then up to ${s.sft.steps} SFT steps of ${s.sft.batchSize}`,
  );
  const demos = await collectDemonstrations({
    env: options.demoEnv ?? options.trainEnv,
    expert,
    episodes: s.sft.episodes,
    seed: s.sft.seed,
    maxTurns: s.rollout.maxTurns,
    formatResponse: options.formatResponse ?? ((a) => formatResponse(s.sft, a)),
  });
  options.say(
    `expert: won ${demos.wins}/${demos.episodes} episodes, ${demos.demonstrations.length} demonstration steps`,
  );
  const stopWhen = sftStopRule(s.sft);
  const task = options.progress.task('warm start', s.sft.steps);
  const losses: number[] = [];
  const history = await runSft({
    policy,
    tokenizer: options.tokenizer,
    demonstrations: demos.demonstrations,
    steps: s.sft.steps,
    batchSize: s.sft.batchSize,
    seed: s.seed,
    ...(stopWhen ? { stopWhen } : {}),
    ...(s.rollout.maxPromptTokens !== undefined
      ? { maxPromptTokens: s.rollout.maxPromptTokens }
      : {}),
    ...(options.maxSequenceTokens !== undefined
      ? { maxSequenceTokens: options.maxSequenceTokens }
      : {}),
    onStep: (_, m) => {
      losses.push(m.loss ?? Number.NaN);
      task.tick(`loss ${(m.loss ?? Number.NaN).toFixed(3)}`);
    },
  });
  task.done();
  await writeJsonAtomic(join(s.runDir, 'sft-loss.json'), losses);
  const result: WarmStartResult = {
    source: 'expert',
    expert: {
      episodes: demos.episodes,
      wins: demos.wins,
      steps: demos.demonstrations.length,
    },
    steps: history.length,
    stopped: history.length < s.sft.steps,
    meanLoss: meanLossOfLast(history, s.sft.stopWindow),
  };
  options.say(
    `warm start: ${result.steps} steps${result.stopped ? ` (stopped: mean loss of the last ${s.sft.stopWindow} steps ${result.meanLoss.toFixed(3)}, at most ${s.sft.stopLoss})` : ''}`,
  );
  return result;
}
