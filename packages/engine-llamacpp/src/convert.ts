/**
 * Hugging Face Qwen2 / Llama checkpoints (F32, F16 or BF16 safetensors) as GGUF files llama.cpp
 * loads. Tensor names and metadata keys follow llama.cpp's `convert_hf_to_gguf.py` and its model
 * loader (`src/llama-arch.cpp`, `src/llama-model.cpp`):
 *
 * - matrices keep their bytes: an HF `[out, in]` weight is GGUF `ne = [in, out]`;
 * - norms and biases are always F32 (as the upstream converter writes them);
 * - `llama` applies rotary embeddings to interleaved pairs where Hugging Face rotates the two
 *   halves of each head, so q/k rows are permuted per head (upstream `LlamaModel.permute`);
 *   `qwen2` uses the half-split ("NEOX") rotation and needs no permutation;
 * - the vocabulary is written so that llama.cpp accepts our token ids as they are: a byte-level
 *   BPE (`gpt2`) table with one unique string per id and no merges. llama.cpp never tokenizes
 *   for us (prompts go in as ids), and BPE is the one vocabulary type whose loader accepts
 *   arbitrary strings, a word-level vocabulary included, without aborting: SPM needs byte tokens,
 *   and `none` asserts on the test tokenization node-llama-cpp runs after loading.
 */

import { DataError, InvalidInputError } from '@agentrl/core';
import {
  type CausalLMConfig,
  LORA_STATE_FILE,
  type NamedTensor,
  readCheckpointConfig,
  readCheckpointTensors,
  readSafetensorsFile,
} from '@agentrl/core/checkpoint';
import { type GgufContents, type GgufTensor, type GgufValue, writeGguf } from './gguf.ts';

/** Options of {@link checkpointToGguf} and {@link ggufFromCheckpoint}. */
export interface GgufConversionOptions {
  /** Element type of the matrices (norms and biases stay F32). Default `'F32'`. */
  readonly type?: 'F32' | 'F16' | 'BF16';
  /**
   * Token strings by id (for example a word-level tokenizer's vocabulary), kept for display in
   * llama.cpp tools. Ids past its end, empty strings and repeats get unique placeholders
   * (`[id]`). Default: placeholders for every id.
   */
  readonly tokens?: readonly string[];
  /** Name written as `general.name`. Default `'agentrl checkpoint'`. */
  readonly name?: string;
}

// llama.cpp `llama_ftype`: ALL_F32 0, MOSTLY_F16 1, MOSTLY_BF16 32.
const FILE_TYPE = { F32: 0, F16: 1, BF16: 32 } as const;
// llama.cpp `llama_token_type`: NORMAL 1, CONTROL 3.
const TOKEN_NORMAL = 1;
const TOKEN_CONTROL = 3;

/** One unique string per id: given strings where usable, `[id]` placeholders elsewhere. */
export function uniqueTokenStrings(vocabSize: number, tokens: readonly string[] = []): string[] {
  // Given strings first (each at its first id), so that no placeholder takes one of them.
  const out: (string | undefined)[] = new Array(vocabSize).fill(undefined);
  const seen = new Set<string>();
  for (let id = 0; id < Math.min(vocabSize, tokens.length); id++) {
    const s = tokens[id];
    if (s === undefined || s === '' || seen.has(s)) continue;
    seen.add(s);
    out[id] = s;
  }
  for (let id = 0; id < vocabSize; id++) {
    if (out[id] !== undefined) continue;
    let s = `[${id}]`;
    while (seen.has(s)) s = `[${s}]`;
    seen.add(s);
    out[id] = s;
  }
  return out as string[];
}

/**
 * Reorders the rows of a q or k projection (weight `[heads·d, in]` or bias `[heads·d]`) from
 * Hugging Face's half-split rotary layout to the interleaved pairs llama.cpp's `llama`
 * architecture rotates: within each head, row `t·d/2 + i` moves to `2i + t`.
 */
export function permuteRotaryRows(
  data: Float32Array,
  heads: number,
  rowLength: number,
): Float32Array {
  const rows = data.length / rowLength;
  const d = rows / heads;
  if (!Number.isInteger(d) || d % 2 !== 0) {
    throw new InvalidInputError(
      `permuteRotaryRows: ${rows} rows do not split into ${heads} heads of even size`,
      { details: { rows, heads } },
    );
  }
  const half = d / 2;
  const out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++) {
    for (let t = 0; t < 2; t++) {
      for (let i = 0; i < half; i++) {
        const from = (h * d + t * half + i) * rowLength;
        const to = (h * d + 2 * i + t) * rowLength;
        out.set(data.subarray(from, from + rowLength), to);
      }
    }
  }
  return out;
}

/** The GGUF contents of a checkpoint: metadata and tensors, not yet written. */
export function ggufFromCheckpoint(
  config: CausalLMConfig,
  tensors: ReadonlyMap<string, NamedTensor>,
  options: GgufConversionOptions = {},
): GgufContents {
  const type = options.type ?? 'F32';
  if (type !== 'F32' && type !== 'F16' && type !== 'BF16') {
    throw new InvalidInputError(
      `GGUF conversion: type ${JSON.stringify(type)} is not supported; use 'F32', 'F16' or 'BF16'`,
      { details: { field: 'type', value: type } },
    );
  }
  const arch = config.modelType;
  const c = config;
  const used = new Set<string>();
  const get = (name: string, shape: readonly number[]): NamedTensor => {
    const t = tensors.get(name);
    if (t === undefined) {
      throw new DataError(
        `GGUF conversion: the checkpoint has no tensor ${name}; check that config.json matches the weights`,
        { details: { name } },
      );
    }
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new DataError(
        `GGUF conversion: tensor ${name} has shape ${JSON.stringify(t.shape)}, expected ${JSON.stringify(shape)} from config.json`,
        { details: { name, shape: t.shape, expected: shape } },
      );
    }
    used.add(name);
    return t;
  };
  const out: GgufTensor[] = [];
  const matrix = (from: string, to: string, shape: [number, number], permuteHeads?: number) => {
    const t = get(from, shape);
    const data =
      permuteHeads === undefined ? t.data : permuteRotaryRows(t.data, permuteHeads, shape[1]);
    out.push({ name: to, dims: [shape[1], shape[0]], type, data });
  };
  const vector = (from: string, to: string, length: number, permuteHeads?: number) => {
    const t = get(from, [length]);
    const data = permuteHeads === undefined ? t.data : permuteRotaryRows(t.data, permuteHeads, 1);
    out.push({ name: to, dims: [length], type: 'F32', data });
  };

  const E = c.hiddenSize;
  const V = c.vocabSize;
  const F = c.intermediateSize;
  const q = c.numAttentionHeads * c.headDim;
  const kv = c.numKeyValueHeads * c.headDim;
  const permuteQ = arch === 'llama' ? c.numAttentionHeads : undefined;
  const permuteK = arch === 'llama' ? c.numKeyValueHeads : undefined;

  matrix('model.embed_tokens.weight', 'token_embd.weight', [V, E]);
  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `model.layers.${l}`;
    const b = `blk.${l}`;
    vector(`${p}.input_layernorm.weight`, `${b}.attn_norm.weight`, E);
    matrix(`${p}.self_attn.q_proj.weight`, `${b}.attn_q.weight`, [q, E], permuteQ);
    matrix(`${p}.self_attn.k_proj.weight`, `${b}.attn_k.weight`, [kv, E], permuteK);
    matrix(`${p}.self_attn.v_proj.weight`, `${b}.attn_v.weight`, [kv, E]);
    if (c.attentionBias) {
      vector(`${p}.self_attn.q_proj.bias`, `${b}.attn_q.bias`, q, permuteQ);
      vector(`${p}.self_attn.k_proj.bias`, `${b}.attn_k.bias`, kv, permuteK);
      vector(`${p}.self_attn.v_proj.bias`, `${b}.attn_v.bias`, kv);
    }
    matrix(`${p}.self_attn.o_proj.weight`, `${b}.attn_output.weight`, [E, q]);
    if (c.outputBias) vector(`${p}.self_attn.o_proj.bias`, `${b}.attn_output.bias`, E);
    vector(`${p}.post_attention_layernorm.weight`, `${b}.ffn_norm.weight`, E);
    matrix(`${p}.mlp.gate_proj.weight`, `${b}.ffn_gate.weight`, [F, E]);
    matrix(`${p}.mlp.up_proj.weight`, `${b}.ffn_up.weight`, [F, E]);
    matrix(`${p}.mlp.down_proj.weight`, `${b}.ffn_down.weight`, [E, F]);
    if (c.mlpBias) {
      vector(`${p}.mlp.gate_proj.bias`, `${b}.ffn_gate.bias`, F);
      vector(`${p}.mlp.up_proj.bias`, `${b}.ffn_up.bias`, F);
      vector(`${p}.mlp.down_proj.bias`, `${b}.ffn_down.bias`, E);
    }
  }
  vector('model.norm.weight', 'output_norm.weight', E);
  // A tied head is written once (as token_embd); llama.cpp reuses it when `output` is absent.
  if (!c.tieWordEmbeddings) matrix('lm_head.weight', 'output.weight', [V, E]);
  for (const name of tensors.keys()) {
    if (used.has(name) || name.endsWith('rotary_emb.inv_freq')) continue;
    if (c.tieWordEmbeddings && name === 'lm_head.weight') continue;
    throw new DataError(
      `GGUF conversion: unexpected tensor ${name} for a ${arch} model with this config; check that config.json matches the weights`,
      { details: { name } },
    );
  }

  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const f32 = (value: number): GgufValue => ({ type: 'f32', value });
  const tokenTypes = new Int32Array(V).fill(TOKEN_NORMAL);
  const specials = [c.bosTokenId, ...c.eosTokenIds].filter(
    (id): id is number => id !== undefined && id >= 0 && id < V,
  );
  for (const id of specials) tokenTypes[id] = TOKEN_CONTROL;
  const metadata: [string, GgufValue][] = [
    ['general.architecture', { type: 'string', value: arch }],
    ['general.name', { type: 'string', value: options.name ?? 'agentrl checkpoint' }],
    ['general.file_type', u32(FILE_TYPE[type])],
    [`${arch}.vocab_size`, u32(V)],
    [`${arch}.context_length`, u32(c.maxPositionEmbeddings)],
    [`${arch}.embedding_length`, u32(E)],
    [`${arch}.block_count`, u32(c.numHiddenLayers)],
    [`${arch}.feed_forward_length`, u32(F)],
    [`${arch}.attention.head_count`, u32(c.numAttentionHeads)],
    [`${arch}.attention.head_count_kv`, u32(c.numKeyValueHeads)],
    [`${arch}.attention.key_length`, u32(c.headDim)],
    [`${arch}.attention.value_length`, u32(c.headDim)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(c.rmsNormEps)],
    [`${arch}.rope.dimension_count`, u32(c.headDim)],
    [`${arch}.rope.freq_base`, f32(c.ropeTheta)],
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: 'default' }],
    ['tokenizer.ggml.tokens', { type: 'string[]', value: uniqueTokenStrings(V, options.tokens) }],
    ['tokenizer.ggml.token_type', { type: 'i32[]', value: tokenTypes }],
    ['tokenizer.ggml.merges', { type: 'string[]', value: [] }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ];
  if (c.bosTokenId !== undefined && c.bosTokenId < V)
    metadata.push(['tokenizer.ggml.bos_token_id', u32(c.bosTokenId)]);
  const eos = c.eosTokenIds.find((id) => id >= 0 && id < V);
  if (eos !== undefined) metadata.push(['tokenizer.ggml.eos_token_id', u32(eos)]);
  return { metadata, tensors: out };
}

/**
 * Reads a Hugging Face model folder (`config.json` plus `model.safetensors` or shards) and writes
 * it to `outPath` as GGUF. Returns the checkpoint's parsed config.
 */
export async function checkpointToGguf(
  dir: string,
  outPath: string,
  options: GgufConversionOptions = {},
): Promise<CausalLMConfig> {
  const config = await readCheckpointConfig(dir);
  const tensors = await readCheckpointTensors(dir);
  await writeGguf(outPath, ggufFromCheckpoint(config, tensors, options));
  return config;
}

// llama.cpp's names of the projections a LoRA adapter may target (`LORA_TARGETS` of model-tfjs).
const PROJECTIONS: Readonly<Record<string, string>> = {
  'self_attn.q_proj': 'attn_q',
  'self_attn.k_proj': 'attn_k',
  'self_attn.v_proj': 'attn_v',
  'self_attn.o_proj': 'attn_output',
  'mlp.gate_proj': 'ffn_gate',
  'mlp.up_proj': 'ffn_up',
  'mlp.down_proj': 'ffn_down',
};

/** LoRA adapters in our layout: per adapted weight (HF name without `.weight`), `A` `[in, r]` and `B` `[r, out]`. */
export interface LoRAAdapterSet {
  readonly rank: number;
  readonly alpha: number;
  readonly adapters: ReadonlyMap<string, { readonly a: NamedTensor; readonly b: NamedTensor }>;
}

function transposed(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) out[j * rows + i] = data[i * cols + j] as number;
  return out;
}

/**
 * A GGUF LoRA adapter for llama.cpp (`general.type` adapter, `adapter.type` lora,
 * `adapter.lora.alpha`; tensors `<base tensor>.lora_a` / `.lora_b`, as llama.cpp's
 * `convert_lora_to_gguf.py` writes them). Our `x·A·B` layout is the transpose of PEFT's, so both
 * factors are transposed: `lora_a` is PEFT's `A` `[r, in]` (ggml `ne = [in, r]`) and `lora_b` its
 * `B` `[out, r]` (`ne = [r, out]`), whose rows get the same rotary permutation as the base q/k
 * weights for `llama`. llama.cpp scales by `alpha / r`, as our adapters do.
 */
export function ggufFromLoRA(config: CausalLMConfig, lora: LoRAAdapterSet): GgufContents {
  const tensors: GgufTensor[] = [];
  for (const [base, { a, b }] of lora.adapters) {
    const m = /^model\.layers\.(\d+)\.(.+)$/.exec(base);
    const projection = m === null ? undefined : PROJECTIONS[m[2] as string];
    if (m === null || projection === undefined) {
      throw new DataError(
        `GGUF LoRA conversion: ${base} is not an adaptable projection (q/k/v/o/gate/up/down of a layer)`,
        { details: { name: base } },
      );
    }
    const [inputs, rank] = a.shape as [number, number];
    const [rankB, outputs] = b.shape as [number, number];
    if (a.shape.length !== 2 || b.shape.length !== 2 || rank !== rankB || rank !== lora.rank) {
      throw new DataError(
        `GGUF LoRA conversion: ${base} has A ${JSON.stringify(a.shape)} and B ${JSON.stringify(b.shape)}; expected [in, ${lora.rank}] and [${lora.rank}, out]`,
        { details: { name: base } },
      );
    }
    const name = `blk.${m[1]}.${projection}.weight`;
    let bPeft = transposed(b.data, rank, outputs);
    if (config.modelType === 'llama' && projection === 'attn_q')
      bPeft = permuteRotaryRows(bPeft, config.numAttentionHeads, rank);
    if (config.modelType === 'llama' && projection === 'attn_k')
      bPeft = permuteRotaryRows(bPeft, config.numKeyValueHeads, rank);
    tensors.push({
      name: `${name}.lora_a`,
      dims: [inputs, rank],
      type: 'F32',
      data: transposed(a.data, inputs, rank),
    });
    tensors.push({ name: `${name}.lora_b`, dims: [rank, outputs], type: 'F32', data: bPeft });
  }
  return {
    metadata: [
      ['general.architecture', { type: 'string', value: config.modelType }],
      ['general.type', { type: 'string', value: 'adapter' }],
      ['adapter.type', { type: 'string', value: 'lora' }],
      ['adapter.lora.alpha', { type: 'f32', value: lora.alpha }],
    ],
    tensors,
  };
}

/**
 * Reads the adapters a LoRA run saved (`lora.safetensors` in `adapterDir`: model-tfjs's training
 * state, whose metadata holds the rank and α) and writes them to `outPath` as a GGUF adapter for a
 * base with `config`.
 */
export async function loraToGguf(
  adapterDir: string,
  config: CausalLMConfig,
  outPath: string,
): Promise<void> {
  const path = `${adapterDir}/${LORA_STATE_FILE}`;
  const { tensors, metadata } = await readSafetensorsFile(path);
  const rank = Number(metadata.rank);
  const alpha = Number(metadata.alpha);
  if (!Number.isInteger(rank) || rank <= 0 || !Number.isFinite(alpha)) {
    throw new DataError(
      `${path}: metadata rank ${JSON.stringify(metadata.rank)} / alpha ${JSON.stringify(metadata.alpha)} are not a LoRA rank and α; point adapterDir at a folder a LoRA run saved`,
      { details: { path, field: 'rank' } },
    );
  }
  const adapters = new Map<string, { a: NamedTensor; b: NamedTensor }>();
  for (const [key, t] of tensors) {
    const m = /^(.+)\.lora_([AB])$/.exec(key);
    if (m === null) continue;
    const entry = adapters.get(m[1] as string) ?? ({} as { a: NamedTensor; b: NamedTensor });
    if (m[2] === 'A') entry.a = t;
    else entry.b = t;
    adapters.set(m[1] as string, entry);
  }
  for (const [base, { a, b }] of adapters) {
    if (a === undefined || b === undefined)
      throw new DataError(`${path}: ${base} has only one of lora_A / lora_B`, {
        details: { path, name: base },
      });
  }
  await writeGguf(outPath, ggufFromLoRA(config, { rank, alpha, adapters }));
}
