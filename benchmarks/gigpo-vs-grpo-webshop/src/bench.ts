/**
 * `pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench` — runs every job of the benchmark
 * (per seed: a warm start, then one RL job per arm from it, then the final evaluation of the
 * warm start and every arm on more held-out goals) as separate processes, two at a time (one per
 * core), then writes results.json and results.md (laid out as the paper's Table 1) from the per-job
 * JSON files (the kit's driver). Flags: --arms A,B (default: every row of the paper's Table 1, the
 * kit's TABLE_1_ARMS, that the runner trains), --out DIR (default runs/<budget>: full, long with
 * BENCH_BUDGET=long, table with BENCH_BUDGET=table (the demo's current recipe at 16 iterations),
 * smoke with BENCH_SMOKE=1; git-ignored), --parallel N (default 2), --seeds 0,1,… (default all
 * five), --summary-only.
 */
import { fileURLToPath } from 'node:url';
import { runBench } from '@agentrl-bench/gigpo-vs-grpo-kit';
import { BENCH } from './config.ts';

await runBench(BENCH, {
  jobScript: fileURLToPath(new URL('run.ts', import.meta.url)),
  packageDir: fileURLToPath(new URL('..', import.meta.url)),
});
