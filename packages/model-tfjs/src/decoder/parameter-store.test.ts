import { parseConfig } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../backends/select.ts';
import { seededFloats, TINY_TEST_CONFIG } from '../test-models.ts';
import { ParameterStore } from './parameter-store.ts';
import { parameterSpecs } from './parameters.ts';

// A vocabulary of 100 makes the embedding ([100, 16] float32, 6,400 bytes) the one parameter over
// a 3,000-byte binding limit (the largest other weight is 2,048 bytes).
const config = parseConfig({ ...TINY_TEST_CONFIG, vocab_size: 100 });
const LIMIT = 3000;

/** Seeded weights in the in-memory layout (linear weights `[in, out]`). */
function weights(seed: number): Map<string, tf.Tensor> {
  return new Map(
    parameterSpecs(config).map((spec, k) => {
      const shape =
        spec.shape.length === 2 && spec.transposed
          ? [spec.shape[1] as number, spec.shape[0] as number]
          : [...spec.shape];
      const size = shape.reduce((a, b) => a * b, 1);
      return [spec.name, tf.tensor(seededFloats(size, seed + k), shape)];
    }),
  );
}

describe('ParameterStore', () => {
  beforeAll(async () => {
    await selectBackend({ backend: 'cpu' });
  });

  it('holds the embedding over the binding limit in blocks and reads it back joined, bit for bit', async () => {
    const given = weights(1);
    const embedding = (await given.get('model.embed_tokens.weight')?.data()) as Float32Array;
    const store = new ParameterStore(config, given, { maxBindingBytes: LIMIT });
    const storage = store.storage('model.embed_tokens.weight');
    expect(storage.axis).toBe(0);
    expect(storage.variables.length).toBeGreaterThan(1);
    expect(store.splitNames()).toEqual(['model.embed_tokens.weight']);
    expect(() => store.weight('model.embed_tokens.weight')).toThrow(/readWeight/);
    expect(await store.read('model.embed_tokens.weight')).toEqual(embedding);
    expect(store.count()).toBe(store.variables().reduce((n, v) => n + v.size, 0));
    store.dispose();
  });

  it('trains the adapters alone once LoRA is on, and folds them into the base when merged', async () => {
    const store = new ParameterStore(config, weights(2));
    const all = store.variables().length;
    store.optimizerState = { dispose: () => undefined };
    store.enableLoRA({ rank: 2, alpha: 4, seed: 3 });
    expect(store.optimizerState).toBeUndefined();
    const adapters = store.lora?.variables() ?? [];
    expect(store.trainableVariables()).toEqual(adapters);
    const name = 'model.layers.0.self_attn.q_proj.weight';
    const pair = store.lora?.adapters.get(name);
    pair?.b.assign(tf.onesLike(pair.b));
    const effective = await tf.tidy(() => store.effectiveWeight(name)).data();
    store.mergeLoRA();
    expect(store.lora).toBeUndefined();
    expect(store.trainableVariables()).toHaveLength(all);
    expect(await store.weight(name).data()).toEqual(effective);
    store.dispose();
  });

  it('refuses adapters while worker threads mirror the weights, naming the workers', () => {
    const store = new ParameterStore(config, weights(3));
    store.mirroredByWorkers = true;
    expect(() => store.enableLoRA({ rank: 2 })).toThrow(/stop worker threads/);
    expect(store.lora).toBeUndefined();
    store.dispose();
  });

  it('copies weights from a store of the same storage and refuses one stored in other blocks', async () => {
    const a = new ParameterStore(config, weights(4));
    const b = new ParameterStore(config, weights(5));
    a.copyFrom(b);
    for (const name of a.names()) expect(await a.read(name)).toEqual(await b.read(name));
    const split = new ParameterStore(config, weights(6), { maxBindingBytes: LIMIT });
    expect(() => a.copyFrom(split)).toThrow(/model.embed_tokens.weight is stored as 1 block/);
    for (const s of [a, b, split]) s.dispose();
  });
});
