/**
 * `@agentrl/model-tfjs/policy` — the model as a `TrainablePolicy` (`@agentrl/core`) for a trainer:
 * PPO and supervised steps, KL reference, exact-resume checkpoints (LoRA ones included).
 */
export { LORA_BASE_FILE, type LoRABase } from './lora-base.ts';
export { type TfjsPolicyOptions, TfjsTrainablePolicy } from './trainable-policy.ts';
export {
  createFreshCausalLM,
  createFreshPolicy,
  type FreshArchitecture,
  type FreshModelOptions,
} from './fresh.ts';
