import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { seededFloats } from '../../../test-models.ts';
import { selectBackend } from '../../select.ts';
import { probeWebGPUAdapter } from '../setup.ts';
import { columnSum } from './column-sum.ts';
import { rmsNormComposed } from './fused.ts';
import { residualRmsNorm } from './residual.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`residual webgpu kernel tests skipped${skipReason}`);

/** The value of `op` (flattened) and the gradients of `Σ value · cotangent` for every input. */
async function valueAndGrads(
  backend: 'cpu' | 'webgpu',
  inputs: readonly { shape: number[]; data: Float32Array }[],
  op: (xs: tf.Tensor[]) => tf.Tensor,
): Promise<Float32Array[]> {
  await selectBackend({ backend });
  const xs = inputs.map((i) => tf.tensor(i.data, i.shape));
  const value = tf.tidy(() => tf.reshape(op(xs), [-1]));
  const cotangent = tf.tensor(seededFloats(value.size, 99));
  const grads = tf.grads((...args: tf.Tensor[]) =>
    tf.sum(tf.mul(tf.reshape(op(args), [-1]), cotangent)),
  )(xs);
  const out = [value, ...grads].map((t) => t.data() as Promise<Float32Array>);
  const result = await Promise.all(out);
  tf.dispose([...xs, value, cotangent, ...grads]);
  return result;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let worst = a.length === b.length ? 0 : Number.POSITIVE_INFINITY;
  for (let i = 0; i < a.length; i++)
    worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  return worst;
}

const N = 37;
const OUT = 68;

interface Case {
  readonly inputs: { shape: number[]; data: Float32Array }[];
  readonly fused: (xs: tf.Tensor[]) => tf.Tensor;
  readonly composed: (xs: tf.Tensor[]) => tf.Tensor;
}

const cases: Record<string, Case> = {
  // Both outputs feed the loss, as in the decoder (the stream goes on to the residual add).
  'RMSNorm of the residual stream, the stream passed on': {
    inputs: [
      { shape: [N, OUT], data: seededFloats(N * OUT, 7, 3) },
      { shape: [OUT], data: seededFloats(OUT, 8) },
    ],
    fused: ([x, w]) => tf.concat(residualRmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-6), 1),
    composed: ([x, w]) =>
      tf.concat([x as tf.Tensor2D, rmsNormComposed(x as tf.Tensor2D, w as tf.Tensor1D, 1e-6)], 1),
  },
  'RMSNorm of the residual stream when only the norm feeds the loss': {
    inputs: [
      { shape: [N, OUT], data: seededFloats(N * OUT, 9, 3) },
      { shape: [OUT], data: seededFloats(OUT, 10) },
    ],
    fused: ([x, w]) => residualRmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-6)[1],
    composed: ([x, w]) => rmsNormComposed(x as tf.Tensor2D, w as tf.Tensor1D, 1e-6),
  },
};

describe.skipIf(adapter === undefined)(
  `residual RMSNorm and column sum on webgpu${skipReason}`,
  () => {
    for (const [name, c] of Object.entries(cases)) {
      it(`${name}: value and gradients equal the composed ops on cpu within 2e-5`, async () => {
        const want = await valueAndGrads('cpu', c.inputs, c.composed);
        const got = await valueAndGrads('webgpu', c.inputs, c.fused);
        expect(got).toHaveLength(want.length);
        want.forEach((w, i) => {
          expect(maxDiff(got[i] as Float32Array, w), `output ${i}`).toBeLessThan(2e-5);
        });
      });
    }

    it('sums the rows of any rank into one value per column, as tf.sum does on cpu', async () => {
      // 15 rows (not a multiple of the lanes), 70 columns (past one workgroup's 32).
      const data = seededFloats(3 * 5 * 70, 11, 2);
      const sum = async (backend: 'cpu' | 'webgpu') => {
        await selectBackend({ backend });
        const x = tf.tensor3d(data, [3, 5, 70]);
        const s = columnSum(x);
        const out = (await s.data()) as Float32Array;
        expect(s.shape).toEqual([70]);
        tf.dispose([x, s]);
        return out;
      };
      expect(maxDiff(await sum('webgpu'), await sum('cpu'))).toBeLessThan(1e-5);
    });
  },
);
