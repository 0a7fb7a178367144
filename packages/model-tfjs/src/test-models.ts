/**
 * Shapes shared by the package's tests (not exported from the package): a one-layer model small
 * enough that a train step takes milliseconds, with grouped-query attention and a tied head.
 */
export const TINY_TEST_CONFIG = {
  vocab_size: 12,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
  torch_dtype: 'float32' as const,
};
