/**
 * The driver of a benchmark (`pnpm --filter <benchmark> bench`): per seed a warm start, then one
 * job per arm from it, then the final evaluation of the warm start and every arm, each job a
 * separate process (the benchmark's `run.ts`) and `--parallel` of them at a time (default 2, one
 * per core); then `results.json` and `results.md` from the per-job JSON files, and an overlay
 * report of every run's curves. Flags: --arms A,B (default: every arm of the benchmark's `arms`,
 * or of the paper's Table 1 rows, that the runner trains, `defaultArms`), --out DIR (default
 * runs/<budget>: full, long with BENCH_BUDGET=long, table with BENCH_BUDGET=table, regime with
 * BENCH_BUDGET=regime, smoke with BENCH_SMOKE=1), --parallel N,
 * --seeds 0,1,… (default the benchmark's `seeds`, or `SEEDS`), --summary-only, and with it
 * --from A,B (summarize seeds run in other folders, e.g. a table and its replication, into --out).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, dropArgsSeparator } from '@agentrl/core';
import { writeOverlayReport } from '@agentrl/runner';
import {
  type AlgorithmEntry,
  ARMS,
  type BenchBudget,
  comparableBudget,
  type ResolvedBench,
  resolvedAlgorithm,
  SEEDS,
  warmRecipe,
} from './config.ts';
import { parseArms } from './job.ts';
import {
  armFile,
  armRunDir,
  comparableAlgorithm,
  evalEntry,
  evalFile,
  readJsonIfThere,
  recordedAlgorithm,
  seedDir,
  warmFile,
} from './paths.ts';
import { summarize } from './results.ts';
import { seedFolders } from './summarize.ts';

/** Where a benchmark's files are: its job script and the folder its committed results go to. */
export interface BenchPaths {
  /** The benchmark's `run.ts` (one job per process). */
  readonly jobScript: string;
  /** The package folder: full runs write results there, long runs under `long/`. */
  readonly packageDir: string;
}

/** The flags of the driver. */
export interface DriverArgs {
  /** The arms, in the order given (checked: known, registered, each once). */
  readonly arms: readonly string[];
  readonly out: string;
  /**
   * The output folders a `--summary-only` summary reads its seeds from (`--from A,B`: seeds run
   * in separate folders, e.g. a table and its replication, summarized together into `out`);
   * `[out]` unless given.
   */
  readonly from: readonly string[];
  /** Whether `--out` was given: the summary then stays in that folder (beside its jobs). */
  readonly outGiven: boolean;
  readonly parallel: number;
  readonly seeds: readonly number[];
  readonly summaryOnly: boolean;
}

/**
 * Parses the driver's command line; `budgetName` names the default output folder, `defaults` the
 * benchmark's own default arms and seeds (absent: the kit's, `TABLE_1_ARMS` and `SEEDS`).
 */
export function parseDriverArgs(
  argv: readonly string[],
  budgetName: string,
  defaults: { readonly arms?: readonly string[]; readonly seeds?: readonly number[] } = {},
): DriverArgs {
  const { values } = parseArgs({
    args: dropArgsSeparator([...argv]),
    options: {
      arms: { type: 'string' },
      from: { type: 'string' },
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
  const seeds =
    values.seeds === undefined
      ? [...(defaults.seeds ?? SEEDS)]
      : values.seeds.split(',').map(Number);
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s)))
    throw new ConfigError(
      `--seeds ${String(values.seeds)}: give integers separated by commas, e.g. --seeds 0,1,2`,
    );
  const out = resolve(values.out ?? `runs/${budgetName}`);
  const from =
    values.from === undefined
      ? [out]
      : values.from
          .split(',')
          .filter((f) => f !== '')
          .map((f) => resolve(f));
  if (values.from !== undefined && (values['summary-only'] !== true || from.length === 0))
    throw new ConfigError(
      `--from ${values.from}: summarizes seeds already run in other folders, so give it with --summary-only and at least one folder, e.g. --summary-only --from jobs/table-8,jobs/replication-8 --out jobs/pooled`,
    );
  return {
    arms: parseArms(values.arms, defaults.arms),
    from,
    out,
    outGiven: values.out !== undefined,
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
 * Every job of `seeds`, seed by seed: its warm start, its `arms`, its final evaluation. The driver
 * starts the first job whose prerequisites are done, so seeds finish one after another (a run cut
 * short leaves whole seeds) while the other worker starts the next seed's warm start.
 */
export function benchJobs(seeds: readonly number[], arms: readonly string[]): Job[] {
  return seeds.flatMap((seed) => [
    { seed, phase: 'warm', after: [] },
    ...arms.map((phase) => ({ seed, phase, after: [key(seed, 'warm')] })),
    { seed, phase: 'eval', after: arms.map((arm) => key(seed, arm)) },
  ]);
}

/**
 * Whether a job's result is already in the output folder for this very budget: a warm start with
 * the same warm-start recipe; an arm with the same budget and algorithm (its options included); an
 * evaluation with the same budget and episodes that scored every one of `arms` with the algorithm
 * it has now (and per task type where the benchmark counts them). Such jobs are kept, not rerun,
 * so an interrupted benchmark resumes where it stopped; the two-arm runs' files count as the arms
 * they were.
 */
export function alreadyDone<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  out: string,
  job: Job,
  arms: readonly string[],
): boolean {
  if (!resultMatches(bench, out, job, arms)) return false;
  if (job.phase === 'eval') return true;
  // A warm start or an arm is kept with its model files, or when the seed's final evaluation is
  // done (it needs them no more): a results folder committed without its checkpoints resumes by
  // rerunning, for the seeds not yet evaluated, the jobs whose models it lacks (a seed repeats
  // its run exactly).
  const model =
    job.phase === 'warm'
      ? join(seedDir(out, job.seed), 'warm', 'model')
      : join(armRunDir(out, job.seed, job.phase), 'checkpoints');
  return (
    existsSync(model) ||
    resultMatches(bench, out, { seed: job.seed, phase: 'eval', after: [] }, arms)
  );
}

function resultMatches<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  out: string,
  job: Job,
  arms: readonly string[],
): boolean {
  if (job.phase === 'warm') {
    const saved = readJsonIfThere<{ recipe?: unknown }>(warmFile(out, job.seed));
    return (
      saved !== undefined &&
      comparableBudget(saved.recipe) ===
        comparableBudget(warmRecipe(bench.budget, bench.bench.warmFields))
    );
  }
  if (job.phase === 'eval') {
    const saved = readJsonIfThere<{
      budget?: unknown;
      episodes?: unknown;
      results?: Record<string, { algorithm?: unknown; taskTypes?: unknown }>;
    }>(evalFile(out, job.seed, bench.evalStem));
    if (saved === undefined || saved.episodes !== bench.finalEvalEpisodes) return false;
    if (comparableBudget(saved.budget) !== comparableBudget(bench.budget)) return false;
    const results = saved.results ?? {};
    const scored = (name: string) => {
      const r = evalEntry(results, name);
      if (r === undefined) return false;
      if (bench.bench.taskTypes !== undefined && r.taskTypes === undefined) return false;
      if (name === 'warm') return true;
      // The two-arm runs' evaluations recorded no algorithm: their arm files say which it was.
      const algorithm =
        r.algorithm ?? recordedAlgorithm(readJsonIfThere(armFile(out, job.seed, name)) ?? {});
      return (
        comparableAlgorithm(algorithm as AlgorithmEntry | undefined) ===
        comparableAlgorithm(resolvedAlgorithm(name, bench.budget))
      );
    };
    return ['warm', ...arms].every(scored);
  }
  const saved = readJsonIfThere<Parameters<typeof recordedAlgorithm>[0]>(
    armFile(out, job.seed, job.phase),
  );
  return (
    saved !== undefined &&
    comparableBudget(saved.budget) === comparableBudget(bench.budget) &&
    comparableAlgorithm(recordedAlgorithm(saved)) ===
      comparableAlgorithm(resolvedAlgorithm(job.phase, bench.budget))
  );
}

function spawnJob(
  jobScript: string,
  out: string,
  job: Job,
  arms: readonly string[],
): Promise<void> {
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
        '--arms',
        arms.join(','),
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

/**
 * Runs the jobs of `args` not already done (`alreadyDone`) with `start`, `parallel` at a time,
 * each after the jobs it waits for; says on stderr which it kept. Returns the jobs kept and run.
 */
export async function runJobs<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  args: DriverArgs,
  start: (job: Job) => Promise<void>,
): Promise<{ kept: Job[]; ran: Job[] }> {
  const started = performance.now();
  const jobs = benchJobs(args.seeds, args.arms);
  const kept: Job[] = [];
  const ran: Job[] = [];
  process.stderr.write(
    `${jobs.length} jobs: ${args.seeds.length} seeds × (warm start, ${args.arms.join(', ')}, final evaluation), ${args.parallel} at a time, in ${args.out}\n`,
  );
  await runInOrder(jobs, args.parallel, async (job) => {
    if (alreadyDone(bench, args.out, job, args.arms)) {
      kept.push(job);
      process.stderr.write(
        `seed ${job.seed} ${job.phase}: kept the result already in ${args.out}\n`,
      );
    } else {
      await start(job);
      ran.push(job);
    }
  });
  process.stderr.write(
    `all ${jobs.length} jobs done in ${((performance.now() - started) / 60000).toFixed(1)} min (${kept.length} kept)\n`,
  );
  return { kept, ran };
}

/** The driver: runs the jobs (unless `--summary-only`), then writes the summary and the overlay. */
export async function runBench<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  paths: BenchPaths,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const { arms, seeds } = bench.bench;
  const args = parseDriverArgs(argv, bench.budgetName, {
    ...(arms ? { arms } : {}),
    ...(seeds ? { seeds } : {}),
  });
  if (!args.summaryOnly) {
    await mkdir(args.out, { recursive: true });
    await runJobs(bench, args, (job) => spawnJob(paths.jobScript, args.out, job, args.arms));
  }
  for (const folder of args.from)
    if (!existsSync(folder))
      throw new ConfigError(
        `${folder}: no runs to summarize; run the bench first (without --summary-only)`,
      );
  // A smoke, table or regime run's summary, and that of a run given its own --out, stays in its output
  // folder (a table run's committed jobs and summary go where its --out names, e.g. jobs/table-16);
  // otherwise the committed results are the full and long runs': the long budget's go to long/
  // beside the full run's results.json and results.md.
  const destination = args.outGiven
    ? args.out
    : {
        smoke: args.out,
        table: args.out,
        regime: args.out,
        long: join(paths.packageDir, 'long'),
        full: paths.packageDir,
      }[bench.budgetName];
  await mkdir(destination, { recursive: true });
  const { markdown } = await summarize(bench, args.from, destination, args.seeds, args.arms);
  const folderOf = seedFolders(args.from);
  process.stdout.write(`${markdown}\n`);
  // Every run's curves in one offline page, with each arm's mean ± 1 sd band over the seeds.
  const overlayRuns = args.seeds
    .flatMap((seed) =>
      args.arms.map((arm) => ({
        dir: armRunDir(folderOf(seed), seed, arm),
        arm,
        label: `seed ${seed} ${arm}`,
      })),
    )
    .filter((run) => existsSync(join(run.dir, 'metrics.jsonl')));
  // Benchmarks whose arms keep no run folders (their curves live in the job files) have no overlay.
  if (overlayRuns.length === 0) return;
  const overlay = await writeOverlayReport(overlayRuns, join(args.out, 'report-compare.html'), {
    title: `${args.arms.map((a) => ARMS[a]?.label ?? a).join(' vs ')} on ${bench.bench.subject} (${bench.budgetName} budget)`,
  });
  process.stdout.write(`overlay report: ${overlay}\n`);
}
