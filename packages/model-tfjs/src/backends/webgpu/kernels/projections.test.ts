import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { seededFloats } from '../../../test-models.ts';
import { selectBackend } from '../../select.ts';
import { probeWebGPUAdapter } from '../setup.ts';
import { type ProjectionSpec, projectShared } from './projections.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`shared projection tests skipped${skipReason}`);

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
  const result = await Promise.all([value, ...grads].map((t) => t.data() as Promise<Float32Array>));
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
const input = (shape: number[], seed: number, scale = 1) => ({
  shape,
  data: seededFloats(
    shape.reduce((a, b) => a * b, 1),
    seed,
    scale,
  ),
});
/** Outputs side by side, so every one of them feeds the loss. */
const joined = (ys: tf.Tensor[]) => tf.concat(ys.map((y) => tf.reshape(y, [-1])));
const mm = (x: tf.Tensor, w: tf.Tensor) => tf.matMul(x as tf.Tensor2D, w as tf.Tensor2D);
/** The LoRA term `scale · (x · a) · b`, composed. */
const loraTerm = (x: tf.Tensor, a: tf.Tensor, b: tf.Tensor, scale: number) =>
  mm(tf.mul(mm(x, a), scale), b);

interface Case {
  readonly inputs: { shape: number[]; data: Float32Array }[];
  readonly fused: (xs: tf.Tensor[]) => tf.Tensor;
  readonly composed: (xs: tf.Tensor[]) => tf.Tensor;
}

// IN = 72 (≥ 64, a multiple of 4): the input gradient's products a · bᵀ + c run as one program;
// IN = 24: tfjs's matmul and an add.
const cases: Record<string, Case> = {
  'one projection with the residual stream inside the matmul': {
    inputs: [input([N, 72], 1), input([72, 40], 2), input([N, 40], 3)],
    fused: ([x, w, r]) =>
      joined(
        projectShared(x as tf.Tensor2D, [{ weight: w as tf.Tensor2D, residual: r as tf.Tensor2D }]),
      ),
    composed: ([x, w, r]) =>
      tf.reshape(tf.add(mm(x as tf.Tensor, w as tf.Tensor), r as tf.Tensor), [-1]),
  },
  'q, k and v with biases sharing their input (input gradient chained)': {
    inputs: [
      input([N, 72], 4),
      input([72, 40], 5),
      input([72, 16], 6),
      input([72, 16], 7),
      input([40], 8),
      input([16], 9),
      input([16], 10),
    ],
    fused: ([x, wq, wk, wv, bq, bk, bv]) =>
      joined(
        projectShared(x as tf.Tensor2D, [
          { weight: wq as tf.Tensor2D, bias: bq as tf.Tensor1D },
          { weight: wk as tf.Tensor2D, bias: bk as tf.Tensor1D },
          { weight: wv as tf.Tensor2D, bias: bv as tf.Tensor1D },
        ]),
      ),
    composed: ([x, wq, wk, wv, bq, bk, bv]) =>
      joined([
        tf.add(mm(x as tf.Tensor, wq as tf.Tensor), bq as tf.Tensor),
        tf.add(mm(x as tf.Tensor, wk as tf.Tensor), bk as tf.Tensor),
        tf.add(mm(x as tf.Tensor, wv as tf.Tensor), bv as tf.Tensor),
      ]),
  },
  'gate and up sharing a narrow input (input gradient by matmul and add)': {
    inputs: [input([N, 24], 11), input([24, 36], 12), input([24, 36], 13)],
    fused: ([x, wg, wu]) =>
      joined(
        projectShared(x as tf.Tensor2D, [
          { weight: wg as tf.Tensor2D },
          { weight: wu as tf.Tensor2D },
        ]),
      ),
    composed: ([x, wg, wu]) =>
      joined([mm(x as tf.Tensor, wg as tf.Tensor), mm(x as tf.Tensor, wu as tf.Tensor)]),
  },
};

// LoRA: frozen weights and biases (constants), adapters of rank 4 and 3 (3: the a · bᵀ + c
// product falls back to matmul and add), scale 2, one projection with the residual stream.
const frozenData = [seededFloats(72 * 40, 20), seededFloats(72 * 16, 21), seededFloats(16, 22)];
/** The frozen weights and bias, made on the backend in use. */
const frozen = () => ({
  w0: tf.tensor2d(frozenData[0] as Float32Array, [72, 40]),
  w1: tf.tensor2d(frozenData[1] as Float32Array, [72, 16]),
  bias: tf.tensor1d(frozenData[2] as Float32Array),
});
cases['LoRA adapters on frozen projections, a bias and the residual stream'] = {
  inputs: [
    input([N, 72], 23),
    input([72, 4], 24, 0.5),
    input([4, 40], 25, 0.5),
    input([72, 3], 26, 0.5),
    input([3, 16], 27, 0.5),
    input([N, 40], 28),
  ],
  fused: ([x, a0, b0, a1, b1, r]) => {
    const { w0, w1, bias } = frozen();
    const specs: ProjectionSpec[] = [
      {
        weight: w0,
        frozen: true,
        residual: r as tf.Tensor2D,
        lora: { a: a0 as tf.Tensor2D, b: b0 as tf.Tensor2D, scale: 2 },
      },
      {
        weight: w1,
        bias,
        frozen: true,
        lora: { a: a1 as tf.Tensor2D, b: b1 as tf.Tensor2D, scale: 2 },
      },
    ];
    return joined(projectShared(x as tf.Tensor2D, specs));
  },
  composed: ([x, a0, b0, a1, b1, r]) => {
    const { w0, w1, bias } = frozen();
    return joined([
      tf.add(
        tf.add(
          mm(x as tf.Tensor, w0),
          loraTerm(x as tf.Tensor, a0 as tf.Tensor, b0 as tf.Tensor, 2),
        ),
        r as tf.Tensor,
      ),
      tf.add(
        tf.add(mm(x as tf.Tensor, w1), bias),
        loraTerm(x as tf.Tensor, a1 as tf.Tensor, b1 as tf.Tensor, 2),
      ),
    ]);
  },
};

describe.skipIf(adapter === undefined)(
  `projections sharing an input on webgpu${skipReason}`,
  () => {
    for (const [name, c] of Object.entries(cases)) {
      it(`${name}: value and gradients equal the composed ops on cpu within 5e-5`, async () => {
        const want = await valueAndGrads('cpu', c.inputs, c.composed);
        const got = await valueAndGrads('webgpu', c.inputs, c.fused);
        expect(got).toHaveLength(want.length);
        want.forEach((w, i) => {
          expect(maxDiff(got[i] as Float32Array, w), `output ${i}`).toBeLessThan(5e-5);
        });
      });
    }
  },
);
