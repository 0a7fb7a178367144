import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createCausalLM, loadCausalLM } from './checkpoint.ts';

const config = {
  vocab_size: 20,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
  torch_dtype: 'float32' as const,
  // Large enough that the frozen (tied) head can express the demonstration through adapted layers.
  initializer_range: 0.4,
};
const work = await mkdtemp(join(tmpdir(), 'model-tfjs-lora-'));
afterAll(() => rm(work, { recursive: true, force: true }));

describe('LoRA adapters', () => {
  it('start as a no-op, train only the adapters, and save and copy merged weights that score identically', async () => {
    const model = await createCausalLM(config, { seed: 1, backend: 'wasm' });
    const seqs = [[1, 2, 3, 4, 5]];
    const before = await model.tokenLogProbs(seqs);
    const base = await Promise.all(model.variables().map((v) => v.data()));
    model.enableLoRA({ rank: 2, alpha: 4, seed: 1 });
    expect(await model.tokenLogProbs(seqs)).toEqual(before);
    expect(model.trainableVariables()).toHaveLength(2 * 7 * config.num_hidden_layers);
    const demo = [{ promptIds: [1, 2], responseIds: [9, 10, 11] }];
    const first = await model.sftStep(demo, { learningRate: 0.05 });
    const count = tf.memory().numTensors;
    let last = first;
    for (let i = 0; i < 20; i++) last = await model.sftStep(demo, { learningRate: 0.05 });
    expect(tf.memory().numTensors).toBe(count);
    expect(last.loss).toBeLessThan(first.loss * 0.5);
    expect(await Promise.all(model.variables().map((v) => v.data()))).toEqual(base);
    const adapted = await model.tokenLogProbs(seqs);
    const frozen = model.frozenCopy(); // the KL reference of a LoRA run: the effective weights
    const fromFrozen = await frozen.tokenLogProbs(seqs);
    frozen.dispose();
    (fromFrozen[0] as number[]).forEach((v, i) => {
      expect(Math.abs(v - ((adapted[0] as number[])[i] as number))).toBeLessThan(1e-5);
    });
    await model.save(join(work, 'merged'));
    const reloaded = await loadCausalLM(join(work, 'merged'), { backend: 'wasm' });
    const again = await reloaded.tokenLogProbs(seqs);
    (again[0] as number[]).forEach((v, i) => {
      expect(Math.abs(v - ((adapted[0] as number[])[i] as number))).toBeLessThan(1e-5);
    });
    model.mergeLoRA();
    expect(model.lora).toBeUndefined();
    const merged = await model.tokenLogProbs(seqs);
    (merged[0] as number[]).forEach((v, i) => {
      expect(Math.abs(v - ((adapted[0] as number[])[i] as number))).toBeLessThan(1e-5);
    });
    model.dispose();
    reloaded.dispose();
  });
});
