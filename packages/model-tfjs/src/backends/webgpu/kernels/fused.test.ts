import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { rotaryTables } from '../../../decoder/ops.ts';
import { seededFloats } from '../../../test-models.ts';
import { selectBackend } from '../../select.ts';
import { probeWebGPUAdapter } from '../setup.ts';
import { attentionComposed, fusedAttention, rotaryAttention } from './attention.ts';
import {
  type AdamWScalars,
  entropyComposed,
  fusedAdamWUpdate,
  fusedEntropy,
  fusedRmsNorm,
  fusedRotary,
  fusedSwiGLU,
  fusedTokenLogProbs,
  rmsNormComposed,
  rotaryComposed,
  swigluComposed,
  tokenLogProbsComposed,
} from './fused.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`fused webgpu kernel tests skipped${skipReason}`);

interface Case {
  /** Float inputs (shape, data) that get gradients. */
  readonly inputs: { shape: number[]; data: Float32Array }[];
  /** The op under test, given tensors for `inputs`. */
  readonly fused: (xs: tf.Tensor[]) => tf.Tensor;
  readonly composed: (xs: tf.Tensor[]) => tf.Tensor;
  readonly outSize: number;
}

async function valueAndGrads(
  backend: 'cpu' | 'webgpu',
  c: Case,
  op: (xs: tf.Tensor[]) => tf.Tensor,
): Promise<Float32Array[]> {
  await selectBackend({ backend });
  const xs = c.inputs.map((i) => tf.tensor(i.data, i.shape));
  const cotangent = tf.tensor(seededFloats(c.outSize, 99));
  const value = (await op(xs).data()) as Float32Array;
  const grads = tf.grads((...args: tf.Tensor[]) =>
    tf.sum(tf.mul(tf.reshape(op(args), [-1]), cotangent)),
  )(xs);
  const out = [value, ...(await Promise.all(grads.map((g) => g.data() as Promise<Float32Array>)))];
  tf.dispose([...xs, cotangent, ...grads]);
  return out;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let worst = a.length === b.length ? 0 : Number.POSITIVE_INFINITY;
  for (let i = 0; i < a.length; i++)
    worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  return worst;
}

const N = 6;
const H = 40;
const V = 97;
const B = 2;
const T = 3;
const heads = 2;
const d = 8;
const tables = rotaryTables([0, 1, 2, 5, 6, 7], Float32Array.from([1, 0.1, 0.01, 0.001]));
const targets = [3, 0, 96, 50, 50, 7];

// Attention: 2 cached + 5 new positions, GQA 4 query heads on 2 kv heads, row 1 left-padded by 1.
const AS = 7;
const AT = 5;
const maskData = new Float32Array(B * AT * AS);
for (let b = 0; b < B; b++)
  for (let t = 0; t < AT; t++)
    for (let s = 0; s < AS; s++)
      maskData[(b * AT + t) * AS + s] = s > t + 2 || (b === 1 && s === 0) ? -1e9 : 0;
const attentionMask = () => tf.tensor4d(maskData, [B, 1, AT, AS]);

// A longer one, so every thread loop of the kernels strides (72 keys, 2 · 70 query pairs > 64).
const LT = 70;
const LS = 72;
const LD = 16;
const longMaskData = new Float32Array(LT * LS);
for (let t = 0; t < LT; t++)
  for (let s = 0; s < LS; s++) longMaskData[t * LS + s] = s > t + 2 ? -1e9 : 0;
const longMask = () => tf.tensor4d(longMaskData, [1, 1, LT, LS]);

const cases: Record<string, Case> = {
  'causal GQA attention over 72 keys (2 query heads on 1 kv head, d 16)': {
    inputs: [
      { shape: [1, LT, 2, LD], data: seededFloats(LT * 2 * LD, 31) },
      { shape: [1, 1, LD, LS], data: seededFloats(LD * LS, 32) },
      { shape: [1, 1, LS, LD], data: seededFloats(LS * LD, 33) },
    ],
    fused: ([q, k, v]) =>
      fusedAttention(q as tf.Tensor4D, k as tf.Tensor4D, v as tf.Tensor4D, longMask()),
    composed: ([q, k, v]) =>
      attentionComposed(q as tf.Tensor4D, k as tf.Tensor4D, v as tf.Tensor4D, longMask()),
    outSize: LT * 2 * LD,
  },
  'causal GQA attention (4 query heads on 2 kv heads, cached keys, padding)': {
    inputs: [
      { shape: [B, AT, 4, d], data: seededFloats(B * AT * 4 * d, 21) },
      { shape: [B, 2, d, AS], data: seededFloats(B * 2 * d * AS, 22) },
      { shape: [B, 2, AS, d], data: seededFloats(B * 2 * AS * d, 23) },
    ],
    fused: ([q, k, v]) =>
      fusedAttention(q as tf.Tensor4D, k as tf.Tensor4D, v as tf.Tensor4D, attentionMask()),
    composed: ([q, k, v]) =>
      attentionComposed(q as tf.Tensor4D, k as tf.Tensor4D, v as tf.Tensor4D, attentionMask()),
    outSize: B * AT * 4 * d,
  },
  'RMSNorm (rows of 40, eps 1e-6)': {
    inputs: [
      { shape: [2, 3, H], data: seededFloats(N * H, 1, 3) },
      { shape: [H], data: seededFloats(H, 2) },
    ],
    fused: ([x, w]) => fusedRmsNorm(x as tf.Tensor, w as tf.Tensor1D, 1e-6),
    composed: ([x, w]) => rmsNormComposed(x as tf.Tensor, w as tf.Tensor1D, 1e-6),
    outSize: N * H,
  },
  'SwiGLU (silu(gate) ⊙ up)': {
    inputs: [
      { shape: [N, H], data: seededFloats(N * H, 3, 4) },
      { shape: [N, H], data: seededFloats(N * H, 4) },
    ],
    fused: ([g, u]) => fusedSwiGLU(g as tf.Tensor, u as tf.Tensor),
    composed: ([g, u]) => swigluComposed(g as tf.Tensor, u as tf.Tensor),
    outSize: N * H,
  },
  'rotary (half-split, [B, T, heads, d])': {
    inputs: [{ shape: [B, T, heads, d], data: seededFloats(B * T * heads * d, 5) }],
    fused: ([x]) =>
      fusedRotary(
        x as tf.Tensor,
        tf.tensor(tables.cos, [B, T, 1, d]),
        tf.tensor(tables.sin, [B, T, 1, d]),
      ),
    composed: ([x]) =>
      rotaryComposed(
        x as tf.Tensor,
        tf.tensor(tables.cos, [B, T, 1, d]),
        tf.tensor(tables.sin, [B, T, 1, d]),
      ),
    outSize: B * T * heads * d,
  },
  'rotary with tables repeated over heads ([B, T, heads, d])': {
    inputs: [{ shape: [B, T, heads, d], data: seededFloats(B * T * heads * d, 7) }],
    fused: ([x]) =>
      fusedRotary(
        x as tf.Tensor,
        tf.tile(tf.tensor(tables.cos, [B, T, 1, d]), [1, 1, heads, 1]),
        tf.tile(tf.tensor(tables.sin, [B, T, 1, d]), [1, 1, heads, 1]),
      ),
    composed: ([x]) =>
      rotaryComposed(
        x as tf.Tensor,
        tf.tensor(tables.cos, [B, T, 1, d]),
        tf.tensor(tables.sin, [B, T, 1, d]),
      ),
    outSize: B * T * heads * d,
  },
  'entropy of the softmax (V = 97)': {
    inputs: [{ shape: [N, V], data: seededFloats(N * V, 8, 8) }],
    fused: ([l]) => fusedEntropy(l as tf.Tensor2D),
    composed: ([l]) => entropyComposed(l as tf.Tensor2D),
    outSize: N,
  },
  'token log-probs (log-softmax gathered at the targets, V = 97)': {
    inputs: [{ shape: [N, V], data: seededFloats(N * V, 6, 8) }],
    fused: ([l]) => fusedTokenLogProbs(l as tf.Tensor2D, tf.tensor1d(targets, 'int32')),
    composed: ([l]) => tokenLogProbsComposed(l as tf.Tensor2D, tf.tensor1d(targets, 'int32')),
    outSize: N,
  },
};

describe.skipIf(adapter === undefined)(`fused webgpu kernels${skipReason}`, () => {
  beforeAll(async () => {
    await selectBackend({ backend: 'webgpu' });
  });

  for (const [name, c] of Object.entries(cases)) {
    it(`${name}: value and input gradients on webgpu equal the composed ops on cpu`, async () => {
      const want = await valueAndGrads('cpu', c, c.composed);
      const got = await valueAndGrads('webgpu', c, c.fused);
      expect(got).toHaveLength(want.length);
      want.forEach((w, i) => {
        expect(maxDiff(got[i] as Float32Array, w), `output ${i}`).toBeLessThan(2e-5);
      });
    });
  }

  it('AdamW update (new parameter and moments) on webgpu equals the composed ops on cpu', async () => {
    const n = 150;
    const scalars: AdamWScalars = {
      lr: 0.01,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0.1,
      bias1: 1 - 0.9 ** 3,
      bias2: 1 - 0.999 ** 3,
      gradScale: 0.5,
    };
    const inputs = [
      seededFloats(n, 11),
      seededFloats(n, 12),
      seededFloats(n, 13, 0.1),
      seededFloats(n, 14, 0.01),
    ].map((d, i) => (i === 3 ? d.map(Math.abs) : d));
    const update = async (backend: 'cpu' | 'webgpu') => {
      await selectBackend({ backend });
      const [p, g, m, v] = inputs.map((d) => tf.tensor1d(d)) as [
        tf.Tensor,
        tf.Tensor,
        tf.Tensor,
        tf.Tensor,
      ];
      const next = fusedAdamWUpdate(p, g, m, v, scalars);
      const out = await Promise.all([next.param, next.m, next.v].map((t) => t.data()));
      tf.dispose([p, g, m, v, next.param, next.m, next.v]);
      return out as Float32Array[];
    };
    const want = await update('cpu');
    const got = await update('webgpu');
    want.forEach((w, i) => {
      expect(maxDiff(got[i] as Float32Array, w), `output ${i}`).toBeLessThan(1e-6);
    });
  });

  it('attention with the queries rotated as the kernel loads them equals rotary then attention on cpu', async () => {
    // A decode step: one query position per row after 6 cached ones, GQA 4 query heads on 2.
    const S = 7;
    const nh = 4;
    const positions = [6, 4];
    const t = rotaryTables(positions, Float32Array.from([1, 0.1, 0.01, 0.001]));
    const qData = seededFloats(B * nh * d, 41);
    const kData = seededFloats(B * 2 * d * S, 42);
    const vData = seededFloats(B * 2 * S * d, 43);
    const maskRows = new Float32Array(B * S).map((_, i) => (i === S + 6 ? -1e9 : 0));
    const run = async (backend: 'cpu' | 'webgpu') => {
      await selectBackend({ backend });
      const q = tf.tensor4d(qData, [B, 1, nh, d]);
      const kT = tf.tensor4d(kData, [B, 2, d, S]);
      const v = tf.tensor4d(vData, [B, 2, S, d]);
      const mask = tf.tensor4d(maskRows, [B, 1, 1, S]);
      const cos = tf.tensor2d(t.cos, [B, d]);
      const sin = tf.tensor2d(t.sin, [B, d]);
      const out =
        backend === 'webgpu'
          ? rotaryAttention(q, cos, sin, kT, v, mask)
          : attentionComposed(
              rotaryComposed(q, tf.reshape(cos, [B, 1, 1, d]), tf.reshape(sin, [B, 1, 1, d])),
              kT,
              v,
              mask,
            );
      const values = (await out.data()) as Float32Array;
      tf.dispose([q, kT, v, mask, cos, sin, out]);
      return values;
    };
    expect(maxDiff(await run('webgpu'), await run('cpu'))).toBeLessThan(2e-6);
  });

  it('sums more inputs than the device binds per stage (AddN in groups)', async () => {
    await selectBackend({ backend: 'webgpu' });
    const parts = Array.from({ length: 40 }, (_, i) => tf.fill([3], i + 1));
    expect(Array.from(await tf.addN(parts).data())).toEqual([820, 820, 820]);
    tf.dispose(parts);
  });
});
