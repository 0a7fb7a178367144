/**
 * `a · bᵀ` on webgpu with coalesced vec4 loads of both operands: `a` `[batch, M, K]` and `b`
 * `[batch, N, K]`, both read along K, where tfjs 4.22's packed program turns to scalar loads for
 * a transposed right operand (neighbouring threads then read addresses K floats apart). Those
 * products are every linear layer's input gradient (`dy · Wᵀ`), a tied LM head's forward and the
 * attention's `q · kᵀ`-shaped products. A workgroup of 16 × 16 threads computes a 64 × 64 tile
 * (4 × 4 a thread) or, when both sides have 128 or more, a 128 × 128 one (8 × 8), stepping K by
 * 16 through workgroup memory, where each tile is stored K-major so the inner loop reads vec4s of
 * both. It replaces tfjs's `BatchMatMul` for `transposeB` products with K a multiple of 4 and
 * N ≥ 64 while the `transposedMatMul` switch is on; every other product runs tfjs's own.
 */
import * as tf from '@tensorflow/tfjs';
import { webgpuSwitches } from '../../switches.ts';
import type { ProgramUniform, WebGPUProgram } from './programs.ts';

const KT = 16;

/** Output rows (and columns) a thread computes: 4 (64 × 64 tiles) or 8 (128 × 128). */
export type MicroTile = 4 | 8;

/** The micro-tile of a product of `M` rows and `N` columns. */
export function microTileFor(M: number, N: number): MicroTile {
  return M >= 128 && N >= 128 ? 8 : 4;
}

/** Whether the kernel takes a product (both flags as tfjs's `BatchMatMul` attributes). */
export function takesProduct(
  aShape: readonly number[],
  bShape: readonly number[],
  transposeA: boolean,
  transposeB: boolean,
): boolean {
  if (!transposeB || transposeA || aShape.length < 2 || bShape.length < 2) return false;
  const K = aShape[aShape.length - 1] as number;
  const N = bShape[bShape.length - 2] as number;
  if (K % 4 !== 0 || K !== bShape[bShape.length - 1] || N < 64) return false;
  const batchA = aShape.slice(0, -2).reduce((x, y) => x * y, 1);
  const batchB = bShape.slice(0, -2).reduce((x, y) => x * y, 1);
  return batchA === batchB || batchA === 1 || batchB === 1;
}

/** The program for `a` `[batchA, M, K]` · `b` `[batchB, N, K]`ᵀ (either batch may be 1). */
export function matMulNTProgram(
  batch: number,
  M: number,
  N: number,
  K: number,
  batchA: number,
  batchB: number,
  outputShape: number[],
  addend = false,
): { program: WebGPUProgram; uniforms: ProgramUniform[] } {
  const R: MicroTile = microTileFor(M, N);
  const TILE = 16 * R;
  const V = R / 4; // vec4s per thread row
  const int = (n: number): ProgramUniform => ({ type: 'int32', data: [n] });
  const program: WebGPUProgram & { variableComponents: number[] } = {
    variableNames: addend ? ['A', 'B', 'C'] : ['A', 'B'],
    variableComponents: addend ? [4, 4, 1] : [4, 4],
    outputShape,
    shaderKey: `agentrl_matmul_nt_r${R}${addend ? '_add' : ''}`,
    dispatchLayout: { x: [outputShape.length - 1], y: [outputShape.length - 2] } as {
      x: number[];
    },
    dispatch: [Math.ceil(N / TILE), Math.ceil(M / TILE), batch],
    workgroupSize: [16, 16, 1],
    size: false,
    uniforms: 'M : i32, N : i32, K : i32, batchA : i32, batchB : i32,',
    getUserCode: () => `
      const TILE = ${TILE};
      const KT = ${KT};
      const R = ${R};
      var<workgroup> As : array<f32, ${KT * TILE}>;
      var<workgroup> Bs : array<f32, ${KT * TILE}>;
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
        let aBase = select(z, 0, uniforms.batchA == 1) * M * K4;
        let bBase = select(z, 0, uniforms.batchB == 1) * N * K4;
        var acc : array<vec4<f32>, ${R * V}>;
        for (var k0 = 0; k0 < K4; k0 += KT / 4) {
          // TILE rows x KT of each operand, one vec4 along K per load, stored K-major.
          for (var e = tid; e < TILE * KT / 4; e += 256) {
            let r = e / (KT / 4);
            let kq = e % (KT / 4);
            var va = vec4<f32>(0.0);
            var vb = vec4<f32>(0.0);
            if (row0 + r < M && k0 + kq < K4) { va = A[aBase + (row0 + r) * K4 + k0 + kq]; }
            if (col0 + r < N && k0 + kq < K4) { vb = B[bBase + (col0 + r) * K4 + k0 + kq]; }
            let kb = kq * 4 * TILE + r;
            As[kb] = va.x;
            As[kb + TILE] = va.y;
            As[kb + 2 * TILE] = va.z;
            As[kb + 3 * TILE] = va.w;
            Bs[kb] = vb.x;
            Bs[kb + TILE] = vb.y;
            Bs[kb + 2 * TILE] = vb.z;
            Bs[kb + 3 * TILE] = vb.w;
          }
          workgroupBarrier();
          for (var k = 0; k < KT; k++) {
            let ab = k * TILE + ty * R;
            let bb = k * TILE + tx * R;
            var bv : array<vec4<f32>, ${V}>;
            for (var v = 0; v < ${V}; v++) {
              bv[v] = vec4<f32>(Bs[bb + 4 * v], Bs[bb + 4 * v + 1], Bs[bb + 4 * v + 2], Bs[bb + 4 * v + 3]);
            }
            for (var i = 0; i < R; i++) {
              let a = As[ab + i];
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
                let at = (z * M + row) * N + col;
                if (col < N) { result[at] = acc[i * ${V} + v][j]${addend ? ' + C[at]' : ''}; }
              }
            }
          }
        }
      }`,
  };
  return {
    program,
    uniforms: [int(M), int(N), int(K), int(batchA), int(batchB)],
  };
}

type KernelFunc = tf.KernelConfig['kernelFunc'];

/** Kernel name of `a · bᵀ + c` (webgpu only; inputs `a`, `b`, `c`). */
export const MATMUL_NT_ADD_KERNEL = 'AgentrlMatMulNTAdd';

/**
 * `a · bᵀ + c` for `a` `[M, K]`, `b` `[N, K]`, `c` `[M, N]`: one dispatch where the program takes
 * the product (the `transposedMatMul` switch on, see {@link takesProduct}), else tfjs's matmul and
 * an add. The backward passes use it to sum the input gradients of the projections that share an
 * input (`dx = Σ dyᵢ · Wᵢᵀ`) without an add dispatch for each. No gradient of its own.
 */
export function matMulNTAdd(a: tf.Tensor2D, b: tf.Tensor2D, c: tf.Tensor2D): tf.Tensor2D {
  if (
    tf.getBackend() === 'webgpu' &&
    webgpuSwitches().fusedKernels.transposedMatMul &&
    takesProduct(a.shape, b.shape, false, true)
  ) {
    return tf.engine().runKernel(MATMUL_NT_ADD_KERNEL, { a, b, c }) as tf.Tensor2D;
  }
  return tf.add(tf.matMul(a, b, false, true), c) as tf.Tensor2D;
}

interface ProgramRunner {
  runWebGPUProgram(
    program: WebGPUProgram,
    inputs: tf.TensorInfo[],
    dtype: 'float32',
    uniforms?: ProgramUniform[],
  ): tf.TensorInfo;
}

/** Replaces the webgpu `BatchMatMul` by one that sends `transposeB` products here (idempotent). */
export function registerMatMulNT(): void {
  const original = tf.getKernel('BatchMatMul', 'webgpu');
  if (original === undefined) return;
  const base =
    (original as tf.KernelConfig & { agentrlBase?: KernelFunc }).agentrlBase ?? original.kernelFunc;
  const kernelFunc: KernelFunc = (args) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = (args.attrs ?? {}) as {
      transposeA?: boolean;
      transposeB?: boolean;
    };
    if (
      !webgpuSwitches().fusedKernels.transposedMatMul ||
      a.dtype !== 'float32' ||
      b.dtype !== 'float32' ||
      !takesProduct(a.shape, b.shape, transposeA === true, transposeB === true)
    ) {
      return base(args);
    }
    const M = a.shape[a.shape.length - 2] as number;
    const K = a.shape[a.shape.length - 1] as number;
    const N = b.shape[b.shape.length - 2] as number;
    const batchA = a.shape.slice(0, -2).reduce((x, y) => x * y, 1);
    const batchB = b.shape.slice(0, -2).reduce((x, y) => x * y, 1);
    const batch = Math.max(batchA, batchB);
    const lead = (batchA >= batchB ? a : b).shape.slice(0, -2);
    const { program, uniforms } = matMulNTProgram(batch, M, N, K, batchA, batchB, [...lead, M, N]);
    // Rank-3 views of the same data (what tfjs's own Reshape hands out).
    const a3 = { ...a, shape: [batchA, M, K] };
    const b3 = { ...b, shape: [batchB, N, K] };
    return (args.backend as unknown as ProgramRunner).runWebGPUProgram(
      program,
      [a3, b3],
      'float32',
      uniforms,
    );
  };
  tf.unregisterKernel('BatchMatMul', 'webgpu');
  tf.registerKernel({ ...original, kernelFunc, agentrlBase: base } as tf.KernelConfig);
  if (tf.getKernel(MATMUL_NT_ADD_KERNEL, 'webgpu') === undefined) {
    tf.registerKernel({
      kernelName: MATMUL_NT_ADD_KERNEL,
      backendName: 'webgpu',
      kernelFunc: ({ inputs, backend }) => {
        const { a, b, c } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo; c: tf.TensorInfo };
        const [M, K] = a.shape as [number, number];
        const N = b.shape[0] as number;
        const { program, uniforms } = matMulNTProgram(1, M, N, K, 1, 1, [M, N], true);
        return (backend as unknown as ProgramRunner).runWebGPUProgram(
          program,
          [
            { ...a, shape: [1, M, K] },
            { ...b, shape: [1, N, K] },
            { ...c, shape: [M, N] },
          ],
          'float32',
          uniforms,
        );
      },
    });
  }
}
