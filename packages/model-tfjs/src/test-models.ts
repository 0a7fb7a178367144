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

/**
 * `n` seeded values in (-scale, scale) from a linear congruential sequence (the kernel parity
 * tests' inputs: reproducible, no Rng state to thread through).
 */
export function seededFloats(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[i] = (s / 2147483648 - 0.5) * 2 * scale;
  }
  return out;
}

/** `n` seeded values in (-scale, scale) from a 32-bit LCG (the wasm kernel tests' inputs). */
export function uniformFloats(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    out[i] = ((x / 2 ** 32) * 2 - 1) * scale;
  }
  return out;
}
