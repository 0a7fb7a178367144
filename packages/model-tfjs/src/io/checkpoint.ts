/**
 * Hugging Face model folders on the way in: the tensors of `model.safetensors` or a sharded index
 * (read by `@agentrl/core/checkpoint`, as is `config.json`) checked against the parameters the config
 * implies and put in the in-memory layout (linear weights `[in, out]`); and the seeded weights of
 * a fresh model. Writing a folder is `save.ts`; a `CausalLM` is made from these in `model/load.ts`.
 */

import { createRng, DataError } from '@agentrl/core';
import type { CausalLMConfig, NamedTensor } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { isIgnorableKey, parameterSpecs, transpose2d } from '../decoder/parameters.ts';

/**
 * The model's weights from a checkpoint's tensors, in the in-memory layout: every expected
 * parameter present with the shape the config implies, nothing unexpected (`DataError`s naming
 * `source` and the tensor). The caller owns the tensors.
 */
export function checkpointWeights(
  config: CausalLMConfig,
  tensors: ReadonlyMap<string, NamedTensor>,
  source: string,
): Map<string, tf.Tensor> {
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
  return weights;
}

/**
 * Weights of a fresh model: linear and embedding weights from N(0, initializer_range²) (default
 * 0.02), biases 0, norm weights 1, drawn from a seeded `Rng`, as checkpoint tensors (HF layout).
 */
export function freshTensors(
  config: CausalLMConfig,
  seed: number | string,
): Map<string, NamedTensor> {
  const std =
    typeof config.raw.initializer_range === 'number' ? config.raw.initializer_range : 0.02;
  const rng = createRng(seed).split('init');
  const tensors = new Map<string, NamedTensor>();
  for (const spec of parameterSpecs(config)) {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (spec.init === 'ones') data.fill(1);
    else if (spec.init === 'normal') for (let i = 0; i < n; i++) data[i] = rng.normal(0, std);
    tensors.set(spec.name, { dtype: config.dtype, shape: spec.shape, data });
  }
  return tensors;
}
