/**
 * RMSNorm of the decoder's residual stream on webgpu, as one op that also passes the stream on:
 * its backward adds the stream's gradient inside the RMSNorm gradient kernel (one dispatch for the
 * kernel and the add autodiff would issue), and the weight's gradient is a row kernel and one
 * column sum, computed only when the weight takes a gradient. The residual adds themselves ride
 * in the projections' matmuls (projections.ts). Webgpu only: the decoder uses it where the
 * `rmsNorm` switch is on, in passes that may be differentiated, and the composed ops elsewhere.
 */
import * as tf from '@tensorflow/tfjs';
import { columnSum } from './column-sum.ts';
import { FUSED_KERNELS, normRowKernel } from './fused.ts';
import { takeRunningSum } from './grad-accumulator.ts';
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
            columnSum(
              run(FUSED_KERNELS.rmsNormGradWRows, { x: sx, dy: dNormed }, { eps }),
              takeRunningSum(weight),
            ),
          ),
      };
    },
    inputs: { x, w: weight },
  });
  return [stream as tf.Tensor2D, normed as tf.Tensor2D];
}
