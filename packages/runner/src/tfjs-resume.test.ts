import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';
import {
  buildWordVocabulary,
  type CausalLM,
  createCausalLM,
  HFTokenizer,
  loadCausalLM,
} from '@agentrl/model-tfjs';
import { TfjsTrainablePolicy } from '@agentrl/model-tfjs/policy';
import { describe, expect, it } from 'vitest';
import { corridorSpec, meanBaselineEstimator } from '../test/helpers.ts';
import { tempDir } from '../test/temp-dir.ts';
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

const policyOptions = {
  learningRate: 0.05,
  temperature: 1,
  loss: { clipRatio: 0.2, klLossCoef: 0.05, entropyCoeff: 0.001 },
};

/** A tiny tfjs policy; `seed` differs between runs so that a resume must load the weights. */
async function tinyPolicy(seed: number): Promise<TfjsTrainablePolicy> {
  const model = await createCausalLM(tinyConfig, { seed, backend: 'wasm' });
  return new TfjsTrainablePolicy(model, policyOptions);
}

function options(runDir: string, policy: TfjsTrainablePolicy, iterations: number): TrainerOptions {
  return {
    policy,
    tokenizer,
    trainEnv: corridorSpec(3, 3),
    estimator: meanBaselineEstimator,
    runDir,
    seed: 5,
    rollout: { batchSize: 4, groupSize: 2, maxTurns: 3, maxNewTokens: 6 },
    training: { iterations, miniBatchSize: 4 },
    validation: { every: 0 },
  };
}

/** Metrics without timings and the live-tensor count (two models share this process). */
function metrics(runDir: string): Record<string, number>[] {
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

/** A run resumed from iteration 2 logged what the uninterrupted 3-iteration run logged. */
function expectSameMetrics(summary: { resumedFrom?: number }, full: string, cut: string): void {
  expect(summary.resumedFrom).toBe(2);
  const expected = metrics(full);
  expect(expected).toHaveLength(3);
  expect(expected.some((m) => (m['update/rows'] ?? 0) > 0)).toBe(true);
  expect(metrics(cut)).toEqual(expected);
}

async function weights(policy: TfjsTrainablePolicy): Promise<Float32Array[]> {
  return Promise.all(policy.model.variables().map(async (v) => (await v.data()) as Float32Array));
}

async function adapters(policy: TfjsTrainablePolicy): Promise<Float32Array[]> {
  const variables = policy.model.lora?.variables() ?? [];
  expect(variables).toHaveLength(2 * 7);
  return Promise.all(variables.map(async (v) => (await v.data()) as Float32Array));
}

async function saveModel(model: CausalLM, dir: string): Promise<void> {
  try {
    await model.save(dir);
  } finally {
    model.dispose();
  }
}

describe('resuming a tfjs training run', () => {
  it('continues from a checkpoint exactly as the uninterrupted run (metrics and weights)', async () => {
    const full = tempDir('agentrl-tfjs-full-');
    const straight = await tinyPolicy(1);
    await new Trainer(options(full, straight, 3)).run();

    const cut = tempDir('agentrl-tfjs-cut-');
    const first = await tinyPolicy(1);
    await new Trainer(options(cut, first, 2)).run();
    first.dispose();
    const resumed = await tinyPolicy(2);
    const summary = await new Trainer(options(cut, resumed, 3)).run({ resume: true });
    expectSameMetrics(summary, full, cut);
    expect(await weights(resumed)).toEqual(await weights(straight));
    straight.dispose();
    resumed.dispose();
  });
});

describe('resuming a tfjs LoRA training run', () => {
  it('continues from the adapters on the recorded base exactly as the uninterrupted run, and refuses a changed base', async () => {
    const base = tempDir('agentrl-tfjs-lora-base-');
    await saveModel(await createCausalLM(tinyConfig, { seed: 1, backend: 'wasm' }), base);
    const loraPolicy = async () => {
      const model = await loadCausalLM(base, { backend: 'wasm' });
      model.enableLoRA({ rank: 2, alpha: 4, seed: 5 });
      return new TfjsTrainablePolicy(model, { ...policyOptions, basePath: base });
    };

    const full = tempDir('agentrl-tfjs-lora-full-');
    const straight = await loraPolicy();
    await new Trainer(options(full, straight, 3)).run();

    const cut = tempDir('agentrl-tfjs-lora-cut-');
    const first = await loraPolicy();
    await new Trainer(options(cut, first, 2)).run();
    first.dispose();
    const checkpoint = join(cut, 'checkpoints', 'iter-000002', 'model');
    const record = JSON.parse(readFileSync(join(checkpoint, 'lora-base.json'), 'utf8')) as {
      path: string;
      files: Record<string, string>;
    };
    expect(record.path).toBe(base);
    expect(Object.keys(record.files)).toEqual(['config.json', 'model.safetensors']);
    // The KL reference is the base plus the adapters it was frozen with, not another base copy.
    expect(readdirSync(checkpoint).sort()).toEqual([
      'config.json',
      'lora-base.json',
      'lora.safetensors',
      'model.safetensors',
      'optimizer.safetensors',
      'reference-lora.safetensors',
    ]);

    // Other weights and no adapters: the resume must load the base from the record, then the
    // adapters and their moments from the checkpoint.
    const resumed = await tinyPolicy(2);
    const summary = await new Trainer(options(cut, resumed, 3)).run({ resume: true });
    expectSameMetrics(summary, full, cut);
    expect(await adapters(resumed)).toEqual(await adapters(straight));
    expect(await weights(resumed)).toEqual(await weights(straight));
    // The merged F32 export and the adapter file of the last checkpoint, byte for byte.
    for (const file of [
      'model.safetensors',
      'lora.safetensors',
      'optimizer.safetensors',
      'reference-lora.safetensors',
    ]) {
      const path = (run: string) => join(run, 'checkpoints', 'iter-000003', 'model', file);
      expect(readFileSync(path(cut)).equals(readFileSync(path(full)))).toBe(true);
    }
    straight.dispose();
    resumed.dispose();

    // The base changes under the run: the resume names the file and stops.
    await saveModel(await createCausalLM(tinyConfig, { seed: 3, backend: 'wasm' }), base);
    const again = await loraPolicy();
    const error = await new Trainer(options(cut, again, 4))
      .run({ resume: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataError);
    expect(String(error)).toMatch(
      /base model file .*model\.safetensors changed \(sha256 .*\) since the checkpoint.*restore it, or start a new run/,
    );
    again.dispose();
  });
});
