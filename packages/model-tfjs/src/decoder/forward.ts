/**
 * The decoder forward pass (as Hugging Face transformers' Qwen2 computes it) over a batch of token ids with explicit positions and an
 * additive mask, optionally extending a per-layer KV cache of post-rotary keys and values.
 */

import type { CausalLMConfig } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { rotaryAttention } from '../backends/webgpu/kernels/attention.ts';
import { fusedKernelsActive } from '../backends/webgpu/kernels/fused.ts';
import {
  appendKeys,
  appendValues,
  writeKeys,
  writeValues,
} from '../backends/webgpu/kernels/kv-cache.ts';
import { residualRmsNorm } from '../backends/webgpu/kernels/residual.ts';
import { gatherSplitRows } from '../backends/webgpu/split.ts';
import {
  attention,
  type LinearSpec,
  type LowRank,
  linear,
  linearOf,
  MASKED,
  mlp,
  rmsNorm,
  rotary,
  rotaryTables,
  sharedLinear,
  sharesProjections,
  tiedHeadInPlace,
} from './ops.ts';

/** Constants of the rotary embedding: `inv_freq` and the rotate-half matrix (see ops.ts). */
export interface RotaryConstants {
  readonly invFreq: Float32Array;
  readonly rotateHalf: tf.Tensor2D;
}

/** Looks up a parameter by HF name (linear weights `[in, out]`). */
export type WeightLookup = (name: string) => tf.Tensor;

/**
 * The blocks of a parameter held split (over the GPU binding limit, see backends/webgpu/split.ts), or
 * `undefined` when it is held whole: the embedding as row blocks `[V_k, H]`, an untied head as
 * column blocks `[H, V_k]` of its `[in, out]` layout (row blocks of the HF `[V, H]` matrix).
 */
export type BlockLookup = (name: string) => readonly tf.Tensor2D[] | undefined;

/**
 * LoRA adapters by linear weight name (HF `….weight`): with adapters the base weights are frozen
 * (no gradient) and each adapted projection adds its low-rank term.
 */
export type AdapterLookup = (name: string) => LowRank | undefined;

/**
 * Cached post-rotary keys `[B, nkv, d, S]` (transposed) and values `[B, nkv, S, d]` of one layer.
 * With `length`, a cache of fixed capacity (`allocateLayerCache`): only the first `length`
 * positions are written, and an inference pass on webgpu writes its new positions into the same
 * tensors in place (the output's cache is the same tensors with a larger `length`) instead of
 * appending into new ones.
 */
export interface LayerCache {
  readonly k: tf.Tensor4D;
  readonly v: tf.Tensor4D;
  readonly length?: number;
}

/** Whether a forward pass writes a fixed-capacity cache in place (else it appends copies). */
export function writesCacheInPlace(inference: boolean): boolean {
  return inference && fusedKernelsActive('kvCache');
}

/** Inputs of one forward call. */
export interface ForwardInputs {
  /** Token ids `[B, T]`. */
  readonly ids: tf.Tensor2D;
  /** Absolute position of every input token, row-major `[B·T]`. */
  readonly positions: ArrayLike<number>;
  /** Additive mask `[B or 1, 1, T, S]` (S = cached + T). */
  readonly mask: tf.Tensor4D;
  readonly cache?: readonly LayerCache[];
  /** No gradient will be taken: use plain matmuls (faster for small shapes). */
  readonly inference?: boolean;
  /** The most bytes one kernel may bind (webgpu): attention's score matrix must fit it. */
  readonly maxBindingBytes?: number | undefined;
}

/** Final-norm hidden states `[B·T, H]` and the extended cache (when one was given or asked for). */
export interface ForwardOutput {
  readonly hidden: tf.Tensor2D;
  readonly cache: LayerCache[];
}

function optional(get: WeightLookup, name: string, present: boolean): tf.Tensor1D | undefined {
  return present ? (get(name) as tf.Tensor1D) : undefined;
}

/** `[rows, d]` table rows written `heads` times each: `[rows, heads, d]`. */
function repeatOverHeads(table: Float32Array, heads: number, d: number): Float32Array {
  const rows = table.length / d;
  const out = new Float32Array(rows * heads * d);
  for (let r = 0; r < rows; r++) {
    const row = table.subarray(r * d, (r + 1) * d);
    for (let h = 0; h < heads; h++) out.set(row, (r * heads + h) * d);
  }
  return out;
}

/** Runs embeddings, every decoder layer and the final norm. */
export function decoderForward(
  config: CausalLMConfig,
  get: WeightLookup,
  rope: RotaryConstants,
  inputs: ForwardInputs,
  blocks: BlockLookup = () => undefined,
  adapters?: AdapterLookup,
): ForwardOutput {
  const [B, T] = inputs.ids.shape;
  const { numAttentionHeads: nh, numKeyValueHeads: nkv, headDim: d, rmsNormEps: eps } = config;
  const tables = rotaryTables(inputs.positions, rope.invFreq);
  // Inference on webgpu: new keys and values go straight into the cache layout, one dispatch
  // each (backends/webgpu/kernels/kv-cache.ts), and the residual adds ride in the matmuls; the rotary tables are
  // one row per position, shared by the heads.
  const inference = inputs.inference === true;
  const direct = writesCacheInPlace(inference);
  // A differentiated pass on webgpu without a cache starts its keys and values with the same
  // kernels, which have gradients of one dispatch each.
  const cacheLayout =
    direct ||
    (!inference &&
      inputs.cache === undefined &&
      tf.getBackend() === 'webgpu' &&
      fusedKernelsActive('kvCache'));
  const rows = cacheLayout
    ? {
        cos: tf.tensor2d(tables.cos, [B * T, d]),
        sin: tf.tensor2d(tables.sin, [B * T, d]),
      }
    : undefined;
  // Tables repeated over heads in JS: same-shape products are faster than broadcasts on wasm.
  const headTables = (heads: number) =>
    rows === undefined
      ? {
          cos: tf.tensor4d(repeatOverHeads(tables.cos, heads, d), [B, T, heads, d]),
          sin: tf.tensor4d(repeatOverHeads(tables.sin, heads, d), [B, T, heads, d]),
        }
      : { cos: tf.reshape(rows.cos, [B, T, 1, d]), sin: tf.reshape(rows.sin, [B, T, 1, d]) };
  const qTables = headTables(nh);
  const kTables = nkv === nh || rows !== undefined ? qTables : headTables(nkv);
  const flatIds = tf.reshape(inputs.ids, [B * T]) as tf.Tensor1D;
  const embedding = blocks('model.embed_tokens.weight');
  let x =
    embedding === undefined
      ? (tf.gather(get('model.embed_tokens.weight'), flatIds) as tf.Tensor2D)
      : gatherSplitRows(embedding, flatIds);
  const newCache: LayerCache[] = [];
  const onWebGPU = tf.getBackend() === 'webgpu';
  // The residual stream and its norm: in a pass that may be differentiated on webgpu, one op
  // whose backward adds the stream's gradient inside the norm's gradient kernel.
  const streamNorm = !inference && fusedKernelsActive('rmsNorm');
  const normStream = (s: tf.Tensor2D, w: tf.Tensor1D): [tf.Tensor2D, tf.Tensor2D] =>
    streamNorm ? residualRmsNorm(s, w, eps) : [s, rmsNorm(s, w, eps)];
  for (let l = 0; l < config.numHiddenLayers; l++) {
    // On webgpu, one scope per layer: the layer's temporaries that no gradient saved (LoRA's
    // partial products, pre-residual sums, ...) are freed when it ends, not held until the whole
    // forward pass ends; what a gradient needs is kept by the tape. Not on the other backends:
    // on wasm the earlier frees moved the runner's llama.cpp resume test's log-prob metrics by
    // ~6e-9 between a resumed and an uninterrupted run (past its tolerance); the cause is not
    // yet known.
    const layerInput = x;
    let length: number | undefined;
    const scoped = onWebGPU ? tf.tidy : <T extends tf.TensorContainer>(fn: () => T): T => fn();
    const out = scoped(() => {
      let x = layerInput;
      const p = `model.layers.${l}`;
      let h: tf.Tensor2D;
      [x, h] = normStream(x, get(`${p}.input_layernorm.weight`) as tf.Tensor1D);
      const frozen = adapters !== undefined;
      const adapter = (name: string) => adapters?.(`${p}.${name}.weight`);
      // q, k and v share their input: one op on webgpu (its backward sums the input gradient
      // without an add per projection).
      const spec = (name: string, bias: boolean, residual?: tf.Tensor2D): LinearSpec => ({
        weight: get(`${p}.self_attn.${name}.weight`) as tf.Tensor2D,
        bias: optional(get, `${p}.self_attn.${name}.bias`, bias),
        frozen,
        lora: adapter(`self_attn.${name}`),
        residual,
      });
      // Elsewhere each is computed where it is used, as before.
      const names = ['q_proj', 'k_proj', 'v_proj'] as const;
      const specs = names.map((name) => spec(name, config.attentionBias));
      const shared = sharesProjections(specs, inference) ? sharedLinear(h, specs, inference) : [];
      const proj = (name: (typeof names)[number]) => {
        const i = names.indexOf(name);
        return shared[i] ?? linearOf(h, specs[i] as LinearSpec, inference);
      };
      const qRaw = tf.reshape(proj('q_proj'), [B, T, nh, d]) as tf.Tensor4D;
      // A decode step on webgpu rotates the queries inside the attention kernel.
      const rotateInAttention =
        inference &&
        rows !== undefined &&
        T === 1 &&
        fusedKernelsActive('decodeAttention') &&
        fusedKernelsActive('rotary');
      const q = rotateInAttention
        ? qRaw
        : (rotary(qRaw, qTables.cos, qTables.sin, rope.rotateHalf) as tf.Tensor4D);
      // Keys are kept transposed, [B, nkv, d, S], so attention never transposes the whole cache.
      let past = inputs.cache?.[l];
      let k: tf.Tensor4D;
      let v: tf.Tensor4D;
      if (rows !== undefined && past?.length !== undefined) {
        writeKeys(proj('k_proj'), rows.cos, rows.sin, B, nkv, past.k, past.length);
        writeValues(proj('v_proj'), B, nkv, past.v, past.length);
        k = past.k;
        v = past.v;
        length = past.length + T;
      } else if (rows !== undefined) {
        k = appendKeys(proj('k_proj'), rows.cos, rows.sin, B, nkv, past?.k);
        v = appendValues(proj('v_proj'), B, nkv, past?.v);
      } else {
        if (past?.length !== undefined) {
          // A fixed-capacity cache on the composed path: its written part, appended to as usual.
          const n = past.length;
          past =
            n === 0
              ? undefined
              : {
                  k: tf.slice(past.k, [0, 0, 0, 0], [B, nkv, d, n]),
                  v: tf.slice(past.v, [0, 0, 0, 0], [B, nkv, n, d]),
                };
        }
        const kNew = tf.transpose(
          rotary(
            tf.reshape(proj('k_proj'), [B, T, nkv, d]),
            kTables.cos,
            kTables.sin,
            rope.rotateHalf,
          ),
          [0, 2, 3, 1],
        ) as tf.Tensor4D;
        const vNew = tf.transpose(
          tf.reshape(proj('v_proj'), [B, T, nkv, d]),
          [0, 2, 1, 3],
        ) as tf.Tensor4D;
        k = past === undefined ? kNew : (tf.concat([past.k, kNew], 3) as tf.Tensor4D);
        v = past === undefined ? vNew : (tf.concat([past.v, vNew], 2) as tf.Tensor4D);
      }
      const attn =
        rotateInAttention && rows !== undefined
          ? rotaryAttention(qRaw, rows.cos, rows.sin, k, v, inputs.mask)
          : attention(q, k, v, inputs.mask, inference, inputs.maxBindingBytes);
      [x] = sharedLinear(attn, [spec('o_proj', config.outputBias, x)], inference) as [tf.Tensor2D];
      let h2: tf.Tensor2D;
      [x, h2] = normStream(x, get(`${p}.post_attention_layernorm.weight`) as tf.Tensor1D);
      x = mlp(
        h2,
        get(`${p}.mlp.gate_proj.weight`) as tf.Tensor2D,
        get(`${p}.mlp.up_proj.weight`) as tf.Tensor2D,
        get(`${p}.mlp.down_proj.weight`) as tf.Tensor2D,
        config.mlpBias
          ? {
              gate: get(`${p}.mlp.gate_proj.bias`) as tf.Tensor1D,
              up: get(`${p}.mlp.up_proj.bias`) as tf.Tensor1D,
              down: get(`${p}.mlp.down_proj.bias`) as tf.Tensor1D,
            }
          : undefined,
        {
          frozen,
          lora: {
            gate: adapter('mlp.gate_proj'),
            up: adapter('mlp.up_proj'),
            down: adapter('mlp.down_proj'),
          },
          residual: x,
          inference,
        },
      );
      return { x, k, v };
    });
    x = out.x;
    newCache.push(length === undefined ? { k: out.k, v: out.v } : { k: out.k, v: out.v, length });
  }
  return { hidden: rmsNorm(x, get('model.norm.weight') as tf.Tensor1D, eps), cache: newCache };
}

/**
 * Logits `[N, V]` of hidden states `[N, H]`; the tied head uses the embedding, transposed
 * explicitly. A split head is applied block by block and the logits concatenated (the caller
 * keeps `N · V · 4` bytes under the binding limit). `frozen`: the head takes no gradient (LoRA).
 */
export function headLogits(
  config: CausalLMConfig,
  get: WeightLookup,
  hidden: tf.Tensor2D,
  blocks: BlockLookup = () => undefined,
  frozen = false,
): tf.Tensor2D {
  const split = blocks(config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  if (split !== undefined) {
    const parts = split.map((block) =>
      linear(
        hidden,
        config.tieWordEmbeddings ? (tf.transpose(block) as tf.Tensor2D) : block,
        undefined,
        { frozen },
      ),
    );
    return (parts.length === 1 ? parts[0] : tf.concat(parts, 1)) as tf.Tensor2D;
  }
  if (config.tieWordEmbeddings && tiedHeadInPlace()) {
    // No [H, V] copy per call (544 MB for Qwen2.5-0.5B).
    return tf.matMul(hidden, get('model.embed_tokens.weight'), false, true) as tf.Tensor2D;
  }
  const head = config.tieWordEmbeddings
    ? tf.transpose(get('model.embed_tokens.weight'))
    : get('lm_head.weight');
  return linear(hidden, head as tf.Tensor2D, undefined, { frozen });
}

/**
 * Additive mask `[B, 1, T, S]`: query `t` (absolute column `offset + t`) sees key column `s` when
 * `s <= offset + t` and `keyValid[b][s]`.
 */
export function buildMask(
  keyValid: readonly (readonly boolean[])[] | undefined,
  B: number,
  T: number,
  S: number,
): tf.Tensor4D {
  const offset = S - T;
  const rows = keyValid === undefined ? 1 : B;
  const data = new Float32Array(rows * T * S);
  for (let b = 0; b < rows; b++) {
    const valid = keyValid?.[b];
    for (let t = 0; t < T; t++) {
      const base = (b * T + t) * S;
      for (let s = 0; s < S; s++) {
        if (s > offset + t || (valid !== undefined && valid[s] !== true)) data[base + s] = MASKED;
      }
    }
  }
  return tf.tensor4d(data, [rows, 1, T, S]);
}
