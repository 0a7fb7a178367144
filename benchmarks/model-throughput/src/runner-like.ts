/**
 * The shapes of the CPU ALFWorld preset (`alfworld-cpu`): a word-level vocabulary of ~128 tokens,
 * width 128, 4 layers, 4 heads, ~75-token prompts, 8-token responses. Times one SFT step over 32
 * demonstrations, one rollout of 64 prompts × 8 new tokens and one PPO step over those 64 samples.
 *
 *   node --conditions=@agentrl/source src/runner-like.ts [workers]
 */
import { createRng } from '@agentrl/core';
import { createCausalLM } from '@agentrl/model-tfjs';

const cfg = {
  vocab_size: 128,
  hidden_size: 128,
  intermediate_size: 344,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 4,
  tie_word_embeddings: true,
  torch_dtype: 'float32' as const,
};
const model = await createCausalLM(cfg, { seed: 1, backend: 'wasm' });
if (process.argv[2] === 'workers') await model.startWorkers(1);
const rng = createRng(1);
const ids = (n: number) => Array.from({ length: n }, () => 4 + rng.int(120));
const sft = Array.from({ length: 32 }, () => ({ promptIds: ids(75), responseIds: ids(8) }));
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
await model.sftStep(sft, { learningRate: 1e-3, microBatchSize: 16 });
let t = performance.now();
let c = cpu();
for (let i = 0; i < 3; i++) await model.sftStep(sft, { learningRate: 1e-3, microBatchSize: 16 });
console.log(
  'sft step (32 x 83 tokens):',
  ((performance.now() - t) / 3).toFixed(0),
  'ms wall',
  (((cpu() - c) / 3) * 1000).toFixed(0),
  'ms cpu',
);
const prompts = Array.from({ length: 64 }, () => ids(75));
await model.generate(prompts.slice(0, 2), { maxNewTokens: 2, temperature: 0.7 });
t = performance.now();
c = cpu();
const out = await model.generate(prompts, {
  maxNewTokens: 8,
  temperature: 0.7,
  seed: 1,
  stopTokenIds: [],
});
console.log(
  'generate 64 x 8 new tokens (75-token prompts):',
  (performance.now() - t).toFixed(0),
  'ms wall',
  ((cpu() - c) * 1000).toFixed(0),
  'ms cpu',
);
const samples = prompts.map((p, b) => ({
  promptIds: p,
  responseIds: out.tokenIds[b] as number[],
  advantage: b % 2 ? 1 : -1,
  oldLogProbs: out.logProbs[b] as number[],
}));
t = performance.now();
c = cpu();
await model.trainStep(samples, {
  learningRate: 1e-4,
  temperature: 0.7,
  microBatchSize: 16,
  loss: { entropyCoeff: 0 },
});
console.log(
  'PPO step (64 samples):',
  (performance.now() - t).toFixed(0),
  'ms wall',
  ((cpu() - c) * 1000).toFixed(0),
  'ms cpu',
);
await model.stopWorkers();
