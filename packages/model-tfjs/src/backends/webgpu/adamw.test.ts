import { fixturePath } from '@agentrl/core/test';
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import type { CausalLM } from '../../model/causal-lm.ts';
import { createCausalLM, loadCausalLM } from '../../model/load.ts';
import { seededFloats, TINY_TEST_CONFIG } from '../../test-models.ts';
import { tempDir } from '../../test-temp-dir.ts';
import {
  AdamWState,
  applyAdamW,
  globalNorm,
  type OptimizerOptions,
} from '../../train/optimizer.ts';
import { selectBackend } from '../select.ts';
import { countWebGPUDispatches } from './dispatch-counter.ts';
import { momentsGroupLimit, normGroupLimit } from './kernels/adamw.ts';
import { probeWebGPUAdapter, webgpuBindingLimit } from './setup.ts';

const fixtureDir = fixturePath('qwen2-tiny');
const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`webgpu AdamW tests skipped${skipReason}`);

// More parameters than one moments dispatch takes, of mixed shapes: one of 4096 elements, two of
// 1600, the rest small.
const shapes: number[][] = Array.from({ length: 21 }, (_, i) =>
  i === 5
    ? [64, 64]
    : i === 10 || i === 15
      ? [40, 40]
      : i % 3 === 0
        ? [7, 5]
        : i % 3 === 1
          ? [13]
          : [3, 4, 2],
);
const options: OptimizerOptions = {
  learningRate: 0.01,
  weightDecay: 0.1,
  epsilon: 1e-3,
  maxGradNorm: 0.5,
};

interface Run {
  readonly params: Float32Array[];
  readonly m: Float32Array[];
  readonly v: Float32Array[];
  readonly norms: number[];
  /** Moment blocks and separately updated parameters (webgpu). */
  readonly layout?: { blocks: number; separate: number };
}

/** Three AdamW steps over `shapes`; moments read (and so unpacked) after the second. */
async function threeSteps(backend: 'cpu' | 'webgpu', bindingLimit?: number): Promise<Run> {
  await selectBackend({
    backend,
    ...(bindingLimit === undefined ? {} : { webgpu: { maxBindingBytes: bindingLimit } }),
  });
  const vars = shapes.map((s, i) =>
    tf.variable(
      tf.tensor(
        seededFloats(
          s.reduce((a, b) => a * b, 1),
          i + 1,
        ),
        s,
      ),
      true,
      `adamw_t${i}`,
    ),
  );
  const state = new AdamWState();
  const norms: number[] = [];
  const readMoments = async (which: 'm' | 'v') =>
    Promise.all(
      vars.map(async (v) => {
        const moments = state.existingMoments(v);
        if (moments === undefined) throw new Error(`no moments for ${v.name}`);
        return (await moments[which].data()) as Float32Array;
      }),
    );
  let m: Float32Array[] = [];
  let v: Float32Array[] = [];
  let layout: Run['layout'];
  for (let step = 0; step < 3; step++) {
    const grads = vars.map((x, i) => tf.tensor(seededFloats(x.size, 100 * step + i, 0.3), x.shape));
    const r = await applyAdamW(state, vars, grads, options);
    norms.push(r.gradNorm);
    tf.dispose(grads);
    if (step === 0 && backend === 'webgpu') {
      // The layout the step used (same variables and limits: no repacking).
      const { blocks, separate } = state.packedBlocks(vars, {
        maxMembers: momentsGroupLimit(),
        maxBlockBytes: webgpuBindingLimit() ?? Number.POSITIVE_INFINITY,
      });
      layout = { blocks: blocks.length, separate: separate.length };
    }
    if (step === 1 || step === 2) [m, v] = [await readMoments('m'), await readMoments('v')];
  }
  const params = await Promise.all(vars.map(async (x) => (await x.data()) as Float32Array));
  state.dispose();
  tf.dispose(vars);
  await selectBackend({ backend }); // the binding cap back to the adapter's
  return layout === undefined ? { params, m, v, norms } : { params, m, v, norms, layout };
}

function maxDiff(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let worst = a.length === b.length ? 0 : Number.POSITIVE_INFINITY;
  a.forEach((x, i) => {
    const y = b[i] as Float32Array;
    for (let j = 0; j < x.length; j++)
      worst = Math.max(worst, Math.abs((x[j] as number) - (y[j] as number)));
  });
  return worst;
}

describe.skipIf(adapter === undefined)(`AdamW over moment blocks on webgpu${skipReason}`, () => {
  afterAll(async () => {
    await selectBackend({ backend: 'webgpu' });
  });

  it('takes the cpu backend steps (clipped, decayed), moments included, over several blocks', async () => {
    const cpu = await threeSteps('cpu');
    const gpu = await threeSteps('webgpu');
    expect(momentsGroupLimit()).toBeLessThan(shapes.length);
    expect(gpu.layout).toEqual({
      blocks: Math.ceil(shapes.length / momentsGroupLimit()),
      separate: 0,
    });
    gpu.norms.forEach((n, i) => {
      expect(Math.abs(n - (cpu.norms[i] as number))).toBeLessThan(1e-5);
    });
    expect(maxDiff(gpu.params, cpu.params)).toBeLessThan(1e-6);
    expect(maxDiff(gpu.m, cpu.m)).toBeLessThan(1e-6);
    expect(maxDiff(gpu.v, cpu.v)).toBeLessThan(1e-6);
  });

  it('splits blocks at the binding limit and updates a parameter above it on its own', async () => {
    const cpu = await threeSteps('cpu');
    // Under 20,000 bytes: the 4096-element parameter (16 KiB) binds but its moments (32 KiB) do
    // not pack; the two 1600-element ones (12.8 KB of moments each) cannot share a block.
    const gpu = await threeSteps('webgpu', 20_000);
    expect(gpu.layout?.separate).toBe(1);
    expect(gpu.layout?.blocks).toBeGreaterThanOrEqual(2);
    expect(maxDiff(gpu.params, cpu.params)).toBeLessThan(1e-6);
    expect(maxDiff(gpu.m, cpu.m)).toBeLessThan(1e-6);
    expect(maxDiff(gpu.v, cpu.v)).toBeLessThan(1e-6);
  });

  for (const [label, limit] of [
    ['in blocks', undefined],
    ['with a parameter outside the blocks', 256],
  ] as const) {
    it(`skips a step with a non-finite gradient norm, changing no parameter or moment (${label})`, async () => {
      // 256 bytes: the 40-element parameter binds (160) but its moments (320) do not pack.
      await selectBackend({
        backend: 'webgpu',
        ...(limit === undefined ? {} : { webgpu: { maxBindingBytes: limit } }),
      });
      const vars = [tf.variable(tf.tensor1d([1, 2, 3])), tf.variable(tf.fill([40], 0.5))];
      const state = new AdamWState();
      const g1 = [tf.tensor1d([0.1, 0.2, 0.3]), tf.fill([40], 0.1)];
      await applyAdamW(state, vars, g1, options);
      const snapshot = () =>
        Promise.all(
          vars.flatMap((x) => {
            const moments = state.existingMoments(x);
            return [x.data(), moments?.m.data(), moments?.v.data()];
          }),
        );
      const before = await snapshot();
      const g2 = [tf.tensor1d([0, Number.NaN, 0]), tf.fill([40], 1)];
      const r = await applyAdamW(state, vars, g2, options);
      await selectBackend({ backend: 'webgpu' });
      expect(r.skipped).toBe(true);
      expect(state.step).toBe(1);
      expect(await snapshot()).toEqual(before);
      state.dispose();
      tf.dispose([...vars, ...g1, ...g2]);
    });
  }

  it('queues the whole step before it reads the gradient norm back', async () => {
    await selectBackend({ backend: 'webgpu' });
    const vars = shapes.map((s) => tf.variable(tf.fill(s, 1)));
    const grads = shapes.map((s) => tf.fill(s, 0.1));
    const state = new AdamWState();
    const backend = tf.backend() as unknown as {
      recordAndSubmit: (...args: unknown[]) => unknown;
      getBufferData: (buffer: unknown) => Promise<unknown>;
    };
    const { recordAndSubmit, getBufferData } = backend;
    const events: string[] = [];
    backend.recordAndSubmit = (...args: unknown[]) => {
      events.push('dispatch');
      return recordAndSubmit.apply(backend, args);
    };
    backend.getBufferData = (buffer: unknown) => {
      events.push('read');
      return getBufferData.call(backend, buffer);
    };
    try {
      await applyAdamW(state, vars, grads, options);
    } finally {
      backend.recordAndSubmit = recordAndSubmit;
      backend.getBufferData = getBufferData;
    }
    expect(events.filter((e) => e === 'read')).toHaveLength(1);
    expect(events.at(-1)).toBe('read');
    expect(events.length).toBeGreaterThan(shapes.length);
    state.dispose();
    tf.dispose([...vars, ...grads]);
  });

  it('gives the gradient norm of more gradients than two levels of partial sums hold', async () => {
    const count = normGroupLimit() ** 2 + 3;
    const data = Array.from({ length: count }, (_, i) => seededFloats(3 + (i % 5), i, 0.1));
    const normOn = async (backend: 'cpu' | 'webgpu') => {
      await selectBackend({ backend });
      const grads = data.map((d) => tf.tensor1d(d));
      const n = await globalNorm(grads);
      tf.dispose(grads);
      return n;
    };
    const cpu = await normOn('cpu');
    expect(Math.abs((await normOn('webgpu')) - cpu)).toBeLessThan(1e-5 * cpu);
  });

  it('divides the gradients by a loss scale inside its kernels: the unscaled step bit for bit, no dispatch more', async () => {
    await selectBackend({ backend: 'webgpu' });
    const step = async (scale: number) => {
      const vars = shapes.map((s, i) =>
        tf.variable(
          tf.tensor(
            seededFloats(
              s.reduce((a, b) => a * b, 1),
              300 + i,
            ),
            s,
          ),
        ),
      );
      // Gradients times a power of two, as a scaled loss gives them (exact).
      const grads = shapes.map((s, i) =>
        tf.tensor(
          seededFloats(
            s.reduce((a, b) => a * b, 1),
            400 + i,
            0.2,
          ).map((x) => x * scale),
          s,
        ),
      );
      const state = new AdamWState();
      const counted = await countWebGPUDispatches(() =>
        applyAdamW(state, vars, grads, options, 1 / scale),
      );
      const params = await Promise.all(vars.map((v) => v.data() as Promise<Float32Array>));
      state.dispose();
      tf.dispose([...vars, ...grads]);
      return { params, norm: counted.result.gradNorm, dispatches: counted.dispatches };
    };
    const plain = await step(1);
    const scaled = await step(1024);
    expect(scaled.dispatches).toBe(plain.dispatches);
    expect(scaled.norm).toBe(plain.norm);
    scaled.params.forEach((p, i) => {
      expect(Array.from(p), `parameter ${i}`).toEqual(Array.from(plain.params[i] as Float32Array));
    });
  });

  it('saves and loads the packed state so training resumes bit for bit', async () => {
    const config = TINY_TEST_CONFIG;
    const steps = async (model: CausalLM, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const samples = [{ promptIds: [1, 2], responseIds: [(i % 8) + 3, 4] }];
        expect((await model.sftStep(samples, { learningRate: 0.02 })).skipped).toBe(false);
      }
    };
    const weights = (model: CausalLM) => Promise.all(model.variables().map((v) => v.data()));
    const straight = await createCausalLM(config, { seed: 3, backend: 'webgpu' });
    await steps(straight, 0, 4);
    const first = await createCausalLM(config, { seed: 3, backend: 'webgpu' });
    await steps(first, 0, 2);
    const dir = tempDir('agentrl-webgpu-adamw-');
    await first.save(dir);
    await first.saveTrainingState(dir);
    first.dispose();
    const resumed = await loadCausalLM(dir, { backend: 'webgpu' });
    await resumed.loadTrainingState(dir);
    await steps(resumed, 2, 4);
    expect(await weights(resumed)).toEqual(await weights(straight));
    straight.dispose();
    resumed.dispose();
  });

  it('takes one dispatch per parameter plus a few per block on qwen2-tiny', async () => {
    const model = await loadCausalLM(fixtureDir, { backend: 'webgpu' });
    const vars = model.trainableVariables();
    const grads = vars.map((v, i) => tf.tensor(seededFloats(v.size, i, 0.01), v.shape));
    const count = async (fused: boolean) => {
      await selectBackend({ backend: 'webgpu', webgpu: { fusedKernels: fused } });
      const state = new AdamWState();
      const step = () => applyAdamW(state, vars, grads, { learningRate: 1e-3 });
      await step();
      const { dispatches } = await countWebGPUDispatches(step);
      state.dispose();
      return dispatches;
    };
    const composed = await count(false);
    const fused = await count(true);
    tf.dispose(grads);
    model.dispose();
    const P = vars.length;
    const normGroups = Math.ceil(P / normGroupLimit());
    console.log(
      `AdamW step on qwen2-tiny (${P} parameters): ${composed} dispatches composed, ${fused} fused (moments in ${Math.ceil(P / momentsGroupLimit())} blocks, gradient norm in ${normGroups + 1})`,
    );
    expect(normGroups).toBeLessThanOrEqual(normGroupLimit());
    expect(fused).toBe(P + Math.ceil(P / momentsGroupLimit()) + normGroups + 1);
  });
});
