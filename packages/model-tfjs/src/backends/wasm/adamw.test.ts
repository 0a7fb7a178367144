import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { uniformFloats } from '../../test-models.ts';
import {
  AdamWState,
  applyAdamW,
  globalNorm,
  type OptimizerOptions,
} from '../../train/optimizer.ts';
import { selectBackend } from '../select.ts';
import { wasmOptimizerKernelsActive } from './kernels.ts';

// Sizes with every remainder mod 4 (the SIMD loop's tail runs in JS).
const SHAPES: number[][] = [[7], [3, 5], [4, 4], [2, 3, 3], [1]];

/** Runs `steps` AdamW steps on `backend` from fixed parameters and gradients; returns every value. */
async function run(backend: 'cpu' | 'wasm', options: OptimizerOptions, steps: number) {
  await selectBackend({ backend });
  const variables = SHAPES.map((shape, i) =>
    tf.variable(
      tf.tensor(
        uniformFloats(
          shape.reduce((a, b) => a * b, 1),
          i + 1,
          1,
        ),
        shape,
      ),
    ),
  );
  const state = new AdamWState();
  const norms: number[] = [];
  for (let s = 0; s < steps; s++) {
    const grads = SHAPES.map((shape, i) =>
      tf.tensor(
        uniformFloats(
          shape.reduce((a, b) => a * b, 1),
          100 * s + i + 7,
          0.3 * (s + 1),
        ),
        shape,
      ),
    );
    const result = await applyAdamW(state, variables, grads, options);
    norms.push(result.gradNorm);
    tf.dispose(grads);
  }
  const read = (ts: readonly tf.Tensor[]) => ts.map((t) => Array.from(t.dataSync()));
  const moments = variables.map((v) => state.moments(v));
  const out = {
    active: backend === 'wasm' ? wasmOptimizerKernelsActive() : false,
    params: read(variables),
    m: read(moments.map((x) => x.m)),
    v: read(moments.map((x) => x.v)),
    norms,
  };
  state.dispose();
  tf.dispose(variables);
  return out;
}

describe('wasm AdamW kernel', () => {
  it('updates parameters and moments bit for bit as the composed float32 ops on cpu', async () => {
    const options = { learningRate: 3e-3, weightDecay: 0.1, maxGradNorm: 0 };
    const cpu = await run('cpu', options, 3);
    const wasm = await run('wasm', options, 3);
    expect(wasm.active).toBe(true);
    expect(wasm.params).toEqual(cpu.params);
    expect(wasm.m).toEqual(cpu.m);
    expect(wasm.v).toEqual(cpu.v);
    // The norm is summed in float64 on wasm and in float32 on cpu: equal to float32 rounding.
    for (const [i, n] of wasm.norms.entries()) expect(n).toBeCloseTo(cpu.norms[i] as number, 5);
  });

  it('clips like the composed update (the norm differs only by float32 summation order)', async () => {
    const options = { learningRate: 1e-2, weightDecay: 0, maxGradNorm: 0.5 };
    const cpu = await run('cpu', options, 2);
    const wasm = await run('wasm', options, 2);
    for (const [i, row] of wasm.params.entries()) {
      for (const [j, x] of row.entries()) expect(x).toBeCloseTo(cpu.params[i]?.[j] as number, 6);
    }
  });

  it('reports a non-finite gradient norm, and the step changes nothing', async () => {
    await selectBackend({ backend: 'wasm' });
    const p = tf.variable(tf.tensor1d([1, 2, 3]));
    const state = new AdamWState();
    const bad = tf.tensor1d([1, Number.NaN, 0]);
    expect(await globalNorm([bad])).toBeNaN();
    const result = await applyAdamW(state, [p], [bad], { learningRate: 0.1 });
    expect(result.skipped).toBe(true);
    expect(Array.from(p.dataSync())).toEqual([1, 2, 3]);
    expect(state.step).toBe(0);
    tf.dispose([p, bad]);
    state.dispose();
  });
});
