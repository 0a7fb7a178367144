import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { CausalLM } from '../model/causal-lm.ts';
import { createCausalLM } from '../model/load.ts';
import { TINY_TEST_CONFIG } from '../test-models.ts';
import type { PolicySample } from './samples.ts';

const config = TINY_TEST_CONFIG;

const GOOD = new Set([4, 5]);
const reward = (ids: readonly number[]) =>
  ids.filter((t) => GOOD.has(t)).length / Math.max(1, ids.length);

async function meanReward(model: CausalLM, seed: number): Promise<number> {
  const out = await model.generate(
    Array.from({ length: 64 }, () => [1, 2]),
    { maxNewTokens: 3, temperature: 1, seed, stopTokenIds: [] },
  );
  return out.tokenIds.reduce((a, ids) => a + reward(ids), 0) / out.tokenIds.length;
}

async function snapshot(model: CausalLM): Promise<Float32Array[]> {
  return Promise.all(model.variables().map(async (v) => (await v.data()) as Float32Array));
}

describe('training steps', () => {
  it('raises a toy reward with the PPO actor loss of @agentrl/algorithms', async () => {
    const model = await createCausalLM(config, { seed: 1, backend: 'wasm' });
    const before = await meanReward(model, 1000);
    for (let iter = 0; iter < 12; iter++) {
      const prompts = Array.from({ length: 16 }, () => [1, 2]);
      const out = await model.generate(prompts, {
        maxNewTokens: 3,
        temperature: 1,
        seed: iter,
        stopTokenIds: [],
      });
      const rewards = out.tokenIds.map(reward);
      const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
      const samples: PolicySample[] = prompts.map((p, b) => ({
        promptIds: p,
        responseIds: out.tokenIds[b] as number[],
        advantage: (rewards[b] as number) - mean,
        oldLogProbs: out.logProbs[b] as number[],
      }));
      for (let epoch = 0; epoch < 2; epoch++) {
        const r = await model.trainStep(samples, {
          learningRate: 0.03,
          microBatchSize: 8,
          loss: { entropyCoeff: 0 },
        });
        expect(r.skipped).toBe(false);
        expect(Number.isFinite(r.loss)).toBe(true);
      }
    }
    const after = await meanReward(model, 1000);
    expect(after).toBeGreaterThan(before + 0.25);
    model.dispose();
  });

  it('keeps the live tensor count flat over 50 steps of every kind', async () => {
    const model = await createCausalLM(config, { seed: 2, backend: 'wasm' });
    const reference = model.frozenCopy();
    const samples: PolicySample[] = [
      {
        promptIds: [1, 2, 3],
        responseIds: [4, 5],
        advantage: 1,
        oldLogProbs: [-2, -2],
        refLogProbs: [-2.1, -2.4],
      },
      {
        promptIds: [1],
        responseIds: [6, 7, 8],
        advantage: [-1, 0.5, 0.2],
        oldLogProbs: [-2, -2, -2],
        refLogProbs: [-2, -2, -2],
      },
      { promptIds: [3, 3], responseIds: [], advantage: 0, oldLogProbs: [], refLogProbs: [] },
    ];
    const step = async (i: number) => {
      if (i % 3 === 0)
        await model.sftStep([{ promptIds: [1, 2], responseIds: [3, 4] }], { learningRate: 1e-3 });
      else
        await model.trainStep(samples, {
          learningRate: 1e-3,
          microBatchSize: 2,
          loss: { klLossCoef: 0.01, entropyCoeff: 0.001 },
        });
    };
    await step(1);
    await step(0);
    const count = tf.memory().numTensors;
    for (let i = 0; i < 50; i++) await step(i);
    expect(tf.memory().numTensors).toBe(count);
    expect(await reference.tokenLogProbs([[1, 2, 3]])).toHaveLength(1);
    model.dispose();
    reference.dispose();
  });

  it('skips the step and changes nothing when the gradient norm is not finite', async () => {
    const model = await createCausalLM(config, { seed: 3, backend: 'wasm' });
    const before = await snapshot(model);
    const r = await model.trainStep(
      [{ promptIds: [1], responseIds: [2, 3], advantage: Number.NaN, oldLogProbs: [-1, -1] }],
      { learningRate: 0.1, loss: { entropyCoeff: 0 } },
    );
    expect(r.skipped).toBe(true);
    expect(Number.isFinite(r.gradNorm)).toBe(false);
    const after = await snapshot(model);
    expect(after).toEqual(before);
    model.dispose();
  });

  it('accumulates micro-batch gradients into the same update as one full batch', async () => {
    const a = await createCausalLM(config, { seed: 4, backend: 'wasm' });
    const b = await createCausalLM(config, { seed: 4, backend: 'wasm' });
    const sft = [
      { promptIds: [1, 2], responseIds: [3, 4, 5] },
      { promptIds: [6], responseIds: [7] },
      { promptIds: [8, 9, 10], responseIds: [11, 1] },
    ];
    const ra = await a.sftStep(sft, { learningRate: 1e-2, maxGradNorm: 0 });
    const rb = await b.sftStep(sft, { learningRate: 1e-2, maxGradNorm: 0, microBatchSize: 1 });
    expect(rb.loss).toBeCloseTo(ra.loss, 5);
    expect(rb.gradNorm).toBeCloseTo(ra.gradNorm, 4);
    const wa = await snapshot(a);
    const wb = await snapshot(b);
    wa.forEach((w, i) => {
      const other = wb[i] as Float32Array;
      const worst = Math.max(...Array.from(w, (x, j) => Math.abs(x - (other[j] as number))));
      expect(worst).toBeLessThan(1e-5);
    });
    a.dispose();
    b.dispose();
  });

  it('fits a demonstration with supervised steps', async () => {
    const model = await createCausalLM(config, { seed: 5, backend: 'wasm' });
    const demo = [{ promptIds: [1, 2], responseIds: [7, 8, 9] }];
    const first = await model.sftStep(demo, { learningRate: 0.02 });
    let last = first;
    for (let i = 0; i < 40; i++) last = await model.sftStep(demo, { learningRate: 0.02 });
    expect(last.loss).toBeLessThan(first.loss * 0.2);
    const greedy = await model.generate([[1, 2]], {
      maxNewTokens: 3,
      temperature: 0,
      stopTokenIds: [],
    });
    expect(greedy.tokenIds[0]).toEqual([7, 8, 9]);
    model.dispose();
  });
});
