/**
 * The workloads of the GPU benchmark at two sizes: `full` (one transformer block,
 * Qwen2.5-0.5B and -1.5B with random weights) and `tiny` (the same code paths at sizes that run
 * in seconds on software Vulkan and PyTorch CPU, for the smoke test). Shared with the PyTorch
 * harness as JSON.
 */

/**
 * HF-style (snake_case) fields, as `createCausalLM` and `torch_harness.py` read them (a type
 * alias, so it is assignable to the index-signature config input).
 */
export type ModelShape = {
  readonly vocab_size: number;
  readonly hidden_size: number;
  readonly intermediate_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly num_key_value_heads: number;
  readonly tie_word_embeddings: true;
  readonly rope_theta: number;
  readonly rms_norm_eps: number;
  readonly torch_dtype: 'float32';
};

export type WorkloadKind =
  | 'block-forward'
  | 'block-forward-backward'
  | 'train'
  | 'lora'
  | 'generate';

/** One measured workload; the fields a kind does not use are absent. */
export interface Workload {
  readonly name: string;
  readonly kind: WorkloadKind;
  /** Which model instance it runs on (workloads of one model share it, in order). */
  readonly model: string;
  readonly config: ModelShape;
  readonly description: string;
  readonly batch: number;
  /** block: tokens per row. */
  readonly seqLen?: number;
  /** train / lora / generate: prompt tokens per row. */
  readonly promptLen?: number;
  /** train / lora: response tokens per row (the loss covers these). */
  readonly responseLen?: number;
  /** generate: new tokens per row (greedy, no stop token). */
  readonly newTokens?: number;
  /** train / lora: rows per forward/backward pass (gradient accumulation), both sides. */
  readonly microBatchSize?: number;
  readonly loraRank?: number;
  readonly loraAlpha?: number;
  /** block, torch side: precisions to time besides fp32 (on CUDA only). */
  readonly precisions?: readonly string[];
}

export type ShapeSet = 'full' | 'tiny';

const qwen = (
  hidden: number,
  intermediate: number,
  layers: number,
  heads: number,
  kvHeads: number,
  vocab: number,
): ModelShape => ({
  vocab_size: vocab,
  hidden_size: hidden,
  intermediate_size: intermediate,
  num_hidden_layers: layers,
  num_attention_heads: heads,
  num_key_value_heads: kvHeads,
  tie_word_embeddings: true,
  rope_theta: 1_000_000,
  rms_norm_eps: 1e-6,
  torch_dtype: 'float32',
});

interface Sizes {
  block: ModelShape;
  blockBatch: number;
  blockSeq: number;
  small: ModelShape;
  large: ModelShape;
  trainBatch: number;
  trainPrompt: number;
  trainResponse: number;
  genBatch: number;
  genPrompt: number;
  genNew: number;
  loraRank: number;
}

const SIZES: Record<ShapeSet, Sizes> = {
  full: {
    // One block as measured before against PyTorch: batch 8 x 512 tokens, hidden 1024, 16 heads, SwiGLU 2816 (one layer; a
    // 256-token vocabulary keeps the embedding and head negligible).
    block: qwen(1024, 2816, 1, 16, 16, 256),
    blockBatch: 8,
    blockSeq: 512,
    // Qwen2.5-0.5B and Qwen2.5-1.5B (config.json of the released models), random weights.
    small: qwen(896, 4864, 24, 14, 2, 151_936),
    large: qwen(1536, 8960, 28, 12, 2, 151_936),
    trainBatch: 8,
    trainPrompt: 512,
    trainResponse: 512,
    genBatch: 64,
    genPrompt: 128,
    genNew: 256,
    loraRank: 16,
  },
  tiny: {
    block: qwen(64, 172, 1, 4, 4, 64),
    blockBatch: 2,
    blockSeq: 16,
    small: qwen(64, 172, 2, 4, 2, 384),
    large: qwen(96, 256, 3, 6, 2, 384),
    trainBatch: 2,
    trainPrompt: 8,
    trainResponse: 8,
    genBatch: 4,
    genPrompt: 8,
    genNew: 8,
    loraRank: 4,
  },
};

/** The model names of the two Qwen configurations (the `tiny` set keeps them, scaled down). */
export const SMALL_MODEL = 'qwen2.5-0.5b';
export const LARGE_MODEL = 'qwen2.5-1.5b';

/** Every workload of a shape set, in run order. */
export function workloads(set: ShapeSet): Workload[] {
  const s = SIZES[set];
  const suffix = set === 'tiny' ? ' (tiny shapes)' : '';
  const train = {
    batch: s.trainBatch,
    promptLen: s.trainPrompt,
    responseLen: s.trainResponse,
  };
  const tokens = `${s.trainBatch} x ${s.trainPrompt + s.trainResponse} tokens`;
  return [
    {
      name: 'block-forward',
      kind: 'block-forward',
      model: 'block',
      config: s.block,
      description: `transformer block forward, batch ${s.blockBatch} x ${s.blockSeq}${suffix}`,
      batch: s.blockBatch,
      seqLen: s.blockSeq,
      precisions: ['fp32', 'tf32', 'bf16'],
    },
    {
      name: 'block-forward-backward',
      kind: 'block-forward-backward',
      model: 'block',
      config: s.block,
      description: `transformer block forward + backward, batch ${s.blockBatch} x ${s.blockSeq}${suffix}`,
      batch: s.blockBatch,
      seqLen: s.blockSeq,
      precisions: ['fp32', 'tf32', 'bf16'],
    },
    {
      name: `${SMALL_MODEL}-generate`,
      kind: 'generate',
      model: SMALL_MODEL,
      config: s.small,
      description: `${SMALL_MODEL} KV-cache greedy generation, ${s.genBatch} prompts of ${s.genPrompt} + ${s.genNew} new tokens${suffix}`,
      batch: s.genBatch,
      promptLen: s.genPrompt,
      newTokens: s.genNew,
    },
    {
      name: `${SMALL_MODEL}-train`,
      kind: 'train',
      model: SMALL_MODEL,
      config: s.small,
      description: `${SMALL_MODEL} full AdamW train step, ${tokens} (loss on the ${s.trainResponse}-token responses)${suffix}`,
      ...train,
    },
    {
      name: `${SMALL_MODEL}-lora`,
      kind: 'lora',
      model: SMALL_MODEL,
      config: s.small,
      description: `${SMALL_MODEL} LoRA r${s.loraRank} train step, ${tokens}${suffix}`,
      ...train,
      loraRank: s.loraRank,
      loraAlpha: 2 * s.loraRank,
    },
    {
      name: `${LARGE_MODEL}-train`,
      kind: 'train',
      model: LARGE_MODEL,
      config: s.large,
      description: `${LARGE_MODEL} full AdamW train step, ${tokens}${suffix}`,
      ...train,
    },
  ];
}

/** Tokens one step of the workload processes (generation: new tokens only). */
export function workloadTokens(w: Workload): number {
  switch (w.kind) {
    case 'block-forward':
    case 'block-forward-backward':
      return w.batch * (w.seqLen ?? 0);
    case 'train':
    case 'lora':
      return w.batch * ((w.promptLen ?? 0) + (w.responseLen ?? 0));
    case 'generate':
      return w.batch * (w.newTokens ?? 0);
  }
}

/**
 * Rows per micro-batch so that the `[rows * responseLen, vocab]` float32 logits (and their
 * gradient) stay under one storage binding (`maxStorageBufferBindingSize`; tfjs-webgpu cannot
 * bind more): the largest divisor of the batch that fits, so micro-batches are equal; at least 1.
 */
export function microBatchSize(w: Workload, maxBindingBytes: number): number {
  const rowBytes = (w.responseLen ?? 1) * w.config.vocab_size * 4;
  const fits = Math.max(1, Math.floor(maxBindingBytes / rowBytes));
  for (let rows = Math.min(w.batch, fits); rows > 1; rows--) if (w.batch % rows === 0) return rows;
  return 1;
}
