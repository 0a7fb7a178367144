import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../index.ts';
import { TINY_TEST_CONFIG } from '../test-models.ts';
import { tempDir } from '../test-temp-dir.ts';
import { type TfjsCritic, VALUE_HEAD_FILE } from './critic.ts';
import { TfjsTrainablePolicy } from './trainable-policy.ts';

async function tinyPolicy(seed: number): Promise<TfjsTrainablePolicy> {
  const model = await createCausalLM(
    { ...TINY_TEST_CONFIG, vocab_size: 24, num_key_value_heads: 2, max_position_embeddings: 64 },
    { seed, backend: 'cpu' },
  );
  return new TfjsTrainablePolicy(model, { learningRate: 1e-2 });
}

const criticOptions = {
  learningRate: 3e-3,
  weightDecay: 0.01,
  maxGradNorm: 1,
  cliprangeValue: 0.5,
  seed: 7,
};

async function tinyCritic(
  seed = 1,
  options: Partial<typeof criticOptions> = {},
): Promise<{ policy: TfjsTrainablePolicy; critic: TfjsCritic }> {
  const policy = await tinyPolicy(seed);
  const critic = (await policy.createCritic({ ...criticOptions, ...options })) as TfjsCritic;
  return { policy, critic };
}

/** Two step rows in the trainer's layout: returns are the score on 0..L−1 and 0 after. */
const prompts = [
  [1, 2, 3],
  [4, 5],
];
const responses = [
  [6, 7, 8],
  [9, 10],
];

function trainBatch(values: number[][]) {
  return {
    promptTokenIds: prompts,
    responseTokenIds: responses,
    oldValues: values,
    returns: [
      [10, 10, 10, 0],
      [-0.1, -0.1, 0],
    ],
    mask: values.map((row) => row.map(() => 1)),
  };
}

async function snapshot(critic: TfjsCritic): Promise<Float32Array[]> {
  const head = await critic.head();
  const backbone = await Promise.all(
    critic.model.variables().map(async (v) => (await v.data()) as Float32Array),
  );
  return [head.weight, head.bias, ...backbone];
}

describe('TfjsCritic', () => {
  it('values the state before each response token and the one after the last, each from the tokens before it only', async () => {
    const { policy, critic } = await tinyCritic();
    const v = await critic.values({ promptTokenIds: prompts, responseTokenIds: responses });
    expect(v.map((row) => row.length)).toEqual([4, 3]);
    // A shorter response with the same first tokens: the same values where the states agree.
    const prefix = await critic.values({
      promptTokenIds: [prompts[0] as number[], prompts[0] as number[]],
      responseTokenIds: [[6, 7], [11]],
    });
    for (let t = 0; t < 3; t++)
      expect((prefix[0] as number[])[t]).toBeCloseTo((v[0] as number[])[t] as number, 5);
    // Position 0 is the state after the prompt, whatever the response.
    expect((prefix[1] as number[])[0]).toBeCloseTo((v[0] as number[])[0] as number, 5);
    expect(Number.isFinite((v[1] as number[])[2])).toBe(true);
    critic.dispose();
    policy.dispose();
  });

  it('is a separate copy: training it changes its weights and head, not the policy’s, and the value loss falls on a fixed batch', async () => {
    // A clip range wider than any error: the loss is the plain squared error, free to fall.
    const { policy, critic } = await tinyCritic(1, { learningRate: 3e-2, cliprangeValue: 1e3 });
    const policyBefore = await Promise.all(policy.model.variables().map((v) => v.data()));
    const before = await snapshot(critic);
    const old = await critic.values({ promptTokenIds: prompts, responseTokenIds: responses });
    const losses: number[] = [];
    for (let step = 0; step < 30; step++) {
      const m = await critic.trainStep(trainBatch(old));
      expect(Number.isFinite(m.vfLoss)).toBe(true);
      expect(m.skipped).toBe(0);
      losses.push(m.vfLoss as number);
    }
    expect(losses.at(-1) as number).toBeLessThan((losses[0] as number) * 0.5);
    const after = await snapshot(critic);
    expect(after.some((a, i) => a.some((x, j) => x !== (before[i] as Float32Array)[j]))).toBe(true);
    // The head and at least one backbone weight moved.
    expect(after[0]).not.toEqual(before[0]);
    expect(
      after.slice(2).some((a, i) => a.some((x, j) => x !== (before[i + 2] as Float32Array)[j])),
    ).toBe(true);
    const policyAfter = await Promise.all(policy.model.variables().map((v) => v.data()));
    expect(policyAfter).toEqual(policyBefore);
    // Fresh values track the returns once the old values are refreshed.
    const fresh = await critic.values({ promptTokenIds: prompts, responseTokenIds: responses });
    expect((fresh[0] as number[])[0]).toBeGreaterThan((old[0] as number[])[0] as number);
    critic.dispose();
    policy.dispose();
  });

  it('saves and loads its backbone, head and AdamW moments, so the next step is the same', async () => {
    const { policy, critic } = await tinyCritic(1);
    const old = await critic.values({ promptTokenIds: prompts, responseTokenIds: responses });
    await critic.trainStep(trainBatch(old));
    const dir = tempDir('agentrl-critic-');
    await critic.save(dir);
    expect(readdirSync(dir)).toContain(VALUE_HEAD_FILE);
    expect(readdirSync(dir)).toContain('optimizer.safetensors');
    const other = await tinyCritic(2);
    await other.critic.load(dir);
    expect(await snapshot(other.critic)).toEqual(await snapshot(critic));
    const a = await critic.trainStep(trainBatch(old));
    const b = await other.critic.trainStep(trainBatch(old));
    expect(b).toEqual(a);
    expect(await snapshot(other.critic)).toEqual(await snapshot(critic));
    for (const x of [critic, other.critic, policy, other.policy]) x.dispose();
  });
});

describe('TfjsCritic value clipping', () => {
  it('with the default 0.5 clip the loss keeps the clipped error once predictions leave old value ± 0.5', async () => {
    const { policy, critic } = await tinyCritic(1, { learningRate: 3e-2 });
    const old = await critic.values({ promptTokenIds: prompts, responseTokenIds: responses });
    const first = await critic.trainStep(trainBatch(old));
    expect(first.vfClipfrac).toBe(0);
    let last = first;
    for (let step = 0; step < 30; step++) last = await critic.trainStep(trainBatch(old));
    // Targets of 10 are far beyond old ± 0.5: the clipped error dominates for those positions,
    // so the loss cannot fall below (|G − V| − 0.5)² there, and the clip fraction is positive.
    expect(last.vfClipfrac).toBeGreaterThan(0);
    const floor =
      [0, 1, 2].reduce(
        (s, t) => s + (Math.abs(10 - ((old[0] as number[])[t] as number)) - 0.5) ** 2,
        0,
      ) / 7;
    expect(last.vfLoss).toBeGreaterThanOrEqual(floor * 0.999);
    critic.dispose();
    policy.dispose();
  });
});

describe('TfjsTrainablePolicy with per-token advantages', () => {
  it('uses tokenAdvantages instead of broadcasting the row advantage', async () => {
    const policy = await tinyPolicy(3);
    const g = await policy.generate(prompts, { maxNewTokens: 3, temperature: 1, seed: 3 });
    const batch = {
      promptTokenIds: prompts,
      responseTokenIds: g.tokenIds,
      oldLogProbs: g.logProbs,
      advantages: [5, 5],
    };
    const zero = await policy.trainStep({
      ...batch,
      tokenAdvantages: g.tokenIds.map((r) => r.map(() => 0)),
    });
    // On-policy ratios are 1: the policy-gradient loss is −mean(A), here 0 instead of −5.
    expect(zero.pgLoss).toBeCloseTo(0, 6);
    const perToken = await policy.trainStep({
      ...batch,
      oldLogProbs: (
        await policy.scoreResponses({ promptTokenIds: prompts, responseTokenIds: g.tokenIds })
      ).logProbs,
      tokenAdvantages: g.tokenIds.map((r) => r.map((_, t) => (t === 0 ? 3 : 0))),
    });
    expect(perToken.pgLoss).toBeCloseTo(-6 / 6, 5);
    policy.dispose();
  });
});
