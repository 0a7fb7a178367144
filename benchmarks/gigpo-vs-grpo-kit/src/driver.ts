/**
 * The driver of a benchmark (`pnpm --filter <benchmark> bench`): per seed a warm start, then one
 * job per arm from it, then the final evaluation of all three, each job a separate process
 * (the benchmark's `run.ts`) and `--parallel` of them at a time (default 2, one per core); then
 * `results.json` and `results.md` from the per-job JSON files, and an overlay report of every
 * run's curves. Flags: --out DIR (default runs/<budget>: full, long with BENCH_BUDGET=long, smoke
 * with BENCH_SMOKE=1), --parallel N, --seeds 0,1,… (default all five), --summary-only.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, dropArgsSeparator } from '@agentrl/core';
import { writeOverlayReport } from '@agentrl/runner';
import {
  ARMS,
  type BenchBudget,
  comparableBudget,
  type ResolvedBench,
  SEEDS,
  warmRecipe,
} from './config.ts';
import { summarize } from './results.ts';

/** Where a benchmark's files are: its job script and the folder its committed results go to. */
export interface BenchPaths {
  /** The benchmark's `run.ts` (one job per process). */
  readonly jobScript: string;
  /** The package folder: full runs write results there, long runs under `long/`. */
  readonly packageDir: string;
}

/** The flags of the driver. */
export interface DriverArgs {
  readonly out: string;
  readonly parallel: number;
  readonly seeds: readonly number[];
  readonly summaryOnly: boolean;
}

/** Parses the driver's command line; `budgetName` names the default output folder. */
export function parseDriverArgs(argv: readonly string[], budgetName: string): DriverArgs {
  const { values } = parseArgs({
    args: dropArgsSeparator([...argv]),
    options: {
      out: { type: 'string' },
      parallel: { type: 'string' },
      seeds: { type: 'string' },
      'summary-only': { type: 'boolean' },
    },
  });
  const parallel = Number(values.parallel ?? 2);
  if (!Number.isInteger(parallel) || parallel < 1)
    throw new ConfigError(
      `--parallel ${String(values.parallel)}: give a whole number of jobs at a time, at least 1, e.g. --parallel 2`,
    );
  const seeds = values.seeds === undefined ? [...SEEDS] : values.seeds.split(',').map(Number);
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s)))
    throw new ConfigError(
      `--seeds ${String(values.seeds)}: give integers separated by commas, e.g. --seeds 0,1,2`,
    );
  return {
    out: resolve(values.out ?? `runs/${budgetName}`),
    parallel,
    seeds,
    summaryOnly: values['summary-only'] === true,
  };
}

/** One job and the jobs that must finish before it. */
export interface Job {
  readonly seed: number;
  readonly phase: string;
  readonly after: readonly string[];
}

const key = (seed: number, phase: string) => `${seed}/${phase}`;

/**
 * Every job of `seeds`, seed by seed: its warm start, its arms, its final evaluation. The driver
 * starts the first job whose prerequisites are done, so seeds finish one after another (a run cut
 * short leaves whole seeds) while the other worker starts the next seed's warm start.
 */
export function benchJobs(seeds: readonly number[]): Job[] {
  const arms = Object.keys(ARMS);
  return seeds.flatMap((seed) => [
    { seed, phase: 'warm', after: [] },
    ...arms.map((phase) => ({ seed, phase, after: [key(seed, 'warm')] })),
    { seed, phase: 'eval', after: arms.map((arm) => key(seed, arm)) },
  ]);
}

/**
 * Whether a job's result is already in the output folder for this very budget (a warm start with
 * the same warm-start recipe, an arm with the same budget, an evaluation with the same budget and
 * episodes): such jobs are kept, not rerun, so an interrupted benchmark resumes where it stopped.
 */
export function alreadyDone<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  out: string,
  job: Job,
): boolean {
  const file =
    job.phase === 'warm'
      ? join(out, `seed-${job.seed}`, 'warm', 'warm.json')
      : join(out, `seed-${job.seed}`, `${job.phase}.json`);
  if (!existsSync(file)) return false;
  const saved = JSON.parse(readFileSync(file, 'utf8')) as {
    recipe?: unknown;
    budget?: unknown;
    episodes?: unknown;
  };
  if (job.phase === 'eval' && saved.episodes !== bench.finalEvalEpisodes) return false;
  const expected =
    job.phase === 'warm' ? warmRecipe(bench.budget, bench.bench.warmFields) : bench.budget;
  const recorded = job.phase === 'warm' ? saved.recipe : saved.budget;
  return comparableBudget(recorded) === comparableBudget(expected);
}

function spawnJob(jobScript: string, out: string, job: Job): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@agentrl/source',
        '--disable-warning=ExperimentalWarning',
        jobScript,
        '--seed',
        String(job.seed),
        '--phase',
        job.phase,
        '--out',
        out,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0
        ? done()
        : fail(new Error(`seed ${job.seed} ${job.phase} exited with code ${String(code)}`)),
    );
  });
}

/**
 * Runs `jobs` with `run`, `parallel` at a time: each worker starts the first job in the list whose
 * prerequisites have finished, or waits for one to finish. Rejects with the first job that fails.
 */
export async function runInOrder(
  jobs: readonly Job[],
  parallel: number,
  run: (job: Job) => Promise<void>,
): Promise<void> {
  const finished = new Set<string>();
  const pending = [...jobs];
  let wake = () => {};
  let oneFinished = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = pending.findIndex((j) => j.after.every((k) => finished.has(k)));
      if (index < 0) {
        if (pending.length === 0) return;
        await oneFinished;
        continue;
      }
      const [job] = pending.splice(index, 1) as [Job];
      await run(job);
      finished.add(key(job.seed, job.phase));
      const woken = wake;
      oneFinished = new Promise<void>((resolve) => {
        wake = resolve;
      });
      woken();
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** Runs the jobs not already done, `parallel` at a time, each after the jobs it waits for. */
async function runJobs<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  paths: BenchPaths,
  args: DriverArgs,
): Promise<void> {
  const started = performance.now();
  const jobs = benchJobs(args.seeds);
  await runInOrder(jobs, args.parallel, async (job) => {
    if (alreadyDone(bench, args.out, job))
      process.stderr.write(
        `seed ${job.seed} ${job.phase}: kept the result already in ${args.out}\n`,
      );
    else await spawnJob(paths.jobScript, args.out, job);
  });
  process.stderr.write(
    `all ${jobs.length} jobs done in ${((performance.now() - started) / 60000).toFixed(1)} min\n`,
  );
}

/** The driver: runs the jobs (unless `--summary-only`), then writes the summary and the overlay. */
export async function runBench<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  paths: BenchPaths,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const args = parseDriverArgs(argv, bench.budgetName);
  if (!args.summaryOnly) {
    await mkdir(args.out, { recursive: true });
    await runJobs(bench, paths, args);
  }
  if (!existsSync(args.out))
    throw new ConfigError(
      `${args.out}: no runs to summarize; run the bench first (without --summary-only)`,
    );
  // A smoke run's summary stays in its output folder; the committed results are the full and
  // long runs': the long budget's go to long/ beside the full run's results.json and results.md.
  const destination = {
    smoke: args.out,
    long: join(paths.packageDir, 'long'),
    full: paths.packageDir,
  }[bench.budgetName];
  await mkdir(destination, { recursive: true });
  const { markdown } = await summarize(bench, args.out, destination, args.seeds);
  process.stdout.write(`${markdown}\n`);
  // Every run's curves in one offline page, with each arm's mean ± 1 sd band over the seeds.
  const overlayRuns = args.seeds
    .flatMap((seed) =>
      Object.keys(ARMS).map((arm) => ({
        dir: join(args.out, `seed-${seed}`, arm),
        arm,
        label: `seed ${seed} ${arm}`,
      })),
    )
    .filter((run) => existsSync(join(run.dir, 'metrics.jsonl')));
  const overlay = await writeOverlayReport(overlayRuns, join(args.out, 'report-compare.html'), {
    title: `GiGPO vs GRPO on ${bench.bench.subject} (${bench.budgetName} budget)`,
  });
  process.stdout.write(`overlay report: ${overlay}\n`);
}
