/**
 * The Qwen2 building blocks as small pure functions of tensors (as Hugging Face transformers' Qwen2 computes them). Every matmul goes
 * through {@link matMulNN}: with XNNPACK on wasm a transposed operand is 10-13x slower than the
 * plain layout, so linear weights live as `[in, out]` and both gradients are plain
 * matmuls on explicitly transposed operands. Where the matmul reads transposed operands at full
 * speed (our wasm kernel, `backends/wasm/gemm.ts`, and webgpu) the gradients pass transpose flags instead.
 */
import * as tf from '@tensorflow/tfjs';
import { wasmMatMul } from '../backends/wasm/kernels.ts';
import { fusedAttention } from '../backends/webgpu/kernels/attention.ts';
import { flashAttention } from '../backends/webgpu/kernels/flash-attention.ts';
import { flashAttentionFits } from '../backends/webgpu/kernels/flash-tiles.ts';
import {
  fusedKernelsActive,
  fusedRmsNorm,
  fusedRotary,
  fusedSwiGLU,
} from '../backends/webgpu/kernels/fused.ts';
import { projectionFusable, projectShared } from '../backends/webgpu/kernels/projections.ts';

function swapLastTwo(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, i) => i);
  const n = perm.length;
  perm[n - 1] = n - 2;
  perm[n - 2] = n - 1;
  return tf.transpose(x, perm);
}

/** Whether the active backend's matmul reads a transposed operand at full speed. */
function transposeFlagsAreFree(): boolean {
  return fusedKernelsActive('matMul') || wasmMatMul() === 'agentrl';
}

/**
 * Whether a tied head multiplies by the embedding read transposed in place (our wasm matmul,
 * whose packed panels are cached by the embedding's own data, or webgpu's `a · bᵀ` program, which
 * reads it along K) rather than by a transposed copy.
 */
export function tiedHeadInPlace(): boolean {
  return wasmMatMul() === 'agentrl' || fusedKernelsActive('transposedMatMul');
}

/** `a · b` for `[..., M, K] x [..., K, N]` whose forward and gradients are all untransposed matmuls. */
export const matMulNN = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [a, b, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const g = dy as tf.Tensor;
      const [sa, sb] = saved as [tf.Tensor, tf.Tensor];
      // webgpu and our wasm kernel read transposed operands directly: flags, not transposes.
      if (transposeFlagsAreFree())
        return [tf.matMul(g, sb, false, true), tf.matMul(sa, g, true, false)];
      return [tf.matMul(g, swapLastTwo(sb)), tf.matMul(swapLastTwo(sa), g)];
    },
  };
}) as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

/**
 * `a · b` in a pass that is differentiated unless `inference`: an inference pass needs no
 * gradient and uses plain `tf.matMul` instead of {@link matMulNN}, whose custom-gradient wrapper
 * costs a scope and identity kernels per call (which dominates a decode step of a small model).
 */
function mm(a: tf.Tensor, b: tf.Tensor, inference: boolean): tf.Tensor {
  // tfjs's own matmul gradient already uses transpose flags: where they are free, the custom
  // gradient (a scope and identity kernels per call) buys nothing.
  return inference || transposeFlagsAreFree() ? tf.matMul(a, b) : matMulNN(a, b);
}

/**
 * `x · w` for a weight that takes no gradient: only `dx` is computed. tfjs's own matmul gradient
 * skips an input outside the differentiated path; the custom gradient of {@link matMulNN} would
 * compute `dw` too (a full `[in, out]` product), so the plain-layout path takes `w` from the
 * closure and differentiates `x` alone.
 */
function frozenMatMul(x: tf.Tensor, w: tf.Tensor, inference: boolean): tf.Tensor {
  if (inference || transposeFlagsAreFree()) return tf.matMul(x, w);
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xs, save] = args as [tf.Tensor, tf.GradSaveFunc];
    save([w]);
    return {
      value: tf.matMul(xs, w),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [
        tf.matMul(dy as tf.Tensor, swapLastTwo(saved[0] as tf.Tensor)),
      ],
    };
  }) as (x: tf.Tensor) => tf.Tensor;
  return op(x);
}

/**
 * `a · b` for `[C, M, K] x [C, K, N]` as one depthwise convolution: input `[1, M, K, C]`, filter
 * `[1, K, C, N]` (channel multiplier N), valid padding, gives `out[0, m, 0, c·N + n] =
 * Σ_k a[c, m, k] · b[c, k, n]`. On wasm, `BatchMatMul` with a batched right operand falls back to
 * a scalar loop (~2 GFLOP/s) while depthwise convolution runs in XNNPACK: 2-3x faster for the
 * per-head attention products, transposes included.
 */
function batchMatMulByConv(a: tf.Tensor, b: tf.Tensor): tf.Tensor3D {
  const [C, M, K] = a.shape as [number, number, number];
  const N = b.shape[2] as number;
  const input = tf.reshape(tf.transpose(a, [1, 2, 0]), [1, M, K, C]) as tf.Tensor4D;
  const filter = tf.reshape(tf.transpose(b, [1, 0, 2]), [1, K, C, N]) as tf.Tensor4D;
  const out = tf.depthwiseConv2d(input, filter, 1, 'valid');
  return tf.transpose(tf.reshape(out, [M, C, N]), [1, 0, 2]) as tf.Tensor3D;
}

/** Rows below which the plain batched matmul is as fast (decode steps). */
const CONV_MIN_ROWS = 8;

function batchedProduct(
  a: tf.Tensor,
  b: tf.Tensor,
  transposeA = false,
  transposeB = false,
): tf.Tensor {
  const useConv =
    tf.getBackend() === 'wasm' &&
    wasmMatMul() === 'xnnpack' &&
    (a.shape[transposeA ? 2 : 1] as number) >= CONV_MIN_ROWS;
  if (!useConv) return tf.matMul(a, b, transposeA, transposeB);
  return batchMatMulByConv(
    transposeA ? tf.transpose(a, [0, 2, 1]) : a,
    transposeB ? tf.transpose(b, [0, 2, 1]) : b,
  );
}

/** Batched `[C, M, K] x [C, K, N]` with forward and both gradients through {@link batchedProduct}. */
const batchMatMulFast = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [a, b, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
  save([a, b]);
  return {
    value: batchedProduct(a, b),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const g = dy as tf.Tensor;
      const [sa, sb] = saved as [tf.Tensor, tf.Tensor];
      return [batchedProduct(g, sb, false, true), batchedProduct(sa, g, true, false)];
    },
  };
}) as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

function bmm(a: tf.Tensor, b: tf.Tensor, inference: boolean): tf.Tensor {
  if (!inference && transposeFlagsAreFree()) return tf.matMul(a, b);
  return inference ? batchedProduct(a, b) : batchMatMulFast(a, b);
}

/** A LoRA adapter of one linear weight: the layer adds `scale · (x · A) · B`. */
export interface LowRank {
  /** `[in, r]` */
  readonly a: tf.Tensor2D;
  /** `[r, out]` */
  readonly b: tf.Tensor2D;
  readonly scale: number;
}

/** How a linear layer is trained: a frozen weight gets no gradient; an adapter adds its term. */
export interface LinearOptions {
  /**
   * The weight takes no gradient (LoRA freezes the base). tfjs's fused matmul (webgpu) is a
   * custom-gradient op that always computes the weight's gradient, a full `[in, out]` product per
   * layer; a frozen weight uses the plain matmul, whose gradient tfjs prunes.
   */
  readonly frozen?: boolean;
  readonly lora?: LowRank;
  /**
   * Added to the output (the decoder's residual stream). Without a tape on webgpu it is the
   * fused matmul's bias operand, so the sum costs no dispatch of its own.
   */
  readonly residual?: tf.Tensor2D;
  /** A pass that takes no gradient (scoring, generation): plain matmuls, no custom gradients. */
  readonly inference?: boolean;
}

/**
 * `x · W + b` with `x` `[N, in]` and `W` stored `[in, out]`, plus `scale · (x · A) · B` with an
 * adapter: the factored form never forms `W + scale · A · B`, so the step computes no `[in, out]`
 * gradient and holds no merged copy of `W` for backward.
 */
export function linear(
  x: tf.Tensor2D,
  weightInOut: tf.Tensor2D,
  bias?: tf.Tensor1D,
  options: LinearOptions = {},
): tf.Tensor2D {
  let y: tf.Tensor2D;
  const { residual, lora } = options;
  const inference = options.inference === true;
  if (
    residual !== undefined &&
    bias === undefined &&
    lora === undefined &&
    inference &&
    fusedKernelsActive('matMul')
  ) {
    return tf.fused.matMul({ a: x, b: weightInOut, bias: residual }) as tf.Tensor2D;
  }
  // webgpu: the bias add runs inside the matmul kernel (gradients use transpose flags).
  if (fusedKernelsActive('matMul') && (options.frozen !== true || inference)) {
    y = tf.fused.matMul({ a: x, b: weightInOut, ...(bias ? { bias } : {}) }) as tf.Tensor2D;
  } else {
    y = (options.frozen === true ? frozenMatMul : mm)(x, weightInOut, inference) as tf.Tensor2D;
    if (bias !== undefined) y = tf.add(y, bias);
  }
  if (lora !== undefined) {
    // The scale goes on the [N, r] intermediate, the smallest tensor of the term.
    const xa = tf.mul(mm(x, lora.a, inference), lora.scale) as tf.Tensor2D;
    y = tf.add(y, mm(xa, lora.b, inference)) as tf.Tensor2D;
  }
  return residual === undefined ? y : (tf.add(residual, y) as tf.Tensor2D);
}

/** One projection of {@link sharedLinear}: `x · weight (+ bias) (+ residual) (+ LoRA term)`. */
export interface LinearSpec {
  readonly weight: tf.Tensor2D;
  readonly bias?: tf.Tensor1D | undefined;
  readonly residual?: tf.Tensor2D | undefined;
  /** See {@link LinearOptions.frozen}. */
  readonly frozen?: boolean | undefined;
  readonly lora?: LowRank | undefined;
}

/**
 * The projections of one input `x` (q/k/v, gate/up, or one alone), as {@link linear} computes
 * each. In a pass that may be differentiated on webgpu (the `matMul` switch on) they are one op
 * with its own backward (`backends/webgpu/kernels/projections.ts`): biases and residuals inside
 * the matmuls, LoRA terms by small kernels, and the input gradient summed by chained `a · bᵀ + c`
 * products instead of an add per projection.
 */
export function sharedLinear(
  x: tf.Tensor2D,
  specs: readonly LinearSpec[],
  inference: boolean,
): tf.Tensor2D[] {
  if (sharesProjections(specs, inference)) return projectShared(x, specs);
  return specs.map((s) => linearOf(x, s, inference));
}

/** Whether {@link sharedLinear} runs `specs` as one op (else one {@link linear} each). */
export function sharesProjections(specs: readonly LinearSpec[], inference: boolean): boolean {
  return !inference && fusedKernelsActive('matMul') && specs.every(projectionFusable);
}

/** {@link linear} of one {@link LinearSpec}. */
export function linearOf(x: tf.Tensor2D, s: LinearSpec, inference: boolean): tf.Tensor2D {
  return linear(x, s.weight, s.bias, {
    frozen: s.frozen,
    lora: s.lora,
    residual: s.residual,
    inference,
  });
}

/** RMSNorm: `w ⊙ x / sqrt(mean(x²) + eps)` over the last axis (no mean subtraction, no `1 + w`). */
export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  if (fusedKernelsActive('rmsNorm')) return fusedRmsNorm(x, weight, eps);
  const meanSquare = tf.mean(tf.square(x), -1, true);
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight) as T;
}

/** `1 / θ^(2j/d)` for `j = 0 .. d/2-1`, rounded to float32 as transformers computes it. */
export function inverseFrequencies(headDim: number, theta: number): Float32Array {
  const out = new Float32Array(headDim / 2);
  for (let j = 0; j < headDim / 2; j++)
    out[j] = 1 / Math.fround(theta ** Math.fround((2 * j) / headDim));
  return out;
}

/**
 * Rotary tables for the given absolute positions: `cos` and `sin`, each `[positions.length, d]`
 * (the d/2 angles written twice). Angles are one float32 product `p · inv_freq[j]`, never
 * accumulated.
 */
export function rotaryTables(
  positions: ArrayLike<number>,
  invFreq: Float32Array,
): { cos: Float32Array; sin: Float32Array } {
  const half = invFreq.length;
  const d = half * 2;
  const cos = new Float32Array(positions.length * d);
  const sin = new Float32Array(positions.length * d);
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i] as number;
    for (let j = 0; j < half; j++) {
      const angle = Math.fround(p * (invFreq[j] as number));
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[i * d + j] = c;
      cos[i * d + j + half] = c;
      sin[i * d + j] = s;
      sin[i * d + j + half] = s;
    }
  }
  return { cos, sin };
}

/**
 * The `[d, d]` matrix R with `v · R = rotate_half(v) = [-b, a]` for `v = [a, b]`. A matmul with a
 * constant is ~5x faster on wasm than split + negate + concat, forward and backward.
 */
export function rotateHalfMatrix(d: number): tf.Tensor2D {
  const half = d / 2;
  const data = new Float32Array(d * d);
  for (let j = 0; j < half; j++) {
    data[(j + half) * d + j] = -1; // output j takes -b_j (input row j + half)
    data[j * d + j + half] = 1; // output j + half takes a_j (input row j)
  }
  return tf.tensor2d(data, [d, d]);
}

/**
 * Half-split (GPT-NeoX) rotary embedding of `x` `[B, T, heads, d]` with tables `[B, T, 1, d]`:
 * `x ⊙ cos + rotate_half(x) ⊙ sin` (transformers' `apply_rotary_pos_emb`), `rotate_half` as a matmul with {@link rotateHalfMatrix}.
 */
export function rotary<T extends tf.Tensor>(
  x: T,
  cos: tf.Tensor,
  sin: tf.Tensor,
  rotateHalf: tf.Tensor2D,
): T {
  if (fusedKernelsActive('rotary')) return fusedRotary(x, cos, sin);
  const d = x.shape[x.rank - 1] as number;
  // R is antisymmetric (Rᵀ = -R), so the gradient dy·Rᵀ is -(dy·R): untransposed, constant R.
  const byR = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
    value: tf.matMul(args[0] as tf.Tensor2D, rotateHalf),
    gradFunc: (dy: tf.Tensor | tf.Tensor[]) => [tf.neg(tf.matMul(dy as tf.Tensor2D, rotateHalf))],
  })) as (v: tf.Tensor) => tf.Tensor;
  const rotated = tf.reshape(byR(tf.reshape(x, [-1, d])), x.shape);
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as T;
}

/**
 * Grouped-query attention. `q` `[B, T, nh, d]` (rotated), `kT` `[B, nkv, d, S]` (rotated keys,
 * transposed, cache included), `v` `[B, nkv, S, d]`, `mask` additive `[B or 1, 1, T, S]`; keys and
 * values may hold more positions than `S` (a cache of fixed capacity), of which the first S count. Query head `i` uses kv head `floor(i / g)`
 * (consecutive groups), done by reshaping queries to `[B·nkv, g·T, d]` instead of repeating kv.
 * Returns `[B·T, nh·d]`, heads concatenated in order. `inference`: a pass without gradients.
 *
 * On webgpu, passes over several query positions take the tiled (flash) kernels where the
 * `attention` switch is on (the default) and one query position the row kernel where
 * `decodeAttention` is; either also runs wherever the composed ops' `[B, nh, T, S]` score matrix
 * would exceed `maxBindingBytes` (neither ever holds it).
 */
export function attention(
  q: tf.Tensor4D,
  kT: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
  inference = false,
  maxBindingBytes?: number,
): tf.Tensor2D {
  const [B, T, nh, d] = q.shape;
  const S = mask.shape[3];
  const scoresTooLarge =
    maxBindingBytes !== undefined &&
    tf.getBackend() === 'webgpu' &&
    B * nh * T * S * 4 > maxBindingBytes;
  if (scoresTooLarge || fusedKernelsActive(T === 1 ? 'decodeAttention' : 'attention')) {
    return T > 1 && flashAttentionFits(d)
      ? flashAttention(q, kT, v, mask, inference)
      : fusedAttention(q, kT, v, mask);
  }
  const nkv = kT.shape[1];
  if (kT.shape[3] > S) {
    // A cache of fixed capacity: only its first S positions are written.
    kT = tf.slice(kT, [0, 0, 0, 0], [B, nkv, d, S]);
    v = tf.slice(v, [0, 0, 0, 0], [B, nkv, S, d]);
  }
  const g = nh / nkv;
  const scale = 1 / Math.sqrt(d);
  const qh = tf.reshape(tf.transpose(tf.mul(q, scale), [0, 2, 1, 3]), [B * nkv, g * T, d]);
  const kt = tf.reshape(kT, [B * nkv, d, S]);
  const scores = tf.add(tf.reshape(bmm(qh, kt, inference), [B, nh, T, S]), mask);
  const probs = tf.reshape(tf.softmax(scores, -1), [B * nkv, g * T, S]);
  const out = tf.reshape(bmm(probs, tf.reshape(v, [B * nkv, S, d]), inference), [B, nh, T, d]);
  return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [B * T, nh * d]);
}

/** SwiGLU MLP: `down(silu(gate(h)) ⊙ up(h))`, weights `[in, out]`. */
export function mlp(
  h: tf.Tensor2D,
  gate: tf.Tensor2D,
  up: tf.Tensor2D,
  down: tf.Tensor2D,
  biases?: { gate?: tf.Tensor1D; up?: tf.Tensor1D; down?: tf.Tensor1D },
  options: {
    frozen?: boolean;
    lora?: { gate?: LowRank; up?: LowRank; down?: LowRank };
    /** Added to the output (see {@link LinearOptions.residual}). */
    residual?: tf.Tensor2D;
    /** A pass without gradients (see {@link LinearOptions.inference}). */
    inference?: boolean;
  } = {},
): tf.Tensor2D {
  const inference = options.inference === true;
  const spec = (weight: tf.Tensor2D, bias?: tf.Tensor1D, lora?: LowRank): LinearSpec => ({
    weight,
    bias,
    frozen: options.frozen,
    lora,
  });
  const [gh, uh] = sharedLinear(
    h,
    [spec(gate, biases?.gate, options.lora?.gate), spec(up, biases?.up, options.lora?.up)],
    inference,
  ) as [tf.Tensor2D, tf.Tensor2D];
  const activated = fusedKernelsActive('swiglu')
    ? fusedSwiGLU(gh, uh)
    : (tf.mul(tf.mul(gh, tf.sigmoid(gh)), uh) as tf.Tensor2D);
  const [out] = sharedLinear(
    activated,
    [{ ...spec(down, biases?.down, options.lora?.down), residual: options.residual }],
    inference,
  );
  return out as tf.Tensor2D;
}

/**
 * `logsumexp` over the last axis of `[N, V]` with the gradient written directly,
 * `dy · softmax(x)`: tfjs's composite op differentiates through its max shift, whose gradient
 * (an equality mask broadcast over `[N, V]`) is slow on wasm and mathematically zero.
 */
export const logSumExpRows = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
  const lse = tf.logSumExp(x, -1);
  save([x, lse]);
  return {
    value: lse,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const [sx, slse] = saved as [tf.Tensor2D, tf.Tensor1D];
      return [
        tf.mul(tf.expandDims(dy as tf.Tensor, -1), tf.exp(tf.sub(sx, tf.expandDims(slse, -1)))),
      ];
    },
  };
}) as (x: tf.Tensor2D) => tf.Tensor1D;

/** `logits[n, targets[n]] - logsumexp(logits[n])` as `[N]`, plus the logsumexp; inside `tf.tidy`. */
export function pickLogProbs(
  logits: tf.Tensor2D,
  targets: Int32Array,
): { logProbs: tf.Tensor1D; lse: tf.Tensor1D } {
  const V = logits.shape[1];
  const flat = new Int32Array(targets.length);
  for (let n = 0; n < targets.length; n++) flat[n] = n * V + (targets[n] as number);
  const lse = logSumExpRows(logits);
  const picked = tf.gather(tf.reshape(logits, [-1]), tf.tensor1d(flat, 'int32'));
  return { logProbs: tf.sub(picked, lse), lse };
}

/** Additive mask value for blocked positions (finite so fully masked pad rows stay NaN-free). */
export const MASKED = -1e9;
