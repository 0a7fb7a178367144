import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_TEST_CONFIG } from '../test-models.ts';
import type { CausalLM } from './causal-lm.ts';
import { createCausalLM, loadCausalLM } from './load.ts';

const config = {
  ...TINY_TEST_CONFIG,
  vocab_size: 20,
  num_hidden_layers: 2,
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

  // Shapes whose [in, out] products can only be the MLP weights or their gradients: 16 × 40.
  const distinct = { ...config, intermediate_size: 40 };
  const seq = [1, 2, 3, 4, 5, 6, 7];

  /** A model with adapters whose B is random too, so the adapted term is not zero. */
  async function adaptedModel(backend: 'cpu' | 'wasm' = 'cpu'): Promise<CausalLM> {
    const model = await createCausalLM(distinct, { seed: 3, backend });
    model.enableLoRA({ rank: 3, alpha: 5, seed: 2 });
    let k = 0;
    for (const { b } of model.lora?.adapters.values() ?? [])
      b.assign(tf.randomNormal(b.shape, 0, 0.3, 'float32', 100 + k++));
    return model;
  }

  const meanLogProb = (model: CausalLM) => () =>
    tf.neg(tf.mean(model.tokenLogProbTensors([seq]).logProbs)) as tf.Scalar;

  it('compute x·W + s·(x·A)·B: the merged weights’ log-probs, and the chain rule through W + s·A·B for A and B', async () => {
    const model = await adaptedModel();
    const lora = model.lora;
    if (lora === undefined) throw new Error('no adapters');
    const { value, grads } = tf.variableGrads(meanLogProb(model), lora.variables());
    // Reference: the merged weights as a plain trainable model (what save writes), and the
    // gradient of its W' = W + s·A·B; then dA = s·dW'·Bᵀ and dB = s·Aᵀ·dW'.
    await model.save(join(work, 'chain'));
    const merged = await loadCausalLM(join(work, 'chain'), { backend: 'cpu' });
    const reference = tf.variableGrads(meanLogProb(merged), merged.variables());
    const scalar = (t: tf.Tensor) => t.dataSync()[0] as number;
    expect(Math.abs(scalar(value) - scalar(reference.value))).toBeLessThan(1e-6);
    const weightGrad = new Map(
      merged
        .parameterNames()
        .map((n, i) => [n, reference.grads[merged.variables()[i]?.name ?? '']]),
    );
    for (const [name, { a, b }] of lora.adapters) {
      const dW = weightGrad.get(name) as tf.Tensor2D;
      const wantA = tf.mul(tf.matMul(dW, b, false, true), lora.scale);
      const wantB = tf.mul(tf.matMul(a, dW, true, false), lora.scale);
      const gotA = grads[a.name] as tf.Tensor;
      const gotB = grads[b.name] as tf.Tensor;
      const scaleA = 1e-5 * (1 + scalar(tf.max(tf.abs(wantA))));
      const scaleB = 1e-5 * (1 + scalar(tf.max(tf.abs(wantB))));
      expect(scalar(tf.max(tf.abs(tf.sub(gotA, wantA)))), `${name} A`).toBeLessThan(scaleA);
      expect(scalar(tf.max(tf.abs(tf.sub(gotB, wantB)))), `${name} B`).toBeLessThan(scaleB);
      // The check has teeth: the adapters' gradients are not zero.
      expect(scalar(tf.max(tf.abs(gotA)))).toBeGreaterThan(0);
    }
    tf.dispose([
      value,
      reference.value,
      ...Object.values(grads),
      ...Object.values(reference.grads),
    ]);
    merged.dispose();
    model.dispose();
  });

  it.each(['cpu', 'wasm'] as const)(
    'train without computing an [in, out] tensor of a frozen weight on %s (no merged copy, no base gradient)',
    async (backend) => {
      // Identity saves a tensor for backward (shares its data) and Transpose lays a weight out
      // for dx = dy·Wᵀ where the matmul wants the plain layout; every other kernel computes.
      const computed = (kernels: { name: string; outputShapes: number[][] }[]) =>
        kernels
          .filter((k) => k.name !== 'Identity' && k.name !== 'Transpose')
          .flatMap((k) => k.outputShapes.map((shape) => `${k.name} ${shape.join('x')}`))
          .filter((s) => s.endsWith(' 16x40') || s.endsWith(' 40x16'));
      const demo = [{ promptIds: [1, 2], responseIds: [3, 4, 5] }];
      const full = await createCausalLM(distinct, { seed: 3, backend });
      // tf.profile's type wants tensors back; the step returns plain numbers.
      const step = (m: CausalLM) => async () => {
        await m.sftStep(demo, { learningRate: 0.01 });
        return [];
      };
      const fullProfile = await tf.profile(step(full));
      // Control: a full step computes the MLP weights' gradients (and updates).
      expect(computed(fullProfile.kernels as never).length).toBeGreaterThan(0);
      full.dispose();
      const model = await adaptedModel(backend);
      const loraProfile = await tf.profile(step(model));
      expect(computed(loraProfile.kernels as never)).toEqual([]);
      model.dispose();
    },
  );

  it('generate with the weights merged once per call: the merged model’s tokens, memory given back, new adapters seen', async () => {
    const model = await adaptedModel();
    const prompts = [
      [1, 2, 3],
      [4, 5],
    ];
    const sampling = { maxNewTokens: 6, temperature: 0, stopTokenIds: [] };
    const sameAsMerged = async () => {
      await model.save(join(work, 'gen'));
      const merged = await loadCausalLM(join(work, 'gen'), { backend: 'cpu' });
      const want = await merged.generate(prompts, sampling);
      merged.dispose();
      const got = await model.generate(prompts, sampling);
      // The first generation after a weight change also caches the transposed tied head; a
      // second one must end holding exactly what it started with (merged weights released).
      const tensors = tf.memory().numTensors;
      expect((await model.generate(prompts, sampling)).tokenIds).toEqual(got.tokenIds);
      expect(tf.memory().numTensors).toBe(tensors);
      expect(got.tokenIds).toEqual(want.tokenIds);
      got.logProbs.forEach((row, b) => {
        row.forEach((v, t) => {
          expect(Math.abs(v - (want.logProbs[b]?.[t] as number))).toBeLessThan(1e-5);
        });
      });
      return got.tokenIds;
    };
    const first = await sameAsMerged();
    // Two generations at once share one merged copy, released when the last ends.
    const tensors = tf.memory().numTensors;
    const [x, y] = await Promise.all([
      model.generate(prompts, sampling),
      model.generate(prompts, sampling),
    ]);
    expect(x.tokenIds).toEqual(first);
    expect(y.tokenIds).toEqual(first);
    expect(tf.memory().numTensors).toBe(tensors);
    // After a step the next generation uses the new adapters.
    await model.sftStep([{ promptIds: [1, 2, 3], responseIds: [9, 9, 9] }], { learningRate: 0.2 });
    await sameAsMerged();
    model.dispose();
  });
});
