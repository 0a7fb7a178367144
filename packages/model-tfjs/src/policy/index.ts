/**
 * `@agentrl/model-tfjs/policy` — the model as a `TrainablePolicy` (`@agentrl/core`) for a trainer:
 * PPO and supervised steps, KL reference, exact-resume checkpoints (LoRA ones included), and the
 * tiny fresh model a run without a checkpoint starts from.
 */

export { LORA_BASE_FILE, type LoRABase } from '@agentrl/core/checkpoint';
export { TfjsCritic, type TfjsCriticOptions, VALUE_HEAD_FILE } from './critic.ts';
export {
  createFreshCausalLM,
  createFreshPolicy,
  type FreshArchitecture,
  type FreshModelOptions,
} from './fresh.ts';
export { type TfjsPolicyOptions, TfjsTrainablePolicy } from './trainable-policy.ts';
