/**
 * A run config read back as the demo budget fields it sets, so that a demo's test can hold a
 * runner preset to the demo's default budget in one comparison (the runner cannot read the
 * demos: examples depend on it, not the other way).
 */
import { PRESETS, parseRunConfig, type RunConfig } from '@agentrl/runner';
import type { DemoBudgetBase } from './phases.ts';

/** The budget fields a run config sets (model size and rates, warm start, RL, validation). */
export type PresetBudget = Omit<DemoBudgetBase, 'name' | 'sftStopLoss' | 'sftStopWindow'>;

/** The fields of {@link PresetBudget} in `budget` (a demo's `FULL_BUDGET`). */
export function budgetFields(budget: DemoBudgetBase): PresetBudget {
  return {
    hidden: budget.hidden,
    layers: budget.layers,
    heads: budget.heads,
    demoEpisodes: budget.demoEpisodes,
    sftSteps: budget.sftSteps,
    sftBatch: budget.sftBatch,
    sftLearningRate: budget.sftLearningRate,
    iterations: budget.iterations,
    groups: budget.groups,
    groupSize: budget.groupSize,
    valEpisodes: budget.valEpisodes,
    valEvery: budget.valEvery,
    learningRate: budget.learningRate,
    miniBatchSize: budget.miniBatchSize,
    temperature: budget.temperature,
    valTemperature: budget.valTemperature,
    maxTurns: budget.maxTurns,
    klLossCoef: budget.klLossCoef,
  };
}

/** The same fields as a parsed run config sets them (`parseRunConfig` of a preset). */
export function presetBudget(config: RunConfig): PresetBudget {
  const o = config.model.options as {
    architecture?: { hiddenSize?: number; layers?: number; heads?: number };
    learningRate?: number;
    sftLearningRate?: number;
    klLossCoef?: number;
  };
  return {
    hidden: o.architecture?.hiddenSize ?? Number.NaN,
    layers: o.architecture?.layers ?? Number.NaN,
    heads: o.architecture?.heads ?? Number.NaN,
    demoEpisodes: config.sft.episodes,
    sftSteps: config.sft.steps,
    sftBatch: config.sft.batchSize,
    sftLearningRate: o.sftLearningRate ?? Number.NaN,
    iterations: config.training.iterations,
    groups: config.rollout.batchSize / config.rollout.groupSize,
    groupSize: config.rollout.groupSize,
    valEpisodes: config.validation.episodes,
    valEvery: config.validation.every,
    learningRate: o.learningRate ?? Number.NaN,
    miniBatchSize: config.training.miniBatchSize,
    temperature: config.rollout.temperature,
    valTemperature: config.validation.temperature,
    maxTurns: config.rollout.maxTurns,
    klLossCoef: o.klLossCoef ?? 0,
  };
}

/** The runner's preset `name`, parsed as `agentrl train --preset` reads it. */
export function parsedPreset(name: string): RunConfig {
  const preset = PRESETS[name];
  if (preset === undefined) throw new Error(`the runner has no ${name} preset`);
  return parseRunConfig(preset);
}
