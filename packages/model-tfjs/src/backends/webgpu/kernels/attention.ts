/**
 * Causal grouped-query attention as one WGSL dispatch (forward): one workgroup per (batch,
 * position, query head), two passes over the keys (row maximum, then exp-weighted sum of values),
 * no `[T, S]` score matrix in memory. The backward pass (attention-backward.ts) takes four
 * dispatches and recomputes the probabilities. Layouts follow decoder/ops.ts: `q` `[B, T, nh, d]`, keys transposed
 * `kT` `[B, nkv, d, S]`, `v` `[B, nkv, S, d]`, additive `mask` `[B or 1, 1, T, S]`; the output is
 * `[B·T, nh·d]`. Query head `i` reads kv head `floor(i / (nh / nkv))`.
 */
import * as tf from '@tensorflow/tfjs';
import { attentionBackwardFused, registerAttentionBackwardKernels } from './attention-backward.ts';
import { attentionScore, queryRowProgram } from './attention-rows.ts';
import { type ProgramUniform, registerProgramKernels, type WebGPUProgram } from './programs.ts';

export const ATTENTION_KERNEL = 'AgentrlAttention';

/** The forward kernel that also applies the rotary embedding to the queries as it loads them. */
export const ATTENTION_ROTARY_KERNEL = 'AgentrlAttentionRotary';

/** The composed reference (same math as decoder/ops.ts `attention`). */
export function attentionComposed(
  q: tf.Tensor4D,
  kT: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
): tf.Tensor2D {
  const [B, T, nh, d] = q.shape;
  const nkv = kT.shape[1];
  const S = kT.shape[3];
  const g = nh / nkv;
  const qh = tf.reshape(tf.transpose(tf.mul(q, 1 / Math.sqrt(d)), [0, 2, 1, 3]), [
    B * nkv,
    g * T,
    d,
  ]);
  const scores = tf.add(
    tf.reshape(tf.matMul(qh, tf.reshape(kT, [B * nkv, d, S])), [B, nh, T, S]),
    mask,
  );
  const probs = tf.reshape(tf.softmax(scores, -1), [B * nkv, g * T, S]);
  const out = tf.reshape(tf.matMul(probs, tf.reshape(v, [B * nkv, S, d])), [B, nh, T, d]);
  return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [B * T, nh * d]);
}

// The query row, scaled; with tables `cosT`/`sinT` `[B·T, d]` (one row per position), rotated
// first: x·cos + rotate_half(x)·sin, as the rotary kernel computes it.
const LOAD_QUERY = `for (var k = 0; k < D; k++) { qv[k] = q[r * D + k] * uniforms.scale; }`;
const LOAD_ROTATED_QUERY = `let n = r / nh;
    for (var k = 0; k < D; k++) {
      var partner = 0.0;
      if (k < D / 2) { partner = -q[r * D + k + D / 2]; } else { partner = q[r * D + k - D / 2]; }
      qv[k] = (q[r * D + k] * cosT[n * D + k] + partner * sinT[n * D + k]) * uniforms.scale;
    }`;

/** Builds the forward program for the given shapes (`rotary`: queries rotated on load). */
export function attentionProgram(
  q: tf.TensorInfo,
  kT: tf.TensorInfo,
  mask: tf.TensorInfo,
  rotary = false,
): { program: WebGPUProgram; uniforms: ProgramUniform[] } {
  return queryRowProgram(
    rotary ? 'attention_rotary' : 'attention',
    rotary ? ['q', 'kT', 'v', 'mask', 'cosT', 'sinT'] : ['q', 'kT', 'v', 'mask'],
    (B, T, nh, d) => [B * T, nh * d],
    `var qv : array<f32, D>;
    ${rotary ? LOAD_ROTATED_QUERY : LOAD_QUERY}
    var m = -3.402823e+38;
    for (var s = tid; s < S; s += BLOCK) {
      ${attentionScore('qv')}
      m = max(m, sc);
    }
    let rowMax = reduceMax(m, tid);
    var l = 0.0;
    var acc : array<f32, D>;
    for (var s = tid; s < S; s += BLOCK) {
      ${attentionScore('qv')}
      let p = exp(sc - rowMax);
      l += p;
      for (var k = 0; k < D; k++) { acc[k] += p * v[vBase + s * D + k]; }
    }
    let total = reduceSum(l, tid);
    for (var k = 0; k < D; k++) {
      let a = reduceSum(acc[k], tid);
      if (tid == 0 && inRange) { result[r * D + k] = a / total; }
    }`,
    [q, kT, mask],
  );
}

/** Registers the attention kernel for webgpu (idempotent), and its backward kernels. */
export function registerAttentionKernel(): void {
  registerAttentionBackwardKernels();
  registerProgramKernels({
    [ATTENTION_KERNEL]: {
      inputs: ['q', 'kT', 'v', 'mask'],
      build: ([q, kT, , mask]) =>
        attentionProgram(q as tf.TensorInfo, kT as tf.TensorInfo, mask as tf.TensorInfo),
    },
    [ATTENTION_ROTARY_KERNEL]: {
      inputs: ['q', 'kT', 'v', 'mask', 'cosT', 'sinT'],
      build: ([q, kT, , mask]) =>
        attentionProgram(q as tf.TensorInfo, kT as tf.TensorInfo, mask as tf.TensorInfo, true),
    },
  });
}

/**
 * Attention of queries `q` `[B, T, nh, d]` not yet rotated, with the rotary tables `cos`/`sin`
 * `[B·T, d]`, in one dispatch on webgpu: the rotary embedding is applied as the kernel loads each
 * query row (a decode step saves the rotary dispatch of every layer). No gradient: passes without
 * a tape only.
 */
export function rotaryAttention(
  q: tf.Tensor4D,
  cos: tf.Tensor2D,
  sin: tf.Tensor2D,
  kT: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
): tf.Tensor2D {
  return tf
    .engine()
    .runKernel(ATTENTION_ROTARY_KERNEL, { q, kT, v, mask, cosT: cos, sinT: sin }) as tf.Tensor2D;
}

/** Attention in one dispatch on webgpu (backward: four), composed elsewhere. */
export function fusedAttention(
  q: tf.Tensor4D,
  kT: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
): tf.Tensor2D {
  if (tf.getBackend() !== 'webgpu') return attentionComposed(q, kT, v, mask);
  // The mask is a constant: captured (and saved), so no gradient is computed for it.
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [sq, sk, sv, save] = args as [tf.Tensor4D, tf.Tensor4D, tf.Tensor4D, tf.GradSaveFunc];
    const value = tf
      .engine()
      .runKernel(ATTENTION_KERNEL, { q: sq, kT: sk, v: sv, mask }) as tf.Tensor;
    save([sq, sk, sv, mask, value]);
    return {
      value,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [q0, k0, v0, m0, o0] = saved as [
          tf.Tensor,
          tf.Tensor,
          tf.Tensor,
          tf.Tensor,
          tf.Tensor,
        ];
        return attentionBackwardFused(q0, k0, v0, m0, o0, dy as tf.Tensor);
      },
    };
  }) as (q: tf.Tensor, kT: tf.Tensor, v: tf.Tensor) => tf.Tensor;
  return op(q, kT, v) as tf.Tensor2D;
}
