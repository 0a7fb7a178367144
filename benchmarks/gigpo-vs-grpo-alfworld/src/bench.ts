/**
 * `pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench` — runs every job of the benchmark
 * (per seed: a warm start, then a GiGPO arm and a GRPO arm from it, then the final evaluation of
 * all three on more held-out games) as separate processes, two at
 * a time (one per core), then writes results.json and results.md from the per-run JSON files.
 * Flags: --out DIR (default runs/<budget>: full, long with BENCH_BUDGET=long, smoke with
 * BENCH_SMOKE=1; git-ignored), --parallel N (default 2), --summary-only.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dropArgsSeparator } from '@agentrl/core';
import { writeOverlayReport } from '@agentrl/runner';
import { ARMS, BUDGET, BUDGET_NAME, FINAL_EVAL_EPISODES, SEEDS, warmRecipe } from './config.ts';
import { summarize } from './summarize.ts';

const { values } = parseArgs({
  args: dropArgsSeparator(process.argv.slice(2)),
  options: {
    out: { type: 'string' },
    parallel: { type: 'string' },
    'summary-only': { type: 'boolean' },
  },
});
const out = resolve(values.out ?? `runs/${BUDGET_NAME}`);
const parallel = Number(values.parallel ?? 2);
const here = new URL('.', import.meta.url).pathname;

interface Job {
  readonly seed: number;
  readonly phase: string;
  /** Jobs that must finish first. */
  readonly after?: readonly string[];
}
const key = (seed: number, phase: string) => `${seed}/${phase}`;
const jobs: Job[] = [
  ...SEEDS.map((seed) => ({ seed, phase: 'warm' })),
  ...SEEDS.flatMap((seed) =>
    Object.keys(ARMS).map((phase) => ({ seed, phase, after: [key(seed, 'warm')] })),
  ),
  ...SEEDS.map((seed) => ({
    seed,
    phase: 'eval',
    after: Object.keys(ARMS).map((arm) => key(seed, arm)),
  })),
];

/**
 * Whether a job's result is already in the output folder for this very budget (a warm start with
 * the same warm-start recipe, an arm with the same budget): such jobs are kept, not rerun, so an
 * interrupted benchmark resumes and arms can be added to existing warm starts.
 */
function alreadyDone(job: Job): boolean {
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
  if (job.phase === 'eval' && saved.episodes !== FINAL_EVAL_EPISODES) return false;
  const expected = job.phase === 'warm' ? warmRecipe(BUDGET) : BUDGET;
  const recorded = job.phase === 'warm' ? saved.recipe : saved.budget;
  return JSON.stringify(recorded) === JSON.stringify(expected);
}

function runJob(job: Job): Promise<void> {
  if (alreadyDone(job)) {
    process.stderr.write(`seed ${job.seed} ${job.phase}: kept the result already in ${out}\n`);
    return Promise.resolve();
  }
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@agentrl/source',
        '--disable-warning=ExperimentalWarning',
        join(here, 'run.ts'),
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

if (!values['summary-only']) {
  const started = performance.now();
  const finished = new Set<string>();
  const pending = [...jobs];
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = pending.findIndex((j) => (j.after ?? []).every((k) => finished.has(k)));
      if (index < 0) {
        if (pending.length === 0) return;
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const [job] = pending.splice(index, 1) as [Job];
      await runJob(job);
      finished.add(key(job.seed, job.phase));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  process.stderr.write(
    `all ${jobs.length} jobs done in ${((performance.now() - started) / 60000).toFixed(1)} min\n`,
  );
}
if (!existsSync(out)) throw new Error(`${out}: no runs to summarize; run the bench first`);
// A smoke run's summary stays in its output folder; the committed results are the full and long runs'.
// The long budget's summary goes to long/ beside the full run's results.json and results.md.
const destination = {
  smoke: out,
  long: resolve(here, '..', 'long'),
  full: resolve(here, '..'),
}[BUDGET_NAME];
await mkdir(destination, { recursive: true });
const { markdown } = await summarize(out, destination);
process.stdout.write(`${markdown}\n`);
// Every run's curves in one offline page, with each arm's mean ± 1 sd band over the seeds.
const overlayRuns = SEEDS.flatMap((seed) =>
  Object.keys(ARMS).map((arm) => ({
    dir: join(out, `seed-${seed}`, arm),
    arm,
    label: `seed ${seed} ${arm}`,
  })),
).filter((run) => existsSync(join(run.dir, 'metrics.jsonl')));
const overlay = await writeOverlayReport(overlayRuns, join(out, 'report-compare.html'), {
  title: `GiGPO vs GRPO on generated ALFWorld households (${BUDGET_NAME} budget)`,
});
process.stdout.write(`overlay report: ${overlay}\n`);
