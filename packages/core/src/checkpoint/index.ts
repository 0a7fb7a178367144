/**
 * `@agentrl/core/checkpoint` — Hugging Face checkpoint folders without a tensor library: safetensors
 * files, BF16 / F16 bit conversions, the Qwen2 / Llama `config.json`, the tensors of a (sharded)
 * model folder, and the files of a LoRA checkpoint. `@agentrl/model-tfjs` trains on these
 * folders; rollout engines (`@agentrl/engine-llamacpp`) and the OpenAI-compatible client read them
 * without loading TensorFlow.js. Node built-ins only, like the rest of core.
 */
export {
  type CausalLMConfig,
  type CausalLMConfigInput,
  type FloatDType,
  parseConfig,
  readCheckpointConfig,
} from './config.ts';
export { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './dtype.ts';
export {
  checkLoRABase,
  hashModelFiles,
  LORA_BASE_FILE,
  LORA_STATE_FILE,
  type LoRABase,
  writeLoRABase,
} from './lora-checkpoint.ts';
export {
  encodeSafetensors,
  type NamedTensor,
  readCheckpointTensors,
  readRequiredSafetensorsFile,
  readSafetensors,
  readSafetensorsFile,
  storedByteSize,
  writeSafetensors,
} from './safetensors.ts';
