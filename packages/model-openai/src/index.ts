/**
 * @agentrl/model-openai — any OpenAI-compatible chat-completions endpoint as a text-level
 * `RolloutAgent` (the `@agentrl/core` contract), for scoring prompting baselines.
 */
export { OpenAICompatibleAgent, type OpenAICompatibleOptions } from './openai-agent.ts';
