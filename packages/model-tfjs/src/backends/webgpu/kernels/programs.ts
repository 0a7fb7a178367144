/**
 * WGSL programs in the shape tfjs-backend-webgpu runs (`backend.runWebGPUProgram`): the backend
 * declares `result` (binding 0), one read-only array per name in `variableNames`, and a uniform
 * struct with the shapes plus the fields in `uniforms`; the program supplies `main`. Buffers are
 * read and written with flat indices.
 */
import * as tf from '@tensorflow/tfjs';

/** The program object tfjs-backend-webgpu expects. */
export interface WebGPUProgram {
  readonly variableNames: string[];
  readonly outputShape: number[];
  readonly shaderKey: string;
  readonly dispatchLayout: { x: number[] };
  readonly dispatch: [number, number, number];
  readonly workgroupSize: [number, number, number];
  readonly size: boolean;
  readonly uniforms?: string;
  getUserCode(): string;
}

/** A uniform value passed with a dispatch. */
export interface ProgramUniform {
  readonly type: 'float32' | 'int32';
  readonly data: number[];
}

const MAX_GROUPS = 65535;

/** A workgroup grid for `groups` workgroups within the per-dimension limit. */
export function flatDispatch(groups: number): [number, number, number] {
  return groups <= MAX_GROUPS ? [groups, 1, 1] : [MAX_GROUPS, Math.ceil(groups / MAX_GROUPS), 1];
}

/**
 * One thread per output element; `expression` is WGSL computing `value: f32` from `index: i32`,
 * the inputs (arrays named in `inputs`) and `uniforms`.
 */
export function elementwiseProgram(
  key: string,
  inputs: string[],
  outputShape: number[],
  body: string,
  uniforms?: string,
): WebGPUProgram {
  const size = outputShape.reduce((a, b) => a * b, 1);
  const threads = 64;
  return {
    variableNames: inputs,
    outputShape,
    shaderKey: `agentrl_${key}`,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: flatDispatch(Math.ceil(size / threads)),
    workgroupSize: [threads, 1, 1],
    size: true,
    ...(uniforms === undefined ? {} : { uniforms }),
    getUserCode: () => `
      fn main(index : i32) {
        if (index >= uniforms.size) { return; }
        ${body}
      }`,
  };
}

/**
 * WGSL of `fn NAME(v : TYPE, tid : i32) -> TYPE`: a tree reduction over the workgroup array
 * `scratch` (`BLOCK` entries, a power of two) combining two entries with `combine`; every thread
 * gets the result. Call it from uniform control flow (it has barriers).
 */
export function wgslReduce(
  name: string,
  type: 'f32' | 'u32',
  scratch: string,
  combine: (a: string, b: string) => string,
): string {
  return `fn ${name}(v : ${type}, tid : i32) -> ${type} {
        ${scratch}[tid] = v;
        workgroupBarrier();
        for (var s = BLOCK / 2; s > 0; s = s / 2) {
          if (tid < s) { ${scratch}[tid] = ${combine(`${scratch}[tid]`, `${scratch}[tid + s]`)}; }
          workgroupBarrier();
        }
        let total = ${scratch}[0];
        workgroupBarrier();
        return total;
      }`;
}

/**
 * One workgroup per row of a `[rows, cols]` input, `threads` threads striding over the columns
 * with workgroup-scratch reductions. `body` uses `row`, `tid`, `cols`, `BLOCK` and the helpers
 * `reduceSum(v) -> f32` and `reduceMax(v) -> f32` (every thread gets the result).
 */
export function rowProgram(
  key: string,
  inputs: string[],
  outputShape: number[],
  rows: number,
  body: string,
  uniforms?: string,
  declarations = '',
): WebGPUProgram {
  const threads = 64;
  return {
    variableNames: inputs,
    outputShape,
    shaderKey: `agentrl_${key}`,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: flatDispatch(rows),
    workgroupSize: [threads, 1, 1],
    size: false,
    ...(uniforms === undefined ? {} : { uniforms }),
    getUserCode: () => `
      ${declarations}
      const BLOCK = ${threads};
      var<workgroup> scratch : array<f32, ${threads}>;
      ${wgslReduce('reduceSum', 'f32', 'scratch', (a, b) => `${a} + ${b}`)}
      ${wgslReduce('reduceMax', 'f32', 'scratch', (a, b) => `max(${a}, ${b})`)}
      fn main(index : i32) {
        let row = i32(workgroupId.y * numWorkgroups.x + workgroupId.x);
        let tid = i32(localId.x);
        ${body}
      }`,
  };
}

/** A kernel that runs one program: its inputs by name, in order, and how to build the program. */
export interface ProgramKernel {
  readonly inputs: readonly string[];
  build(
    inputs: tf.TensorInfo[],
    attrs: Record<string, number>,
  ): { program: WebGPUProgram; uniforms: ProgramUniform[] };
}

/** The part of tfjs-backend-webgpu's backend that runs a program. */
interface ProgramRunner {
  runWebGPUProgram(
    program: WebGPUProgram,
    inputs: tf.TensorInfo[],
    dtype: 'float32',
    uniforms?: ProgramUniform[],
  ): tf.TensorInfo;
}

/** Registers each kernel on the webgpu backend; a name already registered is left as it is. */
export function registerProgramKernels(kernels: Readonly<Record<string, ProgramKernel>>): void {
  for (const [kernelName, { inputs, build }] of Object.entries(kernels)) {
    if (tf.getKernel(kernelName, 'webgpu') !== undefined) continue;
    tf.registerKernel({
      kernelName,
      backendName: 'webgpu',
      kernelFunc: ({ inputs: named, backend, attrs }) => {
        const list = inputs.map((n) => named[n] as tf.TensorInfo);
        const { program, uniforms } = build(list, (attrs ?? {}) as Record<string, number>);
        return (backend as unknown as ProgramRunner).runWebGPUProgram(
          program,
          list,
          'float32',
          uniforms,
        );
      },
    });
  }
}
