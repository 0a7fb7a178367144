/**
 * Checkpoints other than the `qwen2-tiny` fixture through `loadCausalLM(dir, { backend: 'webgpu' })`:
 * grouped and plain multi-head attention, an untied head, Llama without biases and with an
 * `o_proj` bias, an explicit `head_dim`, BF16 / F16 / F32 files, an odd vocabulary. Each is
 * written by `save` from a seeded model, then scored and decoded on webgpu and on cpu.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CausalLMConfigInput } from '@agentrl/core/checkpoint';
import { afterAll, describe, expect, it } from 'vitest';
import { createCausalLM, loadCausalLM } from '../../model/load.ts';
import { expectCacheMatchesFullForward } from '../../test-generation.ts';
import { probeWebGPUAdapter } from './setup.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`webgpu checkpoint tests skipped${skipReason}`);

const work = await mkdtemp(join(tmpdir(), 'model-tfjs-webgpu-ckpt-'));
afterAll(() => rm(work, { recursive: true, force: true }));

const VARIANTS: { name: string; config: CausalLMConfigInput }[] = [
  {
    name: 'qwen2, grouped KV heads (6 / 2), BF16, odd vocabulary',
    config: {
      vocab_size: 1001,
      hidden_size: 48,
      intermediate_size: 80,
      num_hidden_layers: 2,
      num_attention_heads: 6,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      initializer_range: 0.1,
    },
  },
  {
    name: 'llama, plain multi-head attention, untied head, no biases, F16, rope θ 500000',
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
      initializer_range: 0.1,
    },
  },
  {
    name: 'llama with attention biases (o_proj too), head_dim 12 ≠ hidden / heads, F32',
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
      initializer_range: 0.1,
    },
  },
];

describe.skipIf(adapter === undefined)(`other checkpoints on webgpu${skipReason}`, () => {
  it.each(VARIANTS)(
    '$name: cpu log-probs, greedy tokens and a consistent KV cache',
    async ({ name, config }) => {
      const dir = join(work, name.replace(/[^a-z0-9]+/gi, '-'));
      const made = await createCausalLM(config, { seed: 7, backend: 'cpu' });
      await made.save(dir);
      made.dispose();
      const V = config.vocab_size;
      const sequences = [
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
        [V - 1, 3],
        [11, 12, 13, 14],
      ];
      const prompts = [
        [5, 6, 7],
        [V - 2, 1, 2, 3, 4],
      ];
      const greedy = { maxNewTokens: 6, temperature: 0, stopTokenIds: [] };
      const cpu = await loadCausalLM(dir, { backend: 'cpu' });
      const wantScores = await cpu.tokenLogProbs(sequences);
      const wantTokens = (await cpu.generate(prompts, greedy)).tokenIds;
      cpu.dispose();

      const gpu = await loadCausalLM(dir, { backend: 'webgpu' });
      expect(gpu.backend).toBe('webgpu');
      const scores = await gpu.tokenLogProbs(sequences);
      scores.forEach((row, b) => {
        row.forEach((v, t) => {
          const want = wantScores[b]?.[t] as number;
          expect(Math.abs(v - want), `${name} [${b}, ${t}]`).toBeLessThan(
            1e-4 * (1 + Math.abs(want)),
          );
        });
      });
      expect((await gpu.generate(prompts, greedy)).tokenIds).toEqual(wantTokens);
      // Sampled tokens' log-probs from the KV-cache path equal the full forward pass's.
      await expectCacheMatchesFullForward(gpu, prompts, 5, 3);
      gpu.dispose();
    },
  );
});
