/**
 * @agentrl/core — the contracts every agentrl package plugs into.
 */
export type { AgentResponse, RolloutAgent } from './agent.ts';
export { closestName, editDistance } from './closest.ts';
export type {
  ActionParser,
  ActionParserContext,
  EnvInfo,
  HistoryEntry,
  Observation,
  ParsedAction,
  PromptContext,
  PromptTemplate,
  ResetOptions,
  ResetResult,
  StepResult,
  TextEnv,
} from './env.ts';
export {
  AgentRLError,
  type AgentRLErrorOptions,
  ConfigError,
  DataError,
  EnvClosedError,
  EnvFinishedError,
  EnvNotResetError,
  type ErrorCode,
  InvalidInputError,
  isAgentRLError,
} from './errors.ts';
export { EpisodeLifecycle, type EpisodePhase } from './lifecycle.ts';
export {
  checkOptionKeys,
  type OptionSpec,
  type OptionsSchema,
  unknownKeyMessage,
} from './options.ts';
export type {
  ChatMessage,
  Critic,
  CriticOptions,
  CriticTrainBatch,
  FinishReason,
  GenerationResult,
  Policy,
  ResponseScores,
  SamplingOptions,
  SftBatch,
  Tokenizer,
  TrainablePolicy,
  TrainBatch,
} from './policy.ts';
export {
  type EnvRegistration,
  type EpisodeMetricSpec,
  getEnvRegistration,
  listEnvs,
  makeEnv,
  registerEnv,
  unregisterEnv,
} from './registry.ts';
export { createRng, Rng, type RngState } from './rng.ts';
export {
  assertWeightsVersion,
  type LogProbMismatch,
  logProbMismatch,
  policyRolloutEngine,
  type RolloutEngine,
  type RolloutResult,
  type WeightSnapshot,
  WeightSyncError,
} from './rollout-engine.ts';
export { dropArgsSeparator } from './script-args.ts';
export {
  type StepBatch,
  type StepRecord,
  stepBatchFromRecords,
  type Trajectory,
  trajectoriesFromRecords,
} from './trajectory.ts';
