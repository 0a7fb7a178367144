/**
 * The optimizer state saved beside a model's weights, so that training resumed from a checkpoint
 * continues exactly: `optimizer.safetensors` holds the AdamW first and second moments (F32, in the
 * model's `[in, out]` layout for linear weights) as `<parameter>.exp_avg` / `<parameter>.exp_avg_sq`,
 * and its metadata the step count and the last step's hyperparameters. The HF weight files are
 * untouched, so the folder still loads in transformers. A parameter held in blocks (over the
 * binding limit) is saved as one joined tensor too, so the file does not depend on the storage:
 * a state saved from a split model loads into a whole one and back.
 *
 * With LoRA active only the adapters train: the state is then `lora.safetensors` (the adapters and
 * their settings, see lora-state.ts) plus the adapters' moments as `<weight>.lora_A.exp_avg` etc.,
 * and `optimizer.safetensors` names the LoRA file in its metadata. Loading it into a model loaded
 * from the unmerged base re-enables the adapters, so the resumed run continues bit for bit.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError, InvalidInputError } from '@agentrl/core';
import {
  encodeSafetensors,
  LORA_STATE_FILE,
  type NamedTensor,
  readRequiredSafetensorsFile,
} from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { joinHost, splitHost } from '../backends/webgpu/split.ts';
import type { ParameterStore } from '../decoder/parameter-store.ts';
import { AdamWState, type ResolvedOptimizerOptions } from '../train/optimizer.ts';
import {
  adapterKey,
  applyLoRAState,
  encodeLoRAState,
  type LoRAState,
  readLoRAState,
} from './lora-state.ts';

/** File name of the optimizer state inside a model folder. */
export const OPTIMIZER_STATE_FILE = 'optimizer.safetensors';

const FORMAT = 'agentrl-adamw-v1';

/** The moments of one parameter, joined over its blocks (zeros for a block without any). */
async function joinedMoments(
  state: AdamWState,
  store: ParameterStore,
  name: string,
): Promise<{ m: Float32Array; v: Float32Array } | undefined> {
  const storage = store.storage(name);
  const moments = storage.variables.map((variable) => state.existingMoments(variable));
  if (moments.every((x) => x === undefined)) return undefined;
  const read = (which: 'm' | 'v') =>
    Promise.all(
      moments.map(async (x, k) =>
        x === undefined
          ? new Float32Array((storage.variables[k] as tf.Variable).size)
          : ((await x[which].data()) as Float32Array),
      ),
    );
  const [m, v] = await Promise.all([read('m'), read('v')]);
  if (storage.axis === undefined) return { m: m[0] as Float32Array, v: v[0] as Float32Array };
  const shape = storage.shape as [number, number];
  return { m: joinHost(m, shape, storage.axis), v: joinHost(v, shape, storage.axis) };
}

async function writeAtomic(path: string, bytes: Uint8Array): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/**
 * Writes `dir/optimizer.safetensors` (atomically: a temporary file, then a rename) with the
 * model's AdamW state, and with LoRA active `dir/lora.safetensors` first (the adapters; a stale
 * one is removed otherwise). A model that has not taken a step writes step 0 and no moments.
 */
export async function saveTrainingState(
  model: { readonly parameters: ParameterStore },
  dir: string,
): Promise<void> {
  const store = model.parameters;
  const state = store.optimizerState instanceof AdamWState ? store.optimizerState : undefined;
  const lora = store.lora;
  const tensors = new Map<string, NamedTensor>();
  if (state !== undefined && state.step > 0 && lora === undefined) {
    for (const name of store.names()) {
      const moments = await joinedMoments(state, store, name);
      if (moments === undefined) continue;
      const shape = store.storage(name).shape;
      tensors.set(`${name}.exp_avg`, { dtype: 'F32', shape, data: moments.m });
      tensors.set(`${name}.exp_avg_sq`, { dtype: 'F32', shape, data: moments.v });
    }
  }
  if (state !== undefined && state.step > 0 && lora !== undefined) {
    for (const [name, adapter] of lora.adapters) {
      for (const [factor, variable] of [
        ['A', adapter.a],
        ['B', adapter.b],
      ] as const) {
        const moments = state.existingMoments(variable);
        if (moments === undefined) continue;
        const key = adapterKey(name, factor);
        const shape = variable.shape;
        const [m, v] = await Promise.all([moments.m.data(), moments.v.data()]);
        tensors.set(`${key}.exp_avg`, { dtype: 'F32', shape, data: m as Float32Array });
        tensors.set(`${key}.exp_avg_sq`, { dtype: 'F32', shape, data: v as Float32Array });
      }
    }
  }
  const metadata: Record<string, string> = {
    agentrl_format: FORMAT,
    step: String(state?.step ?? 0),
  };
  if (state?.lastOptions !== undefined)
    metadata.hyperparameters = JSON.stringify(state.lastOptions);
  if (lora !== undefined) metadata.lora = LORA_STATE_FILE;
  await mkdir(dir, { recursive: true });
  const loraPath = join(dir, LORA_STATE_FILE);
  if (lora !== undefined) {
    const encoded = await encodeLoRAState(store, lora);
    await writeAtomic(loraPath, encodeSafetensors(encoded.tensors, encoded.metadata));
  } else {
    await rm(loraPath, { force: true });
  }
  await writeAtomic(join(dir, OPTIMIZER_STATE_FILE), encodeSafetensors(tensors, metadata));
}

function parseHyperparameters(path: string, text: string | undefined) {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new DataError(`${path}: metadata "hyperparameters" is not JSON`, {
      cause,
      details: { path, field: 'hyperparameters' },
    });
  }
  const keys = ['learningRate', 'beta1', 'beta2', 'epsilon', 'weightDecay', 'maxGradNorm'];
  const record = value as Record<string, unknown>;
  if (
    typeof value !== 'object' ||
    value === null ||
    !keys.every((k) => typeof record[k] === 'number')
  ) {
    throw new DataError(
      `${path}: metadata "hyperparameters" must hold numbers ${keys.join(', ')}; the file was not written by saveTrainingState`,
      { details: { path, field: 'hyperparameters' } },
    );
  }
  return value as ResolvedOptimizerOptions;
}

/** Where each saved moment goes: its key prefix, the shape it must have, how to place it. */
interface MomentSlot {
  readonly key: string;
  readonly shape: readonly number[];
  readonly place: (state: AdamWState, m: Float32Array, v: Float32Array) => void;
}

/** Slots of the full-weight moments, cut into blocks on the host like the weights. */
function parameterSlots(store: ParameterStore): MomentSlot[] {
  return store.names().map((name) => {
    const storage = store.storage(name);
    const axis = storage.axis;
    // Cut on the host like the weights, so no kernel binds a whole split parameter.
    const pieces = (data: Float32Array) =>
      axis === undefined
        ? [data]
        : splitHost(
            data,
            storage.shape as [number, number],
            axis,
            storage.variables.map((b) => b.shape[axis] as number),
          );
    return {
      key: name,
      shape: storage.shape,
      place: (state, m, v) => {
        const mPieces = pieces(m);
        const vPieces = pieces(v);
        storage.variables.forEach((variable, k) => {
          tf.tidy(() =>
            state.setMoments(
              variable,
              tf.tensor(mPieces[k] as Float32Array, variable.shape),
              tf.tensor(vPieces[k] as Float32Array, variable.shape),
            ),
          );
        });
      },
    };
  });
}

/** Slots of the adapter moments (placed once the adapters exist, after `applyLoRAState`). */
function adapterSlots(store: ParameterStore, lora: LoRAState): MomentSlot[] {
  return [...lora.adapters].flatMap(([name, { a, b }]) =>
    (
      [
        ['A', a.shape],
        ['B', b.shape],
      ] as const
    ).map(([factor, shape]) => ({
      key: adapterKey(name, factor),
      shape,
      place: (state: AdamWState, m: Float32Array, v: Float32Array) => {
        const adapter = store.lora?.adapters.get(name);
        const variable = factor === 'A' ? adapter?.a : adapter?.b;
        if (variable === undefined) return;
        tf.tidy(() =>
          state.setMoments(variable, tf.tensor(m, variable.shape), tf.tensor(v, variable.shape)),
        );
      },
    })),
  );
}

/**
 * Restores what {@link saveTrainingState} wrote into `model` (same config, weights loaded
 * separately), replacing its optimizer state. A state saved with LoRA active loads into a model
 * loaded from the unmerged base: the adapters are enabled with the saved settings and their values
 * (a model with other adapters is refused with an `InvalidInputError`). Throws a `DataError`
 * naming the file and the tensor when a parameter is missing, unexpected or of another shape, or
 * when the base is not the one the adapters were trained on. Nothing changes when it throws.
 */
export async function loadTrainingState(
  model: { readonly parameters: ParameterStore },
  dir: string,
): Promise<void> {
  const store = model.parameters;
  const path = join(dir, OPTIMIZER_STATE_FILE);
  const file = await readRequiredSafetensorsFile(
    path,
    '; save the checkpoint with saveTrainingState to resume with its optimizer state',
  );
  const { tensors, metadata } = file;
  if (metadata.agentrl_format !== FORMAT) {
    throw new DataError(
      `${path}: metadata agentrl_format is ${JSON.stringify(metadata.agentrl_format)}, expected "${FORMAT}"`,
      { details: { path, field: 'agentrl_format' } },
    );
  }
  const step = Number(metadata.step);
  if (!Number.isInteger(step) || step < 0) {
    throw new DataError(
      `${path}: metadata step ${JSON.stringify(metadata.step)} is not a step count`,
      {
        details: { path, field: 'step' },
      },
    );
  }
  const hyperparameters = parseHyperparameters(path, metadata.hyperparameters);
  let lora: LoRAState | undefined;
  const loraPath = join(dir, LORA_STATE_FILE);
  if (metadata.lora !== undefined) {
    if (metadata.lora !== LORA_STATE_FILE) {
      throw new DataError(
        `${path}: metadata lora ${JSON.stringify(metadata.lora)}, expected "${LORA_STATE_FILE}"`,
        { details: { path, field: 'lora' } },
      );
    }
    lora = await readLoRAState(store, loraPath);
  } else if (store.lora !== undefined) {
    throw new InvalidInputError(
      `${path} was saved without LoRA adapters, and the model has adapters of rank ${store.lora.rank}; load it into a model without adapters (or call mergeLoRA() first)`,
      { details: { field: 'lora', path } },
    );
  }
  const slots = lora === undefined ? parameterSlots(store) : adapterSlots(store, lora);
  const expected = new Set<string>();
  if (step > 0 || tensors.size > 0) {
    for (const slot of slots) {
      for (const key of [`${slot.key}.exp_avg`, `${slot.key}.exp_avg_sq`]) {
        expected.add(key);
        const t = tensors.get(key);
        if (t === undefined) {
          throw new DataError(`${path}: tensor ${key} is missing; the state is of another model`, {
            details: { path, name: key },
          });
        }
        if (t.shape.join(',') !== slot.shape.join(',')) {
          throw new DataError(
            `${path}: tensor ${key} has shape [${t.shape.join(', ')}], the model's ${lora === undefined ? 'parameter' : 'adapter'} has [${slot.shape.join(', ')}]; the state is of another model config`,
            { details: { path, name: key } },
          );
        }
      }
    }
  }
  for (const key of tensors.keys()) {
    if (!expected.has(key)) {
      throw new DataError(
        `${path}: tensor ${key} matches no trainable ${lora === undefined ? 'parameter' : 'adapter'} of the model; the state is of another model`,
        { details: { path, name: key } },
      );
    }
  }
  // Everything checked: change the model (enabling LoRA resets the optimizer state).
  if (lora !== undefined) applyLoRAState(store, lora, loraPath);
  const state = new AdamWState();
  state.step = step;
  state.lastOptions = hyperparameters;
  for (const slot of slots) {
    const m = tensors.get(`${slot.key}.exp_avg`);
    const v = tensors.get(`${slot.key}.exp_avg_sq`);
    if (m !== undefined && v !== undefined) slot.place(state, m.data, v.data);
  }
  const previous = store.optimizerState as { dispose?: () => void } | undefined;
  previous?.dispose?.();
  store.optimizerState = state;
}
