/**
 * A tiny fresh model for a run that starts from no checkpoint: the Qwen2 architecture with a
 * tied head, SwiGLU of three times the width and as many key/value heads as query heads, in
 * float32, seeded. The runner's `@agentrl/runner/tfjs-fresh` model module and the ALFWorld main
 * job both build their model here, so an architecture means the same weights on either path.
 */
import { type CausalLM, type CreateOptions, createCausalLM } from '../index.ts';
import { type TfjsPolicyOptions, TfjsTrainablePolicy } from './trainable-policy.ts';

/** Size of a fresh model. */
export interface FreshArchitecture {
  readonly hiddenSize: number;
  readonly layers: number;
  readonly heads: number;
  /** Longest sequence (prompt + response) the rotary tables cover. */
  readonly maxPositions: number;
}

/** What a fresh model needs besides its size: the vocabulary, the seed, the backend. */
export interface FreshModelOptions extends CreateOptions {
  /** Embedding rows: the tokenizer's vocabulary size. */
  readonly vocabSize: number;
  /** The tokenizer's end-of-sequence id (the stop token of generation). */
  readonly eosTokenId: number;
}

/** A seeded fresh {@link CausalLM} of `architecture` (see the module comment). */
export function createFreshCausalLM(
  architecture: FreshArchitecture,
  options: FreshModelOptions,
): Promise<CausalLM> {
  const { vocabSize, eosTokenId, ...create } = options;
  return createCausalLM(
    {
      vocab_size: vocabSize,
      hidden_size: architecture.hiddenSize,
      intermediate_size: architecture.hiddenSize * 3,
      num_hidden_layers: architecture.layers,
      num_attention_heads: architecture.heads,
      num_key_value_heads: architecture.heads,
      tie_word_embeddings: true,
      max_position_embeddings: architecture.maxPositions,
      torch_dtype: 'float32',
      eos_token_id: eosTokenId,
    },
    create,
  );
}

/** A fresh model (see {@link createFreshCausalLM}) and the trainable policy over it. */
export async function createFreshPolicy(
  architecture: FreshArchitecture,
  options: FreshModelOptions & { readonly policy: TfjsPolicyOptions },
): Promise<{ model: CausalLM; policy: TfjsTrainablePolicy }> {
  const { policy: policyOptions, ...modelOptions } = options;
  const model = await createFreshCausalLM(architecture, modelOptions);
  return { model, policy: new TfjsTrainablePolicy(model, policyOptions) };
}
