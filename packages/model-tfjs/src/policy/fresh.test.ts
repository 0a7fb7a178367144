import { describe, expect, it } from 'vitest';
import { createFreshCausalLM, createFreshPolicy } from './fresh.ts';

const architecture = { hiddenSize: 16, layers: 1, heads: 2, maxPositions: 64 };

describe('the tiny fresh model', () => {
  it('has a tied head, SwiGLU three times as wide and as many key/value heads as heads', async () => {
    const model = await createFreshCausalLM(architecture, {
      vocabSize: 20,
      eosTokenId: 1,
      seed: 3,
      backend: 'cpu',
    });
    expect(model.config.raw).toMatchObject({
      vocab_size: 20,
      hidden_size: 16,
      intermediate_size: 48,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      max_position_embeddings: 64,
      eos_token_id: 1,
    });
    model.dispose();
  });

  it('draws the same weights for the same seed, whether built alone or with its policy', async () => {
    const options = { vocabSize: 20, eosTokenId: 1, seed: 7, backend: 'cpu' as const };
    const alone = await createFreshCausalLM(architecture, options);
    const { model, policy } = await createFreshPolicy(architecture, {
      ...options,
      policy: { learningRate: 1e-3 },
    });
    expect(policy.model).toBe(model);
    const prompts = [[2, 3, 4]];
    expect(await model.tokenLogProbs(prompts)).toEqual(await alone.tokenLogProbs(prompts));
    alone.dispose();
    policy.dispose();
  });
});
