/**
 * @agentrl/engine-llamacpp — rollouts on llama.cpp in-process (node-llama-cpp's prebuilt CPU,
 * Vulkan and CUDA binaries): a GGUF writer for Qwen2 / Llama checkpoints and a RolloutEngine with
 * token ids in and out.
 */
export {
  checkpointToGguf,
  type GgufConversionOptions,
  ggufFromCheckpoint,
  permuteRotaryRows,
  uniqueTokenStrings,
} from './convert.ts';
export { LlamaCppEngine } from './engine.ts';
export {
  encodeTensorData,
  type GgufContents,
  type GgufTensor,
  type GgufTensorType,
  type GgufValue,
  writeGguf,
} from './gguf.ts';
export {
  type EngineLogger,
  LLAMACPP_ENGINE_OPTIONS,
  type LlamaCppDevice,
  type LlamaCppEngineOptions,
} from './options.ts';
export type { PromptTokenCounts } from './prefill.ts';
export { commonPrefixLength, type PrefixPlan, planPrefixReuse } from './prefix.ts';
