/**
 * The LoRA part of a training state: `lora.safetensors` holds every adapter's `A` `[in, r]` and
 * `B` `[r, out]` (F32, our `x·A·B` layout, not PEFT's transposed one) as `<weight>.lora_A` /
 * `<weight>.lora_B` (the HF weight name without `.weight`), and in its metadata the rank, α, the
 * targets, the seed and a few sampled values of each adapted base weight. The base weights are
 * frozen while adapters train, so the adapters plus the unmerged base are the whole model; the
 * sampled values let a load refuse a base that is not the one the adapters were trained on (a
 * merged checkpoint folder, another model).
 */

import { DataError, InvalidInputError } from '@agentrl/core';
import { type NamedTensor, readRequiredSafetensorsFile } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { LORA_TARGETS, type LoRAAdapters, type LoRAOptions } from '../decoder/lora.ts';
import type { ParameterStore } from '../decoder/parameter-store.ts';

const LORA_FORMAT = 'agentrl-lora-v1';

/** Values sampled from each adapted base weight (evenly spaced flat positions). */
const BASE_SAMPLES = 8;

type Target = (typeof LORA_TARGETS)[number];

/** The tensor name of an adapter factor: `model.layers.0.self_attn.q_proj.lora_A`. */
export function adapterKey(weightName: string, factor: 'A' | 'B'): string {
  return `${weightName.replace(/\.weight$/, '')}.lora_${factor}`;
}

/** The weights `enableLoRA` adapts for these targets, in checkpoint order. */
function adaptedNames(store: ParameterStore, targets: readonly string[]): string[] {
  return store.names().filter((name) => {
    const m = /\.([a-z_]+)\.weight$/.exec(name);
    return m !== null && targets.includes(m[1] as string);
  });
}

async function baseSamples(store: ParameterStore, names: readonly string[]): Promise<number[][]> {
  return Promise.all(
    names.map(async (name) => {
      const sampled = tf.tidy(() => {
        const w = store.weight(name);
        const n = w.size;
        const positions = Array.from({ length: BASE_SAMPLES }, (_, k) =>
          Math.floor((k * (n - 1)) / (BASE_SAMPLES - 1)),
        );
        return tf.gather(tf.reshape(w, [n]), tf.tensor1d(positions, 'int32'));
      });
      try {
        return [...((await sampled.data()) as Float32Array)];
      } finally {
        sampled.dispose();
      }
    }),
  );
}

/** The tensors and metadata of `lora.safetensors` for the model's active adapters. */
export async function encodeLoRAState(
  store: ParameterStore,
  lora: LoRAAdapters,
): Promise<{ tensors: Map<string, NamedTensor>; metadata: Record<string, string> }> {
  const names = [...lora.adapters.keys()];
  const tensors = new Map<string, NamedTensor>();
  for (const name of names) {
    const { a, b } = lora.adapters.get(name) as { a: tf.Variable; b: tf.Variable };
    tensors.set(adapterKey(name, 'A'), {
      dtype: 'F32',
      shape: a.shape,
      data: (await a.data()) as Float32Array,
    });
    tensors.set(adapterKey(name, 'B'), {
      dtype: 'F32',
      shape: b.shape,
      data: (await b.data()) as Float32Array,
    });
  }
  const samples = await baseSamples(store, names);
  return {
    tensors,
    metadata: {
      agentrl_format: LORA_FORMAT,
      rank: String(lora.rank),
      alpha: String(lora.alpha),
      targets: JSON.stringify(lora.targets),
      seed: JSON.stringify(lora.seed),
      layout: 'effective weight W + alpha/rank * A·B with A [in, rank], B [rank, out]',
      base_samples: JSON.stringify(Object.fromEntries(names.map((n, k) => [n, samples[k]]))),
    },
  };
}

/** A parsed and checked `lora.safetensors`: settings and adapter values per weight name. */
export interface LoRAState {
  readonly options: Required<Pick<LoRAOptions, 'rank' | 'alpha' | 'seed'>> & {
    readonly targets: readonly Target[];
  };
  readonly adapters: ReadonlyMap<string, { a: NamedTensor; b: NamedTensor }>;
}

function parseJson(path: string, field: string, text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch (cause) {
    throw new DataError(`${path}: metadata "${field}" is missing or not JSON`, {
      cause,
      details: { path, field },
    });
  }
}

function parseOptions(path: string, metadata: Record<string, string>): LoRAState['options'] {
  if (metadata.agentrl_format !== LORA_FORMAT) {
    throw new DataError(
      `${path}: metadata agentrl_format is ${JSON.stringify(metadata.agentrl_format)}, expected "${LORA_FORMAT}"`,
      { details: { path, field: 'agentrl_format' } },
    );
  }
  const rank = Number(metadata.rank);
  const alpha = Number(metadata.alpha);
  if (!Number.isInteger(rank) || rank <= 0 || !Number.isFinite(alpha)) {
    throw new DataError(
      `${path}: metadata rank ${JSON.stringify(metadata.rank)} / alpha ${JSON.stringify(metadata.alpha)} is not a positive integer rank and a number`,
      { details: { path, field: 'rank' } },
    );
  }
  const targets = parseJson(path, 'targets', metadata.targets);
  if (
    !Array.isArray(targets) ||
    !targets.every((t) => (LORA_TARGETS as readonly unknown[]).includes(t))
  ) {
    throw new DataError(
      `${path}: metadata targets ${metadata.targets} must be a list of ${LORA_TARGETS.join(', ')}`,
      { details: { path, field: 'targets' } },
    );
  }
  const seed = parseJson(path, 'seed', metadata.seed);
  if (typeof seed !== 'number' && typeof seed !== 'string') {
    throw new DataError(`${path}: metadata seed ${metadata.seed} is not a number or string`, {
      details: { path, field: 'seed' },
    });
  }
  return { rank, alpha, targets: targets as Target[], seed };
}

/**
 * Reads `path` and checks it against `store`'s base: every adapter present with the shapes the
 * base weight implies, nothing else, and the base weights the same as when it was saved. Changes
 * nothing in the store.
 */
export async function readLoRAState(store: ParameterStore, path: string): Promise<LoRAState> {
  const file = await readRequiredSafetensorsFile(
    path,
    ', and optimizer.safetensors beside it names it; the checkpoint is incomplete',
  );
  const { tensors, metadata } = file;
  const options = parseOptions(path, metadata);
  const names = adaptedNames(store, options.targets);
  const adapters = new Map<string, { a: NamedTensor; b: NamedTensor }>();
  const expected = new Set<string>();
  for (const name of names) {
    const shape = store.storage(name).shape;
    const [inDim, outDim] = shape as [number, number];
    const factor = (which: 'A' | 'B', want: readonly number[]): NamedTensor => {
      const key = adapterKey(name, which);
      expected.add(key);
      const t = tensors.get(key);
      if (t === undefined) {
        throw new DataError(
          `${path}: tensor ${key} is missing; the adapters are of another model or targets`,
          { details: { path, name: key } },
        );
      }
      if (t.shape.join(',') !== want.join(',')) {
        throw new DataError(
          `${path}: tensor ${key} has shape [${t.shape.join(', ')}], expected [${want.join(', ')}] (base ${name} is [${shape.join(', ')}], rank ${options.rank}); the adapters are of another model config`,
          { details: { path, name: key } },
        );
      }
      return t;
    };
    adapters.set(name, {
      a: factor('A', [inDim, options.rank]),
      b: factor('B', [options.rank, outDim]),
    });
  }
  for (const key of tensors.keys()) {
    if (!expected.has(key)) {
      throw new DataError(
        `${path}: tensor ${key} matches no weight the targets ${options.targets.join(', ')} adapt in this model; the adapters are of another model`,
        { details: { path, name: key } },
      );
    }
  }
  const saved = parseJson(path, 'base_samples', metadata.base_samples) as Record<string, unknown>;
  const current = await baseSamples(store, names);
  names.forEach((name, k) => {
    const want = saved?.[name];
    const have = current[k] as number[];
    if (!Array.isArray(want) || want.some((x, i) => !Object.is(x, have[i]))) {
      throw new DataError(
        `${path}: base weight ${name} differs from the one the adapters were trained on; load the unmerged base model the training started from (a merged checkpoint folder already contains the adapters)`,
        { details: { path, name } },
      );
    }
  });
  return { options, adapters };
}

/**
 * Puts the adapters of `state` into `store`: enables LoRA with the saved settings, or keeps the
 * active adapters when their rank, α and targets are the same (a model with other adapters is
 * refused; the seed only set A's initialisation, which the saved values replace), then assigns A
 * and B bit for bit.
 */
export function applyLoRAState(
  store: ParameterStore,
  state: LoRAState,
  path: string,
): LoRAAdapters {
  const o = state.options;
  const active = store.lora;
  if (active !== undefined) {
    const same =
      active.rank === o.rank &&
      active.alpha === o.alpha &&
      active.targets.join() === o.targets.join() &&
      active.adapters.size === state.adapters.size;
    if (!same) {
      throw new InvalidInputError(
        `${path}: adapters of rank ${o.rank}, alpha ${o.alpha} on ${o.targets.join(', ')}, but the model already has adapters of rank ${active.rank}, alpha ${active.alpha} on ${active.targets.join(', ')}; load the state into the base model without adapters (or enable LoRA with the same settings)`,
        { details: { field: 'lora', path } },
      );
    }
  } else {
    store.enableLoRA({ rank: o.rank, alpha: o.alpha, targets: o.targets, seed: o.seed });
  }
  const lora = store.lora as LoRAAdapters;
  for (const [name, { a, b }] of state.adapters) {
    const vars = lora.adapters.get(name) as { a: tf.Variable; b: tf.Variable };
    tf.tidy(() => {
      vars.a.assign(tf.tensor(a.data, vars.a.shape));
      vars.b.assign(tf.tensor(b.data, vars.b.shape));
    });
  }
  // Reused adapters may have been initialised from another seed; they now hold the saved ones.
  lora.seed = o.seed;
  return lora;
}
