/**
 * @agentrl/runner — grouped rollouts, the GiGPO / GRPO / RLOO / PPO trainer, evaluation, run reports
 * and the `agentrl` CLI.
 */

// The model contract lives in @agentrl/core; re-exported for existing imports.
export type { ResponseScores, SftBatch, TrainablePolicy, TrainBatch } from '@agentrl/core';
// The OpenAI-compatible client lives in @agentrl/model-openai; re-exported for existing imports.
export { OpenAICompatibleAgent, type OpenAICompatibleOptions } from '@agentrl/model-openai';
export {
  type AgentResponse,
  type PolicyAgentOptions,
  policyAgent,
  type RolloutAgent,
} from './agent.ts';
export { main } from './cli.ts';
export {
  applyOverride,
  mergeConfig,
  parseRunConfig,
  type RunConfig,
  type RunConfigInput,
  readConfigFile,
  runConfigSchema,
  type TrainerSettings,
  type TrainerSettingsInput,
  trainerSettingsSchema,
} from './config.ts';
export { createEstimator, ESTIMATOR_NAMES, type EstimatorName } from './estimators.ts';
export {
  type EnvMetricValue,
  type EvaluateOptions,
  type EvaluationResult,
  envMetricValues,
  evaluateAgent,
} from './evaluate.ts';
export { writeFileAtomic, writeJsonAtomic } from './files.ts';
export { type Logger, silentLogger } from './logger.ts';
export {
  averageMetrics,
  episodeMetrics,
  type Metrics,
  policyShiftMetrics,
  sampledNegLogProb,
  stepGroupMetrics,
} from './metrics.ts';
export {
  AFTER_CHECKPOINT_LABEL,
  AFTER_WARM_START_LABEL,
  afterRlLabel,
  BEFORE_LABEL,
  type CurvePoint,
  checkpointModelDir,
  envMetricsOf,
  formatHeadline,
  headlineEvaluation,
  headlineRow,
  type PhaseClock,
  type PhaseSettings,
  type PhaseSettingsInput,
  type PhasesOptions,
  type PhasesResult,
  phaseClock,
  phaseSettingsSchema,
  runPhases,
  sftStopRule,
  validationCurve,
  type WarmStartResult,
  writeResults,
} from './phases.ts';
export {
  type CreatedModel,
  type CreateModel,
  loadEnvSpecs,
  loadModel,
  type ModelContext,
} from './plugins.ts';
export { PRESETS } from './presets.ts';
export { type ConsoleProgress, createConsoleProgress } from './progress.ts';
export {
  type ChartSeries,
  type HeadlineRow,
  lineChart,
  niceTicks,
  renderChart,
  renderReport,
  writeReport,
} from './report.ts';
export {
  type OverlayRun,
  recordedArm,
  renderOverlayReport,
  writeOverlayReport,
} from './report-overlay.ts';
export {
  EnvPool,
  type EnvSpec,
  type EpisodeSummary,
  episodeMetricValues,
  type RolloutOptions,
  type RolloutResult,
  resetSeedFor,
} from './rollout.ts';
export { hashFolder, packageVersions, writeRunInfo } from './run-info.ts';
export type { SampleStep, SampleTrajectory } from './samples.ts';
export { type ServeHandle, type ServeOptions, startServe } from './serve.ts';
export {
  type CollectOptions,
  collectDemonstrations,
  type Demonstration,
  type Expert,
  meanLossOfLast,
  runSft,
  SFT_STOP_WINDOW,
  type SftOptions,
  type SftStopRule,
  tokenizeDemonstrations,
} from './sft.ts';
export { mean, summary, wilsonInterval } from './stats.ts';
export {
  type AdvantageEstimator,
  CRITIC_DIR,
  type CriticEstimatorSettings,
  latestCheckpointDir,
  Trainer,
  type TrainerEvent,
  type TrainerOptions,
  type TrainerPhase,
  type TrainingSummary,
} from './trainer.ts';
