import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';
import {
  encodeSafetensors,
  LORA_STATE_FILE,
  readSafetensors,
  readSafetensorsFile,
  writeSafetensors,
} from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { CausalLM } from '../model/causal-lm.ts';
import { createCausalLM, loadCausalLM } from '../model/load.ts';
import { TINY_TEST_CONFIG } from '../test-models.ts';
import { tempDir } from '../test-temp-dir.ts';
import { OPTIMIZER_STATE_FILE } from './training-state.ts';

const config = TINY_TEST_CONFIG;

const options = { learningRate: 0.02, weightDecay: 0.01, beta2: 0.99 };

/** Step `i` trains on its own data, so k + m steps are the same whatever the split. */
async function trainSteps(model: CausalLM, from: number, to: number): Promise<number[]> {
  const losses: number[] = [];
  for (let i = from; i < to; i++) {
    const samples = [
      { promptIds: [1, 2], responseIds: [(i % 8) + 3, 4] },
      { promptIds: [2, (i % 5) + 1], responseIds: [5, (i % 6) + 4, 2] },
    ];
    const r = await model.sftStep(samples, options);
    expect(r.skipped).toBe(false);
    losses.push(r.loss);
  }
  return losses;
}

async function weights(model: CausalLM): Promise<Float32Array[]> {
  return Promise.all(model.variables().map(async (v) => (await v.data()) as Float32Array));
}

describe('the training state saved beside the weights', () => {
  it('continues training exactly as a run that never stopped, with a flat tensor count', async () => {
    const k = 3;
    const m = 3;
    const straight = await createCausalLM(config, { seed: 7, backend: 'cpu' });
    await trainSteps(straight, 0, k + m);

    const first = await createCausalLM(config, { seed: 7, backend: 'cpu' });
    await trainSteps(first, 0, k);
    const dir = tempDir('agentrl-train-state-');
    await first.save(dir);
    await first.saveTrainingState(dir);
    const tensorsTrained = tf.memory().numTensors;
    first.dispose();
    const tensorsFreed = tf.memory().numTensors;
    expect(readdirSync(dir).sort()).toEqual([
      'config.json',
      'model.safetensors',
      OPTIMIZER_STATE_FILE,
    ]);

    const resumed = await loadCausalLM(dir, { backend: 'cpu' });
    await resumed.loadTrainingState(dir);
    expect(tf.memory().numTensors).toBe(tensorsTrained);
    await resumed.loadTrainingState(dir); // again: the old state is freed, not leaked
    expect(tf.memory().numTensors).toBe(tensorsTrained);
    await trainSteps(resumed, k, k + m);
    expect(tf.memory().numTensors).toBe(tensorsTrained);

    const a = await weights(straight);
    const b = await weights(resumed);
    expect(b).toEqual(a); // bit-exact on the cpu backend
    resumed.dispose();
    expect(tf.memory().numTensors).toBe(tensorsFreed);

    // Without the optimizer state the same resume diverges (the point of saving it).
    const naive = await loadCausalLM(dir, { backend: 'cpu' });
    await trainSteps(naive, k, k + m);
    expect(await weights(naive)).not.toEqual(a);
    naive.dispose();
    straight.dispose();
  });

  it('records the step count and hyperparameters and leaves the HF weight file as save wrote it', async () => {
    const model = await createCausalLM(config, { seed: 2, backend: 'cpu' });
    await trainSteps(model, 0, 2);
    const dir = tempDir('agentrl-train-state-meta-');
    await model.save(dir);
    const weightsOnly = await readSafetensors(join(dir, 'model.safetensors'));
    await model.saveTrainingState(dir);
    expect(await readSafetensors(join(dir, 'model.safetensors'))).toEqual(weightsOnly);
    const file = await readSafetensorsFile(join(dir, OPTIMIZER_STATE_FILE));
    expect(file.metadata.step).toBe('2');
    expect(JSON.parse(file.metadata.hyperparameters as string)).toMatchObject({
      learningRate: 0.02,
      beta1: 0.9,
      beta2: 0.99,
      weightDecay: 0.01,
    });
    expect(file.tensors.get('model.embed_tokens.weight.exp_avg')?.shape).toEqual([12, 16]);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    model.dispose();
  });

  it('rejects a state of another model with a DataError naming the file and the tensor', async () => {
    const model = await createCausalLM(config, { seed: 3, backend: 'cpu' });
    await trainSteps(model, 0, 1);
    const dir = tempDir('agentrl-train-state-bad-');
    await model.saveTrainingState(dir);
    const wider = await createCausalLM(
      { ...config, intermediate_size: 48 },
      { seed: 3, backend: 'cpu' },
    );
    const error = await wider.loadTrainingState(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataError);
    expect(String(error)).toMatch(
      /optimizer\.safetensors: tensor model\.layers\.0\.mlp\.\w+_proj\.weight\.exp_avg has shape/,
    );

    const path = join(dir, OPTIMIZER_STATE_FILE);
    const file = await readSafetensorsFile(path);
    file.tensors.delete('model.norm.weight.exp_avg_sq');
    await writeFile(path, encodeSafetensors(file.tensors, file.metadata));
    await expect(model.loadTrainingState(dir)).rejects.toThrow(
      /optimizer\.safetensors: tensor model\.norm\.weight\.exp_avg_sq is missing/,
    );
    await writeSafetensors(path, file.tensors);
    await expect(model.loadTrainingState(dir)).rejects.toThrow(/metadata agentrl_format/);
    await expect(model.loadTrainingState(join(dir, 'absent'))).rejects.toThrow(
      /optimizer\.safetensors does not exist/,
    );
    model.dispose();
    wider.dispose();
  });
});

async function adapterValues(model: CausalLM): Promise<Float32Array[]> {
  const variables = model.lora?.variables() ?? [];
  expect(variables.length).toBeGreaterThan(0);
  return Promise.all(variables.map(async (v) => (await v.data()) as Float32Array));
}

describe('the training state of a LoRA run', () => {
  const lora = { rank: 2, alpha: 3, targets: ['q_proj', 'v_proj', 'down_proj'] as const, seed: 5 };

  it('resumes on the unmerged base bit for bit: adapters, moments, losses and merged weights', async () => {
    const k = 2;
    const m = 2;
    const base = tempDir('agentrl-lora-base-');
    const created = await createCausalLM(config, { seed: 9, backend: 'cpu' });
    await created.save(base);
    created.dispose();

    const straight = await loadCausalLM(base, { backend: 'cpu' });
    straight.enableLoRA(lora);
    const straightLosses = await trainSteps(straight, 0, k + m);

    const first = await loadCausalLM(base, { backend: 'cpu' });
    first.enableLoRA(lora);
    await trainSteps(first, 0, k);
    const dir = tempDir('agentrl-lora-state-');
    await first.save(dir);
    await first.saveTrainingState(dir);
    first.dispose();
    expect(readdirSync(dir).sort()).toEqual([
      'config.json',
      LORA_STATE_FILE,
      'model.safetensors',
      OPTIMIZER_STATE_FILE,
    ]);
    const loraFile = await readSafetensorsFile(join(dir, LORA_STATE_FILE));
    expect(loraFile.tensors.get('model.layers.0.self_attn.q_proj.lora_A')?.shape).toEqual([16, 2]);
    expect(loraFile.tensors.get('model.layers.0.mlp.down_proj.lora_B')?.shape).toEqual([2, 16]);
    expect(loraFile.tensors.size).toBe(6);
    expect(loraFile.metadata).toMatchObject({ rank: '2', alpha: '3', seed: '5' });
    const moments = await readSafetensorsFile(join(dir, OPTIMIZER_STATE_FILE));
    expect([...moments.tensors.keys()].sort()[0]).toBe(
      'model.layers.0.mlp.down_proj.lora_A.exp_avg',
    );
    expect(moments.tensors.size).toBe(12);

    const resumed = await loadCausalLM(base, { backend: 'cpu' });
    await resumed.loadTrainingState(dir);
    expect(resumed.lora?.targets).toEqual(lora.targets);
    const tensors = tf.memory().numTensors;
    await resumed.loadTrainingState(dir); // same settings: the adapters are reused, nothing leaks
    expect(tf.memory().numTensors).toBe(tensors);
    // Adapters of the same rank, alpha and targets but another seed take the saved values.
    const reseeded = await loadCausalLM(base, { backend: 'cpu' });
    reseeded.enableLoRA({ ...lora, seed: 11 });
    await reseeded.loadTrainingState(dir);
    expect(reseeded.lora?.seed).toBe(5);
    expect(await adapterValues(reseeded)).toEqual(await adapterValues(resumed));
    reseeded.dispose();
    const resumedLosses = await trainSteps(resumed, k, k + m);
    expect(resumedLosses).toEqual(straightLosses.slice(k));
    expect(await adapterValues(resumed)).toEqual(await adapterValues(straight));
    expect(await weights(resumed)).toEqual(await weights(straight)); // the frozen base
    straight.mergeLoRA();
    resumed.mergeLoRA();
    expect(await weights(resumed)).toEqual(await weights(straight));
    straight.dispose();
    resumed.dispose();

    // The merged export folder is not the base the adapters were trained on.
    const merged = await loadCausalLM(dir, { backend: 'cpu' });
    const error = await merged.loadTrainingState(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataError);
    expect(String(error)).toMatch(
      /lora\.safetensors: base weight model\.layers\.0\.\w+\.\w+_proj\.weight differs .* unmerged base/,
    );
    expect(merged.lora).toBeUndefined();
    merged.dispose();
  });

  it('refuses another config, other adapters, a missing adapter and a full state on adapters', async () => {
    const model = await createCausalLM(config, { seed: 4, backend: 'cpu' });
    model.enableLoRA(lora);
    await trainSteps(model, 0, 1);
    const dir = tempDir('agentrl-lora-state-bad-');
    await model.saveTrainingState(dir);

    const wider = await createCausalLM(
      { ...config, intermediate_size: 48 },
      { seed: 4, backend: 'cpu' },
    );
    const shapeError = await wider.loadTrainingState(dir).catch((e: unknown) => e);
    expect(shapeError).toBeInstanceOf(DataError);
    expect(String(shapeError)).toMatch(
      /lora\.safetensors: tensor model\.layers\.0\.mlp\.down_proj\.lora_A has shape \[32, 2\], expected \[48, 2\]/,
    );
    expect(wider.lora).toBeUndefined();

    const other = await createCausalLM(config, { seed: 4, backend: 'cpu' });
    other.enableLoRA({ rank: 3 });
    await expect(other.loadTrainingState(dir)).rejects.toThrow(
      /lora\.safetensors: adapters of rank 2, alpha 3 on q_proj, v_proj, down_proj, but the model already has adapters of rank 3/,
    );
    expect(other.lora?.rank).toBe(3);

    const full = tempDir('agentrl-full-state-');
    await wider.saveTrainingState(full);
    await expect(other.loadTrainingState(full)).rejects.toThrow(
      /optimizer\.safetensors was saved without LoRA adapters, and the model has adapters of rank 3/,
    );

    const path = join(dir, LORA_STATE_FILE);
    const file = await readSafetensorsFile(path);
    file.tensors.delete('model.layers.0.self_attn.v_proj.lora_B');
    await writeFile(path, encodeSafetensors(file.tensors, file.metadata));
    const fresh = await createCausalLM(config, { seed: 4, backend: 'cpu' });
    await expect(fresh.loadTrainingState(dir)).rejects.toThrow(
      /lora\.safetensors: tensor model\.layers\.0\.self_attn\.v_proj\.lora_B is missing/,
    );
    expect(fresh.lora).toBeUndefined();

    // Saving without adapters into the same folder removes the stale adapter file.
    await fresh.saveTrainingState(dir);
    expect(readdirSync(dir)).toEqual([OPTIMIZER_STATE_FILE]);
    for (const x of [model, wider, other, fresh]) x.dispose();
  });
});
