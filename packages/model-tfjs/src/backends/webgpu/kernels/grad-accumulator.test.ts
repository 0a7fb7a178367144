import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../../../model/load.ts';
import type { GradientJob } from '../../../train/samples.ts';
import { computeGradients, type GradientSums } from '../../../train/steps.ts';
import { probeWebGPUAdapter } from '../setup.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`gradient accumulation tests skipped${skipReason}`);

const config = {
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
};
const samples = [
  { promptIds: [1, 2, 3], responseIds: [4, 5, 6, 7] },
  { promptIds: [8, 9], responseIds: [10, 11, 12] },
  { promptIds: [13, 14, 15, 16], responseIds: [17, 18] },
];

/** Counts the `Add` kernels `fn` runs. */
async function adds<T>(fn: () => Promise<T>): Promise<{ result: T; adds: number }> {
  const engine = tf.engine();
  const original = engine.runKernel.bind(engine);
  let n = 0;
  engine.runKernel = ((name: string, ...rest: unknown[]) => {
    if (name === 'Add') n++;
    return (original as (...a: unknown[]) => unknown)(name, ...rest);
  }) as typeof engine.runKernel;
  try {
    return { result: await fn(), adds: n };
  } finally {
    engine.runKernel = original;
  }
}

describe.skipIf(adapter === undefined)(
  `gradients summed over micro-batches on webgpu${skipReason}`,
  () => {
    for (const lora of [false, true]) {
      it(`equal the micro-batches' gradients added one by one, bit for bit, with fewer adds${lora ? ' (LoRA)' : ''}`, async () => {
        const model = await createCausalLM(config, { seed: 7, backend: 'webgpu' });
        if (lora) model.enableLoRA({ rank: 4 });
        const job = (parts: (typeof samples)[number][][]): GradientJob => ({
          kind: 'sft',
          microBatches: parts,
          weights: parts.map(() => 1),
        });
        const { result: together, adds: added } = await adds(() =>
          computeGradients(model, job(samples.map((s) => [s]))),
        );
        const apart: GradientSums[] = [];
        for (const s of samples) apart.push(await computeGradients(model, job([[s]])));
        const want = tf.tidy(() =>
          ((apart[0] as GradientSums).grads as tf.Tensor[]).map((g, i) =>
            apart
              .slice(1)
              .reduce((sum, r) => tf.add(sum, (r.grads as tf.Tensor[])[i] as tf.Tensor), g),
          ),
        );
        const grads = together.grads as tf.Tensor[];
        expect(grads).toHaveLength(want.length);
        for (const [i, g] of grads.entries()) {
          expect(Array.from(await g.data()), `variable ${i}`).toEqual(
            Array.from(await (want[i] as tf.Tensor).data()),
          );
        }
        // Without the kernels taking the running sums: one add per variable per later micro-batch.
        console.log(
          `${lora ? 'LoRA' : 'full'}: ${added} adds over 3 micro-batches for ${grads.length} variables`,
        );
        expect(added).toBeLessThan(2 * grads.length);
        tf.dispose([...grads, ...want, ...apart.flatMap((r) => r.grads as tf.Tensor[])]);
        model.dispose();
      }, 0);
    }
  },
);
