/**
 * The decoder's residual stream and biased projections on webgpu with fewer dispatches, forward
 * and backward (each dispatch costs host time, see fused.ts):
 *
 * - {@link fusedLinear}: `x · W` plus a bias or the residual stream, as one fused matmul with the
 *   sum inside (forward: one dispatch instead of a matmul and an add). Its gradient is written out:
 *   `dx = dy · Wᵀ`, `dW = xᵀ · dy`, the residual's gradient is `dy` itself and a bias's one column
 *   sum (one dispatch, where tfjs's fused matmul sums with a transpose and a reduction).
 * - {@link residualRmsNorm}: RMSNorm of the residual stream that also passes the stream on, so
 *   its backward adds the stream's gradient inside the RMSNorm gradient kernel (one dispatch for
 *   the kernel and the add autodiff would issue).
 *
 * Webgpu only: the decoder uses them where the `matMul` / `rmsNorm` switches are on, in passes
 * that may be differentiated, and the composed ops everywhere else.
 */
import * as tf from '@tensorflow/tfjs';
import { columnSum } from './column-sum.ts';
import { FUSED_KERNELS, normRowKernel } from './fused.ts';
import { registerProgramKernels } from './programs.ts';

/** Kernel name, registered for the webgpu backend only. */
export const RMS_NORM_GRAD_X_ADD_KERNEL = 'AgentrlRmsNormGradXAdd';

/** Registers the residual kernels for webgpu (idempotent). */
export function registerResidualKernels(): void {
  registerProgramKernels({
    // dx = r·w·dy − x·r³·Σ(dy·w·x)/H + dres
    [RMS_NORM_GRAD_X_ADD_KERNEL]: normRowKernel(
      'rmsnorm_grad_x_add',
      ['x', 'w', 'dy', 'dres'],
      `var ss = 0.0;
          var dot = 0.0;
          for (var c = tid; c < cols; c += BLOCK) {
            let v = x[base + c];
            ss += v * v;
            dot += dy[base + c] * w[c] * v;
          }
          let r = inverseSqrt(reduceSum(ss, tid) / f32(cols) + uniforms.eps);
          let d = reduceSum(dot, tid) * r * r * r / f32(cols);
          for (var c = tid; c < cols; c += BLOCK) {
            result[base + c] = r * w[c] * dy[base + c] - x[base + c] * d + dres[base + c];
          }`,
    ),
  });
}

const run = (kernel: string, inputs: Record<string, tf.Tensor>, attrs: Record<string, number>) =>
  tf.engine().runKernel(kernel, inputs as tf.NamedTensorMap, attrs) as tf.Tensor;

/** The engine call that records an op with several outputs and its own gradient. */
interface KernelFuncEngine {
  runKernelFunc(params: {
    forwardFunc: (backend: unknown, save: tf.GradSaveFunc) => tf.Tensor[];
    backwardsFunc: (dys: tf.Tensor[], saved: tf.Tensor[]) => Record<string, () => tf.Tensor>;
    inputs: Record<string, tf.Tensor>;
  }): tf.Tensor[];
}

/**
 * `[x, rmsNorm(x) · weight]` for the residual stream `x` `[N, H]` on webgpu (the caller checks
 * the `rmsNorm` switch): the first output is the stream passed on (no copy), for the residual add
 * after the sub-layer. Forward one dispatch; backward one for `dx` (the gradient through the norm
 * plus the stream's own) and, only when the weight takes a gradient, two for `dw` (per-row
 * products and their column sum).
 */
export function residualRmsNorm(
  x: tf.Tensor2D,
  weight: tf.Tensor1D,
  eps: number,
): [tf.Tensor2D, tf.Tensor2D] {
  const engine = tf.engine() as unknown as KernelFuncEngine;
  const [stream, normed] = engine.runKernelFunc({
    forwardFunc: (_backend, save) => {
      save([x, weight]);
      // A new tensor on the same data: the node's output must not be its own input.
      return [tf.clone(x), run(FUSED_KERNELS.rmsNorm, { x, w: weight }, { eps })];
    },
    backwardsFunc: (dys, saved) => {
      const [dStream, dNormed] = dys as [tf.Tensor, tf.Tensor];
      const [sx, sw] = saved as [tf.Tensor, tf.Tensor];
      return {
        x: () =>
          run(RMS_NORM_GRAD_X_ADD_KERNEL, { x: sx, w: sw, dy: dNormed, dres: dStream }, { eps }),
        w: () =>
          tf.tidy(() =>
            columnSum(run(FUSED_KERNELS.rmsNormGradWRows, { x: sx, dy: dNormed }, { eps })),
          ),
      };
    },
    inputs: { x, w: weight },
  });
  return [stream as tf.Tensor2D, normed as tf.Tensor2D];
}

/**
 * `x · w + extra` on webgpu in one fused matmul, `x` `[N, in]`, `w` `[in, out]`; `extra` is a
 * bias `[out]` (its gradient a column sum of `dy`) or the residual stream `[N, out]` (its
 * gradient `dy`). For a differentiated pass with `w` trainable; the caller checks the `matMul`
 * switch.
 */
export function fusedLinear(
  x: tf.Tensor2D,
  w: tf.Tensor2D,
  extra: tf.Tensor,
  kind: 'bias' | 'residual',
): tf.Tensor2D {
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [sx, sw, se, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor, tf.GradSaveFunc];
    save([sx, sw]);
    return {
      value: tf.fused.matMul({ a: sx, b: sw, bias: se }),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const g = dy as tf.Tensor2D;
        const [a, b] = saved as [tf.Tensor2D, tf.Tensor2D];
        return [
          tf.matMul(g, b, false, true),
          tf.matMul(a, g, true, false),
          // A new tensor either way: the same object as dy would be freed with it.
          kind === 'bias' ? columnSum(g) : tf.reshape(g, se.shape),
        ];
      },
    };
  }) as (x: tf.Tensor, w: tf.Tensor, extra: tf.Tensor) => tf.Tensor;
  return op(x, w, extra) as tf.Tensor2D;
}
