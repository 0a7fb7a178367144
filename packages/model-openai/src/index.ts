/**
 * @agentrl/model-openai — OpenAI-compatible endpoints as a text-level `RolloutAgent` (the
 * `@agentrl/core` contract) for scoring prompting baselines, and as a token-level
 * `RolloutEngine` with weight sync for training.
 */

export {
  OPENAI_ENGINE_OPTIONS,
  OpenAICompletionsEngine,
  type OpenAICompletionsEngineOptions,
  type OpenAIWeightSync,
} from './completions-engine.ts';
export { OpenAICompatibleAgent, type OpenAICompatibleOptions } from './openai-agent.ts';
export {
  loraToPeft,
  PEFT_CONFIG_FILE,
  PEFT_WEIGHTS_FILE,
  peftToLora,
} from './peft.ts';
