/**
 * Inference-only kernels that write a decoder layer's new keys and values straight into the KV
 * cache layout: one dispatch each where the composed path takes five (keys: rotary, transpose,
 * concat; values: transpose, concat). Layouts follow decoder/forward.ts: projections arrive flat as
 * `[B·T, nkv·d]`; keys are cached transposed `[B, nkv, d, S]`, values `[B, nkv, S, d]`; the new
 * `T` positions follow the `Sp` cached ones. Rotary tables are `[B·T, d]` (one row per position,
 * shared by the heads). No gradients: generation and scoring run these only without a tape.
 */
import * as tf from '@tensorflow/tfjs';
import { elementwiseProgram, type ProgramKernel, registerProgramKernels } from './programs.ts';

export const KV_CACHE_KERNELS = {
  appendKeys: 'AgentrlAppendKeys',
  newKeys: 'AgentrlNewKeys',
  appendValues: 'AgentrlAppendValues',
  newValues: 'AgentrlNewValues',
} as const;

const UNIFORMS = 'd : i32, nkv : i32, T : i32, Sp : i32,';

function uniforms(d: number, nkv: number, T: number, Sp: number) {
  return [
    { type: 'int32' as const, data: [d] },
    { type: 'int32' as const, data: [nkv] },
    { type: 'int32' as const, data: [T] },
    { type: 'int32' as const, data: [Sp] },
  ];
}

/** Shapes of a call: x `[B·T, nkv·d]`, `past` (if any) with its positions on `positionAxis`. */
function dims(
  x: tf.TensorInfo,
  attrs: Record<string, number>,
  past: tf.TensorInfo | undefined,
  positionAxis: number,
) {
  const { B, nkv } = attrs as { B: number; nkv: number };
  const [N, width] = x.shape as [number, number];
  const T = N / B;
  const d = width / nkv;
  const Sp = past === undefined ? 0 : (past.shape[positionAxis] as number);
  return { B, nkv, T, d, Sp, S: Sp + T };
}

// Keys: out[b, h, k, s] = past[b, h, k, s] for s < Sp, else rotary(x[b·T + s − Sp, h·d + ·])[k].
const keyBody = (hasPast: boolean) => `
  let d = uniforms.d;
  let S = uniforms.Sp + uniforms.T;
  let s = index % S;
  let k = (index / S) % d;
  let bh = index / (S * d);
  ${hasPast ? 'if (s < uniforms.Sp) { result[index] = past[(bh * d + k) * uniforms.Sp + s]; return; }' : ''}
  let n = (bh / uniforms.nkv) * uniforms.T + (s - uniforms.Sp);
  let base = n * uniforms.nkv * d + (bh % uniforms.nkv) * d;
  let half = d / 2;
  var partner = 0.0;
  if (k < half) { partner = -x[base + k + half]; } else { partner = x[base + k - half]; }
  result[index] = x[base + k] * cosT[n * d + k] + partner * sinT[n * d + k];`;

// Values: out[b, h, s, k] = past[b, h, s, k] for s < Sp, else x[b·T + s − Sp, h·d + k].
const valueBody = (hasPast: boolean) => `
  let d = uniforms.d;
  let S = uniforms.Sp + uniforms.T;
  let k = index % d;
  let s = (index / d) % S;
  let bh = index / (S * d);
  ${hasPast ? 'if (s < uniforms.Sp) { result[index] = past[(bh * uniforms.Sp + s) * d + k]; return; }' : ''}
  let n = (bh / uniforms.nkv) * uniforms.T + (s - uniforms.Sp);
  result[index] = x[n * uniforms.nkv * d + (bh % uniforms.nkv) * d + k];`;

/** The keys' or values' kernel, appending to a cache (`hasPast`) or starting one. */
function cacheKernel(kind: 'keys' | 'values', hasPast: boolean): ProgramKernel {
  const keys = kind === 'keys';
  const inputs = [...(keys ? ['x', 'cosT', 'sinT'] : ['x']), ...(hasPast ? ['past'] : [])];
  return {
    inputs,
    build: (list, attrs) => {
      // Cached keys hold positions on axis 3 ([B, nkv, d, S]), values on axis 2 ([B, nkv, S, d]).
      const past = hasPast ? list[list.length - 1] : undefined;
      const { B, nkv, T, d, Sp, S } = dims(list[0] as tf.TensorInfo, attrs, past, keys ? 3 : 2);
      return {
        program: elementwiseProgram(
          `${hasPast ? 'append' : 'new'}_${kind}`,
          inputs,
          keys ? [B, nkv, d, S] : [B, nkv, S, d],
          (keys ? keyBody : valueBody)(hasPast),
          UNIFORMS,
        ),
        uniforms: uniforms(d, nkv, T, Sp),
      };
    },
  };
}

/** Registers the four kernels on the webgpu backend (idempotent). */
export function registerKvCacheKernels(): void {
  registerProgramKernels({
    [KV_CACHE_KERNELS.appendKeys]: cacheKernel('keys', true),
    [KV_CACHE_KERNELS.newKeys]: cacheKernel('keys', false),
    [KV_CACHE_KERNELS.appendValues]: cacheKernel('values', true),
    [KV_CACHE_KERNELS.newValues]: cacheKernel('values', false),
  });
}

function rotateHalf(x: tf.Tensor4D): tf.Tensor4D {
  const d = x.shape[3];
  const [a, b] = tf.split(x, [d / 2, d / 2], 3);
  return tf.concat([tf.neg(b as tf.Tensor), a as tf.Tensor], 3) as tf.Tensor4D;
}

/**
 * New keys `[B·T, nkv·d]` rotated with `cos`/`sin` `[B·T, d]` and appended to the transposed
 * cache `past` `[B, nkv, d, Sp]`: `[B, nkv, d, Sp + T]`. One dispatch on webgpu; composed tfjs
 * ops elsewhere (the reference of the parity test).
 */
export function appendKeys(
  x: tf.Tensor2D,
  cos: tf.Tensor2D,
  sin: tf.Tensor2D,
  B: number,
  nkv: number,
  past?: tf.Tensor4D,
): tf.Tensor4D {
  if (tf.getBackend() === 'webgpu') {
    const inputs: tf.NamedTensorMap = { x, cosT: cos, sinT: sin, ...(past ? { past } : {}) };
    const name = past ? KV_CACHE_KERNELS.appendKeys : KV_CACHE_KERNELS.newKeys;
    return tf.engine().runKernel(name, inputs, { B, nkv }) as tf.Tensor4D;
  }
  const [N, width] = x.shape;
  const T = N / B;
  const d = width / nkv;
  const k = tf.reshape(x, [B, T, nkv, d]) as tf.Tensor4D;
  const table = (t: tf.Tensor2D) => tf.reshape(t, [B, T, 1, d]);
  const rotated = tf.add(tf.mul(k, table(cos)), tf.mul(rotateHalf(k), table(sin)));
  const kT = tf.transpose(rotated, [0, 2, 3, 1]) as tf.Tensor4D;
  return past === undefined ? kT : (tf.concat([past, kT], 3) as tf.Tensor4D);
}

/** New values `[B·T, nkv·d]` appended to the cache `past` `[B, nkv, Sp, d]`: `[B, nkv, Sp + T, d]`. */
export function appendValues(
  x: tf.Tensor2D,
  B: number,
  nkv: number,
  past?: tf.Tensor4D,
): tf.Tensor4D {
  if (tf.getBackend() === 'webgpu') {
    const inputs: tf.NamedTensorMap = { x, ...(past ? { past } : {}) };
    const name = past ? KV_CACHE_KERNELS.appendValues : KV_CACHE_KERNELS.newValues;
    return tf.engine().runKernel(name, inputs, { B, nkv }) as tf.Tensor4D;
  }
  const [N, width] = x.shape;
  const T = N / B;
  const d = width / nkv;
  const v = tf.transpose(tf.reshape(x, [B, T, nkv, d]), [0, 2, 1, 3]) as tf.Tensor4D;
  return past === undefined ? v : (tf.concat([past, v], 2) as tf.Tensor4D);
}
