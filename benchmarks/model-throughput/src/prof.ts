/**
 * Kernel profile of one train step or one generation on wasm (tf.profile), grouped by kernel and,
 * for matmuls and transposes, by input shapes: where the time goes.
 *
 *   node --conditions=@agentrl/source src/prof.ts train|gen [configIndex]
 */
import { createCausalLM } from '@agentrl/model-tfjs';
import * as tf from '@tensorflow/tfjs';
import { CONFIGS } from './workload.ts';

const cfg = CONFIGS[Number(process.argv[3] ?? 1)] as (typeof CONFIGS)[number];
const model = await createCausalLM(cfg.hf, { seed: 1, backend: 'wasm' });
const V = cfg.hf.vocab_size - 4;
const samples = Array.from({ length: 8 }, (_, b) => ({
  promptIds: Array.from({ length: 64 }, (_, i) => ((i * 7 + b) % V) + 4),
  responseIds: Array.from({ length: 64 }, (_, i) => ((i * 13 + b) % V) + 4),
}));
const mode = process.argv[2] ?? 'train';
const run = async () => {
  if (mode === 'train') await model.sftStep(samples, { learningRate: 1e-4 });
  else
    await model.generate(
      samples.map((s) => s.promptIds.slice(0, 32)),
      { maxNewTokens: 16, temperature: 0, stopTokenIds: [] },
    );
};
await run();
const info = await tf.profile(run);
const agg = new Map<string, { n: number; ms: number }>();
for (const k of info.kernels) {
  const key = [
    'BatchMatMul',
    'Transpose',
    'Concat',
    ...(process.env.PROF_SHAPES ?? '').split(','),
  ].includes(k.name)
    ? `${k.name} ${JSON.stringify(k.inputShapes)}`
    : k.name;
  const a = agg.get(key) ?? { n: 0, ms: 0 };
  a.n++;
  a.ms += Number(k.kernelTimeMs) || 0;
  agg.set(key, a);
}
const total = [...agg.values()].reduce((a, b) => a + b.ms, 0);
console.log('kernels', info.kernels.length, 'kernel ms', total.toFixed(0));
console.log(
  [...agg.entries()]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, Number(process.env.PROF_TOP ?? 25))
    .map(([k, v]) => `${k} n=${v.n} ms=${v.ms.toFixed(1)}`)
    .join('\n'),
);
const t0 = performance.now();
await run();
console.log('wall', (performance.now() - t0).toFixed(0));
