/**
 * AdamW with few dispatches (per-dispatch host time dominates on a GPU). tfjs programs write
 * one output tensor and each parameter is its own variable, so a parameter's update stays one
 * dispatch; what is shared is the rest:
 *
 * - the moments of a group of parameters live in one flat block `[m of every member | v of every
 *   member]`, and one dispatch updates the whole block from the members' gradients (a group holds
 *   as many gradients as the device binds per stage, minus the block, the norm and the output;
 *   a block stays under the binding limit);
 * - each parameter then takes one dispatch, reading its new moments from the block;
 * - the gradient's global norm takes one dispatch per group of gradients (per-workgroup partial
 *   sums of squares) and one more that sums the partials and takes the root. The block kernels
 *   read it from the GPU (clip scale, and no change at all when it is not finite), so the host
 *   queues the whole step without waiting for it.
 *
 * Same arithmetic as the per-parameter kernels in fused.ts (torch AdamW, decoupled decay).
 */
import * as tf from '@tensorflow/tfjs';
import type { AdamWScalars } from './fused.ts';
import {
  flatDispatch,
  type ProgramKernel,
  type ProgramUniform,
  registerProgramKernels,
  type WebGPUProgram,
  wgslReduce,
} from './programs.ts';

const THREADS = 256;
/** Most inputs a generated kernel takes (more would exceed any device's per-stage bindings). */
const MAX_INPUTS = 30;
/** Workgroups of a partial-norm dispatch, at most (each writes one partial sum). */
const MAX_NORM_GROUPS = 1024;
/** Workgroups of a moments dispatch, at most (threads stride over the members). */
const MAX_MOMENT_GROUPS = 4096;

let maxStorageBuffers = 8;

const kernelName = (kind: string, n: number) => `AgentrlAdamW${kind}${n}`;
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const sizeOf = (t: tf.TensorInfo) => t.shape.reduce((a, b) => a * b, 1);

/** Gradients one moments dispatch takes: the device's storage bindings minus block, norm, output. */
export function momentsGroupLimit(): number {
  return Math.max(1, Math.min(MAX_INPUTS, maxStorageBuffers - 3));
}

/** Gradients (or partial sums) one norm dispatch takes: the bindings minus the output. */
export function normGroupLimit(): number {
  return Math.max(2, Math.min(MAX_INPUTS, maxStorageBuffers - 1));
}

const ADAMW_FIELDS = [
  'lr',
  'beta1',
  'beta2',
  'eps',
  'weightDecay',
  'bias1',
  'bias2',
  'clip',
  'unscale',
];
const ADAMW_UNIFORMS =
  'lr : f32, beta1 : f32, beta2 : f32, eps : f32, wd : f32, bias1 : f32, bias2 : f32, clip : f32, unscale : f32,';
const adamwUniforms = (a: Record<string, number>): ProgramUniform[] =>
  ADAMW_FIELDS.map((k) => ({ type: 'float32', data: [a[k] as number] }));

/**
 * The step reads the gradient norm from the GPU (input `norm`, `[1]`), so nothing waits for it:
 * a non-finite norm leaves moments and parameters as they were (the caller then undoes its step
 * count), and the clip scale is `clip / (norm + 1e-6)` when `clip > 0` and the norm exceeds it.
 */
const NORM_HELPERS = `
  fn normFinite() -> bool {
    return (bitcast<u32>(norm[0]) & 0x7f800000u) != 0x7f800000u;
  }
  fn clipScale() -> f32 {
    let n = norm[0];
    return select(1.0, uniforms.clip / (n + 1e-6), uniforms.clip > 0.0 && n > uniforms.clip);
  }`;

const REDUCE = `
  const BLOCK = ${THREADS};
  var<workgroup> scratch : array<f32, ${THREADS}>;
  ${wgslReduce('reduceSum', 'f32', 'scratch', (a, b) => `${a} + ${b}`)}`;

function program(
  key: string,
  inputs: string[],
  outputShape: number[],
  groups: number,
  uniforms: string,
  code: string,
): WebGPUProgram {
  return {
    variableNames: inputs,
    outputShape,
    shaderKey: `agentrl_${key}`,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: flatDispatch(groups),
    workgroupSize: [THREADS, 1, 1],
    size: false,
    uniforms,
    getUserCode: () => code,
  };
}

/** Σ g² over `n` gradients, as one partial sum per workgroup. */
function normPartialKernel(n: number): ProgramKernel {
  const inputs = names('g', n);
  const lengths = inputs.map((_, i) => `n${i} : i32,`).join(' ');
  const loops = inputs
    .map(
      (g, i) =>
        `for (var j = first; j < uniforms.n${i}; j += stride) { let x = ${g}[j]; acc += x * x; }`,
    )
    .join('\n        ');
  return {
    inputs,
    build: (list) => {
      const total = list.reduce((a, t) => a + sizeOf(t), 0);
      const groups = Math.max(1, Math.min(MAX_NORM_GROUPS, Math.ceil(total / (THREADS * 16))));
      const code = `${REDUCE}
      fn main(index : i32) {
        let tid = i32(localId.x);
        let wg = i32(workgroupId.x);
        let stride = i32(numWorkgroups.x) * BLOCK;
        let first = wg * BLOCK + tid;
        var acc = 0.0;
        ${loops}
        let sum = reduceSum(acc, tid);
        if (tid == 0) { result[wg] = sum; }
      }`;
      return {
        program: program(`adamw_norm_partial_${n}`, inputs, [groups], groups, lengths, code),
        uniforms: list.map((t) => ({ type: 'int32', data: [sizeOf(t)] })),
      };
    },
  };
}

/** Σ of every element of `n` inputs, square-rooted and times `scale` when `root` is 1: `[1]`. */
function sumKernel(n: number): ProgramKernel {
  const inputs = names('p', n);
  const lengths = `${inputs.map((_, i) => `n${i} : i32,`).join(' ')} root : i32, scale : f32,`;
  const loops = inputs
    .map((p, i) => `for (var j = tid; j < uniforms.n${i}; j += BLOCK) { acc += ${p}[j]; }`)
    .join('\n        ');
  return {
    inputs,
    build: (list, { root, scale = 1 }) => ({
      program: program(
        `adamw_norm_sum_${n}`,
        inputs,
        [1],
        1,
        lengths,
        `${REDUCE}
      fn main(index : i32) {
        let tid = i32(localId.x);
        var acc = 0.0;
        ${loops}
        let sum = reduceSum(acc, tid);
        if (tid == 0) { result[0] = select(sum, sqrt(sum) * uniforms.scale, uniforms.root == 1); }
      }`,
      ),
      uniforms: [
        ...list.map((t): ProgramUniform => ({ type: 'int32', data: [sizeOf(t)] })),
        { type: 'int32', data: [root as number] },
        { type: 'float32', data: [scale as number] },
      ],
    }),
  };
}

/**
 * New moments of `n` parameters in one block: input `mv` `[2·total]` holds the members' first
 * moments at their offsets, then their second moments at `total` + offset; the output has the
 * same layout. Gradients are scaled by the clip scale of `norm`.
 */
function momentsKernel(n: number): ProgramKernel {
  const grads = names('g', n);
  const inputs = [...grads, 'mv', 'norm'];
  const fields = `${grads.map((_, i) => `n${i} : i32, o${i} : i32,`).join(' ')} total : i32, ${ADAMW_UNIFORMS}`;
  const loops = grads
    .map(
      (g, i) =>
        `for (var j = index; j < uniforms.n${i}; j += stride) { update(${g}[j], uniforms.o${i} + j, gscale, ok); }`,
    )
    .join('\n        ');
  return {
    inputs,
    build: (list, attrs) => {
      const members = list.slice(0, n);
      const largest = Math.max(...members.map(sizeOf));
      const groups = Math.max(1, Math.min(MAX_MOMENT_GROUPS, Math.ceil(largest / THREADS)));
      const total = members.reduce((a, t) => a + sizeOf(t), 0);
      const offsets: number[] = [];
      members.reduce((at, t) => {
        offsets.push(at);
        return at + sizeOf(t);
      }, 0);
      const code = `${NORM_HELPERS}
      fn update(grad : f32, at : i32, gscale : f32, ok : bool) {
        if (!ok) {
          result[at] = mv[at];
          result[uniforms.total + at] = mv[uniforms.total + at];
          return;
        }
        let g = grad * uniforms.unscale * gscale;
        let m2 = uniforms.beta1 * mv[at] + (1.0 - uniforms.beta1) * g;
        let v2 = uniforms.beta2 * mv[uniforms.total + at] + (1.0 - uniforms.beta2) * g * g;
        result[at] = m2;
        result[uniforms.total + at] = v2;
      }
      fn main(index : i32) {
        let stride = i32(numWorkgroups.x) * ${THREADS};
        let ok = normFinite();
        let gscale = clipScale();
        ${loops}
      }`;
      return {
        program: program(`adamw_moments_${n}`, inputs, [2 * total], groups, fields, code),
        uniforms: [
          ...members.flatMap((t, i): ProgramUniform[] => [
            { type: 'int32', data: [sizeOf(t)] },
            { type: 'int32', data: [offsets[i] as number] },
          ]),
          { type: 'int32', data: [total] },
          ...adamwUniforms(attrs),
        ],
      };
    },
  };
}

/** New parameter from its new moments at `offset` in a block of `total` members' elements. */
const paramKernel: ProgramKernel = {
  inputs: ['param', 'mv', 'norm'],
  build: ([param], attrs) => {
    const size = sizeOf(param as tf.TensorInfo);
    return {
      program: program(
        'adamw_param_block',
        ['param', 'mv', 'norm'],
        [...(param as tf.TensorInfo).shape],
        Math.ceil(size / THREADS),
        `size : i32, offset : i32, total : i32, ${ADAMW_UNIFORMS}`,
        `${NORM_HELPERS}
      fn main(index : i32) {
        if (index >= uniforms.size) { return; }
        if (!normFinite()) {
          result[index] = param[index];
          return;
        }
        let m2 = mv[uniforms.offset + index];
        let v2 = mv[uniforms.total + uniforms.offset + index];
        let update = (m2 / uniforms.bias1) / (sqrt(v2 / uniforms.bias2) + uniforms.eps);
        result[index] = param[index] * (1.0 - uniforms.lr * uniforms.wd) - uniforms.lr * update;
      }`,
      ),
      uniforms: [
        { type: 'int32', data: [size] },
        { type: 'int32', data: [attrs.offset as number] },
        { type: 'int32', data: [attrs.total as number] },
        ...adamwUniforms(attrs),
      ],
    };
  },
};

/** Registers the AdamW kernels for a device binding `storageBuffers` per stage (idempotent). */
export function registerAdamWKernels(storageBuffers: number): void {
  maxStorageBuffers = storageBuffers;
  const kernels: Record<string, ProgramKernel> = { AgentrlAdamWParamBlock: paramKernel };
  for (let n = 1; n <= MAX_INPUTS; n++) {
    kernels[kernelName('NormPartial', n)] = normPartialKernel(n);
    kernels[kernelName('Sum', n)] = sumKernel(n);
    kernels[kernelName('Moments', n)] = momentsKernel(n);
  }
  registerProgramKernels(kernels);
}

function run(kernel: string, inputs: tf.Tensor[], names: string[], attrs: Record<string, number>) {
  const named: Record<string, tf.Tensor> = {};
  inputs.forEach((t, i) => {
    named[names[i] as string] = t;
  });
  return tf.engine().runKernel(kernel, named as tf.NamedTensorMap, attrs) as tf.Tensor;
}

function groupsOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The global L2 norm of `grads` times `scale` as a `[1]` tensor: one dispatch per group of
 * gradients, then sums of the partials (one dispatch while they fit one). Webgpu only.
 */
export function adamwGlobalNorm(grads: readonly tf.Tensor[], scale = 1): tf.Tensor {
  const per = normGroupLimit();
  let partials = groupsOf(grads, per).map((group) =>
    run(kernelName('NormPartial', group.length), group, names('g', group.length), {}),
  );
  while (partials.length > per) {
    partials = groupsOf(partials, per).map((group) =>
      run(kernelName('Sum', group.length), group, names('p', group.length), { root: 0 }),
    );
  }
  return run(kernelName('Sum', partials.length), partials, names('p', partials.length), {
    root: 1,
    scale,
  });
}

/** The step's scalars for the block kernels: bias corrections and the clip threshold. */
export interface BlockStepScalars extends Omit<AdamWScalars, 'gradScale'> {
  /** Clip the gradient norm to this; 0 disables. */
  readonly clip: number;
  /**
   * Every gradient is multiplied by this before anything else (a loss scale's inverse; 1
   * otherwise); the norm given to the kernels must be of the gradients so multiplied.
   */
  readonly unscale: number;
}

/**
 * One moments block's new value `[2·total]` from its members' gradients, clipped by the global
 * gradient norm `norm` (`[1]`, on the GPU; non-finite: the block is returned unchanged).
 */
export function adamwBlockMoments(
  grads: readonly tf.Tensor[],
  block: tf.Tensor,
  norm: tf.Tensor,
  scalars: BlockStepScalars,
): tf.Tensor {
  const attrs = { ...scalars } as unknown as Record<string, number>;
  return run(
    kernelName('Moments', grads.length),
    [...grads, block, norm],
    [...names('g', grads.length), 'mv', 'norm'],
    attrs,
  );
}

/** A member's new parameter from the block's (new) moments (unchanged if `norm` is not finite). */
export function adamwBlockParam(
  param: tf.Tensor,
  block: tf.Tensor,
  norm: tf.Tensor,
  offset: number,
  total: number,
  scalars: BlockStepScalars,
): tf.Tensor {
  const attrs = { ...scalars, offset, total } as unknown as Record<string, number>;
  return run('AgentrlAdamWParamBlock', [param, block, norm], ['param', 'mv', 'norm'], attrs);
}
