/** Measures one engine configuration with @agentrl/model-tfjs; returns tokens/s (wall clock). */
import { createRng, type Rng } from '@agentrl/core';
import { type BackendName, createCausalLM } from '@agentrl/model-tfjs';
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

/**
 * Untimed runs of each workload before timing: at least {@link WARMUP_RUNS} and until
 * {@link WARMUP_SECONDS} have passed (one run when only one is timed: the slow cpu rows). V8
 * needs that long to optimise tfjs's JS paths: the tiny configuration's first train steps in a
 * process run at ~60 % of its steady rate (measured: 11,786 → 14,427 → 20,064 → 19,985 tok/s
 * over four consecutive 2-step warm-ups + 5 timed steps). Training runs thousands of steps, so
 * the steady rate is the one that matters.
 */
const WARMUP_RUNS = 2;
const WARMUP_SECONDS = 3;

async function warmUp(run: () => Promise<unknown>, timedRepeats: number): Promise<void> {
  if (timedRepeats <= 1) {
    await run();
    return;
  }
  const start = performance.now();
  for (let i = 0; i < WARMUP_RUNS || performance.now() - start < WARMUP_SECONDS * 1000; i++) {
    await run();
  }
}

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
 * Warm-up runs (see {@link warmUp}), then `repeats` timed sftSteps (forward + backward + AdamW over batch × (prompt +
 * response) tokens, loss on the response) and `repeats` greedy KV-cache generations.
 */
export async function measureTfjs(
  config: BenchConfig,
  backend: BackendName,
  w: Workload,
  repeats: number,
  workers = 0,
  matmul: 'agentrl' | 'xnnpack' = 'agentrl',
  loraRank = 0,
): Promise<Throughput> {
  // The wasm BatchMatMul: ours (relaxed SIMD) or tfjs-backend-wasm's XNNPACK; workers get the same.
  const model = await createCausalLM(config.hf, { seed: 1, backend, wasm: { matMul: matmul } });
  // LoRA on every projection: the base is frozen, steps train and generation uses the adapters.
  if (loraRank > 0) model.enableLoRA({ rank: loraRank });
  if (workers > 0) await model.startWorkers(workers);
  const { samples, prompts } = workloadTokens(config, w);
  const step = () =>
    model.sftStep(samples, {
      learningRate: 1e-4,
      microBatchSize: Math.max(1, Math.ceil(w.batch / (workers + 1))),
    });
  // Untimed runs of the full workload first (JIT warm-up; torch does the same).
  await warmUp(step, repeats);
  let t0 = performance.now();
  let c0 = cpuSeconds();
  for (let i = 0; i < repeats; i++) await step();
  const trainStepSeconds = (performance.now() - t0) / 1000 / repeats;
  const trainCpuSeconds = (cpuSeconds() - c0) / repeats;
  const generate = (n: number) =>
    model.generate(prompts, { maxNewTokens: n, temperature: 0, stopTokenIds: [] });
  await warmUp(() => generate(w.genNew), repeats);
  t0 = performance.now();
  c0 = cpuSeconds();
  for (let i = 0; i < repeats; i++) await generate(w.genNew);
  const generateSeconds = (performance.now() - t0) / 1000 / repeats;
  const generateCpuSeconds = (cpuSeconds() - c0) / repeats;
  await model.stopWorkers();
  model.dispose();
  return {
    trainTokensPerSecond: (w.batch * (w.trainPrompt + w.trainResponse)) / trainStepSeconds,
    generateTokensPerSecond: (w.batch * w.genNew) / generateSeconds,
    trainStepSeconds,
    generateSeconds,
    trainCpuSeconds,
    generateCpuSeconds,
  };
}
