/**
 * Saving a model as a Hugging Face folder: exactly the expected parameter set
 * (no lm_head.weight when tied), in the config's dtype, so a BF16 checkpoint round-trips bit for
 * bit and loads in transformers / vLLM unchanged.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { ConfigError } from '@agentrl/core';
import type { CausalLMConfig, FloatDType } from '@agentrl/core/checkpoint';
import { encodeSafetensors, type NamedTensor, storedByteSize } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import type { ParameterStore } from '../decoder/parameter-store.ts';
import { parameterSpecs, transpose2d } from '../decoder/parameters.ts';

const TORCH_DTYPE: Record<FloatDType, string> = {
  F32: 'float32',
  BF16: 'bfloat16',
  F16: 'float16',
};

/** Options of {@link saveCausalLM}. */
export interface SaveOptions {
  /** Storage dtype; default the config's `torch_dtype`. */
  readonly dtype?: FloatDType;
  /** Split into shards named like `model-00001-of-00002.safetensors` above this many bytes. Default 4 GiB. */
  readonly maxShardBytes?: number;
}

/**
 * A parameter's values in the in-memory layout: joined on the host when it is held in blocks (so
 * the file has the one HF tensor), merged with LoRA adapters when they are active (W + scale·A·B,
 * so any HF loader reads them unchanged; adapters never touch the embedding or head).
 */
async function savedValues(store: ParameterStore, name: string): Promise<Float32Array> {
  if (store.storage(name).axis !== undefined) return store.read(name);
  if (store.lora === undefined) return (await store.weight(name).data()) as Float32Array;
  const tensor = tf.tidy(() => store.effectiveWeight(name));
  const values = (await tensor.data()) as Float32Array;
  if (tensor !== store.weight(name)) tensor.dispose();
  return values;
}

/** What saving reads of a model: its config and its parameters (a `CausalLM` is one). */
export interface SavableModel {
  readonly config: CausalLMConfig;
  readonly parameters: ParameterStore;
}

/** Writes `config.json` and the weights (HF layout) to `dir`, creating it if needed. */
export async function saveCausalLM(
  model: SavableModel,
  dir: string,
  options: SaveOptions = {},
): Promise<void> {
  const dtype = options.dtype ?? model.config.dtype;
  const maxShard = options.maxShardBytes ?? 4 * 1024 ** 3;
  if (!(maxShard > 0))
    throw new ConfigError(`maxShardBytes must be positive, got ${maxShard}`, {
      details: { field: 'maxShardBytes' },
    });
  await mkdir(dir, { recursive: true });
  const shards: Map<string, NamedTensor>[] = [new Map()];
  let shardBytes = 0;
  for (const spec of parameterSpecs(model.config)) {
    const values = await savedValues(model.parameters, spec.name);
    let data = values;
    if (spec.transposed) {
      const [rows, cols] = spec.shape as readonly [number, number];
      data = transpose2d(values, cols, rows);
    }
    const t: NamedTensor = { dtype, shape: spec.shape, data };
    const size = storedByteSize(t);
    if (shardBytes > 0 && shardBytes + size > maxShard) {
      shards.push(new Map());
      shardBytes = 0;
    }
    (shards[shards.length - 1] as Map<string, NamedTensor>).set(spec.name, t);
    shardBytes += size;
  }
  const config = { ...model.config.raw, torch_dtype: TORCH_DTYPE[dtype] };
  await writeFile(`${dir}/config.json`, `${JSON.stringify(config, null, 2)}\n`);
  if (shards.length === 1) {
    await writeFile(
      `${dir}/model.safetensors`,
      encodeSafetensors(shards[0] as Map<string, NamedTensor>),
    );
    return;
  }
  const pad = (n: number) => String(n).padStart(5, '0');
  const weightMap: Record<string, string> = {};
  let total = 0;
  for (let i = 0; i < shards.length; i++) {
    const file = `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`;
    const shard = shards[i] as Map<string, NamedTensor>;
    for (const [name, t] of shard) {
      weightMap[name] = file;
      total += storedByteSize(t);
    }
    await writeFile(`${dir}/${file}`, encodeSafetensors(shard));
  }
  await writeFile(
    `${dir}/model.safetensors.index.json`,
    `${JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2)}\n`,
  );
}
