/**
 * One job of a benchmark, run as its own process by the driver (`runJobCli` in a benchmark's
 * `src/run.ts`):
 *   run.ts --seed N --phase warm --out DIR    warm start (expert demonstrations + SFT), saved to DIR/seed-N/warm
 *   run.ts --seed N --phase ARM --out DIR     RL from that warm start (ARM a key of `ARMS`, e.g. grpo,
 *     gigpo-mean_norm), result to DIR/seed-N/<ARM>.json, run folder DIR/seed-N/<ARM>/
 *   run.ts --seed N --phase eval --arms A,B --out DIR   the warm start and each named arm's final
 *     policy on the final evaluation's held-out episodes (per task type where the benchmark names
 *     them), to DIR/seed-N/eval.json (eval-N.json with BENCH_EVAL_EPISODES=N)
 * Every job records its wall and CPU seconds (the process's, start-up included).
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, dropArgsSeparator, isAgentRLError } from '@agentrl/core';
import { sftStopRule } from '@agentrl/example-demo-kit';
import {
  collectDemonstrations,
  createEstimator,
  type EstimatorName,
  evaluateAgent,
  latestCheckpointDir,
  policyAgent,
  runSft,
  Trainer,
  writeJsonAtomic,
} from '@agentrl/runner';
import {
  ARMS,
  type BenchBudget,
  type Benchmark,
  checkArms,
  defaultArmsOf,
  type ResolvedBench,
  resolvedAlgorithm,
  warmRecipe,
} from './config.ts';
import { armRunDir, evalFile, seedDir as seedDirOf, warmFile } from './paths.ts';

/**
 * What one job does: the seed, the phase (`warm`, an arm's name or `eval`), the output folder, and
 * the arms the `eval` job scores.
 */
export interface JobSpec {
  readonly seed: number;
  readonly phase: string;
  readonly out: string;
  readonly arms: readonly string[];
}

/** The phases of a seed, in the order they can run: warm start, the arms, the final evaluation. */
export const PHASES: readonly string[] = ['warm', ...Object.keys(ARMS), 'eval'];

/** A job's flags: `--seed N --phase P --out DIR [--arms A,B]`. */
const JOB_FLAGS = {
  seed: { type: 'string' },
  phase: { type: 'string' },
  out: { type: 'string' },
  arms: { type: 'string' },
} as const;

/**
 * Why the runner cannot train `arm` now: `createEstimator`'s refusal of the arm's algorithm entry
 * (an estimator `ESTIMATORS` does not register, or one needing a critic the trainer does not
 * train yet), or `undefined` when it can.
 */
export function armRefusal(arm: string): string | undefined {
  const spec = ARMS[arm];
  if (spec === undefined) return `arm "${arm}" is unknown`;
  try {
    createEstimator(spec.algorithm.name as EstimatorName, { ...spec.algorithm.options });
    return undefined;
  } catch (error) {
    if (isAgentRLError(error)) return error.message;
    throw error;
  }
}

/**
 * The arms a run has unless `--arms` picks others: every arm of `candidates` (a benchmark's
 * `arms`; absent: the paper's Table 1 rows, `TABLE_1_ARMS`) the runner can train now, in order.
 */
export function defaultArms(candidates?: readonly string[]): string[] {
  return defaultArmsOf(armRefusal, candidates);
}

/**
 * The arms a comma-separated list names, checked (`checkArms`); absent: {@link defaultArms} of
 * `candidates`.
 */
export function parseArms(text: string | undefined, candidates?: readonly string[]): string[] {
  const names = text === undefined ? defaultArms(candidates) : text.split(',').map((a) => a.trim());
  return checkArms(names, armRefusal);
}

/**
 * Parses a job's command line (`--seed N --phase P --out DIR [--arms A,B]`); `arms` is the
 * benchmark's default arm list (absent: the kit's).
 */
export function parseJobArgs(
  argv: readonly string[],
  defaults: { readonly arms?: readonly string[] } = {},
): JobSpec {
  const { values } = parseArgs({ args: dropArgsSeparator([...argv]), options: JOB_FLAGS });
  const seed = Number(values.seed);
  if (values.seed === undefined || !Number.isInteger(seed))
    throw new ConfigError(`--seed ${String(values.seed)}: give an integer, e.g. --seed 0`);
  const phase = values.phase ?? '';
  if (!PHASES.includes(phase))
    throw new ConfigError(`--phase ${phase}: use one of ${PHASES.join(', ')}`);
  if (phase in ARMS) checkArms([phase], armRefusal);
  return {
    seed,
    phase,
    out: resolve(values.out ?? 'runs'),
    arms: parseArms(values.arms, defaults.arms),
  };
}

/** A validation's metrics as the job records them: wins, episodes and the benchmark's metrics. */
export interface ValidationPoint {
  readonly iteration: number;
  readonly wins: number;
  readonly episodes: number;
  readonly [metric: string]: number;
}

/** The benchmark's own metrics of a metrics record under `prefix` (e.g. `val/env/score`). */
function envMetrics(
  bench: Benchmark<BenchBudget>,
  record: Record<string, unknown>,
  prefix: string,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of bench.metrics ?? []) {
    const value = record[`${prefix}/env/${m.name}`];
    if (typeof value === 'number') out[m.name] = value;
  }
  return out;
}

/** This process's wall seconds since it started and its CPU seconds (user + system, all threads). */
export function processSeconds(): { wallSeconds: number; cpuSeconds: number } {
  const cpu = process.cpuUsage();
  return {
    wallSeconds: Math.round(process.uptime() * 10) / 10,
    cpuSeconds: Math.round((cpu.user + cpu.system) / 1e5) / 10,
  };
}

/** Wins and episodes per task type of an evaluation's episodes, for the benchmark's task types. */
function winsByTaskType(
  bench: Benchmark<BenchBudget>,
  episodes: readonly { readonly taskType: string; readonly won: boolean }[],
): Record<string, { wins: number; episodes: number }> | undefined {
  if (bench.taskTypes === undefined) return undefined;
  const out: Record<string, { wins: number; episodes: number }> = {};
  for (const t of bench.taskTypes) out[t.name] = { wins: 0, episodes: 0 };
  for (const e of episodes) {
    const cell = out[e.taskType] ?? { wins: 0, episodes: 0 };
    out[e.taskType] = cell;
    cell.episodes += 1;
    if (e.won) cell.wins += 1;
  }
  return out;
}

/** Runs one job of the benchmark; progress lines go to stderr. */
export async function runJob<B extends BenchBudget>(
  resolved: ResolvedBench<B>,
  job: JobSpec,
): Promise<void> {
  const { bench, budget: b, finalEvalEpisodes, evalStem } = resolved;
  const { seed, phase, out } = job;
  const seedDir = seedDirOf(out, seed);
  const warmDir = join(seedDir, 'warm');
  const train = bench.trainEnv(b, seed);
  const heldOut = bench.heldOutEnv?.(b, seed);

  const started = performance.now();
  const { tokenizer, model, policy } = await bench.agent(b, seed);
  const log = (text: string) =>
    process.stderr.write(
      `[seed ${seed} ${phase} ${((performance.now() - started) / 1000).toFixed(0)}s] ${text}\n`,
    );
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;

  if (phase === 'warm') {
    await rm(warmDir, { recursive: true, force: true });
    await mkdir(warmDir, { recursive: true });
    const demos = await collectDemonstrations({
      env: train,
      expert: bench.expert(),
      episodes: b.demoEpisodes,
      seed: seed + 5000,
      maxTurns: b.maxTurns,
      formatResponse: (action) => bench.formatResponse(action),
    });
    log(
      `backend ${model.backend}, ${model.numParameters()} parameters; expert won ${demos.wins}/${demos.episodes}, ${demos.demonstrations.length} steps`,
    );
    const losses: number[] = [];
    const stopWhen = sftStopRule(b);
    await runSft({
      policy,
      tokenizer,
      demonstrations: demos.demonstrations,
      steps: b.sftSteps,
      batchSize: b.sftBatch,
      seed,
      ...(stopWhen ? { stopWhen } : {}),
      onStep: (step, m) => {
        losses.push(m.loss ?? Number.NaN);
        if ((step + 1) % 40 === 0)
          log(`sft step ${step + 1}/${b.sftSteps} loss ${(m.loss ?? Number.NaN).toFixed(3)}`);
      },
    });
    await policy.save(join(warmDir, 'model'));
    await writeJsonAtomic(warmFile(out, seed), {
      seed,
      recipe: warmRecipe(b, bench.warmFields),
      parameters: model.numParameters(),
      vocabSize: tokenizer.vocabSize,
      demoSteps: demos.demonstrations.length,
      expertWins: demos.wins,
      sftLossFirst: losses[0],
      sftLossLast: losses.at(-1),
      seconds: seconds(),
      ...processSeconds(),
    });
    log('warm start saved');
    return;
  }

  if (phase === 'eval') {
    // The policy each model ends with, scored on the validation's held-out episodes and more.
    const models: { name: string; dir: string; algorithm?: unknown }[] = [
      { name: 'warm', dir: join(warmDir, 'model') },
    ];
    for (const arm of job.arms) {
      const runDir = armRunDir(out, seed, arm);
      const checkpoint = await latestCheckpointDir(runDir);
      if (checkpoint === undefined)
        throw new ConfigError(
          `seed ${seed} ${arm}: no checkpoint in ${runDir}; run the arm first (--phase ${arm})`,
        );
      models.push({
        name: arm,
        dir: join(checkpoint, 'model'),
        algorithm: resolvedAlgorithm(arm, b),
      });
    }
    const results: Record<string, Record<string, unknown>> = {};
    for (const m of models) {
      await policy.load(m.dir);
      const prefix = `eval-${m.name}`;
      const evaluation = await evaluateAgent({
        env: heldOut ?? train,
        agent: policyAgent(policy, tokenizer, {
          sampling: { maxNewTokens: b.maxNewTokens, temperature: b.valTemperature },
        }),
        episodes: finalEvalEpisodes,
        seed,
        maxTurns: b.maxTurns,
        prefix,
      });
      const taskTypes = winsByTaskType(bench, evaluation.result.episodes);
      results[m.name] = {
        wins: evaluation.success.wins,
        episodes: evaluation.success.n,
        ...envMetrics(bench, evaluation.metrics, prefix),
        ...(taskTypes ? { taskTypes } : {}),
        // Each episode won (1) or not (0), in the order of the held-out games, which every
        // model of the seed plays alike: the per-game pairs that measure the evaluation's noise.
        outcomes: evaluation.result.episodes.map((e) => (e.won ? '1' : '0')).join(''),
        ...(m.algorithm ? { algorithm: m.algorithm } : {}),
        model: m.dir.slice(seedDir.length + 1),
      };
      log(`${m.name}: ${evaluation.success.wins}/${evaluation.success.n} held-out episodes won`);
    }
    await writeJsonAtomic(evalFile(out, seed, evalStem), {
      seed,
      budget: b,
      episodes: finalEvalEpisodes,
      results,
      seconds: seconds(),
      ...processSeconds(),
    });
    return;
  }

  const algorithm = resolvedAlgorithm(phase, b);
  await policy.load(join(warmDir, 'model'));
  const runDir = join(seedDir, phase);
  await rm(runDir, { recursive: true, force: true });
  await mkdir(runDir, { recursive: true });
  const trainer = new Trainer({
    policy,
    tokenizer,
    trainEnv: train,
    ...(heldOut ? { valEnv: heldOut } : {}),
    // `checkArms` has checked that the runner trains the arm's estimator.
    estimator: createEstimator(algorithm.name as EstimatorName, { ...algorithm.options }),
    runDir,
    seed,
    rollout: {
      batchSize: b.groups * b.groupSize,
      groupSize: b.groupSize,
      maxTurns: b.maxTurns,
      maxNewTokens: b.maxNewTokens,
      temperature: b.temperature,
    },
    training: {
      iterations: b.iterations,
      miniBatchSize: b.miniBatchSize,
      dropZeroAdvantageRows: true,
      checkpointEvery: 0,
    },
    validation: { episodes: b.valEpisodes, every: b.valEvery, temperature: b.valTemperature },
    onEvent: (event) => {
      if (event.type === 'iteration')
        log(
          `iteration ${event.iteration} train success ${String(event.metrics['train/success'] ?? '')} val ${String(event.metrics['val/success'] ?? '-')}`,
        );
    },
  });
  await trainer.run();
  const rows = readFileSync(trainer.metricsPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const validation: ValidationPoint[] = [];
  const trainCurve: {
    iteration: number;
    success: number | undefined;
    zeroFraction: number | undefined;
    stepGroupSizeMean: number | undefined;
    stepGroupSingletonFraction: number | undefined;
    stepGroupOneActionFraction: number | undefined;
  }[] = [];
  for (const r of rows) {
    const iteration = num(r.iteration) ?? validation.length;
    const wins = num(r['val/wins']);
    const episodes = num(r['val/episodes']);
    if (wins !== undefined && episodes !== undefined)
      validation.push({ iteration, wins, episodes, ...envMetrics(bench, r, 'val') });
    trainCurve.push({
      iteration,
      success: num(r['train/success']),
      zeroFraction: num(r['advantage/zeroFraction']),
      stepGroupSizeMean: num(r['stepGroups/sizeMean']),
      stepGroupSingletonFraction: num(r['stepGroups/singletonFraction']),
      stepGroupOneActionFraction: num(r['stepGroups/oneActionFraction']),
    });
  }
  const result = {
    seed,
    arm: phase,
    budget: b,
    label: ARMS[phase]?.label,
    algorithm,
    validation,
    train: trainCurve,
    seconds: seconds(),
    ...processSeconds(),
  };
  await writeFile(join(seedDir, `${phase}.json`), `${JSON.stringify(result, null, 2)}\n`);
  log(
    `done: validation ${validation.map((v) => `${v.iteration}:${v.wins}/${v.episodes}`).join(' ')}`,
  );
}

/** A benchmark's `run.ts`: one job from the command line, with the budget of the environment. */
export async function runJobCli<B extends BenchBudget>(
  bench: ResolvedBench<B>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  await runJob(bench, parseJobArgs(argv, bench.bench.arms ? { arms: bench.bench.arms } : {}));
}
