/**
 * Kernels that write a decoder layer's new keys and values straight into the KV
 * cache layout: one dispatch each where the composed path takes five (keys: rotary, transpose,
 * concat; values: transpose, concat). Layouts follow decoder/forward.ts: projections arrive flat as
 * `[B·T, nkv·d]`; keys are cached transposed `[B, nkv, d, S]`, values `[B, nkv, S, d]`; the new
 * `T` positions follow the `Sp` cached ones. Rotary tables are `[B·T, d]` (one row per position,
 * shared by the heads). Generation and scoring run them without a tape; a differentiated pass on
 * webgpu starts its keys and values with the two kernels without a past (`newKeys`,
 * `newValues`), whose gradients are one dispatch each back to the projections' layout (where the
 * composed path takes two for keys, rotary and transpose, and one for values).
 */
import * as tf from '@tensorflow/tfjs';
import {
  elementwiseProgram,
  type ProgramKernel,
  type ProgramUniform,
  registerProgramKernels,
  type WebGPUProgram,
} from './programs.ts';

export const KV_CACHE_KERNELS = {
  appendKeys: 'AgentrlAppendKeys',
  newKeys: 'AgentrlNewKeys',
  appendValues: 'AgentrlAppendValues',
  newValues: 'AgentrlNewValues',
  newKeysGrad: 'AgentrlNewKeysGrad',
  newValuesGrad: 'AgentrlNewValuesGrad',
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

// The gradients of new keys and values (no past), back to the projections' layout `[B·T, nkv·d]`.
// Keys: the transpose of the rotation is the rotation by the opposite angle, read from dk
// `[B, nkv, d, T]`: dx_j = dk_j·cos_j + (j < d/2 ? dk_{j+d/2}·sin_{j+d/2} : −dk_{j−d/2}·sin_{j−d/2}).
const KEYS_GRAD = `
  let d = uniforms.d;
  let T = uniforms.T;
  let nkv = uniforms.nkv;
  let k = index % d;
  let h = (index / d) % nkv;
  let n = index / (d * nkv);
  let b = n / T;
  let t = n % T;
  let head = (b * nkv + h) * d;
  let half = d / 2;
  var partner = 0.0;
  if (k < half) {
    partner = dk[(head + k + half) * T + t] * sinT[n * d + k + half];
  } else {
    partner = -dk[(head + k - half) * T + t] * sinT[n * d + k - half];
  }
  result[index] = dk[(head + k) * T + t] * cosT[n * d + k] + partner;`;

// Values: dx[b·T + t, h·d + k] = dv[b, h, t, k].
const VALUES_GRAD = `
  let d = uniforms.d;
  let T = uniforms.T;
  let nkv = uniforms.nkv;
  let k = index % d;
  let h = (index / d) % nkv;
  let n = index / (d * nkv);
  result[index] = dv[(((n / T) * nkv + h) * T + n % T) * d + k];`;

function gradKernel(kind: 'keys' | 'values'): ProgramKernel {
  const keys = kind === 'keys';
  const inputs = keys ? ['dk', 'cosT', 'sinT'] : ['dv'];
  return {
    inputs,
    build: ([g], { B, nkv }) => {
      // dk [B, nkv, d, T] or dv [B, nkv, T, d]
      const shape = (g as tf.TensorInfo).shape as [number, number, number, number];
      const d = keys ? shape[2] : shape[3];
      const T = keys ? shape[3] : shape[2];
      return {
        program: elementwiseProgram(
          `new_${kind}_grad`,
          inputs,
          [(B as number) * T, (nkv as number) * d],
          keys ? KEYS_GRAD : VALUES_GRAD,
          UNIFORMS,
        ),
        uniforms: uniforms(d, nkv as number, T, 0),
      };
    },
  };
}

/**
 * Registers the kernels on the webgpu backend, and the gradients of new keys and values (no past:
 * a differentiated pass starts no cache of its own) (idempotent).
 */
export function registerKvCacheKernels(): void {
  registerProgramKernels({
    [KV_CACHE_KERNELS.appendKeys]: cacheKernel('keys', true),
    [KV_CACHE_KERNELS.newKeys]: cacheKernel('keys', false),
    [KV_CACHE_KERNELS.appendValues]: cacheKernel('values', true),
    [KV_CACHE_KERNELS.newValues]: cacheKernel('values', false),
    [KV_CACHE_KERNELS.newKeysGrad]: gradKernel('keys'),
    [KV_CACHE_KERNELS.newValuesGrad]: gradKernel('values'),
  });
  if (tf.getGradient(KV_CACHE_KERNELS.newKeys) === undefined) {
    // The rotary tables are constants: the tape never asks for their gradients.
    const constant = (t: tf.Tensor) => () => tf.zerosLike(t);
    tf.registerGradient({
      kernelName: KV_CACHE_KERNELS.newKeys,
      inputsToSave: ['cosT', 'sinT'],
      gradFunc: (dy, saved, attrs) => {
        const [cosT, sinT] = saved as [tf.Tensor, tf.Tensor];
        return {
          x: () =>
            tf
              .engine()
              .runKernel(
                KV_CACHE_KERNELS.newKeysGrad,
                { dk: dy as tf.Tensor, cosT, sinT },
                attrs as unknown as tf.NamedAttrMap,
              ) as tf.Tensor,
          cosT: constant(cosT),
          sinT: constant(sinT),
        };
      },
    });
    tf.registerGradient({
      kernelName: KV_CACHE_KERNELS.newValues,
      gradFunc: (dy, _saved, attrs) => ({
        x: () =>
          tf
            .engine()
            .runKernel(
              KV_CACHE_KERNELS.newValuesGrad,
              { dv: dy as tf.Tensor },
              attrs as unknown as tf.NamedAttrMap,
            ) as tf.Tensor,
      }),
    });
  }
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

// ---- a cache of fixed capacity, written in place ---------------------------------------------
//
// A cache grown by appending gets a new, larger buffer every decode step, and tfjs's buffer pool
// keeps every one of them (it reuses a buffer only for a later request of the same byte size):
// over a generation the pool holds the cache's size summed over all steps, per layer. A cache of
// the generation's final length, allocated once and written in place, holds it once.

const WRITE_UNIFORMS = 'd : i32, nkv : i32, T : i32, Sp : i32, C : i32,';

// Keys: cache[b, h, k, Sp + t] = rotary(x[b·T + t, h·d + ·])[k], cache `[B, nkv, d, C]`.
const WRITE_KEYS = `
  let d = uniforms.d;
  let T = uniforms.T;
  let t = index % T;
  let k = (index / T) % d;
  let bh = index / (T * d);
  let n = (bh / uniforms.nkv) * T + t;
  let base = n * uniforms.nkv * d + (bh % uniforms.nkv) * d;
  let half = d / 2;
  var partner = 0.0;
  if (k < half) { partner = -x[base + k + half]; } else { partner = x[base + k - half]; }
  result[(bh * d + k) * uniforms.C + uniforms.Sp + t] =
    x[base + k] * cosT[n * d + k] + partner * sinT[n * d + k];`;

// Values: cache[b, h, Sp + t, k] = x[b·T + t, h·d + k], cache `[B, nkv, C, d]`.
const WRITE_VALUES = `
  let d = uniforms.d;
  let T = uniforms.T;
  let k = index % d;
  let t = (index / d) % T;
  let bh = index / (T * d);
  let n = (bh / uniforms.nkv) * T + t;
  result[(bh * uniforms.C + uniforms.Sp + t) * d + k] = x[n * uniforms.nkv * d + (bh % uniforms.nkv) * d + k];`;

/** The part of tfjs-backend-webgpu's backend that runs a program into an existing tensor. */
interface InPlaceRunner {
  runWebGPUProgram(
    program: WebGPUProgram,
    inputs: tf.TensorInfo[],
    dtype: 'float32',
    uniforms: ProgramUniform[],
    output: tf.TensorInfo,
  ): tf.TensorInfo;
}

function writeInPlace(
  kind: 'keys' | 'values',
  inputs: tf.Tensor[],
  cache: tf.Tensor4D,
  B: number,
  nkv: number,
  offset: number,
): void {
  const x = inputs[0] as tf.Tensor2D;
  const [N, width] = x.shape;
  const T = N / B;
  const d = width / nkv;
  const keys = kind === 'keys';
  const C = cache.shape[keys ? 3 : 2];
  if (offset < 0 || offset + T > C) {
    throw new RangeError(
      `writing ${T} positions at ${offset} overruns a KV cache of ${C} positions`,
    );
  }
  // The program covers the written elements only; `result` is the whole cache.
  const program = elementwiseProgram(
    `write_${kind}`,
    keys ? ['x', 'cosT', 'sinT'] : ['x'],
    keys ? [B, nkv, d, T] : [B, nkv, T, d],
    keys ? WRITE_KEYS : WRITE_VALUES,
    WRITE_UNIFORMS,
  );
  const uniforms: ProgramUniform[] = [d, nkv, T, offset, C].map((v) => ({
    type: 'int32',
    data: [v],
  }));
  (tf.backend() as unknown as InPlaceRunner).runWebGPUProgram(
    program,
    inputs,
    'float32',
    uniforms,
    { dataId: cache.dataId, shape: cache.shape, dtype: cache.dtype },
  );
}

/**
 * Allocates the KV cache of one layer at its full capacity: keys `[B, nkv, d, C]`, values
 * `[B, nkv, C, d]`, zeros (positions past the written ones are read only under a mask, and zeros
 * keep masked products finite).
 */
export function allocateLayerCache(
  B: number,
  nkv: number,
  d: number,
  capacity: number,
): { k: tf.Tensor4D; v: tf.Tensor4D } {
  return { k: tf.zeros([B, nkv, d, capacity]), v: tf.zeros([B, nkv, capacity, d]) };
}

/**
 * Writes new keys `[B·T, nkv·d]`, rotated with `cos`/`sin` `[B·T, d]`, into the transposed cache
 * `[B, nkv, d, C]` at positions `offset .. offset + T − 1`, in place (webgpu only: one dispatch,
 * no new buffer). The tensor object stays the same; its contents change.
 */
export function writeKeys(
  x: tf.Tensor2D,
  cos: tf.Tensor2D,
  sin: tf.Tensor2D,
  B: number,
  nkv: number,
  cache: tf.Tensor4D,
  offset: number,
): void {
  writeInPlace('keys', [x, cos, sin], cache, B, nkv, offset);
}

/** Writes new values `[B·T, nkv·d]` into the cache `[B, nkv, C, d]` at `offset`, in place (webgpu). */
export function writeValues(
  x: tf.Tensor2D,
  B: number,
  nkv: number,
  cache: tf.Tensor4D,
  offset: number,
): void {
  writeInPlace('values', [x], cache, B, nkv, offset);
}
