/**
 * model-throughput: train-step and KV-cache generation tokens/s of @agentrl/model-tfjs on wasm
 * (one thread with our relaxed-SIMD matmul and with tfjs's XNNPACK one, and with worker threads)
 * and cpu, side by side with PyTorch CPU (Debian python3-torch + OpenBLAS) on the identical
 * configurations and batch, in one run: torch with one thread beside the one-thread rows, and
 * with as many threads as the worker rows use beside those; LoRA (r 16 on every projection) on one
 * thread beside torch with the same adapters.
 *
 *   pnpm --filter @agentrl-bench/model-throughput bench [--repeats 3 --json out.json]
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { measureTfjs, type Throughput } from './tfjs-run.ts';
import { CONFIGS, WORKLOAD, type Workload } from './workload.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const repeats = Number(arg('repeats', '3'));
const jsonOut = arg('json', '');
const python = arg('python', '/usr/bin/python3');
// The cpu backend is ~50x slower than wasm: batch 1 keeps the run short (tokens/s is per token).
const CPU_WORKLOAD: Workload = { ...WORKLOAD, batch: 1 };

interface Row {
  config: string;
  engine: string;
  batch: number;
  result: Throughput;
}

const rows: Row[] = [];
const workers = Math.max(0, availableParallelism() - 1);
const LORA_RANK = 16;
const LORA = `LoRA r${LORA_RANK}`;
for (const config of CONFIGS) {
  rows.push({
    config: config.name,
    engine: 'tfjs wasm (1 thread)',
    batch: WORKLOAD.batch,
    result: await measureTfjs(config, 'wasm', WORKLOAD, repeats),
  });
  rows.push({
    config: config.name,
    engine: `tfjs wasm (1 thread, ${LORA})`,
    batch: WORKLOAD.batch,
    result: await measureTfjs(config, 'wasm', WORKLOAD, repeats, 0, 'agentrl', LORA_RANK),
  });
  rows.push({
    config: config.name,
    engine: 'tfjs wasm (1 thread, XNNPACK matmul)',
    batch: WORKLOAD.batch,
    result: await measureTfjs(config, 'wasm', WORKLOAD, repeats, 0, 'xnnpack'),
  });
  if (workers > 0) {
    rows.push({
      config: config.name,
      engine: `tfjs wasm (+${workers} worker thread${workers > 1 ? 's' : ''})`,
      batch: WORKLOAD.batch,
      result: await measureTfjs(config, 'wasm', WORKLOAD, repeats, workers),
    });
  }
  rows.push({
    config: config.name,
    engine: 'tfjs cpu',
    batch: CPU_WORKLOAD.batch,
    result: await measureTfjs(config, 'cpu', CPU_WORKLOAD, 1),
  });
}

const torchEngine = (threads: number, lora: boolean) =>
  `PyTorch CPU (${threads} thread${threads > 1 ? 's' : ''}${lora ? `, ${LORA}` : ''})`;
const harness = fileURLToPath(new URL('../torch_harness.py', import.meta.url));
let torchInfo = 'unavailable';
const torchRuns = [
  ...(workers > 0 ? [1, workers + 1] : [1]).map((threads) => ({ threads, loraRank: 0 })),
  { threads: 1, loraRank: LORA_RANK },
];
for (const { threads, loraRank } of torchRuns) {
  const torch = spawnSync(python, [harness], {
    input: JSON.stringify({ configs: CONFIGS, workload: WORKLOAD, repeats, threads, loraRank }),
    encoding: 'utf8',
    env: {
      ...process.env,
      OPENBLAS_NUM_THREADS: String(threads),
      OMP_NUM_THREADS: String(threads),
      // Debian's torch runs OpenMP beside OpenBLAS's own threads; OpenMP's default spin-wait
      // starves the BLAS threads on 2 cores (small train 1366 tok/s with 2 threads against 2717
      // with 1; with passive waiting 3655).
      OMP_WAIT_POLICY: 'PASSIVE',
    },
  });
  if (torch.status !== 0) {
    process.stderr.write(
      `PyTorch harness failed (install python3-torch python3-numpy libopenblas0-pthread): ${torch.stderr}\n`,
    );
    break;
  }
  const parsed = JSON.parse(torch.stdout) as {
    torch: string;
    threads: number;
    blas: string;
    results: Record<string, Throughput>;
  };
  torchInfo = `torch ${parsed.torch}, ${parsed.blas}`;
  for (const config of CONFIGS) {
    const r = parsed.results[config.name];
    if (r !== undefined)
      rows.push({
        config: config.name,
        engine: torchEngine(parsed.threads, loraRank > 0),
        batch: WORKLOAD.batch,
        result: r,
      });
  }
}

const lines = [
  `machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}; ${torchInfo}`,
  `workload: train batch × (${WORKLOAD.trainPrompt} prompt + ${WORKLOAD.trainResponse} response) tokens, sftStep = forward + backward + AdamW; generate ${WORKLOAD.genPrompt}-token prompts + ${WORKLOAD.genNew} greedy new tokens with the KV cache (new tokens counted); wall clock, mean of ${repeats}`,
  '',
  '| config | engine | batch | train tok/s | generate tok/s | train × torch | generate × torch | train tok/CPU-s | generate tok/CPU-s | train × torch per CPU-s | generate × torch per CPU-s |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
];
const perCpu = (tokens: number, seconds: number | undefined) =>
  seconds === undefined ? '–' : (tokens / seconds).toFixed(0);
/** Tokens per CPU-second of `row` over those of `ref` (both processes' own CPU time). */
function cpuRatio(row: Row, ref: Row | undefined, kind: 'train' | 'generate'): string {
  const tokens = kind === 'train' ? WORKLOAD.trainPrompt + WORKLOAD.trainResponse : WORKLOAD.genNew;
  const seconds = (r: Row) =>
    kind === 'train' ? r.result.trainCpuSeconds : r.result.generateCpuSeconds;
  const mine = seconds(row);
  const theirs = ref === undefined ? undefined : seconds(ref);
  if (ref === undefined || mine === undefined || theirs === undefined) return '–';
  return `${((row.batch * tokens) / mine / ((ref.batch * tokens) / theirs)).toFixed(2)}×`;
}
for (const row of rows) {
  // Like with like: rows with worker threads against torch with as many threads, others against 1.
  // LoRA rows against torch with the same adapters.
  const threads = row.engine.includes('worker') ? workers + 1 : 1;
  const want = torchEngine(threads, row.engine.includes(LORA));
  const ref = rows.find((r) => r.config === row.config && r.engine === want);
  const ratio = (a: number, b: number | undefined) =>
    b === undefined ? '–' : `${(a / b).toFixed(2)}×`;
  lines.push(
    `| ${row.config} | ${row.engine} | ${row.batch} | ${row.result.trainTokensPerSecond.toFixed(0)} | ${row.result.generateTokensPerSecond.toFixed(0)} | ${ratio(row.result.trainTokensPerSecond, ref?.result.trainTokensPerSecond)} | ${ratio(row.result.generateTokensPerSecond, ref?.result.generateTokensPerSecond)} | ${perCpu(row.batch * (WORKLOAD.trainPrompt + WORKLOAD.trainResponse), row.result.trainCpuSeconds)} | ${perCpu(row.batch * WORKLOAD.genNew, row.result.generateCpuSeconds)} | ${cpuRatio(row, ref, 'train')} | ${cpuRatio(row, ref, 'generate')} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
if (jsonOut !== '') writeFileSync(jsonOut, JSON.stringify(rows, null, 2));
