/**
 * One job of the benchmark, run as its own process:
 *   run.ts --seed N --phase warm --out DIR   warm start (expert demos + SFT), saved to DIR/seed-N/warm
 *   run.ts --seed N --phase gigpo|grpo --out DIR   RL from that warm start, result to DIR/seed-N/<arm>.json
 *   run.ts --seed N --phase eval --out DIR   the warm start and each arm's final policy on
 *     FINAL_EVAL_EPISODES held-out games, to DIR/seed-N/eval.json
 */

import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createTinyAgent,
  envSpec,
  expertPolicy,
  expertResponse,
} from '@agentrl/example-alfworld-gigpo';
import {
  collectDemonstrations,
  createEstimator,
  type EnvSpec,
  evaluateAgent,
  latestCheckpointDir,
  policyAgent,
  runSft,
  Trainer,
  writeJsonAtomic,
} from '@agentrl/runner';
import { ARMS, BUDGET as B, FINAL_EVAL_EPISODES, warmRecipe } from './config.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    phase: { type: 'string' },
    out: { type: 'string' },
  },
});
const seed = Number(values.seed);
const phase = values.phase ?? '';
if (!Number.isInteger(seed))
  throw new Error(`--seed ${values.seed}: give an integer, e.g. --seed 0`);
if (phase !== 'warm' && phase !== 'eval' && !(phase in ARMS))
  throw new Error(`--phase ${phase}: use warm, ${Object.keys(ARMS).join(', ')} or eval`);
const out = resolve(values.out ?? 'runs');
const seedDir = join(out, `seed-${seed}`);
const warmDir = join(seedDir, 'warm');

const spec: EnvSpec = envSpec(B.maxTurns);

const started = performance.now();
const { tokenizer, model, policy } = await createTinyAgent(B, seed);
const log = (text: string) =>
  process.stderr.write(
    `[seed ${seed} ${phase} ${((performance.now() - started) / 1000).toFixed(0)}s] ${text}\n`,
  );

if (phase === 'warm') {
  await rm(warmDir, { recursive: true, force: true });
  await mkdir(warmDir, { recursive: true });
  const demos = await collectDemonstrations({
    env: spec,
    expert: expertPolicy(),
    episodes: B.demoEpisodes,
    seed: seed + 5000,
    maxTurns: B.maxTurns,
    formatResponse: expertResponse,
  });
  log(
    `backend ${model.backend}, ${model.numParameters()} parameters; expert won ${demos.wins}/${demos.episodes}, ${demos.demonstrations.length} steps`,
  );
  const losses: number[] = [];
  await runSft({
    policy,
    tokenizer,
    demonstrations: demos.demonstrations,
    steps: B.sftSteps,
    batchSize: B.sftBatch,
    seed,
    onStep: (step, m) => {
      losses.push(m.loss ?? Number.NaN);
      if ((step + 1) % 40 === 0)
        log(`sft step ${step + 1}/${B.sftSteps} loss ${(m.loss ?? Number.NaN).toFixed(3)}`);
    },
  });
  await policy.save(join(warmDir, 'model'));
  await writeJsonAtomic(join(warmDir, 'warm.json'), {
    seed,
    recipe: warmRecipe(B),
    parameters: model.numParameters(),
    vocabSize: tokenizer.vocabSize,
    demoSteps: demos.demonstrations.length,
    expertWins: demos.wins,
    sftLossFirst: losses[0],
    sftLossLast: losses.at(-1),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  });
  log('warm start saved');
} else if (phase === 'eval') {
  // The policy each model ends with, scored on the same held-out games as the validation and more.
  const models = [{ name: 'warm', dir: join(warmDir, 'model') }];
  for (const arm of Object.keys(ARMS)) {
    const checkpoint = await latestCheckpointDir(join(seedDir, arm));
    if (checkpoint === undefined)
      throw new Error(
        `seed ${seed} ${arm}: no checkpoint in ${join(seedDir, arm)}; run the arm first`,
      );
    models.push({ name: arm, dir: join(checkpoint, 'model') });
  }
  const results: Record<string, { wins: number; episodes: number; model: string }> = {};
  for (const m of models) {
    await policy.load(m.dir);
    const evaluation = await evaluateAgent({
      env: spec,
      agent: policyAgent(policy, tokenizer, {
        sampling: { maxNewTokens: B.maxNewTokens, temperature: B.valTemperature },
      }),
      episodes: FINAL_EVAL_EPISODES,
      seed,
      maxTurns: B.maxTurns,
      prefix: `eval-${m.name}`,
    });
    results[m.name] = {
      wins: evaluation.success.wins,
      episodes: evaluation.success.n,
      model: m.dir.slice(seedDir.length + 1),
    };
    log(`${m.name}: ${evaluation.success.wins}/${evaluation.success.n} held-out games won`);
  }
  await writeJsonAtomic(join(seedDir, 'eval.json'), {
    seed,
    budget: B,
    episodes: FINAL_EVAL_EPISODES,
    results,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  });
} else {
  const arm = ARMS[phase] as (typeof ARMS)[string];
  await policy.load(join(warmDir, 'model'));
  const runDir = join(seedDir, phase);
  await rm(runDir, { recursive: true, force: true });
  await mkdir(runDir, { recursive: true });
  const trainer = new Trainer({
    policy,
    tokenizer,
    trainEnv: spec,
    estimator: createEstimator(arm.name, {
      ...arm.options,
      invalidActionPenalty: B.invalidActionPenalty,
    }),
    runDir,
    seed,
    rollout: {
      batchSize: B.groups * B.groupSize,
      groupSize: B.groupSize,
      maxTurns: B.maxTurns,
      maxNewTokens: B.maxNewTokens,
      temperature: B.temperature,
    },
    training: {
      iterations: B.iterations,
      miniBatchSize: B.miniBatchSize,
      dropZeroAdvantageRows: true,
      checkpointEvery: 0,
    },
    validation: { episodes: B.valEpisodes, every: B.valEvery, temperature: B.valTemperature },
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
  const validation: { iteration: number; wins: number; episodes: number }[] = [];
  const train: {
    iteration: number;
    success: number | undefined;
    zeroFraction: number | undefined;
    stepGroupSizeMean: number | undefined;
    stepGroupSingletonFraction: number | undefined;
  }[] = [];
  for (const r of rows) {
    const iteration = num(r.iteration) ?? validation.length;
    const wins = num(r['val/wins']);
    const episodes = num(r['val/episodes']);
    if (wins !== undefined && episodes !== undefined)
      validation.push({ iteration, wins, episodes });
    train.push({
      iteration,
      success: num(r['train/success']),
      zeroFraction: num(r['advantage/zeroFraction']),
      stepGroupSizeMean: num(r['stepGroups/sizeMean']),
      stepGroupSingletonFraction: num(r['stepGroups/singletonFraction']),
    });
  }
  const result = {
    seed,
    arm: phase,
    budget: B,
    estimator: arm,
    validation,
    train,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  await writeFile(join(seedDir, `${phase}.json`), `${JSON.stringify(result, null, 2)}\n`);
  log(
    `done: validation ${validation.map((v) => `${v.iteration}:${v.wins}/${v.episodes}`).join(' ')}`,
  );
}
