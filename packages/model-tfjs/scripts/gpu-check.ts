/**
 * A small GPU run to pack with pack-gpu-run.sh: loads a Hugging Face model folder (argument 1) or
 * a random tiny model on the webgpu backend, prints the backend and adapter, token log-probs of a
 * batch, and the wall time of scoring and of one supervised AdamW step (synchronised by reading
 * the results back). Usage: node run.mjs [model-dir] [batch] [seq-len]
 */

import { backendInfo } from '../src/backends/webgpu/setup.ts';
import { createCausalLM, loadCausalLM } from '../src/model/load.ts';

const [dir, batchArg, lenArg] = process.argv.slice(2);
const logger = {
  info: (message: string) => console.log(`[model-tfjs] ${message}`),
  warn: (message: string) => console.warn(`[model-tfjs] ${message}`),
};
const model =
  dir !== undefined && dir !== '-'
    ? await loadCausalLM(dir, { backend: 'webgpu', logger })
    : await createCausalLM(
        {
          vocab_size: 384,
          hidden_size: 64,
          intermediate_size: 172,
          num_hidden_layers: 2,
          num_attention_heads: 4,
          num_key_value_heads: 2,
          tie_word_embeddings: true,
        },
        { seed: 1, backend: 'webgpu', logger },
      );
const batch = Number(batchArg ?? 4);
const len = Number(lenArg ?? 32);
const vocab = model.config.vocabSize;
const sequences = Array.from({ length: batch }, (_, b) =>
  Array.from({ length: len }, (_, i) => (b * 7919 + i * 104729) % vocab),
);
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
};
await model.tokenLogProbs(sequences); // warm-up (pipeline compilation)
const [logProbs, scoreMs] = await timed(() => model.tokenLogProbs(sequences));
const samples = sequences.map((s) => ({ promptIds: s.slice(0, 4), responseIds: s.slice(4) }));
await model.sftStep(samples, { learningRate: 1e-5 });
const [step, stepMs] = await timed(() => model.sftStep(samples, { learningRate: 1e-5 }));
console.log(
  JSON.stringify(
    {
      ...backendInfo(),
      parameters: model.numParameters(),
      batch,
      len,
      firstLogProbs: (logProbs[0] ?? []).slice(0, 4),
      scoreMs: Math.round(scoreMs),
      trainStepMs: Math.round(stepMs),
      loss: step.loss,
    },
    null,
    2,
  ),
);
model.dispose();
process.exit(0);
