/**
 * What a {@link Trainer} is given: the model, the environments, the estimator and the run
 * config's sections it reads, and the check that refuses any other key by name.
 */
import type { PPOOptions, ResolvedPPOOptions } from '@agentrl/algorithms';
import {
  ConfigError,
  type Critic,
  closestName,
  type RolloutEngine,
  type StepBatch,
  type Tokenizer,
  type TrainablePolicy,
  unknownKeyMessage,
} from '@agentrl/core';
import { z } from 'zod';
import { type TrainerSettingsInput, trainerSettingsSchema } from './config.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { EnvSpec } from './rollout.ts';

/**
 * Advantage estimator: one advantage per row of the batch (from `@agentrl/algorithms`). An
 * estimator that needs a critic (PPO with GAE, `createEstimator('ppo', …)`) carries its options in
 * `critic`; the trainer then trains a critic and computes per-token advantages itself, and the
 * function gives each row's score.
 */
export type AdvantageEstimator = ((batch: StepBatch) => ArrayLike<number>) & {
  readonly critic?: CriticEstimatorSettings;
};

/** What a critic estimator tells the trainer: its options as given and resolved. */
export interface CriticEstimatorSettings {
  readonly options: PPOOptions;
  readonly resolved: ResolvedPPOOptions;
}

/** What the trainer reports while it works (the CLI draws progress from these). */
export type TrainerEvent =
  | { readonly type: 'phase'; readonly iteration: number; readonly phase: TrainerPhase }
  | { readonly type: 'iteration'; readonly iteration: number; readonly metrics: Metrics }
  | { readonly type: 'checkpoint'; readonly iteration: number; readonly dir: string }
  | { readonly type: 'resumed'; readonly iteration: number };

export type TrainerPhase = 'validate' | 'rollout' | 'advantage' | 'update' | 'checkpoint';

/**
 * Options of a {@link Trainer}: the model, the environments and the estimator, plus the sections
 * of a run config that the trainer reads (`seed`, `runDir`, `rollout`, `training`, `validation`,
 * `report`, `env.stepTimeoutMs`; see `trainerSettingsSchema`). The config schema is the one place
 * their defaults are written (the paper's run where one exists): a parsed `RunConfig` can be spread
 * in as it is, and a section or key left out gets the default a config file would.
 */
export interface TrainerOptions extends TrainerSettingsInput {
  readonly policy: TrainablePolicy;
  readonly tokenizer: Tokenizer;
  readonly trainEnv: EnvSpec;
  /** Validation environment (a different split); default: `trainEnv`. */
  readonly valEnv?: EnvSpec;
  readonly estimator: AdvantageEstimator;
  /**
   * The engine that generates training rollouts when `rollout.engine.name` is not `tfjs` (the
   * CLI creates it from the config). The trainer syncs the policy's weights to it before each
   * rollout and replaces its log-probs with the policy's own (`scoreResponses`).
   */
  readonly rolloutEngine?: RolloutEngine;
  /**
   * The critic of an estimator that needs one (PPO with GAE). Default: `policy.createCritic`,
   * called once before the first update; the trainer saves it in each checkpoint's `critic/`.
   */
  readonly critic?: Critic;
  readonly logger?: Logger;
  readonly onEvent?: (event: TrainerEvent) => void;
}

/** Every key of {@link TrainerOptions} (the type makes the list complete). */
const TRAINER_OPTION_KEYS = Object.keys({
  policy: true,
  tokenizer: true,
  trainEnv: true,
  valEnv: true,
  estimator: true,
  rolloutEngine: true,
  critic: true,
  logger: true,
  onEvent: true,
  seed: true,
  runDir: true,
  rollout: true,
  training: true,
  validation: true,
  report: true,
  env: true,
} satisfies Record<keyof TrainerOptions, true>);

/**
 * A key the trainer does not take: named with the section it belongs to when it is a setting of
 * one (`iterations` → `training.iterations`), else with the closest key.
 */
export function checkTrainerKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if (TRAINER_OPTION_KEYS.includes(key)) continue;
    const section = (['rollout', 'training', 'validation', 'report', 'env'] as const).find(
      (name) => key in sectionShape(name),
    );
    const closest = closestName(key, TRAINER_OPTION_KEYS);
    throw new ConfigError(
      section !== undefined
        ? `unknown key "${key}" in the trainer options: it is a setting of the ${section} section; pass ${section}: { ${key} }`
        : unknownKeyMessage(key, 'the trainer options', TRAINER_OPTION_KEYS),
      { details: { field: key, ...(closest !== undefined ? { closest } : {}) } },
    );
  }
}

function sectionShape(name: 'rollout' | 'training' | 'validation' | 'report' | 'env'): object {
  let schema: unknown = trainerSettingsSchema.shape[name];
  while (schema instanceof z.ZodDefault || schema instanceof z.ZodOptional)
    schema = schema.unwrap();
  return schema instanceof z.ZodObject ? schema.shape : {};
}
