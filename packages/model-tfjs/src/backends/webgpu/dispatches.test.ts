import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { CausalLM } from '../../model/causal-lm.ts';
import { createCausalLM } from '../../model/load.ts';
import { AdamWState, applyAdamW } from '../../train/optimizer.ts';
import { selectBackend } from '../select.ts';
import type { FusedKernelsOption } from '../switches.ts';
import { countWebGPUDispatches } from './dispatch-counter.ts';
import { ATTENTION_KERNEL, ATTENTION_ROTARY_KERNEL } from './kernels/attention.ts';
import { FLASH_FORWARD_KERNEL } from './kernels/flash-attention.ts';
import { probeWebGPUAdapter } from './setup.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`webgpu dispatch-count tests skipped${skipReason}`);

const config = (layers: number) => ({
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: layers,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
});
const batch = [
  [1, 2, 3, 4, 5, 6, 7, 8],
  [9, 10, 11, 12, 13, 14, 15, 16],
];

async function count(model: CausalLM, withBackward: boolean): Promise<number> {
  const run = async () => {
    if (withBackward) {
      const { value, grads } = tf.variableGrads(
        () => tf.neg(tf.mean(model.tokenLogProbTensors(batch).logProbs)) as tf.Scalar,
        model.variables(),
      );
      await value.data();
      tf.dispose([value, ...Object.values(grads)]);
    } else {
      const out = tf.tidy(() => model.tokenLogProbTensors(batch).logProbs);
      await out.data();
      out.dispose();
    }
  };
  await run(); // warm-up: compile pipelines
  return (await countWebGPUDispatches(run)).dispatches;
}

/** Dispatches of one decoder layer: a 2-layer model minus a 1-layer model. */
async function perLayer(fused: boolean): Promise<{ forward: number; backward: number }> {
  const options = { seed: 1, backend: 'webgpu', webgpu: { fusedKernels: fused } } as const;
  const one = await createCausalLM(config(1), options);
  const two = await createCausalLM(config(2), options);
  const forward = (await count(two, false)) - (await count(one, false));
  const both = (await count(two, true)) - (await count(one, true));
  one.dispose();
  two.dispose();
  return { forward, backward: both - forward };
}

describe.skipIf(adapter === undefined)(
  `dispatches per decoder layer on webgpu${skipReason}`,
  () => {
    it('are fewer with the fused kernels, forward and backward', async () => {
      const composed = await perLayer(false);
      const fused = await perLayer(true);
      console.log(
        `dispatches per decoder layer: composed forward ${composed.forward}, backward ${composed.backward}; fused forward ${fused.forward}, backward ${fused.backward}`,
      );
      expect(fused.forward).toBeLessThan(composed.forward);
      expect(fused.backward).toBeLessThan(composed.backward);
    });

    it('run the tiled attention on full sequences and the row kernel on decode steps by default', async () => {
      /** How many times `run` issued the tiled attention and the row (decode) attention kernel. */
      const attentionCalls = async (run: () => Promise<void>) => {
        const engine = tf.engine();
        const original = engine.runKernel.bind(engine);
        const calls = { tiled: 0, row: 0 };
        engine.runKernel = ((name: string, ...rest: unknown[]) => {
          if (name === FLASH_FORWARD_KERNEL) calls.tiled++;
          if (name === ATTENTION_KERNEL || name === ATTENTION_ROTARY_KERNEL) calls.row++;
          return (original as (...a: unknown[]) => unknown)(name, ...rest);
        }) as typeof engine.runKernel;
        try {
          await run();
        } finally {
          engine.runKernel = original;
        }
        return calls;
      };
      const passes = async (fusedKernels?: FusedKernelsOption) => {
        const model = await createCausalLM(config(2), {
          seed: 1,
          backend: 'webgpu',
          ...(fusedKernels === undefined ? {} : { webgpu: { fusedKernels } }),
        });
        const forward = await attentionCalls(async () => {
          const out = tf.tidy(() => model.tokenLogProbTensors(batch).logProbs);
          await out.data();
          out.dispose();
        });
        const decode = await attentionCalls(async () => {
          await model.generate([[1, 2, 3]], {
            maxNewTokens: 4,
            temperature: 0,
            seed: 1,
            stopTokenIds: [],
          });
        });
        model.dispose();
        return { forward, decode };
      };
      // Defaults: full sequences (scoring, the prefill) tiled; the 3 decode steps by the row kernel.
      expect(await passes()).toEqual({
        forward: { tiled: 2, row: 0 },
        decode: { tiled: 2, row: 3 * 2 },
      });
      expect(await passes({ attention: false })).toEqual({
        forward: { tiled: 0, row: 0 },
        decode: { tiled: 0, row: 3 * 2 },
      });
      expect(await passes({ decodeAttention: false })).toEqual({
        forward: { tiled: 2, row: 0 },
        decode: { tiled: 2, row: 0 },
      });
    });

    it('come with the host time spent issuing them, and the counters are removed afterwards', async () => {
      const model = await createCausalLM(config(2), { seed: 1, backend: 'webgpu' });
      const run = async () => {
        const out = tf.tidy(() => model.tokenLogProbTensors(batch).logProbs);
        await out.data();
        out.dispose();
      };
      await run();
      const engine = tf.engine() as unknown as Record<string, unknown>;
      expect(Object.hasOwn(engine, 'runKernelFunc')).toBe(false);
      const start = performance.now();
      const counted = await countWebGPUDispatches(run);
      const wall = performance.now() - start;
      expect(Object.hasOwn(engine, 'runKernelFunc')).toBe(false);
      expect(counted.dispatches).toBeGreaterThan(0);
      expect(counted.hostMs).toBeGreaterThan(0);
      expect(counted.hostMs).toBeLessThanOrEqual(wall);
      console.log(
        `host time issuing ${counted.dispatches} dispatches of a 2-layer forward: ${counted.hostMs.toFixed(2)} ms of ${wall.toFixed(2)} ms wall (${((1000 * counted.hostMs) / counted.dispatches).toFixed(0)} µs per dispatch)`,
      );
      model.dispose();
    });

    it('are fewer for an AdamW step with the fused update', async () => {
      const perParameter = async (fused: boolean): Promise<number> => {
        await selectBackend({ backend: 'webgpu', webgpu: { fusedKernels: fused } });
        const counts: number[] = [];
        for (const k of [2, 4]) {
          const vars = Array.from({ length: k }, (_, i) => tf.variable(tf.fill([16, 8], i + 1)));
          const grads = vars.map((_, i) => tf.fill([16, 8], 0.1 * (i + 1)));
          const state = new AdamWState();
          const step = () => applyAdamW(state, vars, grads, { learningRate: 0.01 });
          await step();
          counts.push((await countWebGPUDispatches(step)).dispatches);
          state.dispose();
          tf.dispose([...vars, ...grads]);
        }
        return ((counts[1] as number) - (counts[0] as number)) / 2;
      };
      const composed = await perParameter(false);
      const fused = await perParameter(true);
      console.log(
        `dispatches per parameter of an AdamW step: composed ${composed}, fused ${fused}`,
      );
      expect(fused).toBeLessThan(composed);
    });
  },
);
