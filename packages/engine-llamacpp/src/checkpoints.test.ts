/**
 * llama.cpp (CPU build) against the tfjs model on checkpoints other than the `qwen2-tiny`
 * fixture: grouped and plain multi-head attention, Llama's rotary permutation with and without
 * q/k/v/o biases, an explicit `head_dim`, an untied head, BF16 / F16 / F32 files, GGUF written as
 * F32 and F16, an odd vocabulary. Every tensor (norms and biases included) is drawn from a
 * seeded stream so that a wrong name, layout or permutation shows.
 *
 * Tolerances (F32 KV cache, flash attention off): the greedy tokens are equal, and every
 * log-prob, greedy or sampled, is within 1e-4 of the tfjs model's for F32 GGUF weights (measured:
 * about 1e-6), and within 1e-2 for F16 GGUF weights, whose CPU matmuls round the activations to
 * F16 as well (measured: 2.2e-3).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRng, logProbMismatch } from '@agentrl/core';
import {
  type CausalLMConfigInput,
  readCheckpointTensors,
  writeSafetensors,
} from '@agentrl/core/checkpoint';
import { type CausalLM, createCausalLM, loadCausalLM } from '@agentrl/model-tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GgufConversionOptions } from './convert.ts';
import { LlamaCppEngine } from './engine.ts';

const TOLERANCE = { F32: 1e-4, F16: 1e-2, BF16: 1e-2 } as const;
const work = await mkdtemp(join(tmpdir(), 'engine-llamacpp-ckpt-'));
afterAll(() => rm(work, { recursive: true, force: true }));

interface Variant {
  readonly name: string;
  readonly config: CausalLMConfigInput;
  readonly gguf?: GgufConversionOptions;
}

const VARIANTS: readonly Variant[] = [
  {
    name: 'qwen2, grouped KV heads (6 / 2), BF16 file, F16 GGUF, odd vocabulary',
    config: {
      vocab_size: 1001,
      hidden_size: 48,
      intermediate_size: 80,
      num_hidden_layers: 2,
      num_attention_heads: 6,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      rope_theta: 1000000,
    },
    gguf: { type: 'F16' },
  },
  {
    name: 'llama, plain multi-head attention, untied head, no biases, F16 file, rope θ 500000',
    config: {
      model_type: 'llama',
      vocab_size: 97,
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 4,
      tie_word_embeddings: false,
      torch_dtype: 'float16',
      rope_theta: 500000,
      rms_norm_eps: 1e-5,
    },
  },
  {
    name: 'llama with q/k/v/o biases, grouped heads, head_dim 12 ≠ hidden / heads, F32 file',
    config: {
      model_type: 'llama',
      attention_bias: true,
      vocab_size: 64,
      hidden_size: 32,
      intermediate_size: 48,
      num_hidden_layers: 3,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 12,
      tie_word_embeddings: true,
      torch_dtype: 'float32',
    },
  },
];

/** A checkpoint folder whose every tensor is seeded noise (norm weights 1 ± 0.2). */
async function seededCheckpoint(dir: string, config: CausalLMConfigInput, seed: number) {
  const model = await createCausalLM(config, { seed, backend: 'cpu' });
  await model.save(dir);
  model.dispose();
  const tensors = await readCheckpointTensors(dir);
  const rng = createRng(seed).split('weights');
  for (const [name, t] of tensors) {
    const isNorm = name.endsWith('norm.weight');
    const std = name.endsWith('.bias') ? 0.3 : isNorm ? 0.2 : 0.15;
    for (let i = 0; i < t.data.length; i++) t.data[i] = (isNorm ? 1 : 0) + rng.normal(0, std);
  }
  await writeSafetensors(`${dir}/model.safetensors`, tensors);
}

function seededPrompts(vocab: number, seed: number): number[][] {
  const rng = createRng(seed).split('prompts');
  return [5, 17, 1, 9].map((n) => Array.from({ length: n }, () => rng.int(vocab)));
}

for (const [index, variant] of VARIANTS.entries()) {
  describe(`llama.cpp and tfjs on ${variant.name}`, () => {
    const dir = join(work, `v${index}`);
    let engine: LlamaCppEngine;
    let model: CausalLM;
    const prompts = seededPrompts(variant.config.vocab_size, index);
    const tolerance = TOLERANCE[variant.gguf?.type ?? 'F32'];
    beforeAll(async () => {
      await seededCheckpoint(dir, variant.config, 100 + index);
      model = await loadCausalLM(dir, { backend: 'cpu' });
      engine = await LlamaCppEngine.create({
        contextSize: 64,
        parallelSequences: 3,
        threads: 1,
        kvCacheType: 'F32',
        flashAttention: false,
        ...(variant.gguf ? { gguf: variant.gguf } : {}),
      });
      await engine.syncWeights({ version: 1, checkpointDir: dir });
    });
    afterAll(async () => {
      await engine?.close();
      model?.dispose();
    });

    it('decodes the same greedy tokens with log-probs within the tolerance', async () => {
      const sampling = { maxNewTokens: 8, temperature: 0, stopTokenIds: [] };
      const ours = await model.generate(prompts, sampling);
      const theirs = await engine.generate(prompts, sampling);
      expect(theirs.tokenIds).toEqual(ours.tokenIds);
      const mismatch = logProbMismatch(theirs.logProbs ?? [], ours.logProbs);
      expect(mismatch.count).toBe(prompts.length * 8);
      expect(mismatch.maxAbs).toBeLessThan(tolerance);
    });

    it("reports sampled tokens' log-probs that the tfjs model recomputes within the tolerance", async () => {
      const theirs = await engine.generate(prompts, {
        maxNewTokens: 8,
        temperature: 0.7,
        seed: 11,
        stopTokenIds: [],
      });
      const sequences = prompts.map((p, i) => [...p, ...(theirs.tokenIds[i] as number[])]);
      const scored = await model.tokenLogProbs(sequences, { temperature: 0.7 });
      const recomputed = scored.map((row, i) =>
        row.slice(row.length - (theirs.tokenIds[i]?.length ?? 0)),
      );
      const mismatch = logProbMismatch(theirs.logProbs ?? [], recomputed);
      expect(mismatch.count).toBe(prompts.length * 8);
      expect(mismatch.maxAbs).toBeLessThan(tolerance);
    });
  });
}
