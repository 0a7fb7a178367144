/**
 * Our wasm kernels on tensors placed past 2 GiB of the heap, where an address no longer fits a
 * signed 32-bit integer (a signed shift once sent the matmul's scratch copy to the heap's end).
 * A 2.1 GiB block reserved straight from the backend's allocator goes first, so everything after
 * it lives above 2^31. The block is reserved, never written: growing wasm memory maps zeroed pages
 * lazily, so the set-up costs milliseconds on any machine (a 2.1 GiB zero tensor was filled in JS
 * and copied into the heap, which took 16 s on a slow machine).
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniformFloats } from '../../test-models.ts';
import { AdamWState, applyAdamW } from '../../train/optimizer.ts';
import { selectBackend } from '../select.ts';

const offset = (t: tf.Tensor) =>
  (
    tf.backend() as unknown as { dataIdMap: { get(id: unknown): { memoryOffset: number } } }
  ).dataIdMap.get(t.dataId).memoryOffset;

interface WasmAllocator {
  wasm: { _malloc(bytes: number): number; _free(pointer: number): void };
}
const allocator = () => tf.backend() as unknown as WasmAllocator;
let filler = 0;

beforeAll(async () => {
  await selectBackend({ backend: 'wasm', wasm: { matMul: 'agentrl' } });
  filler = allocator().wasm._malloc(Math.round(2.1 * 2 ** 30)) >>> 0;
  if (filler === 0) throw new Error('could not reserve the 2.1 GiB filler on the wasm heap');
});
afterAll(() => {
  if (filler !== 0) allocator().wasm._free(filler);
});

describe('wasm kernels above 2 GiB of heap', () => {
  it('multiply with a partial last panel and a transposed operand (JS packing and scratch paths)', () => {
    // N = 13: one full 8-column panel plus a partial one packed in JS, the result copied out of
    // scratch; M = 70 rows: past the panel cache, packed per call.
    const [M, K, N] = [70, 19, 13];
    const a = tf.tensor2d(uniformFloats(M * K, 1), [M, K]);
    const bT = tf.tensor2d(uniformFloats(N * K, 2), [N, K]);
    expect(offset(a)).toBeGreaterThan(2 ** 31);
    const got = tf.matMul(a, bT, false, true).dataSync() as Float32Array;
    const av = a.dataSync();
    const bv = bT.dataSync();
    let worst = 0;
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let sum = 0;
        for (let k = 0; k < K; k++) sum += (av[i * K + k] as number) * (bv[j * K + k] as number);
        worst = Math.max(worst, Math.abs((got[i * N + j] as number) - sum));
      }
    expect(worst).toBeLessThan(1e-4);
    tf.dispose([a, bT]);
  });

  it('take an AdamW step on a parameter whose size leaves a tail for JS (7 values)', async () => {
    const start = uniformFloats(7, 3);
    const grad = uniformFloats(7, 4);
    const p = tf.variable(tf.tensor1d(start));
    expect(offset(p)).toBeGreaterThan(2 ** 31);
    const state = new AdamWState();
    const g = tf.tensor1d(grad);
    await applyAdamW(state, [p], [g], { learningRate: 0.1, weightDecay: 0, maxGradNorm: 0 });
    // The first Adam step moves each value by lr · g / (|g| + ε) = ±0.1.
    const after = p.dataSync();
    for (let i = 0; i < 7; i++)
      expect((after[i] as number) - (start[i] as number)).toBeCloseTo(
        -0.1 * Math.sign(grad[i] as number),
        5,
      );
    state.dispose();
    tf.dispose([p, g]);
  });
});
