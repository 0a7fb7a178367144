import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../index.ts';
import { TINY_TEST_CONFIG } from '../test-models.ts';
import { tempDir } from '../test-temp-dir.ts';
import { TfjsTrainablePolicy } from './trainable-policy.ts';

async function tinyModel(seed: number, vocab = 24) {
  return createCausalLM(
    { ...TINY_TEST_CONFIG, vocab_size: vocab, num_key_value_heads: 2, max_position_embeddings: 64 },
    { seed, backend: 'cpu' },
  );
}

describe('TfjsTrainablePolicy', () => {
  it('generates, takes PPO steps with a KL reference, and saves and loads its weights', async () => {
    const policy = new TfjsTrainablePolicy(await tinyModel(1), {
      learningRate: 1e-2,
      loss: { clipRatio: 0.2, klLossCoef: 0.01, entropyCoeff: 0 },
    });
    const prompts = [
      [1, 2, 3],
      [4, 5],
    ];
    const g = await policy.generate(prompts, { maxNewTokens: 3, temperature: 1, seed: 3 });
    expect(g.tokenIds.map((t) => t.length)).toEqual([3, 3]);
    const m = await policy.trainStep({
      promptTokenIds: prompts,
      responseTokenIds: g.tokenIds,
      oldLogProbs: g.logProbs,
      advantages: [1, -1],
    });
    expect(Number.isFinite(m.loss)).toBe(true);
    expect(m.numTensors).toBeGreaterThan(0);
    const s = await policy.sftStep({ promptTokenIds: prompts, responseTokenIds: g.tokenIds });
    expect(Number.isFinite(s.loss)).toBe(true);

    const dir = tempDir('agentrl-tfjs-');
    await policy.save(dir);
    const other = new TfjsTrainablePolicy(await tinyModel(2), { learningRate: 1e-2 });
    await other.load(dir);
    const a = await policy.generate(prompts, { maxNewTokens: 3, temperature: 1, seed: 9 });
    const b = await other.generate(prompts, { maxNewTokens: 3, temperature: 1, seed: 9 });
    expect(b.tokenIds).toEqual(a.tokenIds);
    policy.dispose();
    other.dispose();
  });
});

describe('TfjsTrainablePolicy.scoreResponses', () => {
  it('scores sampled tokens as the sampler did, and differently after an update', async () => {
    const policy = new TfjsTrainablePolicy(await tinyModel(5), {
      learningRate: 5e-2,
      temperature: 0.7,
      loss: { entropyCoeff: 0 },
    });
    const prompts = [
      [1, 2, 3],
      [4, 5],
    ];
    const g = await policy.generate(prompts, { maxNewTokens: 4, temperature: 0.7, seed: 2 });
    const batch = { promptTokenIds: prompts, responseTokenIds: g.tokenIds };
    const before = await policy.scoreResponses(batch);
    expect(before.logProbs.map((r) => r.length)).toEqual(g.tokenIds.map((r) => r.length));
    before.logProbs.forEach((row, i) => {
      row.forEach((v, j) => {
        expect(v).toBeCloseTo(g.logProbs[i]?.[j] as number, 4);
      });
    });
    // Entropy of a 24-word distribution: positive and at most ln 24.
    for (const v of before.entropies?.flat() ?? []) {
      expect(v).toBeGreaterThan(0);
      expect(v).toBeLessThanOrEqual(Math.log(24) + 1e-4);
    }
    await policy.trainStep({ ...batch, oldLogProbs: g.logProbs, advantages: [1, -1] });
    const after = await policy.scoreResponses(batch);
    const moved = after.logProbs
      .flat()
      .map((v, k) => Math.abs(v - (g.logProbs.flat()[k] as number)));
    expect(Math.max(...moved)).toBeGreaterThan(1e-3);
    policy.dispose();
  });
});
