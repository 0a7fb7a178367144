import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../model/load.ts';
import { withStreamingBackprop } from './streaming-backprop.ts';

const config = {
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 3,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
};
const batch = [
  [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
];

/** Runs `fn` and samples the engine's live bytes after every kernel: the peak. */
function peakBytes<T>(fn: () => T): { result: T; peak: number } {
  const engine = tf.engine() as unknown as { runKernelFunc: (...args: unknown[]) => unknown };
  const original = engine.runKernelFunc;
  let peak = tf.memory().numBytes;
  engine.runKernelFunc = (...args: unknown[]) => {
    const out = original.apply(engine, args);
    peak = Math.max(peak, tf.memory().numBytes);
    return out;
  };
  try {
    return { result: fn(), peak };
  } finally {
    delete (engine as { runKernelFunc?: unknown }).runKernelFunc;
  }
}

describe('a backward pass that frees as it goes', () => {
  it('gives the same gradients as tfjs, with a lower peak and nothing left behind', async () => {
    const model = await createCausalLM(config, { seed: 2, backend: 'cpu' });
    const grads = (streaming: boolean) => {
      const before = tf.memory().numTensors;
      const run = () =>
        tf.variableGrads(
          () => tf.neg(tf.mean(model.tokenLogProbTensors(batch).logProbs)) as tf.Scalar,
          model.variables(),
        );
      const { result, peak } = peakBytes(() => (streaming ? withStreamingBackprop(run) : run()));
      const values = Object.fromEntries(
        Object.entries(result.grads).map(([name, g]) => [name, g.dataSync()]),
      );
      tf.dispose([result.value, ...Object.values(result.grads)]);
      return { values, peak, leaked: tf.memory().numTensors - before };
    };
    const plain = grads(false);
    const streamed = grads(true);
    model.dispose();
    console.log(`backward peak bytes: tfjs ${plain.peak}, freeing as it goes ${streamed.peak}`);
    expect(Object.keys(streamed.values)).toEqual(Object.keys(plain.values));
    for (const [name, g] of Object.entries(plain.values))
      expect(Array.from(streamed.values[name] as Float32Array)).toEqual(Array.from(g));
    expect(streamed.peak).toBeLessThan(plain.peak);
    expect(streamed.leaked).toBe(0);
    expect(plain.leaked).toBe(0);
  });
});
