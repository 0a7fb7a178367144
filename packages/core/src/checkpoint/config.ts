/**
 * The model configuration read from an HF `config.json`, with Qwen2Config defaults for
 * absent fields. Unknown fields are ignored; unsupported features (non-silu activations, rope
 * scaling, sliding windows) are rejected with a message that names the field.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError, DataError } from '../errors.ts';

/** The floating dtypes a model checkpoint may be stored in (`torch_dtype`; safetensors' names). */
export type FloatDType = 'BF16' | 'F16' | 'F32';

/** The architecture hyperparameters of a Qwen2 / Llama decoder. */
export interface CausalLMConfig {
  readonly modelType: 'qwen2' | 'llama';
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numHiddenLayers: number;
  readonly numAttentionHeads: number;
  readonly numKeyValueHeads: number;
  readonly headDim: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly tieWordEmbeddings: boolean;
  /** q/k/v (and, for Llama, o) projections carry biases. */
  readonly attentionBias: boolean;
  /** o_proj carries a bias (Llama with attention_bias only). */
  readonly outputBias: boolean;
  /** gate/up/down carry biases (Llama `mlp_bias`). */
  readonly mlpBias: boolean;
  readonly maxPositionEmbeddings: number;
  /** The dtype checkpoints are saved in (`torch_dtype`). */
  readonly dtype: FloatDType;
  readonly bosTokenId?: number;
  readonly eosTokenIds: readonly number[];
  /** The original JSON, kept so that saving writes back every field the user had. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** The subset of HF config fields a caller sets to create a fresh model. */
export interface CausalLMConfigInput {
  readonly model_type?: 'qwen2' | 'llama';
  readonly vocab_size: number;
  readonly hidden_size: number;
  readonly intermediate_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly num_key_value_heads?: number;
  readonly head_dim?: number;
  readonly rms_norm_eps?: number;
  readonly rope_theta?: number;
  readonly tie_word_embeddings?: boolean;
  readonly max_position_embeddings?: number;
  readonly torch_dtype?: 'float32' | 'bfloat16' | 'float16';
  readonly bos_token_id?: number;
  readonly eos_token_id?: number | number[];
  readonly [key: string]: unknown;
}

function num(
  raw: Record<string, unknown>,
  key: string,
  fallback: number | undefined,
  integer: boolean,
): number {
  const value = raw[key];
  if (value === undefined || value === null) {
    if (fallback === undefined)
      throw new ConfigError(`config.json: "${key}" is required`, { details: { field: key } });
    return fallback;
  }
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (integer && (!Number.isInteger(value) || value <= 0))
  ) {
    throw new ConfigError(
      `config.json: "${key}" must be a ${integer ? 'positive integer' : 'finite number'}, got ${JSON.stringify(value)}`,
      { details: { field: key, value } },
    );
  }
  return value;
}

const DTYPES: Record<string, FloatDType> = { float32: 'F32', bfloat16: 'BF16', float16: 'F16' };

/** Validates an HF `config.json` object. */
export function parseConfig(input: unknown): CausalLMConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError('config.json must hold a JSON object');
  }
  const raw = input as Record<string, unknown>;
  const modelType = raw.model_type ?? 'qwen2';
  if (modelType !== 'qwen2' && modelType !== 'llama') {
    throw new ConfigError(
      `config.json: model_type ${JSON.stringify(modelType)} is not supported; use "qwen2" or "llama"`,
      { details: { field: 'model_type', value: modelType } },
    );
  }
  const act = raw.hidden_act ?? 'silu';
  if (act !== 'silu') {
    throw new ConfigError(
      `config.json: hidden_act ${JSON.stringify(act)} is not supported; only "silu"`,
      { details: { field: 'hidden_act', value: act } },
    );
  }
  if (raw.rope_scaling !== undefined && raw.rope_scaling !== null) {
    throw new ConfigError(
      'config.json: rope_scaling is set, but only plain RoPE is supported; use a checkpoint without rope_scaling',
      { details: { field: 'rope_scaling' } },
    );
  }
  if (raw.use_sliding_window === true) {
    throw new ConfigError(
      'config.json: use_sliding_window true is not supported; set it to false',
      { details: { field: 'use_sliding_window' } },
    );
  }
  const hiddenSize = num(raw, 'hidden_size', 4096, true);
  const heads = num(raw, 'num_attention_heads', 32, true);
  const kvHeads = num(raw, 'num_key_value_heads', heads, true);
  if (heads % kvHeads !== 0) {
    throw new ConfigError(
      `config.json: num_attention_heads ${heads} is not a multiple of num_key_value_heads ${kvHeads}`,
      { details: { field: 'num_key_value_heads', value: kvHeads } },
    );
  }
  const headDim = num(raw, 'head_dim', hiddenSize / heads, true);
  if (headDim % 2 !== 0) {
    throw new ConfigError(`config.json: head_dim ${headDim} must be even for rotary embeddings`, {
      details: { field: 'head_dim', value: headDim },
    });
  }
  const dtypeName = raw.torch_dtype ?? raw.dtype ?? 'float32';
  const dtype = DTYPES[String(dtypeName)];
  if (dtype === undefined) {
    throw new ConfigError(
      `config.json: torch_dtype ${JSON.stringify(dtypeName)} is not supported; use float32, bfloat16 or float16`,
      { details: { field: 'torch_dtype', value: dtypeName } },
    );
  }
  const eos = raw.eos_token_id;
  const eosTokenIds = Array.isArray(eos)
    ? eos.filter((x): x is number => typeof x === 'number')
    : typeof eos === 'number'
      ? [eos]
      : [];
  const isQwen = modelType === 'qwen2';
  const attentionBias = isQwen ? true : raw.attention_bias === true;
  return {
    modelType,
    vocabSize: num(raw, 'vocab_size', 151936, true),
    hiddenSize,
    intermediateSize: num(raw, 'intermediate_size', 22016, true),
    numHiddenLayers: num(raw, 'num_hidden_layers', 32, true),
    numAttentionHeads: heads,
    numKeyValueHeads: kvHeads,
    headDim,
    rmsNormEps: num(raw, 'rms_norm_eps', 1e-6, false),
    ropeTheta: num(raw, 'rope_theta', 10000, false),
    tieWordEmbeddings: raw.tie_word_embeddings === true,
    attentionBias,
    outputBias: !isQwen && attentionBias,
    mlpBias: !isQwen && raw.mlp_bias === true,
    maxPositionEmbeddings: num(raw, 'max_position_embeddings', 32768, true),
    dtype,
    ...(typeof raw.bos_token_id === 'number' ? { bosTokenId: raw.bos_token_id } : {}),
    eosTokenIds,
    raw: { ...raw },
  };
}

/**
 * The parsed `config.json` of a Hugging Face model folder: a `DataError` naming the file when it
 * cannot be read or is not JSON, and {@link parseConfig}'s `ConfigError` naming the field when a
 * value is not supported.
 */
export async function readCheckpointConfig(dir: string): Promise<CausalLMConfig> {
  const path = `${dir}/config.json`;
  const fix =
    'point it at a Hugging Face model folder (config.json with model.safetensors or its shards)';
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new DataError(`${path} cannot be read; ${fix}`, { cause, details: { path } });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new DataError(`${path} cannot be read as JSON (${(cause as Error).message}); ${fix}`, {
      cause,
      details: { path },
    });
  }
  return parseConfig(raw);
}
