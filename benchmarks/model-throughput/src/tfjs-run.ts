/** Measures one engine configuration with @agentrl/model-tfjs; returns tokens/s (wall clock). */
import { createRng, type Rng } from '@agentrl/core';
import { type BackendName, createCausalLM, setWasmMatMul } from '@agentrl/model-tfjs';
import type { BenchConfig, Workload } from './workload.ts';

export interface Throughput {
  readonly trainTokensPerSecond: number;
  readonly generateTokensPerSecond: number;
  readonly trainStepSeconds: number;
  readonly generateSeconds: number;
  /** Process CPU seconds per train step / generation (less sensitive to other jobs on the machine). */
  readonly trainCpuSeconds?: number;
  readonly generateCpuSeconds?: number;
}

/** Untimed runs of each workload before timing (fewer when only one run is timed: the slow cpu rows). */
const WARMUP = 2;

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

function tokens(n: number, vocab: number, rng: Rng): number[] {
  return Array.from({ length: n }, () => 4 + rng.int(vocab - 4));
}

/** Random ids of the workload's shapes (same seed for every engine). */
export function workloadTokens(config: BenchConfig, w: Workload) {
  const rng = createRng(2);
  const V = config.hf.vocab_size;
  return {
    samples: Array.from({ length: w.batch }, () => ({
      promptIds: tokens(w.trainPrompt, V, rng),
      responseIds: tokens(w.trainResponse, V, rng),
    })),
    prompts: Array.from({ length: w.batch }, () => tokens(w.genPrompt, V, rng)),
  };
}

/**
 * Two warm-up runs, then `repeats` timed sftSteps (forward + backward + AdamW over batch × (prompt +
 * response) tokens, loss on the response) and `repeats` greedy KV-cache generations.
 */
export async function measureTfjs(
  config: BenchConfig,
  backend: BackendName,
  w: Workload,
  repeats: number,
  workers = 0,
  matmul: 'agentrl' | 'xnnpack' = 'agentrl',
): Promise<Throughput> {
  const model = await createCausalLM(config.hf, { seed: 1, backend });
  // The wasm BatchMatMul of this thread: ours (relaxed SIMD) or tfjs-backend-wasm's XNNPACK.
  setWasmMatMul(matmul);
  if (workers > 0) await model.startWorkers(workers);
  const { samples, prompts } = workloadTokens(config, w);
  const step = () =>
    model.sftStep(samples, {
      learningRate: 1e-4,
      microBatchSize: Math.max(1, Math.ceil(w.batch / (workers + 1))),
    });
  // Untimed runs of the full workload first (JIT and allocator warm-up; torch does the same).
  const warmup = Math.min(WARMUP, repeats);
  for (let i = 0; i < warmup; i++) await step();
  let t0 = performance.now();
  let c0 = cpuSeconds();
  for (let i = 0; i < repeats; i++) await step();
  const trainStepSeconds = (performance.now() - t0) / 1000 / repeats;
  const trainCpuSeconds = (cpuSeconds() - c0) / repeats;
  const generate = (n: number) =>
    model.generate(prompts, { maxNewTokens: n, temperature: 0, stopTokenIds: [] });
  for (let i = 0; i < warmup; i++) await generate(w.genNew);
  t0 = performance.now();
  c0 = cpuSeconds();
  for (let i = 0; i < repeats; i++) await generate(w.genNew);
  const generateSeconds = (performance.now() - t0) / 1000 / repeats;
  const generateCpuSeconds = (cpuSeconds() - c0) / repeats;
  await model.stopWorkers();
  model.dispose();
  setWasmMatMul('agentrl');
  return {
    trainTokensPerSecond: (w.batch * (w.trainPrompt + w.trainResponse)) / trainStepSeconds,
    generateTokensPerSecond: (w.batch * w.genNew) / generateSeconds,
    trainStepSeconds,
    generateSeconds,
    trainCpuSeconds,
    generateCpuSeconds,
  };
}
