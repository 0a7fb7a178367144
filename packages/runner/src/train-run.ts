/**
 * What `agentrl train` does once its config is checked and its model is built: the run's phases
 * (`runPhases`: the held-out evaluation before the warm start, the warm start of
 * `warmStart.source`, RL, the headline of `finalEval`), their progress on stderr, and on stdout
 * the checkpoints, the headline table and where the results are.
 */
import type { RolloutEngine, Tokenizer, TrainablePolicy } from '@agentrl/core';
import type { RunConfig } from './config.ts';
import type { Logger } from './logger.ts';
import { formatHeadline, headlineEvaluation, type PhasesResult, runPhases } from './phases.ts';
import { createConsoleProgress } from './progress.ts';
import type { EnvSpec } from './rollout.ts';
import type { AdvantageEstimator } from './trainer.ts';

/** The parts of a run `agentrl train` has built from its config. */
export interface TrainRunParts {
  readonly policy: TrainablePolicy;
  readonly tokenizer: Tokenizer;
  readonly envs: { readonly train: EnvSpec; readonly val: EnvSpec };
  readonly estimator: AdvantageEstimator;
  readonly rolloutEngine?: RolloutEngine | undefined;
  readonly logger: Logger;
  /** What the model module said of the model (`maxPositions` bounds a demonstration). */
  readonly info?: Readonly<Record<string, unknown>> | undefined;
  readonly resume: boolean;
}

/** Where the run writes. */
export interface TrainRunIO {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WriteStream;
}

function pct(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** Runs the phases of `config` with the built parts; returns what they measured. */
export async function trainRun(
  config: RunConfig,
  parts: TrainRunParts,
  io: TrainRunIO,
): Promise<PhasesResult> {
  if (
    config.warmStart.source === 'none' &&
    config.model.path === undefined &&
    config.model.module?.endsWith('tfjs-fresh') === true
  )
    parts.logger.warn(
      'warmStart.source is "none" and the model is a fresh one (tfjs-fresh, no model.path): it seldom wins a game, so the group advantages stay 0 and RL learns nothing; warm-start it from the env\'s expert with --set warmStart.source=expert (the CPU presets do), or from a checkpoint with --set warmStart.source=checkpoint --set warmStart.checkpoint=DIR',
    );
  const progress = createConsoleProgress(config.training.iterations, io.stderr);
  const maxPositions = parts.info?.maxPositions;
  let result: PhasesResult;
  try {
    result = await runPhases({
      settings: config,
      policy: parts.policy,
      tokenizer: parts.tokenizer,
      trainEnv: parts.envs.train,
      valEnv: parts.envs.val,
      estimator: parts.estimator,
      ...(parts.rolloutEngine !== undefined ? { rolloutEngine: parts.rolloutEngine } : {}),
      ...(typeof maxPositions === 'number' ? { maxSequenceTokens: maxPositions } : {}),
      progress,
      say: (line) => io.stderr.write(`${line}\n`),
      logger: parts.logger,
      resume: parts.resume,
      ...(config.model.path !== undefined ? { beforeLabel: 'before the warm start' } : {}),
      onEvent: (e) => {
        if (e.type === 'checkpoint')
          io.stdout.write(`checkpoint ${e.iteration + 1} written to ${e.dir}\n`);
      },
    });
  } finally {
    progress.stop();
  }
  if (result.headlinePath !== undefined) {
    const { episodes } = headlineEvaluation(config);
    io.stdout.write(
      `\n${formatHeadline(`Held-out success (${config.env.id}, ${episodes} episodes, 95% Wilson interval)`, result.headline)}headline: ${result.headlinePath}\n`,
    );
  }
  const v = result.summary.finalMetrics?.['val/success'];
  io.stdout.write(
    `${v !== undefined ? `final validation success ${pct(v)}\n` : ''}report: ${result.reportPath}\n`,
  );
  return result;
}
