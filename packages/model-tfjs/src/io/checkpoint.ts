/**
 * Loading, creating and saving Hugging Face model folders (spec A2, A7, A8): `config.json` plus
 * `model.safetensors` or a sharded index. Saving writes exactly the expected parameter set in the
 * config's dtype (see save.ts).
 */
import { readFile } from 'node:fs/promises';
import { createRng, DataError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import { type BackendName, type BackendOptions, selectBackend } from '../backends/select.ts';
import { checkWasmWeights } from '../backends/wasm/memory.ts';
import { CausalLM } from '../model/causal-lm.ts';
import { type CausalLMConfig, type CausalLMConfigInput, parseConfig } from '../model/config.ts';
import { isIgnorableKey, parameterSpecs, transpose2d } from '../model/parameters.ts';
import { type NamedTensor, readCheckpointTensors } from './safetensors.ts';

/** Options of {@link loadCausalLM} and {@link createCausalLM}. */
export interface LoadOptions extends BackendOptions {
  /**
   * Hold the embedding and LM head as row blocks of at most this many bytes (and keep one call's
   * logits under it). On webgpu the default, and the cap, is the device's binding limit
   * (`maxStorageBufferBindingSize`); on other backends nothing is split unless this is set.
   */
  readonly maxBindingBytes?: number;
}

async function readConfig(dir: string): Promise<CausalLMConfig> {
  let text: string;
  try {
    text = await readFile(`${dir}/config.json`, 'utf8');
  } catch (cause) {
    throw new DataError(
      `${dir}/config.json cannot be read; point loadCausalLM at a Hugging Face model folder`,
      { cause, details: { path: `${dir}/config.json` } },
    );
  }
  try {
    return parseConfig(JSON.parse(text));
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new DataError(`${dir}/config.json is not valid JSON`, { cause: error });
    throw error;
  }
}

/** Loads a local HF model folder onto the selected backend. */
export async function loadCausalLM(dir: string, options: LoadOptions = {}): Promise<CausalLM> {
  const config = await readConfig(dir);
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
  const specs = parameterSpecs(config);
  const expected = new Set(specs.map((s) => s.name));
  for (const name of tensors.keys()) {
    if (!expected.has(name) && !isIgnorableKey(name, config)) {
      throw new DataError(
        `${source}: unexpected tensor ${name} for a ${config.modelType} model with this config; check the config matches the weights`,
        { details: { name } },
      );
    }
  }
  const weights = new Map<string, tf.Tensor>();
  try {
    for (const spec of specs) {
      const t = tensors.get(spec.name);
      if (t === undefined) {
        const hint =
          spec.name === 'lm_head.weight'
            ? ' (the config says tie_word_embeddings is false; an untied checkpoint needs lm_head.weight)'
            : '';
        throw new DataError(`${source}: missing tensor ${spec.name}${hint}`, {
          details: { name: spec.name },
        });
      }
      if (t.shape.length !== spec.shape.length || t.shape.some((d, i) => d !== spec.shape[i])) {
        throw new DataError(
          `${source}: tensor ${spec.name} has shape [${t.shape.join(', ')}], expected [${spec.shape.join(', ')}] from config.json`,
          { details: { name: spec.name } },
        );
      }
      if (spec.transposed) {
        const [rows, cols] = spec.shape as readonly [number, number];
        weights.set(spec.name, tf.tensor2d(transpose2d(t.data, rows, cols), [cols, rows]));
      } else {
        weights.set(spec.name, tf.tensor(t.data, [...spec.shape]));
      }
    }
  } catch (error) {
    tf.dispose([...weights.values()]);
    throw error;
  }
  return new CausalLM(config, backend, weights, {
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
  const std =
    typeof config.raw.initializer_range === 'number' ? config.raw.initializer_range : 0.02;
  const rng = createRng(options.seed).split('init');
  const tensors = new Map<string, NamedTensor>();
  for (const spec of parameterSpecs(config)) {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (spec.init === 'ones') data.fill(1);
    else if (spec.init === 'normal') for (let i = 0; i < n; i++) data[i] = rng.normal(0, std);
    tensors.set(spec.name, { dtype: config.dtype, shape: spec.shape, data });
  }
  return modelFromTensors(config, backend, tensors, options, 'createCausalLM');
}
