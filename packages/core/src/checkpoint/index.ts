/**
 * `@agentrl/core/checkpoint` — Hugging Face checkpoint folders without a tensor library: safetensors
 * files, BF16 / F16 bit conversions, the Qwen2 / Llama `config.json`, the tensors of a (sharded)
 * model folder, and the files of a LoRA checkpoint: what the model packages write and the rollout
 * engines read, here so that a reader needs no tensor library. Node built-ins only, like the rest
 * of core, which depends on no other package.
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
