import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';
import {
  buildWordVocabulary,
  createCausalLM,
  HFTokenizer,
  loadCausalLM,
} from '@agentrl/model-tfjs';
import { type TfjsCritic, TfjsTrainablePolicy, VALUE_HEAD_FILE } from '@agentrl/model-tfjs/policy';
import { describe, expect, it } from 'vitest';
import { corridorSpec, meanBaselineEstimator } from '../test/helpers.ts';
import { tempDir } from '../test/temp-dir.ts';
import { parseRunConfig } from './config.ts';
import { createEstimator } from './estimators.ts';
import { Trainer, type TrainerOptions } from './trainer.ts';

const vocabulary = buildWordVocabulary([
  'Reach the exit of the corridor. Now: You are in cell 1 of 2 3. The exit is to the east west.',
  'Actions: go east, go west, wait. Answer with <action>...</action>. You walk through the exit.',
  '[You are outside.] -> go east',
]);
const tokenizer = new HFTokenizer(vocabulary);

const tinyConfig = {
  vocab_size: tokenizer.vocabSize,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
  max_position_embeddings: 512,
  torch_dtype: 'bfloat16' as const,
  eos_token_id: tokenizer.eosTokenIds[0],
};

async function tinyPolicy(seed: number): Promise<TfjsTrainablePolicy> {
  const model = await createCausalLM(tinyConfig, { seed, backend: 'wasm' });
  return new TfjsTrainablePolicy(model, {
    learningRate: 0.05,
    temperature: 1,
    loss: { clipRatio: 0.2, klLossCoef: 0.01, entropyCoeff: 0.001 },
  });
}

function options(
  runDir: string,
  policy: TfjsTrainablePolicy,
  iterations: number,
  ppo: Record<string, unknown> = {},
): TrainerOptions {
  return {
    policy,
    tokenizer,
    trainEnv: corridorSpec(3, 3),
    // Larger steps than the scripts' 1e-5 so that a few iterations move a tiny critic.
    estimator: createEstimator('ppo', { criticLearningRate: 0.02, ...ppo }),
    runDir,
    seed: 5,
    // verl-agent's PPO scripts: one trajectory per task (group size 1).
    rollout: { batchSize: 4, groupSize: 1, maxTurns: 3, maxNewTokens: 6 },
    training: { iterations, miniBatchSize: 4 },
    validation: { every: 0 },
  };
}

function metricLines(runDir: string): Record<string, number>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>)
    .map((m) =>
      Object.fromEntries(
        Object.entries(m).filter(([k]) => !k.startsWith('time/') && k !== 'update/numTensors'),
      ),
    );
}

async function weights(variables: { data(): Promise<unknown> }[]): Promise<Float32Array[]> {
  return Promise.all(variables.map(async (v) => (await v.data()) as Float32Array));
}

function changed(a: readonly Float32Array[], b: readonly Float32Array[]): boolean {
  return a.some((x, i) => x.some((v, j) => v !== (b[i] as Float32Array)[j]));
}

describe('PPO with a critic in the trainer', () => {
  it('updates both the actor and its critic, which starts as a copy of the actor, and checkpoints the critic beside it', async () => {
    const runDir = tempDir('agentrl-ppo-');
    const policy = await tinyPolicy(1);
    const initial = await weights(policy.model.variables());
    const critic = (await policy.createCritic({
      learningRate: 0.02,
      weightDecay: 0.01,
      maxGradNorm: 1,
      cliprangeValue: 0.5,
      seed: 5,
    })) as TfjsCritic;
    // The critic's backbone is the actor's weights, copied.
    expect(await weights(critic.model.variables())).toEqual(initial);
    const headBefore = await critic.head();
    await new Trainer({ ...options(runDir, policy, 2), critic }).run();

    const lines = metricLines(runDir);
    expect(lines).toHaveLength(2);
    for (const m of lines) {
      expect(Number.isFinite(m['critic/vfLoss'])).toBe(true);
      expect(m['critic/optimizerSteps']).toBeGreaterThan(0);
      expect(m['update/optimizerSteps']).toBeGreaterThan(0);
      expect(Number.isFinite(m['update/loss'])).toBe(true);
      expect(Number.isFinite(m['advantage/mean'])).toBe(true);
    }
    // Both models moved, each its own way.
    const actorAfter = await weights(policy.model.variables());
    const criticAfter = await weights(critic.model.variables());
    expect(changed(actorAfter, initial)).toBe(true);
    expect(changed(criticAfter, initial)).toBe(true);
    expect(changed(criticAfter, actorAfter)).toBe(true);
    expect((await critic.head()).weight).not.toEqual(headBefore.weight);

    // The checkpoint holds the critic; its backbone is the critic's, not the actor's.
    const dir = join(runDir, 'checkpoints', 'iter-000002');
    expect(existsSync(join(dir, 'critic', VALUE_HEAD_FILE))).toBe(true);
    const saved = await loadCausalLM(join(dir, 'critic'), { backend: 'wasm' });
    expect(await weights(saved.variables())).toEqual(criticAfter);
    saved.dispose();
    critic.dispose();
    policy.dispose();
  });

  it('with criticWarmup 2 the first iteration trains the critic only, as verl-agent’s critic_warmup', async () => {
    const runDir = tempDir('agentrl-ppo-warmup-');
    const policy = await tinyPolicy(1);
    const initial = await weights(policy.model.variables());
    await new Trainer(options(runDir, policy, 1, { criticWarmup: 2 })).run();
    const [m] = metricLines(runDir);
    expect(m?.['update/criticWarmup']).toBe(1);
    expect(m?.['critic/optimizerSteps']).toBeGreaterThan(0);
    expect(m?.['update/optimizerSteps']).toBeUndefined();
    expect(await weights(policy.model.variables())).toEqual(initial);
    policy.dispose();
  });

  it('resumes from a checkpoint exactly as the uninterrupted run: metrics, actor and critic', async () => {
    const full = tempDir('agentrl-ppo-full-');
    const straight = await tinyPolicy(1);
    await new Trainer(options(full, straight, 3)).run();

    const cut = tempDir('agentrl-ppo-cut-');
    const first = await tinyPolicy(1);
    await new Trainer(options(cut, first, 2)).run();
    first.dispose();
    // Other starting weights: the resume must load the actor and the critic.
    const resumed = await tinyPolicy(2);
    const summary = await new Trainer(options(cut, resumed, 3)).run({ resume: true });
    expect(summary.resumedFrom).toBe(2);
    expect(metricLines(cut)).toEqual(metricLines(full));
    expect(await weights(resumed.model.variables())).toEqual(
      await weights(straight.model.variables()),
    );
    for (const file of ['model.safetensors', 'optimizer.safetensors', VALUE_HEAD_FILE]) {
      const path = (run: string) => join(run, 'checkpoints', 'iter-000003', 'critic', file);
      expect(readFileSync(path(cut)).equals(readFileSync(path(full))), file).toBe(true);
    }
    straight.dispose();
    resumed.dispose();
  });
});

describe('resuming a PPO run', () => {
  it('refuses a checkpoint without a critic, naming the folder and the fix', async () => {
    const runDir = tempDir('agentrl-ppo-nocritic-');
    const policy = await tinyPolicy(1);
    await new Trainer({ ...options(runDir, policy, 1), estimator: meanBaselineEstimator }).run();
    const error = await new Trainer(options(runDir, policy, 2))
      .run({ resume: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataError);
    expect(String(error)).toMatch(
      /has no critic\/ folder.*resume with the algorithm the run was started with/,
    );
    policy.dispose();
  });
});

describe('a PPO run config', () => {
  it('accepts algorithm ppo with its options and names the closest key of a misspelt one', () => {
    const config = parseRunConfig({
      env: { id: 'corridor' },
      model: { backend: 'module', module: 'x' },
      algorithm: { name: 'ppo', options: { gamma: 1, lam: 1, criticLearningRate: 1e-5 } },
      rollout: { groupSize: 1 },
    });
    expect(config.algorithm.name).toBe('ppo');
    expect(() =>
      parseRunConfig({
        env: { id: 'corridor' },
        model: { backend: 'module', module: 'x' },
        algorithm: { name: 'ppo', options: { criticLearnRate: 1e-5 } },
      }),
    ).toThrow(/unknown key "algorithm.options.criticLearnRate".*criticLearningRate/s);
  });
});
