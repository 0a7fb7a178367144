/**
 * `pnpm --filter @agentrl-bench/gigpo-vs-grpo-search bench` — runs every job of the benchmark
 * (per seed: a warm start, then one RL job per arm from it, then the final evaluation of the warm
 * start and every arm on more held-out questions) as separate processes, two at a time (one per
 * core), then writes results.json and results.md (laid out as the paper's tables: exact match per
 * data source and overall, GiGPO minus GRPO paired by seed) from the per-job JSON files (the kit's
 * driver). Flags: --arms A,B (default grpo,gigpo-sim0.9), --out DIR (default runs/<budget>: full,
 * long with BENCH_BUDGET=long, smoke with BENCH_SMOKE=1; git-ignored), --parallel N (default 2),
 * --seeds 200,201,… (default 200–209), --summary-only.
 */
import { fileURLToPath } from 'node:url';
import { runBench } from '@agentrl-bench/gigpo-vs-grpo-kit';
import { BENCH } from './config.ts';

await runBench(BENCH, {
  jobScript: fileURLToPath(new URL('run.ts', import.meta.url)),
  packageDir: fileURLToPath(new URL('..', import.meta.url)),
});
