/**
 * The linear projections that share one input (q/k/v of attention, gate/up of the MLP, or one
 * alone), as one op with its own backward on webgpu, for passes that may be differentiated:
 *
 * - forward, per projection, one fused matmul `x · W` with its bias or the residual stream inside
 *   and, with a LoRA adapter, `x · A` and one kernel adding `scale · (x·A) · B` to it;
 * - backward, the input gradient `Σᵢ dyᵢ · Wᵢᵀ (+ scale · dyᵢ · Bᵢᵀ · Aᵢᵀ)` as a chain of
 *   `a · bᵀ + c` products (no add dispatch per term), a trainable weight's gradient `xᵀ · dyᵢ`, a
 *   bias's one column sum, the residual's `dyᵢ` itself (no dispatch), and an adapter's
 *   `scale · dyᵢ · Bᵢᵀ` and `scale · (x·A)ᵀ · dyᵢ` by one small kernel each. A gradient is
 *   computed only for the inputs the tape asks for (not a frozen weight's, nor under LoRA the
 *   first layer's input, which no trainable variable feeds).
 *
 * The composed path (`linear` in decoder/ops.ts) is the reference: same products, each its own op.
 */
import * as tf from '@tensorflow/tfjs';
import { columnSum } from './column-sum.ts';
import { takeRunningSum } from './grad-accumulator.ts';
import { matMulNTAdd } from './matmul-nt.ts';
import { elementwiseProgram, type ProgramKernel, registerProgramKernels } from './programs.ts';

export const PROJECTION_KERNELS = {
  loraOut: 'AgentrlLoraOut',
  loraGradXA: 'AgentrlLoraGradXA',
  loraGradB: 'AgentrlLoraGradB',
  loraGradBAdd: 'AgentrlLoraGradBAdd',
} as const;

/** Largest adapter rank the kernels take (workgroup memory of the row reduction); larger composes. */
export const MAX_FUSED_LORA_RANK = 64;

const rowsOf = (t: tf.TensorInfo) => t.shape[0] as number;
const colsOf = (t: tf.TensorInfo) => t.shape[t.shape.length - 1] as number;
const ROW_THREADS = 64;

const kernels: Record<string, ProgramKernel> = {
  // y[n, o] = base[n, o] + s · Σ_k xa[n, k] · B[k, o]
  [PROJECTION_KERNELS.loraOut]: {
    inputs: ['base', 'xa', 'B'],
    build: ([base, xa], { scale }) => ({
      program: elementwiseProgram(
        'lora_out',
        ['base', 'xa', 'B'],
        [...(base as tf.TensorInfo).shape],
        `let o = index % uniforms.nOut;
        let n = index / uniforms.nOut;
        var acc = 0.0;
        for (var k = 0; k < uniforms.r; k++) { acc += xa[n * uniforms.r + k] * B[k * uniforms.nOut + o]; }
        result[index] = base[index] + uniforms.scale * acc;`,
        'nOut : i32, r : i32, scale : f32,',
      ),
      uniforms: [
        { type: 'int32', data: [colsOf(base as tf.TensorInfo)] },
        { type: 'int32', data: [colsOf(xa as tf.TensorInfo)] },
        { type: 'float32', data: [scale as number] },
      ],
    }),
  },
  // dxa[n, k] = s · Σ_o dy[n, o] · B[k, o]: one workgroup per row n; each thread sums its strided
  // columns for every k, then thread k adds the threads' partials.
  [PROJECTION_KERNELS.loraGradXA]: {
    inputs: ['dy', 'B'],
    build: ([dy, b], { scale }) => {
      const r = rowsOf(b as tf.TensorInfo);
      const rows = rowsOf(dy as tf.TensorInfo);
      return {
        program: {
          ...elementwiseProgram('lora_grad_xa', ['dy', 'B'], [rows, r], ''),
          shaderKey: `agentrl_lora_grad_xa_r${r}`,
          dispatch: [Math.min(rows, 65535), Math.ceil(rows / 65535), 1],
          workgroupSize: [ROW_THREADS, 1, 1],
          size: false,
          uniforms: 'rows : i32, nOut : i32, scale : f32,',
          getUserCode: () => `
      var<workgroup> partial : array<f32, ${ROW_THREADS * r}>;
      fn main(index : i32) {
        let tid = i32(localId.x);
        let n = i32(workgroupId.y * numWorkgroups.x + workgroupId.x);
        let live = n < uniforms.rows;
        var acc : array<f32, ${r}>;
        if (live) {
          for (var o = tid; o < uniforms.nOut; o += ${ROW_THREADS}) {
            let g = dy[n * uniforms.nOut + o];
            for (var k = 0; k < ${r}; k++) { acc[k] += g * B[k * uniforms.nOut + o]; }
          }
        }
        for (var k = 0; k < ${r}; k++) { partial[tid * ${r} + k] = acc[k]; }
        workgroupBarrier();
        if (live && tid < ${r}) {
          var total = 0.0;
          for (var t = 0; t < ${ROW_THREADS}; t++) { total += partial[t * ${r} + tid]; }
          result[n * ${r} + tid] = uniforms.scale * total;
        }
      }`,
        },
        uniforms: [
          { type: 'int32', data: [rows] },
          { type: 'int32', data: [colsOf(dy as tf.TensorInfo)] },
          { type: 'float32', data: [scale as number] },
        ],
      };
    },
  },
  // dB[k, o] = s · Σ_n xa[n, k] · dy[n, o]: a thread per output; neighbours read neighbouring o.
  [PROJECTION_KERNELS.loraGradB]: loraGradB(false),
  // The same plus a running sum of the gradient: prior[k, o] + s · Σ_n ...
  [PROJECTION_KERNELS.loraGradBAdd]: loraGradB(true),
};

function loraGradB(addend: boolean): ProgramKernel {
  const inputs = addend ? ['xa', 'dy', 'prior'] : ['xa', 'dy'];
  return {
    inputs,
    build: ([xa, dy], { scale }) => {
      const r = colsOf(xa as tf.TensorInfo);
      const out = colsOf(dy as tf.TensorInfo);
      return {
        program: elementwiseProgram(
          addend ? 'lora_grad_b_add' : 'lora_grad_b',
          inputs,
          [r, out],
          `let o = index % uniforms.nOut;
        let k = index / uniforms.nOut;
        var acc = 0.0;
        for (var n = 0; n < uniforms.rows; n++) { acc += xa[n * uniforms.r + k] * dy[n * uniforms.nOut + o]; }
        result[index] = ${addend ? 'prior[index] + ' : ''}uniforms.scale * acc;`,
          'rows : i32, nOut : i32, r : i32, scale : f32,',
        ),
        uniforms: [
          { type: 'int32', data: [rowsOf(xa as tf.TensorInfo)] },
          { type: 'int32', data: [out] },
          { type: 'int32', data: [r] },
          { type: 'float32', data: [scale as number] },
        ],
      };
    },
  };
}

/** Registers the projection kernels for webgpu (idempotent). */
export function registerProjectionKernels(): void {
  registerProgramKernels(kernels);
}

/** A LoRA adapter: the projection adds `scale · (x · a) · b`. */
export interface ProjectionAdapter {
  /** `[in, r]` */
  readonly a: tf.Tensor2D;
  /** `[r, out]` */
  readonly b: tf.Tensor2D;
  readonly scale: number;
}

/** One projection `x · weight (+ bias) (+ residual) (+ adapter)`, weight stored `[in, out]`. */
export interface ProjectionSpec {
  readonly weight: tf.Tensor2D;
  readonly bias?: tf.Tensor1D | undefined;
  /** The residual stream `[N, out]`, added to the output (its gradient is `dy`). */
  readonly residual?: tf.Tensor2D | undefined;
  /** The weight and bias take no gradient (captured as constants, not inputs). */
  readonly frozen?: boolean | undefined;
  readonly lora?: ProjectionAdapter | undefined;
}

/** Whether {@link projectShared} takes this projection (an adapter's rank within the kernels'). */
export function projectionFusable(spec: ProjectionSpec): boolean {
  return spec.lora === undefined || (spec.lora.a.shape[1] as number) <= MAX_FUSED_LORA_RANK;
}

const run = (name: string, inputs: Record<string, tf.Tensor>, attrs: Record<string, number> = {}) =>
  tf.engine().runKernel(name, inputs as tf.NamedTensorMap, attrs) as tf.Tensor;

/** `xᵀ · dy`, plus the running sum of the gradient when there is one (one fused matmul). */
function weightGradient(x: tf.Tensor2D, dy: tf.Tensor2D, sum: tf.Tensor | undefined): tf.Tensor {
  if (sum === undefined) return tf.matMul(x, dy, true, false);
  return tf.fused.matMul({ a: x, b: dy, transposeA: true, bias: sum });
}

/** The engine call that records an op with several outputs and its own gradient. */
interface KernelFuncEngine {
  runKernelFunc(params: {
    forwardFunc: (backend: unknown, save: tf.GradSaveFunc) => tf.Tensor[];
    backwardsFunc: (dys: tf.Tensor[], saved: tf.Tensor[]) => Record<string, () => tf.Tensor>;
    inputs: Record<string, tf.Tensor>;
  }): tf.Tensor[];
}

/**
 * The projections of `x` `[N, in]` in `specs`, as one op whose backward is described in the file
 * comment; webgpu only (the caller checks the `matMul` switch and {@link projectionFusable}).
 */
export function projectShared(x: tf.Tensor2D, specs: readonly ProjectionSpec[]): tf.Tensor2D[] {
  // The op's inputs: x, then each projection's trainable tensors and residual, by name.
  const inputs: Record<string, tf.Tensor> = { x };
  specs.forEach((p, i) => {
    if (p.frozen !== true) {
      inputs[`w${i}`] = p.weight;
      if (p.bias !== undefined) inputs[`b${i}`] = p.bias;
    }
    if (p.residual !== undefined) inputs[`r${i}`] = p.residual;
    if (p.lora !== undefined) {
      inputs[`a${i}`] = p.lora.a;
      inputs[`bb${i}`] = p.lora.b;
    }
  });
  const engine = tf.engine() as unknown as KernelFuncEngine;
  const outputs = engine.runKernelFunc({
    forwardFunc: (_backend, save) => {
      const partials: tf.Tensor[] = [];
      const ys = specs.map((p) => {
        // The bias and the residual ride in the matmul; both at once: the residual added after.
        const extra = p.residual !== undefined && p.bias === undefined ? p.residual : p.bias;
        let y: tf.Tensor = tf.fused.matMul({
          a: x,
          b: p.weight,
          ...(extra === undefined ? {} : { bias: extra }),
        });
        if (p.lora !== undefined) {
          const xa = tf.matMul(x, p.lora.a);
          partials.push(xa);
          y = run(
            PROJECTION_KERNELS.loraOut,
            { base: y, xa, B: p.lora.b },
            { scale: p.lora.scale },
          );
        }
        if (p.residual !== undefined && extra !== p.residual) y = tf.add(y, p.residual);
        return y;
      });
      // Saved: x, then per projection its weight and, with an adapter, a, b and x · a.
      save([
        x,
        ...specs.map((p) => p.weight),
        ...specs.flatMap((p) =>
          p.lora === undefined ? [] : [p.lora.a, p.lora.b, partials.shift() as tf.Tensor],
        ),
      ]);
      return ys;
    },
    backwardsFunc: (dys, saved) => {
      const dy = (Array.isArray(dys) ? dys : [dys]) as tf.Tensor2D[];
      const sx = saved[0] as tf.Tensor2D;
      const weights = saved.slice(1, 1 + specs.length) as tf.Tensor2D[];
      const adapters: ({ a: tf.Tensor2D; b: tf.Tensor2D; xa: tf.Tensor2D } | undefined)[] = [];
      let at = 1 + specs.length;
      for (const p of specs) {
        if (p.lora === undefined) adapters.push(undefined);
        else {
          const [a, b, xa] = saved.slice(at, at + 3) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
          adapters.push({ a, b, xa });
          at += 3;
        }
      }
      // scale · dyᵢ · Bᵢᵀ, needed by x's gradient and by Aᵢ's: computed once, here (freed with
      // the backward pass's scope, or by Aᵢ's gradient, which the walk asks for after x's).
      const dxa = specs.map((p, i) =>
        p.lora === undefined
          ? undefined
          : (run(
              PROJECTION_KERNELS.loraGradXA,
              { dy: dy[i] as tf.Tensor, B: (adapters[i] as { b: tf.Tensor }).b },
              { scale: p.lora.scale },
            ) as tf.Tensor2D),
      );
      const grads: Record<string, () => tf.Tensor> = {
        x: () => {
          let acc: tf.Tensor2D | undefined;
          const term = (a: tf.Tensor2D, b: tf.Tensor2D) => {
            acc =
              acc === undefined
                ? (tf.matMul(a, b, false, true) as tf.Tensor2D)
                : matMulNTAdd(a, b, acc);
          };
          specs.forEach((_, i) => {
            term(dy[i] as tf.Tensor2D, weights[i] as tf.Tensor2D);
            const ad = adapters[i];
            if (ad !== undefined) term(dxa[i] as tf.Tensor2D, ad.a);
          });
          return acc as tf.Tensor2D;
        },
      };
      specs.forEach((p, i) => {
        const g = dy[i] as tf.Tensor2D;
        if (p.frozen !== true) {
          const w = p.weight;
          const bias = p.bias;
          grads[`w${i}`] = () => weightGradient(sx, g, takeRunningSum(w));
          if (bias !== undefined) grads[`b${i}`] = () => columnSum(g, takeRunningSum(bias));
        }
        // A new tensor on dy's data: the same object would be freed with dy.
        if (p.residual !== undefined) grads[`r${i}`] = () => tf.reshape(g, g.shape);
        const ad = adapters[i];
        if (p.lora !== undefined && ad !== undefined) {
          const scale = p.lora.scale;
          const { a, b } = p.lora;
          grads[`a${i}`] = () => {
            const d = dxa[i] as tf.Tensor2D;
            const da = weightGradient(sx, d, takeRunningSum(a));
            d.dispose();
            return da;
          };
          grads[`bb${i}`] = () => {
            const sum = takeRunningSum(b);
            return sum === undefined
              ? run(PROJECTION_KERNELS.loraGradB, { xa: ad.xa, dy: g }, { scale })
              : run(PROJECTION_KERNELS.loraGradBAdd, { xa: ad.xa, dy: g, prior: sum }, { scale });
          };
        }
      });
      return grads;
    },
    inputs,
  });
  return outputs as tf.Tensor2D[];
}
