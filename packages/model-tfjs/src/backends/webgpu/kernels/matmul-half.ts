/**
 * Half-precision matmul inputs for precision `mixed` on webgpu: every `BatchMatMul` and
 * `_FusedMatMul` (bias only) whose shapes it takes runs this program, which converts both
 * operands to `f16` as it stores their tiles in workgroup memory (f16 arrays: a driver may fold
 * an f32 → f16 → f32 round trip in registers away, never one through memory) and multiplies and
 * accumulates in `f32`: the numerics of tensor cores (f16 × f16 products are exact in f32), where the weights,
 * the optimizer state and everything outside the products stay `f32` (the master copy). The
 * loss scaling of `train/loss-scale.ts` keeps small gradients from flushing to zero in the
 * half-precision inputs. Needs the adapter feature `shader-f16` (the set-up requests it where
 * present); without it `mixed` keeps `f32` products.
 *
 * Tiles as in matmul-nt.ts (64 × 64 or 128 × 128 outputs a workgroup of 16 × 16 threads, K in
 * steps of 16 through workgroup memory, stored K-major), for all four transpose cases: each
 * operand is read as vec4s along its contiguous axis (K for `a` `[M, K]` and `bᵀ` `[N, K]`, M for
 * `aᵀ` `[K, M]`, N for `b` `[K, N]`), which must be a multiple of 4.
 */
import * as tf from '@tensorflow/tfjs';
import { trainingPrecision } from '../../switches.ts';
import { microTileFor } from './matmul-nt.ts';
import type { ProgramUniform, WebGPUProgram } from './programs.ts';

/** The WGSL comment that makes the device set-up prepend `enable f16;` to a shader. */
export const ENABLE_F16_MARKER = '// agentrl: enable f16';

const KT = 16;

let shaderF16 = false;

/** Whether products take half-precision inputs now: precision `mixed` on a `shader-f16` device. */
export function halfProducts(): boolean {
  return shaderF16 && tf.getBackend() === 'webgpu' && trainingPrecision() === 'mixed';
}

/** How a bias is added: none, one per column (`[N]`), or one per output element. */
export type BiasKind = 'none' | 'column' | 'full';

/** The shapes of one product (rank-3 views; either batch may be 1). */
export interface HalfProduct {
  readonly batch: number;
  readonly M: number;
  readonly N: number;
  readonly K: number;
  readonly batchA: number;
  readonly batchB: number;
  readonly transA: boolean;
  readonly transB: boolean;
  readonly bias: BiasKind;
}

/** Whether the program takes `a` `[..., M, K]` (or `aᵀ`) times `b` (or `bᵀ`): vec4 axes. */
export function takesHalfProduct(
  aShape: readonly number[],
  bShape: readonly number[],
  transA: boolean,
  transB: boolean,
): boolean {
  if (aShape.length < 2 || bShape.length < 2) return false;
  const a1 = aShape[aShape.length - 2] as number;
  const a2 = aShape[aShape.length - 1] as number;
  const b1 = bShape[bShape.length - 2] as number;
  const b2 = bShape[bShape.length - 1] as number;
  const K = transA ? a1 : a2;
  if (K !== (transB ? b2 : b1)) return false;
  // Each operand is read as vec4s along its contiguous (last) axis.
  if (a2 % 4 !== 0 || b2 % 4 !== 0) return false;
  const batchA = aShape.slice(0, -2).reduce((x, y) => x * y, 1);
  const batchB = bShape.slice(0, -2).reduce((x, y) => x * y, 1);
  return batchA === batchB || batchA === 1 || batchB === 1;
}

/**
 * WGSL that loads one operand's tile (TILE rows or columns × KT of K) into the f16 workgroup
 * array `tile`, K-major (`tile[k * TILE + i]`), as vec4s along its contiguous axis.
 * `alongK`: the operand is stored `[rows, K]` (vec4s along K); else `[K, rows]`.
 */
function loader(name: string, tile: string, rows: string, first: string, alongK: boolean): string {
  if (alongK) {
    return `for (var e = tid; e < TILE * KT / 4; e += 256) {
            let r = e / (KT / 4);
            let kq = e % (KT / 4);
            var v = vec4<f32>(0.0);
            if (${first} + r < ${rows} && k0 / 4 + kq < K4) { v = ${name}[base${name} + (${first} + r) * K4 + k0 / 4 + kq]; }
            let h = vec4<f16>(v);
            let at = kq * 4 * TILE + r;
            ${tile}[at] = h.x;
            ${tile}[at + TILE] = h.y;
            ${tile}[at + 2 * TILE] = h.z;
            ${tile}[at + 3 * TILE] = h.w;
          }`;
  }
  return `for (var e = tid; e < TILE * KT / 4; e += 256) {
            let k = e / (TILE / 4);
            let rq = e % (TILE / 4);
            let rows4 = ${rows} / 4;
            var v = vec4<f32>(0.0);
            if (k0 + k < uniforms.K && ${first} / 4 + rq < rows4) { v = ${name}[base${name} + (k0 + k) * rows4 + ${first} / 4 + rq]; }
            let h = vec4<f16>(v);
            let at = k * TILE + 4 * rq;
            ${tile}[at] = h.x;
            ${tile}[at + 1] = h.y;
            ${tile}[at + 2] = h.z;
            ${tile}[at + 3] = h.w;
          }`;
}

/** The program of one product; `outputShape` as tfjs's kernel returns it. */
export function matMulHalfProgram(
  p: HalfProduct,
  outputShape: number[],
): { program: WebGPUProgram; uniforms: ProgramUniform[] } {
  const R = microTileFor(p.M, p.N);
  const TILE = 16 * R;
  const V = R / 4;
  const int = (n: number): ProgramUniform => ({ type: 'int32', data: [n] });
  const withBias = p.bias !== 'none';
  const biasAt = p.bias === 'column' ? 'col' : '(z * M + row) * N + col';
  const program: WebGPUProgram & { variableComponents: number[] } = {
    variableNames: withBias ? ['A', 'B', 'C'] : ['A', 'B'],
    variableComponents: withBias ? [4, 4, 1] : [4, 4],
    outputShape,
    shaderKey: `agentrl_matmul_half_${p.transA ? 't' : 'n'}${p.transB ? 't' : 'n'}_r${R}_${p.bias}`,
    dispatchLayout: { x: [outputShape.length - 1], y: [outputShape.length - 2] } as {
      x: number[];
    },
    dispatch: [Math.ceil(p.N / TILE), Math.ceil(p.M / TILE), p.batch],
    workgroupSize: [16, 16, 1],
    size: false,
    uniforms: 'M : i32, N : i32, K : i32, batchA : i32, batchB : i32,',
    getUserCode: () => `
      ${ENABLE_F16_MARKER}
      const TILE = ${TILE};
      const KT = ${KT};
      const R = ${R};
      var<workgroup> As : array<f16, ${KT * TILE}>;
      var<workgroup> Bs : array<f16, ${KT * TILE}>;
      fn main() {
        let tx = i32(localId.x);
        let ty = i32(localId.y);
        let tid = ty * 16 + tx;
        let row0 = i32(workgroupId.y) * TILE;
        let col0 = i32(workgroupId.x) * TILE;
        let z = i32(workgroupId.z);
        let M = uniforms.M;
        let N = uniforms.N;
        let K4 = uniforms.K / 4;
        let baseA = select(z, 0, uniforms.batchA == 1) * M * uniforms.K / 4;
        let baseB = select(z, 0, uniforms.batchB == 1) * N * uniforms.K / 4;
        var acc : array<vec4<f32>, ${R * V}>;
        for (var k0 = 0; k0 < uniforms.K; k0 += KT) {
          ${loader('A', 'As', 'M', 'row0', !p.transA)}
          ${loader('B', 'Bs', 'N', 'col0', p.transB)}
          workgroupBarrier();
          for (var k = 0; k < KT; k++) {
            let ab = k * TILE + ty * R;
            let bb = k * TILE + tx * R;
            var bv : array<vec4<f32>, ${V}>;
            for (var v = 0; v < ${V}; v++) {
              bv[v] = vec4<f32>(vec4<f16>(Bs[bb + 4 * v], Bs[bb + 4 * v + 1], Bs[bb + 4 * v + 2], Bs[bb + 4 * v + 3]));
            }
            for (var i = 0; i < R; i++) {
              let a = f32(As[ab + i]);
              for (var v = 0; v < ${V}; v++) { acc[i * ${V} + v] += a * bv[v]; }
            }
          }
          workgroupBarrier();
        }
        for (var i = 0; i < R; i++) {
          let row = row0 + ty * R + i;
          if (row < M) {
            for (var v = 0; v < ${V}; v++) {
              for (var j = 0; j < 4; j++) {
                let col = col0 + tx * R + 4 * v + j;
                if (col < N) {
                  result[(z * M + row) * N + col] = acc[i * ${V} + v][j]${withBias ? ` + C[${biasAt}]` : ''};
                }
              }
            }
          }
        }
      }`,
  };
  return {
    program,
    uniforms: [int(p.M), int(p.N), int(p.K), int(p.batchA), int(p.batchB)],
  };
}

type KernelFunc = tf.KernelConfig['kernelFunc'];

interface ProgramRunner {
  runWebGPUProgram(
    program: WebGPUProgram,
    inputs: tf.TensorInfo[],
    dtype: 'float32',
    uniforms?: ProgramUniform[],
  ): tf.TensorInfo;
}

/** Runs the product of `a` and `b` (and a bias) by the program, or `undefined` if it does not take it. */
function runHalf(
  backend: unknown,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  transA: boolean,
  transB: boolean,
  bias: tf.TensorInfo | undefined,
): tf.TensorInfo | undefined {
  if (a.dtype !== 'float32' || b.dtype !== 'float32') return undefined;
  if (!takesHalfProduct(a.shape, b.shape, transA, transB)) return undefined;
  const a1 = a.shape[a.shape.length - 2] as number;
  const a2 = a.shape[a.shape.length - 1] as number;
  const b1 = b.shape[b.shape.length - 2] as number;
  const b2 = b.shape[b.shape.length - 1] as number;
  const [M, K] = transA ? [a2, a1] : [a1, a2];
  const N = transB ? b1 : b2;
  const batchA = a.shape.slice(0, -2).reduce((x, y) => x * y, 1);
  const batchB = b.shape.slice(0, -2).reduce((x, y) => x * y, 1);
  const batch = Math.max(batchA, batchB);
  const lead = (batchA >= batchB ? a : b).shape.slice(0, -2);
  const outputShape = [...lead, M, N];
  let kind: BiasKind = 'none';
  if (bias !== undefined) {
    if (bias.dtype !== 'float32') return undefined;
    const size = bias.shape.reduce((x, y) => x * y, 1);
    if (size === N && (bias.shape[bias.shape.length - 1] ?? 1) === N) kind = 'column';
    else if (size === batch * M * N) kind = 'full';
    else return undefined;
  }
  const { program, uniforms } = matMulHalfProgram(
    { batch, M, N, K, batchA, batchB, transA, transB, bias: kind },
    outputShape,
  );
  const inputs: tf.TensorInfo[] = [
    { ...a, shape: [batchA, a1, a2] },
    { ...b, shape: [batchB, b1, b2] },
    ...(bias === undefined ? [] : [bias]),
  ];
  return (backend as ProgramRunner).runWebGPUProgram(program, inputs, 'float32', uniforms);
}

const HALF_MARK = 'agentrlHalfBase';

/** Wraps the kernel `name` so that under {@link halfProducts} the products it takes run here. */
function wrap(
  name: string,
  take: (args: Parameters<KernelFunc>[0]) => tf.TensorInfo | undefined,
): void {
  const current = tf.getKernel(name, 'webgpu');
  if (current === undefined || HALF_MARK in current) return;
  const base = current.kernelFunc;
  const kernelFunc: KernelFunc = (args) => {
    if (halfProducts()) {
      const out = take(args);
      if (out !== undefined) return out;
    }
    return base(args);
  };
  tf.unregisterKernel(name, 'webgpu');
  tf.registerKernel({ ...current, kernelFunc, [HALF_MARK]: base } as tf.KernelConfig);
}

/**
 * Registers the half-input products on webgpu (after registerMatMulNT; idempotent), for a device
 * that has `shader-f16` (else precision `mixed` keeps `f32` products).
 */
export function registerHalfMatMul(hasShaderF16: boolean): void {
  shaderF16 = hasShaderF16;
  if (!hasShaderF16) return;
  wrap('BatchMatMul', ({ inputs, attrs, backend }) => {
    const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = (attrs ?? {}) as {
      transposeA?: boolean;
      transposeB?: boolean;
    };
    return runHalf(backend, a, b, transposeA === true, transposeB === true, undefined);
  });
  wrap('_FusedMatMul', ({ inputs, attrs, backend }) => {
    const { a, b, bias, preluActivationWeights } = inputs as Record<
      string,
      tf.TensorInfo | undefined
    >;
    const { transposeA, transposeB, activation } = (attrs ?? {}) as {
      transposeA?: boolean;
      transposeB?: boolean;
      activation?: string;
    };
    if (preluActivationWeights !== undefined || (activation ?? 'linear') !== 'linear') {
      return undefined;
    }
    return runHalf(
      backend,
      a as tf.TensorInfo,
      b as tf.TensorInfo,
      transposeA === true,
      transposeB === true,
      bias,
    );
  });
}
