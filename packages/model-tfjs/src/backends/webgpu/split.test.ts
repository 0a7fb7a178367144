import { isAgentRLError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededFloats } from '../../test-models.ts';
import { selectBackend } from '../select.ts';
import { probeWebGPUAdapter, webgpuBindingLimit } from './setup.ts';
import { blockRanges, gatherSplitRows, matMulSplitRowsT, splitRows } from './split.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`webgpu row-split tests skipped${skipReason}`);

const V = 300;
const H = 24;
const LIMIT = 8 * 1024; // bytes: the [300, 24] matrix (28.8 KB) needs 4 blocks of <= 85 rows
const ids = [0, 5, 84, 85, 86, 170, 255, 299, 5, 299];

const matrixData = seededFloats(V * H, 3, 0.5);
const N = 6; // head rows: N · V · 4 = 7200 bytes of logits, under the limit too
const xData = seededFloats(N * H, 9, 0.5);
const dyData = seededFloats(ids.length * H, 17, 0.5);

/** Reference on cpu with the whole matrix. */
async function reference() {
  await selectBackend({ backend: 'cpu' });
  const m = tf.variable(tf.tensor2d(matrixData, [V, H]), true, 'split_ref_m');
  const idT = tf.tensor1d(ids, 'int32');
  const gathered = await tf.gather(m, idT).data();
  const { grads } = tf.variableGrads(
    () => tf.sum(tf.mul(tf.gather(m, idT), tf.tensor2d(dyData, [ids.length, H]))) as tf.Scalar,
    [m],
  );
  const logits = await tf.matMul(tf.tensor2d(xData, [N, H]), m, false, true).data();
  const grad = await (Object.values(grads)[0] as tf.Tensor).data();
  return { gathered, grad, logits };
}

describe('row blocks', () => {
  it('cover every row once with blocks under the byte limit', () => {
    const ranges = blockRanges(V, H, LIMIT);
    expect(ranges[0]?.[0]).toBe(0);
    expect(ranges.at(-1)?.[1]).toBe(V);
    for (const [i, [start, end]] of ranges.entries()) {
      expect((end - start) * H * 4).toBeLessThanOrEqual(LIMIT);
      if (i > 0) expect(start).toBe(ranges[i - 1]?.[1]);
    }
    expect(() => blockRanges(4, 4096, 1024)).toThrow(/exceeds the binding limit/);
  });
});

describe.skipIf(adapter === undefined)(
  `row-split parameters on webgpu with an artificially small binding limit${skipReason}`,
  () => {
    let want: Awaited<ReturnType<typeof reference>>;
    beforeAll(async () => {
      want = await reference();
      await selectBackend({ backend: 'webgpu', webgpu: { maxBindingBytes: LIMIT } });
    });
    afterAll(async () => {
      await selectBackend({ backend: 'webgpu' });
    });

    it('refuses a kernel that would bind the whole matrix, instead of returning stale data', async () => {
      expect(webgpuBindingLimit()).toBe(LIMIT);
      const m = tf.tensor2d(matrixData, [V, H]);
      expect(() => tf.gather(m, tf.tensor1d(ids, 'int32'))).toSatisfy((fn: () => unknown) => {
        try {
          fn();
          return false;
        } catch (e) {
          return isAgentRLError(e, 'BACKEND_FAILURE') && e.message.includes('binding');
        }
      });
      m.dispose();
    });

    it('gathers rows, their gradients and the head logits from the blocks as cpu does whole', async () => {
      // Split on cpu (the whole matrix cannot be bound on the GPU), then move the blocks.
      await selectBackend({ backend: 'cpu' });
      const whole = tf.tensor2d(matrixData, [V, H]);
      const cpuBlocks = splitRows(whole, LIMIT);
      const blockData = await Promise.all(cpuBlocks.map((b) => b.data()));
      const shapes = cpuBlocks.map((b) => b.shape);
      tf.dispose([whole, ...cpuBlocks]);
      await selectBackend({ backend: 'webgpu' });
      const blocks = blockData.map((d, i) =>
        tf.variable(tf.tensor2d(d as Float32Array, shapes[i] as [number, number]), true),
      );
      expect(blocks.length).toBeGreaterThan(1);
      const idT = tf.tensor1d(ids, 'int32');
      const gathered = await gatherSplitRows(blocks, idT).data();
      expect(maxDiff(gathered, want.gathered)).toBeLessThan(1e-6);

      const { grads } = tf.variableGrads(
        () =>
          tf.sum(
            tf.mul(gatherSplitRows(blocks, idT), tf.tensor2d(dyData, [ids.length, H])),
          ) as tf.Scalar,
        blocks,
      );
      const parts = await Promise.all(blocks.map((b) => (grads[b.name] as tf.Tensor).data()));
      const joined = new Float32Array(V * H);
      let offset = 0;
      for (const p of parts) {
        joined.set(p as Float32Array, offset);
        offset += p.length;
      }
      expect(maxDiff(joined, want.grad)).toBeLessThan(1e-6);

      const logits = await matMulSplitRowsT(tf.tensor2d(xData, [N, H]), blocks).data();
      expect(maxDiff(logits, want.logits)).toBeLessThan(1e-5);
    });
  },
);

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return a.length === b.length ? worst : Number.POSITIVE_INFINITY;
}
