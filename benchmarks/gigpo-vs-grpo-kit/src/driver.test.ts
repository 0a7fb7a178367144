import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { ConfigError } from '@agentrl/core';
import { CPU_RECIPE } from '@agentrl/example-demo-kit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ARMS,
  type BenchBudget,
  type Benchmark,
  benchBudgets,
  budgetName,
  checkArms,
  FINAL_EVAL_EPISODES,
  resolveBench,
  resolvedAlgorithm,
  SEEDS,
  TABLE_1_ARMS,
  TABLE_ITERATIONS,
  tableBudget,
  warmRecipe,
  withOverrides,
} from './config.ts';
import {
  alreadyDone,
  benchJobs,
  type Job,
  parseDriverArgs,
  runInOrder,
  runJobs,
} from './driver.ts';
import { armRefusal, defaultArms, PHASES, parseJobArgs } from './job.ts';

const DEFAULT_ARMS = defaultArms();

const root = mkdtempSync(join(tmpdir(), 'agentrl-bench-driver-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The demos' CPU recipe with a catalogue size of its own (as the WebShop benchmark's). */
const budget = (over: Partial<BenchBudget & { catalogue: number }> = {}) => ({
  ...CPU_RECIPE,
  demoEpisodes: 400,
  sftSteps: 480,
  iterations: 16,
  valEpisodes: 96,
  valEvery: 4,
  maxTurns: 15,
  maxNewTokens: 22,
  invalidActionPenalty: 0,
  catalogue: 1000,
  ...over,
});
type Budget = ReturnType<typeof budget>;

/** The parts of a benchmark the budget resolution reads; the env parts are never called here. */
const bench = {
  workload: () => 'test',
  subject: 'test',
  budgets: {
    full: budget(),
    smoke: budget({ hidden: 32, iterations: 2 }),
    long: budget({ iterations: 48 }),
  },
  warmFields: ['catalogue'],
} as unknown as Benchmark<Budget>;

describe('the budget of a process', () => {
  it('is picked by BENCH_SMOKE and BENCH_BUDGET, full by default', () => {
    expect(budgetName({})).toBe('full');
    expect(budgetName({ BENCH_BUDGET: 'long' })).toBe('long');
    expect(budgetName({ BENCH_SMOKE: '1', BENCH_BUDGET: 'long' })).toBe('smoke');
    expect(budgetName({ BENCH_BUDGET: '' })).toBe('full');
    expect(budgetName({ BENCH_BUDGET: 'table' })).toBe('table');
    expect(budgetName({ BENCH_BUDGET: 'full' })).toBe('full');
    expect(budgetName({ BENCH_SMOKE: '1', BENCH_BUDGET: 'table' })).toBe('smoke');
    const smoke = resolveBench(bench, { BENCH_SMOKE: '1' });
    expect(smoke.budget.hidden).toBe(32);
    expect(smoke.finalEvalEpisodes).toBe(FINAL_EVAL_EPISODES.smoke);
  });

  it('scores the final evaluation on BENCH_EVAL_EPISODES episodes, beside the budget-sized one, and refuses a count that is not one', () => {
    const plain = resolveBench(bench, {});
    expect([plain.finalEvalEpisodes, plain.evalStem, plain.resultsStem]).toEqual([
      FINAL_EVAL_EPISODES.full,
      'eval',
      'results',
    ]);
    const larger = resolveBench(bench, { BENCH_EVAL_EPISODES: '1920' });
    expect([larger.finalEvalEpisodes, larger.evalStem, larger.resultsStem]).toEqual([
      1920,
      'eval-1920',
      'results-1920',
    ]);
    // The budget's own size is the plain files, however it is asked for; the budget is untouched.
    expect(resolveBench(bench, { BENCH_EVAL_EPISODES: '480' }).evalStem).toBe('eval');
    expect(larger.budget).toEqual(plain.budget);
    for (const asked of ['0', '-5', '2.5', 'many'])
      expect(() => resolveBench(bench, { BENCH_EVAL_EPISODES: asked })).toThrow(
        new RegExp(`^BENCH_EVAL_EPISODES=${asked}: give a whole number of held-out episodes`),
      );
  });

  it('refuses a BENCH_BUDGET that names no budget instead of running the full one, naming the budgets', () => {
    for (const asked of ['tabel', 'Full', 'short']) {
      expect(() => budgetName({ BENCH_BUDGET: asked })).toThrow(ConfigError);
      expect(() => resolveBench(bench, { BENCH_BUDGET: asked })).toThrow(
        new RegExp(
          `^BENCH_BUDGET=${asked}: no such budget.*\\(budgets: full, long, table, regime, smoke; unset: full\\)$`,
        ),
      );
    }
    expect(() => budgetName({ BENCH_BUDGET: 'tabel' })).toThrow(/did you mean "table"\?/);
  });

  it('refuses BENCH_BUDGET=table on a benchmark without a table budget, in one line naming the budgets it has', () => {
    expect(bench.budgets.table).toBeUndefined();
    let message = '';
    try {
      resolveBench(bench, { BENCH_BUDGET: 'table' });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toBe(
      'BENCH_BUDGET=table: the benchmark on test has no table budget (its budgets: full, long, smoke)',
    );
    expect(() => resolveBench(bench, { BENCH_BUDGET: 'regime' })).toThrow(
      'BENCH_BUDGET=regime: the benchmark on test has no regime budget (its budgets: full, long, smoke)',
    );
  });

  it("resolves a benchmark's regime budget, scored on 480 episodes, its jobs in runs/regime unless --out says where", () => {
    const withRegime: typeof bench = {
      ...bench,
      budgets: { ...bench.budgets, regime: { ...budget(), maxTurns: 30 } },
    };
    const r = resolveBench(withRegime, { BENCH_BUDGET: 'regime', BENCH_SET: 'maxTurns=50' });
    expect([r.budgetName, r.budget.maxTurns, r.finalEvalEpisodes]).toEqual(['regime', 50, 480]);
    expect(parseDriverArgs([], r.budgetName).out).toBe(join(process.cwd(), 'runs', 'regime'));
  });

  it("resolves a benchmark's table budget: the demo's recipe with 8 iterations, validated every 4 on 96 episodes, scored on 480", () => {
    const demo = { ...budget({ iterations: 40, valEpisodes: 480, valEvery: 20 }), name: 'full' };
    const table = tableBudget(demo, { shape: [1, 2] as const });
    const { name: _name, iterations: _i, valEvery: _e, valEpisodes: _v, ...recipe } = demo;
    expect(table).toEqual({
      ...recipe,
      iterations: TABLE_ITERATIONS,
      valEvery: 4,
      valEpisodes: 96,
      shape: [1, 2],
      invalidActionPenalty: 0,
    });
    expect(TABLE_ITERATIONS).toBe(8);
    expect(tableBudget(demo, {}, 32).valEvery).toBe(16);
    expect(tableBudget(demo, { valEvery: 2 }).valEvery).toBe(2);
    const withTable = {
      ...bench,
      budgets: { ...bench.budgets, table: { ...budget(), iterations: 16, catalogue: 500 } },
      workload: (b: Budget) => `${b.catalogue} products`,
    } as unknown as Benchmark<Budget>;
    const r = resolveBench(withTable, { BENCH_BUDGET: 'table' });
    expect([r.budgetName, r.budget.catalogue, r.finalEvalEpisodes]).toEqual(['table', 500, 480]);
    expect(FINAL_EVAL_EPISODES.table).toBe(FINAL_EVAL_EPISODES.full);
    expect(withTable.workload(r.budget)).toBe('500 products');
    expect(bench.workload(r.budget)).toBe('test');
    expect(resolveBench(withTable, {}).budget.catalogue).toBe(1000);
    // Its jobs go to runs/table unless --out says where.
    expect(parseDriverArgs([], r.budgetName).out).toBe(join(process.cwd(), 'runs', 'table'));
    expect(parseDriverArgs(['--out', 'jobs/table-16'], r.budgetName)).toMatchObject({
      out: join(process.cwd(), 'jobs', 'table-16'),
      outGiven: true,
    });
  });

  it("validates five times whatever the demo's iteration count, and runs three times the iterations on the long budget", () => {
    for (const iterations of [16, 32, 64]) {
      const budgets = benchBudgets({ ...budget({ iterations }), name: 'full' }, {}, {});
      expect(budgets.full.iterations / budgets.full.valEvery).toBe(4);
      expect(budgets.full.valEpisodes).toBe(96);
      expect(budgets.long.iterations).toBe(3 * iterations);
      expect(warmRecipe(budgets.long)).toEqual(warmRecipe(budgets.full));
      expect(budgets.smoke.iterations).toBeLessThan(iterations);
    }
  });

  it('takes BENCH_SET overrides of numeric fields', () => {
    const r = resolveBench(bench, { BENCH_SET: 'temperature=1,learningRate=3e-4' });
    expect(r.budget.temperature).toBe(1);
    expect(r.budget.learningRate).toBe(3e-4);
    expect(r.budget.groups).toBe(32);
  });

  it('refuses an unknown field or a value that is not a number, naming the valid fields', () => {
    for (const text of ['temprature=1', 'temperature=hot', 'temperature']) {
      expect(() => withOverrides(budget(), text)).toThrow(ConfigError);
      expect(() => withOverrides(budget(), text)).toThrow(/BENCH_SET .*fields: hidden, layers/);
    }
  });

  it('refuses to change a field that is not a number, listing only the number fields', () => {
    const shaped = { ...budget(), optionGroups: [1, 2] as const, layout: 'title-first' };
    for (const text of ['optionGroups=3', 'layout=1', 'iterations=8,optionGroups=1']) {
      expect(() => withOverrides(shaped, text)).toThrow(ConfigError);
      expect(() => withOverrides(shaped, text)).toThrow(
        /^BENCH_SET (optionGroups|layout)=\S+: \1 is not a number field; BENCH_SET changes numbers only \(fields: hidden, .*catalogue\)$/,
      );
    }
    expect(withOverrides(shaped, 'iterations=8')).toEqual({ ...shaped, iterations: 8 });
  });

  it("records in the warm start's recipe the fields it depends on, the benchmark's own included", () => {
    const recipe = warmRecipe(budget(), ['catalogue']);
    expect(Object.keys(recipe)).toEqual([
      'hidden',
      'layers',
      'heads',
      'demoEpisodes',
      'sftSteps',
      'sftBatch',
      'sftLearningRate',
      'maxTurns',
      'catalogue',
    ]);
    expect([recipe.hidden, recipe.sftSteps, recipe.catalogue]).toEqual([
      CPU_RECIPE.hidden,
      480,
      1000,
    ]);
    expect(warmRecipe(budget({ iterations: 3 }), ['catalogue'])).toEqual(recipe);
    // A field the budget leaves unset is not recorded; one that is not a number is, as it is.
    expect(Object.keys(warmRecipe(budget(), ['catalogue', 'optionGroups']))).toEqual(
      Object.keys(recipe),
    );
    expect(
      warmRecipe({ ...budget(), optionGroups: [1, 2] as const }, ['catalogue', 'optionGroups']),
    ).toEqual({ ...recipe, optionGroups: [1, 2] });
  });
});

describe('the arms', () => {
  it("are the paper's Table 1 rows in its order, then GiGPO with similar anchors, each a run-config algorithm entry, and PPO is one more entry", () => {
    expect(TABLE_1_ARMS).toEqual(['ppo', 'rloo', 'grpo', 'gigpo-mean_std_norm', 'gigpo-mean_norm']);
    expect(Object.keys(ARMS)).toEqual([...TABLE_1_ARMS, 'gigpo-sim0.9']);
    expect(ARMS['gigpo-sim0.9']?.algorithm).toEqual({
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        gamma: 0.95,
        stepAdvantageWeight: 1,
        similarityThreshold: 0.9,
      },
    });
    expect(ARMS['gigpo-mean_norm']?.algorithm).toEqual({
      name: 'gigpo',
      options: { mode: 'mean_norm', gamma: 0.95, stepAdvantageWeight: 1 },
    });
    expect(ARMS.ppo?.algorithm.name).toBe('ppo');
    // The default arms are every Table 1 arm the runner trains now, in the table's order: the
    // four critic-free ones at least, and PPO once the trainer trains a critic.
    expect(DEFAULT_ARMS).toEqual(TABLE_1_ARMS.filter((a) => armRefusal(a) === undefined));
    expect(DEFAULT_ARMS).not.toContain('gigpo-sim0.9');
    expect(DEFAULT_ARMS).toEqual(
      expect.arrayContaining(['rloo', 'grpo', 'gigpo-mean_std_norm', 'gigpo-mean_norm']),
    );
    expect(resolvedAlgorithm('rloo', budget({ invalidActionPenalty: 0.1 }))).toEqual({
      name: 'rloo',
      options: { invalidActionPenalty: 0.1 },
    });
  });

  it('are picked with --arms; an unknown one is refused with the closest name, one without a registered estimator saying so', () => {
    expect(parseDriverArgs(['--arms', 'grpo,gigpo-mean_norm'], 'full').arms).toEqual([
      'grpo',
      'gigpo-mean_norm',
    ]);
    expect(parseDriverArgs([], 'full').arms).toEqual(DEFAULT_ARMS);
    expect(() => parseDriverArgs(['--arms', 'grpo,gigpo-mean-norm'], 'full')).toThrow(
      /--arms: unknown arm "gigpo-mean-norm"; did you mean "gigpo-mean_norm"\? \(arms: ppo, rloo, grpo, gigpo-mean_std_norm, gigpo-mean_norm, gigpo-sim0\.9\)/,
    );
    expect(() => parseDriverArgs(['--arms', 'gigpo'], 'full')).toThrow(
      /unknown arm "gigpo"; did you mean "gigpo-mean_std_norm"/,
    );
    expect(() => parseDriverArgs(['--arms', 'grpo,grpo'], 'full')).toThrow(/named twice/);
    const noPpo = (arm: string) => (arm === 'ppo' ? 'no critic here' : undefined);
    expect(() => checkArms(['grpo', 'ppo'], noPpo)).toThrow(
      '--arms: arm "ppo" (PPO (with critic)) cannot be trained: no critic here; leave it out, e.g. --arms rloo,grpo,gigpo-mean_std_norm,gigpo-mean_norm',
    );
    expect(checkArms(['ppo'], () => undefined)).toEqual(['ppo']);
    // The runner's own reason, should it refuse PPO.
    const why = armRefusal('ppo');
    if (why !== undefined) {
      expect(why).toMatch(/ppo/);
      expect(() => parseDriverArgs(['--arms', 'ppo'], 'full')).toThrow(why);
      expect(() => parseJobArgs(['--seed', '0', '--phase', 'ppo'])).toThrow(/cannot be trained/);
    }
  });

  it("default to a benchmark's own arm list and seeds where it names them, the Table 1 rows and SEEDS where it does not", () => {
    const own = { arms: ['grpo', 'gigpo-sim0.9'], seeds: [200, 201] };
    expect(parseDriverArgs([], 'full', own)).toMatchObject(own);
    expect(parseDriverArgs([], 'full', {})).toMatchObject({ arms: DEFAULT_ARMS, seeds: SEEDS });
    expect(parseDriverArgs(['--arms', 'grpo', '--seeds', '3'], 'full', own)).toMatchObject({
      arms: ['grpo'],
      seeds: [3],
    });
    expect(parseJobArgs(['--seed', '200', '--phase', 'warm'], { arms: own.arms }).arms).toEqual(
      own.arms,
    );
    expect(defaultArms(own.arms)).toEqual(own.arms);
    expect(defaultArms()).toEqual(DEFAULT_ARMS);
  });
});

/** A job's files as the job writes them, for `resolved`'s budget (what `alreadyDone` reads). */
function writeJob(
  resolved: ReturnType<typeof resolveBench<Budget>>,
  out: string,
  job: Job,
  arms: readonly string[],
): void {
  const dir = join(out, `seed-${job.seed}`);
  mkdirSync(join(dir, 'warm'), { recursive: true });
  // the model files the job leaves (a warm start's model, an arm's checkpoints)
  if (job.phase === 'warm') mkdirSync(join(dir, 'warm', 'model'), { recursive: true });
  else if (job.phase !== 'eval')
    mkdirSync(join(dir, job.phase, 'checkpoints'), { recursive: true });
  if (job.phase === 'warm')
    writeFileSync(
      join(dir, 'warm', 'warm.json'),
      JSON.stringify({ recipe: warmRecipe(resolved.budget, ['catalogue']) }),
    );
  else if (job.phase === 'eval')
    writeFileSync(
      join(dir, `${resolved.evalStem}.json`),
      JSON.stringify({
        budget: resolved.budget,
        episodes: resolved.finalEvalEpisodes,
        results: Object.fromEntries([
          ['warm', { wins: 1, episodes: 8 }],
          ...arms.map((arm) => [
            arm,
            { wins: 1, episodes: 8, algorithm: resolvedAlgorithm(arm, resolved.budget) },
          ]),
        ]),
      }),
    );
  else
    writeFileSync(
      join(dir, `${job.phase}.json`),
      JSON.stringify({
        budget: resolved.budget,
        algorithm: resolvedAlgorithm(job.phase, resolved.budget),
      }),
    );
}

describe('the jobs', () => {
  it('run every phase of every seed once, each after the jobs it waits for', () => {
    const jobs = benchJobs(SEEDS, DEFAULT_ARMS);
    expect(jobs).toHaveLength(SEEDS.length * (DEFAULT_ARMS.length + 2));
    expect(PHASES).toEqual(['warm', ...Object.keys(ARMS), 'eval']);
    const seen = new Set<string>();
    for (const job of jobs) {
      for (const before of job.after) expect(seen.has(before)).toBe(true);
      seen.add(`${job.seed}/${job.phase}`);
    }
    const evalJob = jobs.find((j) => j.seed === 3 && j.phase === 'eval');
    expect(evalJob?.after).toEqual(DEFAULT_ARMS.map((arm) => `3/${arm}`));
    // Every arm of a seed starts from that seed's one warm start.
    for (const arm of DEFAULT_ARMS)
      expect(jobs.find((j) => j.seed === 3 && j.phase === arm)?.after).toEqual(['3/warm']);
  });

  it('finish seed by seed with two workers: a seed is evaluated before the seed after next starts', async () => {
    const started: string[] = [];
    const done = new Set<string>();
    await runInOrder(benchJobs([0, 1, 2, 3], DEFAULT_ARMS), 2, async (job) => {
      for (const before of job.after) expect(done.has(before)).toBe(true);
      started.push(`${job.seed}/${job.phase}`);
      await Promise.resolve();
      done.add(`${job.seed}/${job.phase}`);
    });
    expect(started).toHaveLength(4 * (DEFAULT_ARMS.length + 2));
    expect(started.slice(0, 2)).toEqual(['0/warm', '1/warm']);
    for (const seed of [0, 1])
      expect(started.indexOf(`${seed}/eval`)).toBeLessThan(started.indexOf(`${seed + 2}/warm`));
  });

  it('stop at the first job that fails', async () => {
    const started: string[] = [];
    const run = runInOrder(benchJobs([0, 1], DEFAULT_ARMS), 2, async (job) => {
      started.push(`${job.seed}/${job.phase}`);
      if (job.seed === 0 && job.phase === 'rloo') throw new Error('rloo failed');
    });
    await expect(run).rejects.toThrow('rloo failed');
    expect(started).not.toContain('0/eval');
  });

  it('keep a result written for the same budget and algorithm and redo one written for another', () => {
    const out = join(root, 'resume');
    const resolved = resolveBench(bench, {});
    const arms = ['grpo', 'gigpo-mean_norm'];
    const warm = { seed: 0, phase: 'warm', after: [] };
    const gigpo = { seed: 0, phase: 'gigpo-mean_norm', after: ['0/warm'] };
    const evalJob = { seed: 0, phase: 'eval', after: ['0/grpo', '0/gigpo-mean_norm'] };
    expect(alreadyDone(resolved, out, warm, arms)).toBe(false);
    for (const job of [warm, gigpo, evalJob]) writeJob(resolved, out, job, arms);
    expect(alreadyDone(resolved, out, warm, arms)).toBe(true);
    expect(alreadyDone(resolved, out, gigpo, arms)).toBe(true);
    expect(alreadyDone(resolved, out, evalJob, arms)).toBe(true);
    // An evaluation that did not score an arm the run has now is redone; one that scored more is kept.
    expect(alreadyDone(resolved, out, evalJob, [...arms, 'rloo'])).toBe(false);
    expect(alreadyDone(resolved, out, evalJob, ['grpo'])).toBe(true);
    // Another RL recipe keeps the warm start (same warm-start fields) and redoes the arms.
    const other = resolveBench(bench, { BENCH_SET: 'temperature=1' });
    expect(alreadyDone(other, out, warm, arms)).toBe(true);
    expect(alreadyDone(other, out, gigpo, arms)).toBe(false);
    expect(alreadyDone(other, out, evalJob, arms)).toBe(false);
    // A larger final evaluation keeps every training job and redoes only the evaluation, into
    // its own file: the budget-sized one stays, and both count as done once both are written.
    const larger = resolveBench(bench, { BENCH_EVAL_EPISODES: '1920' });
    expect(alreadyDone(larger, out, warm, arms)).toBe(true);
    expect(alreadyDone(larger, out, gigpo, arms)).toBe(true);
    expect(alreadyDone(larger, out, evalJob, arms)).toBe(false);
    writeJob(larger, out, evalJob, arms);
    expect(alreadyDone(larger, out, evalJob, arms)).toBe(true);
    expect(alreadyDone(resolved, out, evalJob, arms)).toBe(true);
    // Another invalid-action penalty is another algorithm: the arm is redone.
    const penalty = resolveBench(bench, { BENCH_SET: 'invalidActionPenalty=0.1' });
    writeFileSync(
      join(out, 'seed-0', 'gigpo-mean_norm.json'),
      JSON.stringify({
        budget: penalty.budget,
        algorithm: resolvedAlgorithm('gigpo-mean_norm', resolved.budget),
      }),
    );
    expect(alreadyDone(penalty, out, gigpo, arms)).toBe(false);
    // Another catalogue changes the warm start too.
    expect(alreadyDone(resolveBench(bench, { BENCH_SET: 'catalogue=60' }), out, warm, arms)).toBe(
      false,
    );
  });

  it('rerun a kept job whose model files are gone while its seed still needs them, and keep it once the seed is evaluated', () => {
    const out = join(root, 'committed-results');
    const resolved = resolveBench(bench, {});
    const arms = ['grpo'];
    const warm = { seed: 0, phase: 'warm', after: [] };
    const grpo = { seed: 0, phase: 'grpo', after: ['0/warm'] };
    const evalJob = { seed: 0, phase: 'eval', after: ['0/grpo'] };
    for (const job of [warm, grpo]) writeJob(resolved, out, job, arms);
    // as a fresh clone has a committed results folder: the JSON files without the models
    rmSync(join(out, 'seed-0', 'warm', 'model'), { recursive: true });
    rmSync(join(out, 'seed-0', 'grpo', 'checkpoints'), { recursive: true });
    expect(alreadyDone(resolved, out, warm, arms)).toBe(false);
    expect(alreadyDone(resolved, out, grpo, arms)).toBe(false);
    writeJob(resolved, out, evalJob, arms);
    expect(alreadyDone(resolved, out, warm, arms)).toBe(true);
    expect(alreadyDone(resolved, out, grpo, arms)).toBe(true);
    expect(alreadyDone(resolved, out, evalJob, arms)).toBe(true);
  });

  it("count a two-arm run's gigpo files as the gigpo-mean_std_norm arm", () => {
    const out = join(root, 'two-arm');
    const resolved = resolveBench(bench, {});
    const dir = join(out, 'seed-0');
    mkdirSync(dir, { recursive: true });
    const { name, options } = ARMS['gigpo-mean_std_norm']?.algorithm ?? { name: '', options: {} };
    writeFileSync(
      join(dir, 'gigpo.json'),
      JSON.stringify({ budget: resolved.budget, estimator: { name, options } }),
    );
    writeFileSync(
      join(dir, 'grpo.json'),
      JSON.stringify({
        budget: resolved.budget,
        estimator: { name: 'grpo', options: { normalizeByStd: true } },
      }),
    );
    for (const legacy of ['gigpo', 'grpo'])
      mkdirSync(join(dir, legacy, 'checkpoints'), { recursive: true });
    const arms = ['gigpo-mean_std_norm', 'grpo'];
    for (const arm of arms)
      expect(alreadyDone(resolved, out, { seed: 0, phase: arm, after: [] }, arms)).toBe(true);
    expect(alreadyDone(resolved, out, { seed: 0, phase: 'gigpo-mean_norm', after: [] }, arms)).toBe(
      false,
    );
  });

  it('resume: a rerun keeps every finished job, and a run cut short reruns only what it had not finished', async () => {
    const out = join(root, 'resume-run');
    const resolved = resolveBench(bench, {});
    const args = parseDriverArgs(['--seeds', '0,1', '--out', out], 'full');
    const all = benchJobs([0, 1], DEFAULT_ARMS).map((j) => `${j.seed}/${j.phase}`);
    // The first run stops at seed 1's gigpo-mean_std_norm arm.
    const first: string[] = [];
    await expect(
      runJobs(resolved, args, async (job) => {
        if (job.seed === 1 && job.phase === 'gigpo-mean_std_norm') throw new Error('killed');
        first.push(`${job.seed}/${job.phase}`);
        writeJob(resolved, out, job, args.arms);
      }),
    ).rejects.toThrow('killed');
    expect(first).toContain('0/eval');
    expect(first).not.toContain('1/eval');
    const second = await runJobs(resolved, args, async (job) =>
      writeJob(resolved, out, job, args.arms),
    );
    const ran = second.ran.map((j) => `${j.seed}/${j.phase}`);
    expect(ran).toContain('1/gigpo-mean_std_norm');
    expect(ran).toContain('1/eval');
    for (const done of first) expect(ran).not.toContain(done);
    expect([...first, ...ran].sort()).toEqual([...all].sort());
    // Once all are done, nothing runs.
    const third = await runJobs(resolved, args, async () => {
      throw new Error('nothing should run');
    });
    expect(third.ran).toEqual([]);
    expect(third.kept).toHaveLength(all.length);
  });

  it('keep results recorded before the stopping-rule fields existed while the rule is off, and redo them once it is on', () => {
    const out = join(root, 'before-stop-rule');
    const resolved = resolveBench(bench, {});
    const dir = join(out, 'seed-0');
    mkdirSync(join(dir, 'warm', 'model'), { recursive: true });
    mkdirSync(join(dir, 'grpo', 'checkpoints'), { recursive: true });
    const {
      sftStopLoss: _loss,
      sftStopWindow: _window,
      ...older
    } = resolved.budget as Record<string, unknown>;
    const olderRecipe = warmRecipe(resolved.budget, ['catalogue']);
    expect(Object.keys(olderRecipe)).not.toContain('sftStopLoss');
    writeFileSync(join(dir, 'warm', 'warm.json'), JSON.stringify({ recipe: olderRecipe }));
    // Fields in another order, as an older budget object wrote them.
    const reordered = Object.fromEntries(Object.entries(older).reverse());
    writeFileSync(
      join(dir, 'grpo.json'),
      JSON.stringify({ budget: reordered, algorithm: resolvedAlgorithm('grpo', resolved.budget) }),
    );
    const warm = { seed: 0, phase: 'warm', after: [] };
    const grpo = { seed: 0, phase: 'grpo', after: ['0/warm'] };
    expect(alreadyDone(resolved, out, warm, ['grpo'])).toBe(true);
    expect(alreadyDone(resolved, out, grpo, ['grpo'])).toBe(true);
    const withRule = resolveBench(bench, { BENCH_SET: 'sftStopLoss=0.25' });
    expect(warmRecipe(withRule.budget)).toMatchObject({ sftStopLoss: 0.25, sftStopWindow: 50 });
    expect(alreadyDone(withRule, out, warm, ['grpo'])).toBe(false);
    expect(alreadyDone(withRule, out, grpo, ['grpo'])).toBe(false);
  });

  it('are named on the command line, and a wrong seed, phase or flag is refused with the fix', () => {
    expect(parseJobArgs(['--seed', '3', '--phase', 'grpo', '--out', '/tmp/x'])).toEqual({
      seed: 3,
      phase: 'grpo',
      out: '/tmp/x',
      arms: DEFAULT_ARMS,
    });
    expect(parseJobArgs(['--seed', '3', '--phase', 'eval', '--arms', 'rloo,grpo']).arms).toEqual([
      'rloo',
      'grpo',
    ]);
    expect(() => parseJobArgs(['--seed', 'x', '--phase', 'warm'])).toThrow(
      /--seed x: give an integer/,
    );
    expect(() => parseJobArgs(['--seed', '0', '--phase', 'gigpo'])).toThrow(
      /--phase gigpo: use one of warm, ppo, rloo, grpo, gigpo-mean_std_norm, gigpo-mean_norm, gigpo-sim0\.9, eval/,
    );
    expect(parseDriverArgs(['--seeds', '0,2', '--parallel', '1'], 'full')).toMatchObject({
      seeds: [0, 2],
      parallel: 1,
      summaryOnly: false,
    });
    expect(parseDriverArgs([], 'smoke').out).toMatch(/runs\/smoke$/);
    const pooled = parseDriverArgs(
      ['--summary-only', '--from', 'jobs/a,jobs/b', '--out', 'jobs/ab'],
      'full',
    );
    expect(pooled.from.map((f) => relative(process.cwd(), f))).toEqual([
      join('jobs', 'a'),
      join('jobs', 'b'),
    ]);
    expect(relative(process.cwd(), pooled.out)).toBe(join('jobs', 'ab'));
    expect(parseDriverArgs(['--out', 'jobs/ab'], 'full').from).toEqual([resolve('jobs/ab')]);
    expect(() => parseDriverArgs(['--from', 'jobs/a'], 'full')).toThrow(
      /--from jobs\/a: .*give it with --summary-only/,
    );
    expect(() => parseDriverArgs(['--seeds', '0,a'], 'full')).toThrow(ConfigError);
    expect(() => parseDriverArgs(['--parallel', '0'], 'full')).toThrow(/--parallel 0/);
  });
});
