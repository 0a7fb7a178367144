import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { rotaryTables } from '../../../decoder/ops.ts';
import { seededFloats } from '../../../test-models.ts';
import { selectBackend } from '../../select.ts';
import { countWebGPUDispatches } from '../dispatch-counter.ts';
import { probeWebGPUAdapter } from '../setup.ts';
import {
  allocateLayerCache,
  appendKeys,
  appendValues,
  KV_CACHE_KERNELS,
  writeKeys,
  writeValues,
} from './kv-cache.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`KV-cache webgpu kernel tests skipped${skipReason}`);

interface Shapes {
  readonly B: number;
  readonly T: number;
  readonly nkv: number;
  readonly d: number;
  /** Cached positions before the call (0: no past). */
  readonly Sp: number;
}

/** Keys and values appended on `backend` (composed tfjs ops unless webgpu), as arrays. */
async function appended(backend: 'cpu' | 'webgpu', s: Shapes) {
  await selectBackend({ backend });
  const { B, T, nkv, d, Sp } = s;
  const positions = Array.from({ length: B * T }, (_, i) => Sp + (i % T) + 3 * Math.floor(i / T));
  const invFreq = Float32Array.from({ length: d / 2 }, (_, j) => 1 / 10000 ** ((2 * j) / d));
  const tables = rotaryTables(positions, invFreq);
  const cos = tf.tensor2d(tables.cos, [B * T, d]);
  const sin = tf.tensor2d(tables.sin, [B * T, d]);
  const kx = tf.tensor2d(seededFloats(B * T * nkv * d, 1), [B * T, nkv * d]);
  const vx = tf.tensor2d(seededFloats(B * T * nkv * d, 2), [B * T, nkv * d]);
  const pastK =
    Sp > 0 ? tf.tensor4d(seededFloats(B * nkv * d * Sp, 3), [B, nkv, d, Sp]) : undefined;
  const pastV =
    Sp > 0 ? tf.tensor4d(seededFloats(B * nkv * Sp * d, 4), [B, nkv, Sp, d]) : undefined;
  const { result, dispatches } =
    backend === 'webgpu'
      ? await countWebGPUDispatches(() => ({
          k: appendKeys(kx, cos, sin, B, nkv, pastK),
          v: appendValues(vx, B, nkv, pastV),
        }))
      : {
          result: {
            k: appendKeys(kx, cos, sin, B, nkv, pastK),
            v: appendValues(vx, B, nkv, pastV),
          },
          dispatches: undefined,
        };
  const out = {
    kShape: result.k.shape,
    vShape: result.v.shape,
    k: (await result.k.data()) as Float32Array,
    v: (await result.v.data()) as Float32Array,
    dispatches,
  };
  tf.dispose([
    cos,
    sin,
    kx,
    vx,
    result.k,
    result.v,
    ...(pastK ? [pastK] : []),
    ...(pastV ? [pastV] : []),
  ]);
  return out;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++)
    worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  return worst;
}

describe.skipIf(adapter === undefined)(
  `KV-cache kernels on webgpu against cpu${skipReason}`,
  () => {
    it.each([
      { B: 2, T: 1, nkv: 2, d: 8, Sp: 5 },
      { B: 3, T: 4, nkv: 2, d: 16, Sp: 0 },
      { B: 1, T: 3, nkv: 3, d: 4, Sp: 2 },
      { B: 2, T: 7, nkv: 1, d: 64, Sp: 9 },
    ])('append rotated keys and values in one dispatch each: %o', async (s) => {
      const want = await appended('cpu', s);
      const got = await appended('webgpu', s);
      expect(got.kShape).toEqual([s.B, s.nkv, s.d, s.Sp + s.T]);
      expect(got.vShape).toEqual([s.B, s.nkv, s.Sp + s.T, s.d]);
      expect(want.kShape).toEqual(got.kShape);
      expect(want.vShape).toEqual(got.vShape);
      expect(maxAbsDiff(got.k, want.k)).toBeLessThan(1e-6);
      // Values and cached keys are copies: exact.
      expect(maxAbsDiff(got.v, want.v)).toBe(0);
      expect(got.dispatches).toBe(2);
    });
  },
);

describe.skipIf(adapter === undefined)(`a fixed-capacity KV cache on webgpu${skipReason}`, () => {
  it.each([
    { B: 2, T: 1, nkv: 2, d: 8, Sp: 5 },
    { B: 3, T: 4, nkv: 2, d: 16, Sp: 0 },
    { B: 2, T: 7, nkv: 1, d: 64, Sp: 9 },
  ])('is written in place at the next positions, equal to appending: %o', async (s) => {
    const { B, T, nkv, d, Sp } = s;
    const want = await appended('cpu', s);
    await selectBackend({ backend: 'webgpu' });
    const C = Sp + T + 3;
    const cache = allocateLayerCache(B, nkv, d, C);
    // The cached positions first (as they were written by earlier steps), then the new ones.
    const pastK = tf.tensor2d(seededFloats(B * nkv * d * Sp, 3), [B * nkv * d, Sp]);
    const pastV = tf.tensor4d(seededFloats(B * nkv * Sp * d, 4), [B, nkv, Sp, d]);
    const positions = Array.from({ length: B * T }, (_, i) => Sp + (i % T) + 3 * Math.floor(i / T));
    const invFreq = Float32Array.from({ length: d / 2 }, (_, j) => 1 / 10000 ** ((2 * j) / d));
    const tables = rotaryTables(positions, invFreq);
    const cos = tf.tensor2d(tables.cos, [B * T, d]);
    const sin = tf.tensor2d(tables.sin, [B * T, d]);
    const kx = tf.tensor2d(seededFloats(B * T * nkv * d, 1), [B * T, nkv * d]);
    const vx = tf.tensor2d(seededFloats(B * T * nkv * d, 2), [B * T, nkv * d]);
    if (Sp > 0) {
      tf.tidy(() => {
        // Past values at positions 0..Sp-1: written as "new" rows with no rotation (cos 1, sin 0).
        const flatV = tf.reshape(tf.transpose(pastV, [0, 2, 1, 3]), [
          B * Sp,
          nkv * d,
        ]) as tf.Tensor2D;
        writeValues(flatV, B, nkv, cache.v, 0);
        const kRows = tf.reshape(tf.transpose(tf.reshape(pastK, [B, nkv, d, Sp]), [0, 3, 1, 2]), [
          B * Sp,
          nkv * d,
        ]) as tf.Tensor2D;
        writeKeys(kRows, tf.ones([B * Sp, d]), tf.zeros([B * Sp, d]), B, nkv, cache.k, 0);
      });
    }
    const before = tf.memory().numTensors;
    const { dispatches } = await countWebGPUDispatches(() => {
      writeKeys(kx, cos, sin, B, nkv, cache.k, Sp);
      writeValues(vx, B, nkv, cache.v, Sp);
    });
    expect(dispatches).toBe(2);
    expect(tf.memory().numTensors).toBe(before);
    const written = tf.tidy(() => [
      tf.slice(cache.k, [0, 0, 0, 0], [B, nkv, d, Sp + T]),
      tf.slice(cache.v, [0, 0, 0, 0], [B, nkv, Sp + T, d]),
      tf.slice(cache.k, [0, 0, 0, Sp + T], [B, nkv, d, C - Sp - T]),
    ]);
    const [k, v, restK] = (await Promise.all(written.map((t) => t.data()))) as Float32Array[];
    expect(maxAbsDiff(k as Float32Array, want.k)).toBeLessThan(1e-6);
    expect(maxAbsDiff(v as Float32Array, want.v)).toBe(0);
    // Positions past the written ones stay zero.
    expect(Array.from(restK as Float32Array).every((x) => x === 0)).toBe(true);
    expect(() => writeValues(vx, B, nkv, cache.v, C - T + 1)).toThrow(/overruns a KV cache/);
    tf.dispose([cache.k, cache.v, pastK, pastV, cos, sin, kx, vx, ...written]);
  });
});

describe.skipIf(adapter === undefined)(
  `new keys and values in a differentiated pass${skipReason}`,
  () => {
    it('give the gradients of the composed rotary and transposes on cpu (1e-6), one dispatch each', async () => {
      const B = 2;
      const T = 5;
      const nkv = 2;
      const d = 8;
      const positions = Array.from({ length: B * T }, (_, i) => (i % T) + 2 * Math.floor(i / T));
      const invFreq = Float32Array.from({ length: d / 2 }, (_, j) => 1 / 10000 ** ((2 * j) / d));
      const tables = rotaryTables(positions, invFreq);
      const run = async (backend: 'cpu' | 'webgpu') => {
        await selectBackend({ backend });
        const cos = tf.tensor2d(tables.cos, [B * T, d]);
        const sin = tf.tensor2d(tables.sin, [B * T, d]);
        const kx = tf.tensor2d(seededFloats(B * T * nkv * d, 11), [B * T, nkv * d]);
        const vx = tf.tensor2d(seededFloats(B * T * nkv * d, 12), [B * T, nkv * d]);
        const ck = tf.tensor4d(seededFloats(B * nkv * d * T, 13), [B, nkv, d, T]);
        const cv = tf.tensor4d(seededFloats(B * nkv * T * d, 14), [B, nkv, T, d]);
        const loss = (k: tf.Tensor, v: tf.Tensor) =>
          tf.add(
            tf.sum(tf.mul(appendKeys(k as tf.Tensor2D, cos, sin, B, nkv), ck)),
            tf.sum(tf.mul(appendValues(v as tf.Tensor2D, B, nkv), cv)),
          ) as tf.Scalar;
        const grads = tf.grads(loss)([kx, vx]);
        const out = await Promise.all(grads.map((g) => g.data() as Promise<Float32Array>));
        const kernels: string[] = [];
        if (backend === 'webgpu') {
          const engine = tf.engine();
          const original = engine.runKernel.bind(engine);
          engine.runKernel = ((name: string, ...rest: unknown[]) => {
            kernels.push(name);
            return (original as (...a: unknown[]) => unknown)(name, ...rest);
          }) as typeof engine.runKernel;
          try {
            const g = tf.grads(loss)([kx, vx]);
            await Promise.all(g.map((t) => t.data()));
            tf.dispose(g);
          } finally {
            engine.runKernel = original;
          }
        }
        tf.dispose([cos, sin, kx, vx, ck, cv, ...grads]);
        return { out, kernels };
      };
      const want = await run('cpu');
      const got = await run('webgpu');
      want.out.forEach((w, i) => {
        const g = got.out[i] as Float32Array;
        let worst = 0;
        for (let j = 0; j < w.length; j++)
          worst = Math.max(worst, Math.abs((g[j] as number) - (w[j] as number)));
        expect(worst, `gradient ${i}`).toBeLessThan(1e-6);
      });
      const calls = (name: string) => got.kernels.filter((k) => k === name).length;
      expect(calls(KV_CACHE_KERNELS.newKeys)).toBe(1);
      expect(calls(KV_CACHE_KERNELS.newKeysGrad)).toBe(1);
      expect(calls(KV_CACHE_KERNELS.newValues)).toBe(1);
      expect(calls(KV_CACHE_KERNELS.newValuesGrad)).toBe(1);
      expect(calls('Transpose')).toBe(0);
    });
  },
);
