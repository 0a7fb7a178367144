/**
 * The sum over rows of a `[rows, cols]` tensor (any rank: every axis but the last) in one webgpu
 * dispatch. tfjs's `Sum` over a leading axis transposes first and then reduces (two dispatches);
 * the backward pass needs this sum for every bias gradient and every RMSNorm weight gradient.
 */
import * as tf from '@tensorflow/tfjs';
import { flatDispatch, type ProgramKernel, registerProgramKernels } from './programs.ts';

/** Kernel name, registered for the webgpu backend only. */
export const COLUMN_SUM_KERNEL = 'AgentrlColumnSum';

/** Columns one workgroup sums, and the lanes that share each column's rows. */
const COLS = 32;
const LANES = 8;

const columnSumKernel = (addend: boolean): ProgramKernel => ({
  inputs: addend ? ['x', 'prior'] : ['x'],
  build: ([x]) => {
    const shape = (x as tf.TensorInfo).shape;
    const cols = shape[shape.length - 1] as number;
    const rows = shape.reduce((a, b) => a * b, 1) / cols;
    const groups = Math.ceil(cols / COLS);
    return {
      program: {
        variableNames: addend ? ['x', 'prior'] : ['x'],
        outputShape: [cols],
        shaderKey: `agentrl_column_sum${addend ? '_add' : ''}`,
        dispatchLayout: { x: [0] },
        dispatch: flatDispatch(groups),
        workgroupSize: [COLS * LANES, 1, 1],
        size: false,
        uniforms: 'rows : i32, cols : i32,',
        // Thread (lane, c) sums rows lane, lane + LANES, ... of column c: neighbouring threads
        // read neighbouring columns; the lanes' partial sums then meet in workgroup memory.
        getUserCode: () => `
      var<workgroup> partial : array<f32, ${COLS * LANES}>;
      fn main(index : i32) {
        let tid = i32(localId.x);
        let group = i32(workgroupId.y * numWorkgroups.x + workgroupId.x);
        let c = group * ${COLS} + tid % ${COLS};
        let lane = tid / ${COLS};
        var acc = 0.0;
        if (c < uniforms.cols) {
          for (var r = lane; r < uniforms.rows; r += ${LANES}) { acc += x[r * uniforms.cols + c]; }
        }
        partial[tid] = acc;
        workgroupBarrier();
        if (lane == 0 && c < uniforms.cols) {
          var total = 0.0;
          for (var l = 0; l < ${LANES}; l++) { total += partial[l * ${COLS} + tid]; }
          result[c] = ${addend ? 'prior[c] + total' : 'total'};
        }
      }`,
      },
      uniforms: [
        { type: 'int32', data: [rows] },
        { type: 'int32', data: [cols] },
      ],
    };
  },
});

/** The column sum with an addend `prior` `[cols]`: `prior + Σ_rows x` (webgpu only). */
export const COLUMN_SUM_ADD_KERNEL = 'AgentrlColumnSumAdd';

/** Registers the column sum for webgpu (idempotent). */
export function registerColumnSum(): void {
  registerProgramKernels({
    [COLUMN_SUM_KERNEL]: columnSumKernel(false),
    [COLUMN_SUM_ADD_KERNEL]: columnSumKernel(true),
  });
}

/**
 * `Σ_rows x[row, c]` as `[cols]` for `x` of any rank (rows: every axis but the last), plus
 * `addend` `[cols]` when given (`addend + Σ`, one dispatch on webgpu).
 */
export function columnSum(x: tf.Tensor, addend?: tf.Tensor): tf.Tensor1D {
  if (tf.getBackend() !== 'webgpu') {
    const cols = x.shape[x.rank - 1] as number;
    const sum = tf.sum(tf.reshape(x, [-1, cols]), 0) as tf.Tensor1D;
    return addend === undefined ? sum : (tf.add(addend, sum) as tf.Tensor1D);
  }
  return (
    addend === undefined
      ? tf.engine().runKernel(COLUMN_SUM_KERNEL, { x })
      : tf.engine().runKernel(COLUMN_SUM_ADD_KERNEL, { x, prior: addend })
  ) as tf.Tensor1D;
}
