import { describe, expect, it } from 'vitest';
import { PARALLEL_GENERATE_MIN_ROWS } from '../model/causal-lm.ts';
import { createCausalLM } from '../model/load.ts';
import { TINY_TEST_CONFIG } from '../test-models.ts';

// Worker threads load the TypeScript sources directly, which needs Node's type stripping (Node 22.18+/24).
const canStripTypes =
  (process as { features?: { typescript?: unknown } }).features?.typescript !== undefined &&
  process.features.typescript !== false;

const config = { ...TINY_TEST_CONFIG, vocab_size: 24, num_hidden_layers: 2 };

describe.skipIf(!canStripTypes)(
  'worker-thread data parallelism (skipped: this Node cannot run .ts workers; use Node 24 via pnpm test)',
  () => {
    it('gives the same train step and the same samples with one worker as without', async () => {
      const a = await createCausalLM(config, { seed: 1, backend: 'wasm' });
      const b = await createCausalLM(config, { seed: 1, backend: 'wasm' });
      await b.startWorkers(1);
      const sft = Array.from({ length: 6 }, (_, i) => ({
        promptIds: [1, 2 + i],
        responseIds: [3 + i, 4, 5 + i],
      }));
      const policy = sft.map((s, i) => ({
        ...s,
        advantage: i % 2 === 0 ? 1 : -0.5,
        oldLogProbs: [-3, -3, -3],
      }));
      for (let step = 0; step < 2; step++) {
        const ra = await a.sftStep(sft, { learningRate: 1e-2, microBatchSize: 2 });
        const rb = await b.sftStep(sft, { learningRate: 1e-2, microBatchSize: 2 });
        expect(rb.loss).toBeCloseTo(ra.loss, 5);
        expect(rb.gradNorm).toBeCloseTo(ra.gradNorm, 4);
        const pa = await a.trainStep(policy, { learningRate: 1e-2, microBatchSize: 3 });
        const pb = await b.trainStep(policy, { learningRate: 1e-2, microBatchSize: 3 });
        expect(pb.loss).toBeCloseTo(pa.loss, 5);
        expect(pb.metrics.pgClipfrac).toBeCloseTo(pa.metrics.pgClipfrac ?? Number.NaN, 5);
      }
      const prompts = Array.from({ length: PARALLEL_GENERATE_MIN_ROWS + 3 }, (_, i) => [
        1 + (i % 20),
        2 + (i % 7),
      ]);
      const ga = await a.generate(prompts, {
        maxNewTokens: 6,
        temperature: 1,
        seed: 3,
        stopTokenIds: [],
      });
      const gb = await b.generate(prompts, {
        maxNewTokens: 6,
        temperature: 1,
        seed: 3,
        stopTokenIds: [],
      });
      expect(gb.tokenIds).toEqual(ga.tokenIds);
      gb.logProbs.forEach((row, r) => {
        row.forEach((v, i) => {
          expect(v).toBeCloseTo((ga.logProbs[r] as number[])[i] as number, 4);
        });
      });
      await b.stopWorkers();
      a.dispose();
      b.dispose();
    });
  },
);
