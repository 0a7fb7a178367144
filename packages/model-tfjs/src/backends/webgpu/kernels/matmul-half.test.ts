import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../../../model/load.ts';
import { seededFloats } from '../../../test-models.ts';
import { selectBackend } from '../../select.ts';
import { countWebGPUDispatches } from '../dispatch-counter.ts';
import { probeWebGPUAdapter } from '../setup.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const hasF16 = adapter?.features.includes('shader-f16') === true;
const skipReason =
  adapter === undefined
    ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)'
    : hasF16
      ? ''
      : ' (skipped: the adapter has no shader-f16)';
if (skipReason !== '') console.log(`half-precision matmul tests skipped${skipReason}`);

/** `x` rounded to the nearest IEEE binary16 value (ties to even; subnormals kept). */
function toHalf(x: number): number {
  const a = Math.abs(x);
  if (a === 0 || !Number.isFinite(a)) return x;
  let e = Math.max(-14, Math.floor(Math.log2(a)));
  if (e > -14 && 2 ** e > a) e -= 1;
  if (2 ** (e + 1) <= a) e += 1;
  const ulp = 2 ** (e - 10);
  const q = a / ulp;
  let n = Math.floor(q);
  const f = q - n;
  if (f > 0.5 || (f === 0.5 && n % 2 === 1)) n += 1;
  return Math.sign(x) * n * ulp;
}

const halfOf = (data: Float32Array) => data.map(toHalf);

function maxDiff(a: Float32Array, b: Float32Array): number {
  let worst = a.length === b.length ? 0 : Number.POSITIVE_INFINITY;
  for (let i = 0; i < a.length; i++)
    worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  return worst;
}

interface Product {
  readonly a: number[];
  readonly b: number[];
  readonly transA: boolean;
  readonly transB: boolean;
  readonly bias?: number[];
}

/** `op(a, b)` (+ bias, by tf.fused.matMul) on `backend` with `precision`. */
async function product(
  backend: 'cpu' | 'webgpu',
  precision: 'f32' | 'mixed',
  p: Product,
  data: Float32Array[],
): Promise<Float32Array> {
  await selectBackend({ backend, precision });
  const [a, b, bias] = [p.a, p.b, p.bias].map((shape, i) =>
    shape === undefined ? undefined : tf.tensor(data[i] as Float32Array, shape),
  ) as [tf.Tensor, tf.Tensor, tf.Tensor | undefined];
  const out =
    bias === undefined
      ? tf.matMul(a, b, p.transA, p.transB)
      : tf.fused.matMul({
          a: a as tf.Tensor2D,
          b: b as tf.Tensor2D,
          transposeA: p.transA,
          transposeB: p.transB,
          bias,
        });
  const values = (await out.data()) as Float32Array;
  tf.dispose([a, b, out, ...(bias === undefined ? [] : [bias])]);
  return values;
}

// M 70, N 72, K 36: partial tiles on every side; one batched case; both bias layouts.
const products: Record<string, Product> = {
  'a · b': { a: [70, 36], b: [36, 72], transA: false, transB: false },
  'a · bᵀ': { a: [70, 36], b: [72, 36], transA: false, transB: true },
  'aᵀ · b': { a: [36, 72], b: [36, 72], transA: true, transB: false },
  'aᵀ · bᵀ': { a: [36, 72], b: [72, 36], transA: true, transB: true },
  'batched a · bᵀ (3 × 20 × 16 by 3 × 68 × 16)': {
    a: [3, 20, 16],
    b: [3, 68, 16],
    transA: false,
    transB: true,
  },
  'a · b + a bias per column (fused)': {
    a: [70, 36],
    b: [36, 72],
    transA: false,
    transB: false,
    bias: [72],
  },
  'a · b + a residual per element (fused)': {
    a: [70, 36],
    b: [36, 72],
    transA: false,
    transB: false,
    bias: [70, 72],
  },
};

// Widths that are multiples of 4, so every product of the model takes half-precision inputs.
const TINY = {
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
};

describe.skipIf(!hasF16)(`half-precision matmul inputs under precision mixed${skipReason}`, () => {
  for (const [name, p] of Object.entries(products)) {
    it(`${name}: the f32 product of the inputs rounded to f16 (within 2e-5), not the f32 product`, async () => {
      const size = (s: number[]) => s.reduce((x, y) => x * y, 1);
      const data = [
        seededFloats(size(p.a), 1),
        seededFloats(size(p.b), 2),
        ...(p.bias === undefined ? [] : [seededFloats(size(p.bias), 3)]),
      ];
      const got = await product('webgpu', 'mixed', p, data);
      // The reference: cpu in f32 on inputs rounded to f16 (a bias is added in f32, unrounded).
      const rounded = [
        halfOf(data[0] as Float32Array),
        halfOf(data[1] as Float32Array),
        ...data.slice(2),
      ];
      const want = await product('cpu', 'f32', p, rounded);
      expect(maxDiff(got, want)).toBeLessThan(2e-5);
      // Rounding the inputs moves the f32 product by ~1e-3 here (|a|, |b| < 1, K 16–36).
      const exact = await product('cpu', 'f32', p, data);
      const moved = maxDiff(got, exact);
      expect(moved).toBeGreaterThan(1e-5);
      expect(moved).toBeLessThan(1e-2);
      // f32 on webgpu stays f32.
      expect(maxDiff(await product('webgpu', 'f32', p, data), exact)).toBeLessThan(2e-5);
    }, 0);
  }

  it('trains a small model under mixed precision: gradients within 2e-2 of f32 and the same dispatches', async () => {
    const config = TINY;
    const batch = [
      [1, 2, 3, 4, 5, 6, 7, 8],
      [9, 10, 11, 12, 13, 14, 15, 16],
    ];
    const gradients = async (precision: 'f32' | 'mixed') => {
      const model = await createCausalLM(config, { seed: 3, backend: 'webgpu', precision });
      const run = () =>
        tf.variableGrads(
          () => tf.neg(tf.mean(model.tokenLogProbTensors(batch).logProbs)) as tf.Scalar,
          model.variables(),
        );
      const { value, grads } = run();
      const out = await Promise.all(
        model.variables().map((v) => (grads[v.name] as tf.Tensor).data() as Promise<Float32Array>),
      );
      tf.dispose([value, ...Object.values(grads)]);
      const { dispatches } = await countWebGPUDispatches(async () => {
        const again = run();
        await again.value.data();
        tf.dispose([again.value, ...Object.values(again.grads)]);
      });
      model.dispose();
      return { grads: out, dispatches };
    };
    const f32 = await gradients('f32');
    const mixed = await gradients('mixed');
    expect(mixed.dispatches).toBe(f32.dispatches);
    let worst = 0;
    f32.grads.forEach((want, i) => {
      let scale = 0;
      for (const v of want) scale = Math.max(scale, Math.abs(v));
      worst = Math.max(worst, maxDiff(mixed.grads[i] as Float32Array, want) / (1e-3 + scale));
    });
    console.log(
      `mixed vs f32 gradients: worst difference ${worst.toExponential(2)} of each gradient's largest entry`,
    );
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(2e-2);
  }, 0);

  it('takes AdamW steps under mixed precision with loss scaling, the loss falling as under f32', async () => {
    const samples = [
      { promptIds: [1, 2, 3], responseIds: [4, 5, 6, 7, 8] },
      { promptIds: [9, 10], responseIds: [11, 12, 13, 14] },
    ];
    const losses = async (precision: 'f32' | 'mixed') => {
      const model = await createCausalLM(
        { ...TINY, num_hidden_layers: 1 },
        { seed: 5, backend: 'webgpu', precision },
      );
      const out: number[] = [];
      for (let step = 0; step < 4; step++) {
        const r = await model.sftStep(samples, { learningRate: 0.01 });
        if (precision === 'mixed') expect(r.lossScale).toBeGreaterThan(1);
        out.push(r.loss);
      }
      model.dispose();
      return out;
    };
    const f32 = await losses('f32');
    const mixed = await losses('mixed');
    expect(mixed[3] as number).toBeLessThan(mixed[0] as number);
    mixed.forEach((loss, i) => {
      expect(Math.abs(loss - (f32[i] as number))).toBeLessThan(2e-2 * Math.abs(f32[i] as number));
    });
  }, 0);
});
