import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniformFloats } from '../../test-models.ts';
import { selectBackend } from '../select.ts';
import { webAssembly } from './emit.ts';
import { gemmModuleBytes, relaxedSimdSupported, WasmGemm } from './gemm.ts';
import { releasePackedPanels, wasmMatMul, wasmPackedBytes } from './kernels.ts';

/** float64 `A · B` of row-major `[batch, M, K]` and `[batch, K, N]` (batch of B may be 1). */
function reference(
  a: Float32Array,
  b: Float32Array,
  batch: number,
  M: number,
  K: number,
  N: number,
  bBatch: number,
): Float64Array {
  const out = new Float64Array(batch * M * N);
  for (let s = 0; s < batch; s++) {
    const bs = bBatch === 1 ? 0 : s;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let sum = 0;
        for (let k = 0; k < K; k++)
          sum += (a[(s * M + i) * K + k] as number) * (b[(bs * K + k) * N + j] as number);
        out[(s * M + i) * N + j] = sum;
      }
    }
  }
  return out;
}

/**
 * Entries in [-1, 1] bound every sum of K products by K, and float32 accumulation errs by at most
 * about K · 2^-24 of that: 1e-6 · K is a safe margin.
 */
function expectClose(got: Float32Array, want: Float64Array, K: number): void {
  expect(got.length).toBe(want.length);
  const tolerance = 1e-6 * Math.max(1, K);
  for (let i = 0; i < want.length; i++) {
    expect(Math.abs((got[i] as number) - (want[i] as number))).toBeLessThanOrEqual(tolerance);
  }
}

/** Sets the wasm backend up with `matMul` (the other switches at their defaults). */
const useMatMul = (matMul: 'agentrl' | 'xnnpack') =>
  selectBackend({ backend: 'wasm', wasm: { matMul } });

describe('wasm matrix product (relaxed SIMD)', () => {
  beforeAll(async () => {
    await useMatMul('agentrl');
  });

  it('builds a valid module with and without fused multiply-add', async () => {
    expect(webAssembly.validate(gemmModuleBytes(false))).toBe(true);
    // Node 24 ships relaxed SIMD; an engine without it gets the multiply + add module.
    expect(typeof relaxedSimdSupported()).toBe('boolean');
    // The replacement kernel is registered and bound to the wasm backend's heap.
    expect(wasmMatMul()).toBe('agentrl');
    await useMatMul('xnnpack');
    expect(wasmMatMul()).toBe('xnnpack');
    await useMatMul('agentrl');
  });

  it('matches a float64 product for every transpose flag, edge sizes and broadcast batches', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 41 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 27 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 1000 }),
        (batch, M, K, N, transposeA, transposeB, sharedB, seed) => {
          const bBatch = sharedB ? 1 : batch;
          const a = uniformFloats(batch * M * K, seed);
          const b = uniformFloats(bBatch * K * N, seed + 1);
          const want = reference(a, b, batch, M, K, N, bBatch);
          const got = tf.tidy(() => {
            let ta = tf.tensor3d(a, [batch, M, K]);
            let tb = tf.tensor3d(b, [bBatch, K, N]);
            // Hand the kernel transposed storage with the flag that undoes it.
            if (transposeA) ta = tf.transpose(ta, [0, 2, 1]);
            if (transposeB) tb = tf.transpose(tb, [0, 2, 1]);
            return tf.matMul(ta, tb, transposeA, transposeB);
          });
          expect(got.shape).toEqual([batch, M, N]);
          expectClose(got.dataSync() as Float32Array, want, K);
          got.dispose();
        },
      ),
      { numRuns: 120 },
    );
  });

  it('broadcasts multi-dimensional outer dimensions like numpy', () => {
    const a = uniformFloats(2 * 1 * 3 * 5, 7);
    const b = uniformFloats(1 * 3 * 5 * 4, 8);
    const got = tf.tidy(() =>
      tf.matMul(tf.tensor4d(a, [2, 1, 3, 5]), tf.tensor4d(b, [1, 3, 5, 4])).dataSync(),
    );
    const want = tf.tidy(() => {
      const ta = tf.tensor4d(a, [2, 1, 3, 5]);
      const tb = tf.tensor4d(b, [1, 3, 5, 4]);
      return tf.sum(tf.mul(tf.expandDims(ta, -1), tf.expandDims(tb, 2)), 3).dataSync();
    });
    expect(got.length).toBe(2 * 3 * 3 * 4);
    for (let i = 0; i < got.length; i++) expect(got[i]).toBeCloseTo(want[i] as number, 5);
  });

  it('gives the same product as the backend own XNNPACK kernel, which stays selectable', async () => {
    const a = tf.tensor2d(uniformFloats(37 * 64, 3), [37, 64]);
    const b = tf.tensor2d(uniformFloats(64 * 50, 4), [64, 50]);
    const ours = tf.matMul(a, b).dataSync();
    await useMatMul('xnnpack');
    try {
      const theirs = tf.matMul(a, b).dataSync();
      for (let i = 0; i < ours.length; i++) expect(ours[i]).toBeCloseTo(theirs[i] as number, 4);
    } finally {
      await useMatMul('agentrl');
      a.dispose();
      b.dispose();
    }
  });

  it('propagates gradients through transposed products (the matmul gradient uses the flags)', async () => {
    const x = tf.tensor2d(uniformFloats(6 * 9, 5), [6, 9]);
    const w = tf.tensor2d(uniformFloats(9 * 11, 6), [9, 11]);
    const [gx, gw] = tf.grads((p: tf.Tensor, q: tf.Tensor) => tf.sum(tf.square(tf.matMul(p, q))))([
      x,
      w,
    ]) as [tf.Tensor, tf.Tensor];
    await useMatMul('xnnpack');
    const [rx, rw] = tf.grads((p: tf.Tensor, q: tf.Tensor) => tf.sum(tf.square(tf.matMul(p, q))))([
      x,
      w,
    ]) as [tf.Tensor, tf.Tensor];
    await useMatMul('agentrl');
    const pairs: [tf.Tensor, tf.Tensor][] = [
      [gx, rx],
      [gw, rw],
    ];
    for (const [g, r] of pairs) {
      const gd = g.dataSync();
      const rd = r.dataSync();
      for (let i = 0; i < gd.length; i++) expect(gd[i]).toBeCloseTo(rd[i] as number, 3);
    }
    tf.dispose([x, w, gx, gw, rx, rw]);
  });

  it('frees its scratch space: the heap stays flat over repeated products', () => {
    const a = tf.tensor2d(uniformFloats(33 * 70, 9), [33, 70]);
    const b = tf.tensor2d(uniformFloats(70 * 13, 10), [70, 13]);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) tf.matMul(a, b).dispose();
    const heapBefore = (tf.memory() as { numBytes: number }).numBytes;
    for (let i = 0; i < 50; i++) tf.matMul(a, b).dispose();
    expect(tf.memory().numTensors).toBe(before);
    expect((tf.memory() as { numBytes: number }).numBytes).toBe(heapBefore);
    tf.dispose([a, b]);
  });

  it('works on a standalone heap (the class, without tfjs)', () => {
    const memory = new webAssembly.Memory({ initial: 4 });
    let top = 1024;
    const gemm = new WasmGemm({
      memory,
      malloc: (bytes) => {
        const p = top;
        top += Math.ceil(bytes / 16) * 16;
        return p;
      },
      free: () => {},
    });
    const heap = new Float32Array(memory.buffer);
    const [M, K, N] = [5, 6, 7];
    const a = uniformFloats(M * K, 11);
    const b = uniformFloats(K * N, 12);
    heap.set(a, 0);
    heap.set(b, 64);
    gemm.multiply(
      { offset: 0, rowStride: K * 4, colStride: 4 },
      { offset: 256, rowStride: N * 4, colStride: 4 },
      512 * 4,
      M,
      K,
      N,
    );
    expectClose(heap.slice(512, 512 + M * N), reference(a, b, 1, M, K, N, 1), K);
  });
});

describe('packed right operands kept for few-row products', () => {
  beforeAll(async () => {
    await useMatMul('agentrl');
  });

  it('reuses packing per data, shape and transpose flag, and frees it with the tensor', () => {
    const w = tf.tensor2d(uniformFloats(24 * 40, 21), [24, 40]);
    const x = tf.tensor2d(uniformFloats(3 * 24, 22), [3, 24]);
    const y = tf.tensor2d(uniformFloats(3 * 40, 23), [3, 40]);
    // The same data as [24, 40], transposed [40, 24] and reshaped [40, 24]: three packings.
    const want = [
      reference(x.dataSync() as Float32Array, w.dataSync() as Float32Array, 1, 3, 24, 40, 1),
    ];
    const start = wasmPackedBytes();
    for (let round = 0; round < 3; round++) {
      const a = tf.matMul(x, w);
      expectClose(a.dataSync() as Float32Array, want[0] as Float64Array, 24);
      const b = tf.matMul(y, w, false, true);
      const c = tf.tidy(() => tf.matMul(y, tf.reshape(w, [40, 24])));
      const wt = tf.tidy(() => tf.transpose(w).dataSync() as Float32Array);
      expectClose(
        b.dataSync() as Float32Array,
        reference(y.dataSync() as Float32Array, wt, 1, 3, 40, 24, 1),
        40,
      );
      expectClose(
        c.dataSync() as Float32Array,
        reference(y.dataSync() as Float32Array, w.dataSync() as Float32Array, 1, 3, 40, 24, 1),
        40,
      );
      tf.dispose([a, b, c]);
    }
    // [24, 40] → 5 panels × 24 × 8; [40, 24] twice (transposed, reshaped) → 3 panels × 40 × 8 each.
    expect(wasmPackedBytes() - start).toBe((5 * 24 * 8 + 2 * 3 * 40 * 8) * 4);
    w.dispose();
    expect(wasmPackedBytes()).toBe(start);
    tf.dispose([x, y]);
  });

  it('packs per call past its budget (same products) and frees everything on release', async () => {
    const w = tf.tensor2d(uniformFloats(24 * 40, 31), [24, 40]);
    const v = tf.tensor2d(uniformFloats(24 * 16, 32), [24, 16]);
    const x = tf.tensor2d(uniformFloats(3 * 24, 33), [3, 24]);
    const cached = tf.matMul(x, w).dataSync() as Float32Array;
    const before = wasmPackedBytes();
    expect(before).toBeGreaterThanOrEqual(5 * 24 * 8 * 4);
    // Room for nothing more: v is multiplied without being cached, with the same result.
    await selectBackend({
      backend: 'wasm',
      wasm: { matMul: 'agentrl', packedPanelBudgetBytes: before },
    });
    try {
      const want = reference(
        x.dataSync() as Float32Array,
        v.dataSync() as Float32Array,
        1,
        3,
        24,
        16,
        1,
      );
      for (let round = 0; round < 2; round++) {
        expectClose(tf.matMul(x, v).dataSync() as Float32Array, want, 24);
        expect(wasmPackedBytes()).toBe(before);
      }
      expect(tf.matMul(x, w).dataSync()).toEqual(cached);
    } finally {
      await useMatMul('agentrl');
    }
    expect(releasePackedPanels()).toBe(before);
    expect(wasmPackedBytes()).toBe(0);
    // Rebuilt on next use, same result.
    expect(tf.matMul(x, w).dataSync()).toEqual(cached);
    tf.dispose([w, v, x]);
  });
});

describe('wasm Sum over leading axes', () => {
  beforeAll(async () => {
    await selectBackend({ backend: 'wasm' });
  });

  it('sums leading axes as column sums and leaves other reductions to the backend', () => {
    const data = uniformFloats(5 * 3 * 4, 31);
    const x = tf.tensor3d(data, [5, 3, 4]);
    const expectSum = (axis: number | number[], keepDims: boolean) => {
      const got = tf.sum(x, axis, keepDims);
      // float64 reference over the same axes
      const axes = (Array.isArray(axis) ? axis : [axis]).map((a) => (a < 0 ? a + 3 : a));
      const want = tf.tidy(() => {
        let t: tf.Tensor = tf.tensor3d(Float32Array.from(data), [5, 3, 4]);
        for (const a of [...axes].sort((p, q) => q - p))
          t = tf.unstack(t, a).reduce((p, q) => tf.add(p, q));
        return keepDims ? tf.reshape(t, got.shape) : t;
      });
      expect(got.shape).toEqual(want.shape);
      const g = got.dataSync();
      const w = want.dataSync();
      for (let i = 0; i < g.length; i++) expect(g[i]).toBeCloseTo(w[i] as number, 5);
      tf.dispose([got, want]);
    };
    for (const keepDims of [false, true]) {
      expectSum(0, keepDims);
      expectSum([0, 1], keepDims);
      expectSum([1, 0], keepDims);
      expectSum(1, keepDims);
      expectSum(-1, keepDims);
      expectSum([0, 2], keepDims);
      expectSum([0, 1, 2], keepDims);
    }
    // int32 goes to the backend's kernel.
    expect(Array.from(tf.sum(tf.tensor2d([1, 2, 3, 4], [2, 2], 'int32'), 0).dataSync())).toEqual([
      4, 6,
    ]);
    x.dispose();
  });
});

describe('wasm Identity', () => {
  beforeAll(async () => {
    await selectBackend({ backend: 'wasm' });
  });

  it('shares the data of its input (no copy), which outlives either tensor alone', () => {
    const x = tf.tensor2d(uniformFloats(64 * 8, 41), [64, 8]);
    const want = Array.from(x.dataSync());
    // Heap allocations of the backend (one per distinct tensor data).
    const buffers = () => (tf.backend() as unknown as { numDataIds(): number }).numDataIds();
    const before = buffers();
    const y = tf.clone(x);
    expect(buffers()).toBe(before);
    x.dispose();
    expect(buffers()).toBe(before);
    expect(Array.from(y.dataSync())).toEqual(want);
    const z = tf.tidy(() => tf.add(y, 1));
    expect(z.dataSync()[0]).toBeCloseTo((want[0] as number) + 1, 6);
    y.dispose();
    expect(buffers()).toBe(before);
    z.dispose();
    expect(buffers()).toBe(before - 1);
  });
});
