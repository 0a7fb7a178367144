/**
 * The optimizer state saved beside a model's weights, so that training resumed from a checkpoint
 * continues exactly: `optimizer.safetensors` holds the AdamW first and second moments (F32, in the
 * model's `[in, out]` layout for linear weights) as `<parameter>.exp_avg` / `<parameter>.exp_avg_sq`,
 * and its metadata the step count and the last step's hyperparameters. The HF weight files are
 * untouched, so the folder still loads in transformers. A parameter held in blocks (over the
 * binding limit) is saved as one joined tensor too, so the file does not depend on the storage:
 * a state saved from a split model loads into a whole one and back.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError, InvalidInputError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from './model.ts';
import { AdamWState, type ResolvedOptimizerOptions } from './optimizer.ts';
import { encodeSafetensors, type NamedTensor, readSafetensorsFile } from './safetensors.ts';
import { joinHost, splitHost } from './webgpu/split.ts';

/** File name of the optimizer state inside a model folder. */
export const OPTIMIZER_STATE_FILE = 'optimizer.safetensors';

const FORMAT = 'agentrl-adamw-v1';

/** The moments of one parameter, joined over its blocks (zeros for a block without any). */
async function joinedMoments(
  state: AdamWState,
  model: CausalLM,
  name: string,
): Promise<{ m: Float32Array; v: Float32Array } | undefined> {
  const storage = model.parameterStorage(name);
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

function rejectLoRA(model: CausalLM, action: string): void {
  if (model.lora !== undefined) {
    throw new InvalidInputError(
      `cannot ${action} the training state of a model with LoRA adapters (its checkpoint holds merged weights); call mergeLoRA() first or resume LoRA training without the optimizer state`,
      { details: { field: 'lora' } },
    );
  }
}

/**
 * Writes `dir/optimizer.safetensors` (atomically: a temporary file, then a rename) with the
 * model's AdamW state. A model that has not taken a step writes step 0 and no moments.
 */
export async function saveTrainingState(model: CausalLM, dir: string): Promise<void> {
  rejectLoRA(model, 'save');
  const state = model.optimizerState instanceof AdamWState ? model.optimizerState : undefined;
  const tensors = new Map<string, NamedTensor>();
  if (state !== undefined && state.step > 0) {
    for (const name of model.parameterNames()) {
      const moments = await joinedMoments(state, model, name);
      if (moments === undefined) continue;
      const shape = model.parameterStorage(name).shape;
      tensors.set(`${name}.exp_avg`, { dtype: 'F32', shape, data: moments.m });
      tensors.set(`${name}.exp_avg_sq`, { dtype: 'F32', shape, data: moments.v });
    }
  }
  const metadata: Record<string, string> = {
    agentrl_format: FORMAT,
    step: String(state?.step ?? 0),
  };
  if (state?.lastOptions !== undefined)
    metadata.hyperparameters = JSON.stringify(state.lastOptions);
  await mkdir(dir, { recursive: true });
  const path = join(dir, OPTIMIZER_STATE_FILE);
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, encodeSafetensors(tensors, metadata));
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
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

/**
 * Restores what {@link saveTrainingState} wrote into `model` (same config, weights loaded
 * separately), replacing its optimizer state. Throws a `DataError` naming the file and the
 * tensor when a parameter is missing, unexpected or of another shape.
 */
export async function loadTrainingState(model: CausalLM, dir: string): Promise<void> {
  rejectLoRA(model, 'load');
  const path = join(dir, OPTIMIZER_STATE_FILE);
  let file: Awaited<ReturnType<typeof readSafetensorsFile>>;
  try {
    file = await readSafetensorsFile(path);
  } catch (cause) {
    if (cause instanceof Error && 'code' in cause && cause.code === 'ENOENT') {
      throw new DataError(
        `${path} does not exist; save the checkpoint with saveTrainingState to resume with its optimizer state`,
        { cause, details: { path } },
      );
    }
    throw cause;
  }
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
  const names = model.parameterNames();
  const expected = new Set<string>();
  if (step > 0 || tensors.size > 0) {
    for (const name of names) {
      const shape = model.parameterStorage(name).shape;
      for (const key of [`${name}.exp_avg`, `${name}.exp_avg_sq`]) {
        expected.add(key);
        const t = tensors.get(key);
        if (t === undefined) {
          throw new DataError(`${path}: tensor ${key} is missing; the state is of another model`, {
            details: { path, name: key },
          });
        }
        if (t.shape.join(',') !== shape.join(',')) {
          throw new DataError(
            `${path}: tensor ${key} has shape [${t.shape.join(', ')}], the model's parameter has [${shape.join(', ')}]; the state is of another model config`,
            { details: { path, name: key } },
          );
        }
      }
    }
  }
  for (const key of tensors.keys()) {
    if (!expected.has(key)) {
      throw new DataError(
        `${path}: tensor ${key} matches no trainable parameter of the model; the state is of another model`,
        { details: { path, name: key } },
      );
    }
  }
  const state = new AdamWState();
  state.step = step;
  state.lastOptions = hyperparameters;
  for (const name of names) {
    const m = tensors.get(`${name}.exp_avg`);
    const v = tensors.get(`${name}.exp_avg_sq`);
    if (m === undefined || v === undefined) continue;
    const storage = model.parameterStorage(name);
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
    const mPieces = pieces(m.data);
    const vPieces = pieces(v.data);
    storage.variables.forEach((variable, k) => {
      tf.tidy(() =>
        state.setMoments(
          variable,
          tf.tensor(mPieces[k] as Float32Array, variable.shape),
          tf.tensor(vPieces[k] as Float32Array, variable.shape),
        ),
      );
    });
  }
  const previous = model.optimizerState as { dispose?: () => void } | undefined;
  previous?.dispose?.();
  model.optimizerState = state;
}
