/**
 * A `CausalLM` from a Hugging Face model folder (`loadCausalLM`) or fresh from a config
 * (`createCausalLM`), on the backend the options select; the folder is read by
 * `@agentrl/core/checkpoint` and checked against the config by `io/checkpoint.ts`, and `model.save`
 * writes one (`io/save.ts`).
 */

import {
  type CausalLMConfig,
  type CausalLMConfigInput,
  type NamedTensor,
  parseConfig,
  readCheckpointConfig,
  readCheckpointTensors,
} from '@agentrl/core/checkpoint';
import { type BackendName, type BackendOptions, selectBackend } from '../backends/select.ts';
import { checkWasmWeights } from '../backends/wasm/memory.ts';
import { parameterSpecs } from '../decoder/parameters.ts';
import { checkpointWeights, freshTensors } from '../io/checkpoint.ts';
import { CausalLM } from './causal-lm.ts';

/** Options of {@link loadCausalLM} and {@link createCausalLM}. */
export interface LoadOptions extends BackendOptions {
  /**
   * Hold the embedding and LM head as row blocks of at most this many bytes (and keep one call's
   * logits under it). On webgpu the default, and the cap, is the device's binding limit
   * (`maxStorageBufferBindingSize`); on other backends nothing is split unless this is set.
   */
  readonly maxBindingBytes?: number;
}

/** Loads a local HF model folder onto the selected backend. */
export async function loadCausalLM(dir: string, options: LoadOptions = {}): Promise<CausalLM> {
  const config = await readCheckpointConfig(dir);
  const backend = await selectBackend(options);
  checkFits(config, backend);
  const tensors = await readCheckpointTensors(dir);
  return modelFromTensors(config, backend, tensors, options, dir);
}

/** Refuses, before any weight is read or drawn, a model the backend cannot hold. */
function checkFits(config: CausalLMConfig, backend: BackendName): void {
  if (backend !== 'wasm') return;
  checkWasmWeights(
    parameterSpecs(config).reduce((n, spec) => n + spec.shape.reduce((a, b) => a * b, 1), 0),
  );
}

function modelFromTensors(
  config: CausalLMConfig,
  backend: BackendName,
  tensors: ReadonlyMap<string, NamedTensor>,
  options: LoadOptions,
  source: string,
): CausalLM {
  return new CausalLM(config, backend, checkpointWeights(config, tensors, source), {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.maxBindingBytes !== undefined ? { maxBindingBytes: options.maxBindingBytes } : {}),
  });
}

/** Options of {@link createCausalLM}. */
export interface CreateOptions extends LoadOptions {
  /** Seed of the weight initialisation (core `Rng`). */
  readonly seed: number | string;
}

/**
 * A fresh model from an HF-style config (snake_case fields): linear and embedding weights from
 * N(0, initializer_range²) (default 0.02), biases 0, norm weights 1, drawn from a seeded `Rng`.
 */
export async function createCausalLM(
  configInput: CausalLMConfigInput,
  options: CreateOptions,
): Promise<CausalLM> {
  const config = parseConfig({
    model_type: 'qwen2',
    architectures: [configInput.model_type === 'llama' ? 'LlamaForCausalLM' : 'Qwen2ForCausalLM'],
    hidden_act: 'silu',
    ...configInput,
  });
  const backend = await selectBackend(options);
  checkFits(config, backend);
  const tensors = freshTensors(config, options.seed);
  return modelFromTensors(config, backend, tensors, options, 'createCausalLM');
}
