/**
 * Random-weight models made fast. `createCausalLM` draws every weight from a seeded JS normal
 * stream (~10-20 M values/s: 1.5 B parameters take minutes of a GPU lease). Speed does not depend
 * on the values, so here each weight matrix repeats one seeded random tile of 65,536 values
 * N(0, 0.02²), norms are 1 and biases 0, exactly as `createCausalLM` lays them out: the
 * parameter names and shapes are read from a small model that `createCausalLM` itself builds.
 */
import { createRng } from '@agentrl/core';
import {
  type BackendName,
  CausalLM,
  createCausalLM,
  type ModelLogger,
  parseConfig,
  selectBackend,
} from '@agentrl/model-tfjs';
import * as tf from '@tensorflow/tfjs';
import type { ModelShape } from './shapes.ts';

const TILE = 65_536;

/** Oracle dimensions, pairwise distinct so each maps back to one config dimension. */
const ORACLE = { vocab: 97, hidden: 24, intermediate: 40, heads: 4 } as const;

/** Parameter names and shapes `createCausalLM` gives a config (from a small stand-in model). */
export async function parameterShapes(
  shape: ModelShape,
  backend: BackendName,
): Promise<Map<string, number[]>> {
  const groupedKv = shape.num_key_value_heads !== shape.num_attention_heads;
  const kvHeads = groupedKv ? 2 : ORACLE.heads;
  const oracle = await createCausalLM(
    {
      ...shape,
      vocab_size: ORACLE.vocab,
      hidden_size: ORACLE.hidden,
      intermediate_size: ORACLE.intermediate,
      num_hidden_layers: 1,
      num_attention_heads: ORACLE.heads,
      num_key_value_heads: kvHeads,
    },
    { seed: 0, backend },
  );
  const headDim = shape.hidden_size / shape.num_attention_heads;
  const dims = new Map<number, number>([
    [ORACLE.vocab, shape.vocab_size],
    [ORACLE.hidden, shape.hidden_size],
    [ORACLE.intermediate, shape.intermediate_size],
  ]);
  if (groupedKv)
    dims.set((ORACLE.hidden / ORACLE.heads) * kvHeads, shape.num_key_value_heads * headDim);
  const out = new Map<string, number[]>();
  try {
    for (const name of oracle.parameterNames()) {
      const mapped = oracle.parameterStorage(name).shape.map((d) => {
        const full = dims.get(d);
        if (full === undefined)
          throw new Error(`parameter ${name}: dimension ${d} maps to no config field`);
        return full;
      });
      const layer = /^model\.layers\.0\.(.*)$/.exec(name);
      if (layer === null) out.set(name, mapped);
      else
        for (let l = 0; l < shape.num_hidden_layers; l++)
          out.set(`model.layers.${l}.${layer[1]}`, mapped);
    }
  } finally {
    oracle.dispose();
  }
  return out;
}

/** A float32 array of `n` values repeating one seeded N(0, std²) tile. */
export function tiledNormal(n: number, seed: string, std = 0.02): Float32Array {
  const out = new Float32Array(n);
  const rng = createRng(seed);
  const first = Math.min(n, TILE);
  for (let i = 0; i < first; i++) out[i] = rng.normal(0, std);
  for (let filled = first; filled < n; filled *= 2)
    out.copyWithin(filled, 0, Math.min(filled, n - filled));
  return out;
}

/** A model with `createCausalLM`'s layout and tiled random weights (see the module comment). */
export async function createRandomModel(
  shape: ModelShape,
  options: { seed: number; backend: BackendName; logger?: ModelLogger },
): Promise<CausalLM> {
  await selectBackend({ backend: options.backend });
  const shapes = await parameterShapes(shape, options.backend);
  const weights = new Map<string, tf.Tensor>();
  try {
    for (const [name, dims] of shapes) {
      const n = dims.reduce((a, b) => a * b, 1);
      const values = name.endsWith('norm.weight')
        ? new Float32Array(n).fill(1)
        : name.endsWith('.bias')
          ? new Float32Array(n)
          : tiledNormal(n, `${options.seed}/${name}`);
      weights.set(name, tf.tensor(values, dims, 'float32'));
    }
  } catch (error) {
    tf.dispose([...weights.values()]);
    throw error;
  }
  const config = parseConfig({
    model_type: 'qwen2',
    architectures: ['Qwen2ForCausalLM'],
    hidden_act: 'silu',
    ...shape,
  });
  return new CausalLM(
    config,
    options.backend,
    weights,
    options.logger === undefined ? {} : { logger: options.logger },
  );
}
