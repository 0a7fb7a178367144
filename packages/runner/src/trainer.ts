/**
 * The training loop, as verl-agent's trainer: grouped rollout → advantages → PPO mini-batch updates,
 * validation every k iterations, metrics to sinks, atomic checkpoints and exact resume.
 *
 * Every random choice derives from (seed, iteration, phase), and the model's state is restored
 * from the checkpoint, so a run resumed from iteration k repeats what the uninterrupted run did.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { filterGroupsWithEqualRewards } from '@agentrl/algorithms';
import {
  ConfigError,
  type Critic,
  DataError,
  logProbMismatch,
  type Policy,
  type StepRecord,
  stepBatchFromRecords,
  type TrainBatch,
} from '@agentrl/core';
import { z } from 'zod';
import { policyAgent, rolloutAgentOptions } from './agent.ts';
import {
  batchDivisibilityProblem,
  configErrorOf,
  type TrainerSettings,
  trainerSettingsSchema,
} from './config.ts';
import { engineGenerator } from './engine-generator.ts';
import { appendLineSync, readJson, writeDirAtomic, writeJsonAtomic } from './files.ts';
import {
  averageMetrics,
  episodeMetrics,
  type Metrics,
  policyShiftMetrics,
  sampledNegLogProb,
  stepGroupMetrics,
} from './metrics.ts';
import { createRunCritic, ppoAdvantages, updateCritic } from './ppo-critic.ts';
import { EnvPool, type EpisodeSummary, type RolloutResult } from './rollout.ts';
import { writeSamples } from './samples.ts';
import { mean, summary } from './stats.ts';

export type {
  AdvantageEstimator,
  CriticEstimatorSettings,
  TrainerEvent,
  TrainerOptions,
  TrainerPhase,
} from './trainer-options.ts';

import {
  type CriticEstimatorSettings,
  checkTrainerKeys,
  type TrainerOptions,
} from './trainer-options.ts';

/** Sub-folder of a checkpoint holding the critic of a PPO run. */
export const CRITIC_DIR = 'critic';

const stateSchema = z.object({
  version: z.literal(1),
  nextIteration: z.number().int().nonnegative(),
  metricsLines: z.number().int().nonnegative(),
  seed: z.number().int(),
});
type TrainerState = z.infer<typeof stateSchema>;

const latestSchema = z.object({ checkpoint: z.string().min(1) });

/** Summary of a finished (or resumed-and-finished) training run. */
export interface TrainingSummary {
  readonly iterations: number;
  readonly finalMetrics: Metrics | undefined;
  readonly resumedFrom: number | undefined;
}

/**
 * The folder of the latest checkpoint a {@link Trainer} wrote in `runDir` (its `model/` holds the
 * policy, `state.json` the trainer state), or undefined when the run has none; a
 * `checkpoints/latest.json` that is not a checkpoint pointer is a `DataError`.
 */
export async function latestCheckpointDir(runDir: string): Promise<string | undefined> {
  const root = join(runDir, 'checkpoints');
  const latestPath = join(root, 'latest.json');
  if (!existsSync(latestPath)) return undefined;
  const latest = latestSchema.safeParse(await readJson(latestPath));
  if (!latest.success) {
    throw new DataError(`${latestPath} is not a checkpoint pointer; delete it or start a new run`, {
      details: { field: 'checkpoint' },
    });
  }
  return join(root, latest.data.checkpoint);
}

/** The GiGPO / GRPO / RLOO / PPO trainer. */
export class Trainer {
  readonly #o: TrainerOptions;
  /** The critic of a PPO run (created or given at the start of {@link Trainer.run}). */
  #critic: Critic | undefined;
  /** Whether the trainer created (and so disposes) the critic. */
  #ownsCritic = false;
  /** The settings, parsed: every default filled in. */
  readonly #s: TrainerSettings;
  readonly #trainPool: EnvPool;
  readonly #valPool: EnvPool;

  constructor(options: TrainerOptions) {
    checkTrainerKeys(options);
    const { seed, runDir, rollout, training, validation, report, env } = options;
    const parsed = trainerSettingsSchema.safeParse({
      seed,
      runDir,
      rollout,
      training,
      validation,
      report,
      env,
    });
    if (!parsed.success) throw configErrorOf(parsed.error, trainerSettingsSchema);
    const divisibility = batchDivisibilityProblem(parsed.data.rollout);
    if (divisibility !== undefined)
      throw new ConfigError(divisibility, {
        details: { field: 'rollout.batchSize', value: parsed.data.rollout.batchSize },
      });
    this.#s = parsed.data;
    this.#o = options;
    const engineName = parsed.data.rollout.engine.name;
    if (engineName !== 'tfjs' && options.rolloutEngine === undefined) {
      throw new ConfigError(
        `rollout.engine.name is ${engineName}, but no rolloutEngine was given to the Trainer; create it (agentrl train does) or set rollout.engine.name to tfjs`,
        { details: { field: 'rollout.engine.name', value: engineName } },
      );
    }
    if (options.rolloutEngine !== undefined && options.policy.scoreResponses === undefined) {
      throw new ConfigError(
        'a rollout engine needs a policy with scoreResponses (the old log-probs are recomputed by the trained policy); use the tfjs policy or set rollout.engine.name to tfjs',
        { details: { field: 'rollout.engine.name', value: engineName } },
      );
    }
    this.#trainPool = new EnvPool(options.trainEnv, options.logger);
    this.#valPool = new EnvPool(options.valEnv ?? options.trainEnv, options.logger);
  }

  /** Task groups per rollout: the batch's env slots over the group size. */
  get #groups(): number {
    return this.#s.rollout.batchSize / this.#s.rollout.groupSize;
  }

  get metricsPath(): string {
    return join(this.#s.runDir, 'metrics.jsonl');
  }

  /** Runs validation alone (group size 1, seed + 1000) and returns its metrics and rollout. */
  async validate(
    policy: Policy = this.#o.policy,
  ): Promise<{ metrics: Metrics; result: RolloutResult }> {
    const o = this.#o;
    const s = this.#s;
    const agent = policyAgent(
      policy,
      o.tokenizer,
      rolloutAgentOptions(s.rollout, s.validation.temperature),
    );
    const t0 = performance.now();
    // The held-out games are the same at every validation (rollout index 0), so curves compare.
    const result = await this.#valPool.rollout(agent, {
      groups: s.validation.episodes,
      groupSize: 1,
      seed: s.seed + 1000,
      rolloutIndex: 0,
      maxTurns: s.rollout.maxTurns,
      samplingSeed: s.seed + 1000,
      idPrefix: 'val',
      stepTimeoutMs: s.env.stepTimeoutMs,
    });
    const metrics = episodeMetrics('val', result);
    metrics['time/validate'] = (performance.now() - t0) / 1000;
    return { metrics, result };
  }

  async #rollout(
    iteration: number,
  ): Promise<{ records: StepRecord[]; result: RolloutResult[]; metrics: Metrics }> {
    const o = this.#o;
    const s = this.#s;
    const engine = o.rolloutEngine;
    const engineMetrics: Metrics = {};
    const reported = { logProbs: true };
    let generator: Policy = o.policy;
    if (engine !== undefined) {
      // The weights after `iteration` updates are version `iteration`.
      const t0 = performance.now();
      const dir = join(s.runDir, 'engine-weights');
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await o.policy.save(dir);
      await engine.syncWeights({ version: iteration, checkpointDir: dir });
      await rm(dir, { recursive: true, force: true });
      engineMetrics['time/engineSync'] = (performance.now() - t0) / 1000;
      generator = engineGenerator(engine, iteration, reported);
    }
    const agent = policyAgent(
      generator,
      o.tokenizer,
      rolloutAgentOptions(s.rollout, s.rollout.temperature),
    );
    const dyn = s.training.dynamicSampling.enabled;
    const maxTries = dyn ? s.training.dynamicSampling.maxTries : 1;
    const target = s.rollout.batchSize;
    let kept: StepRecord[] = [];
    const results: RolloutResult[] = [];
    let keptTrajectories = 0;
    let droppedGroups = 0;
    for (let attempt = 0; attempt < maxTries; attempt++) {
      const result = await this.#trainPool.rollout(agent, {
        groups: this.#groups,
        groupSize: s.rollout.groupSize,
        seed: s.seed,
        rolloutIndex: iteration * maxTries + attempt,
        maxTurns: s.rollout.maxTurns,
        samplingSeed: s.seed * 7919 + iteration * 101 + attempt,
        idPrefix: `it${iteration}-t${attempt}`,
        stepTimeoutMs: s.env.stepTimeoutMs,
      });
      results.push(result);
      const last = attempt === maxTries - 1;
      // Dynamic sampling (DAPO): a group whose episode rewards are all equal carries no signal; the
      // last try keeps all. Episodes come in slot order: trajectory k is in group ⌊k / groupSize⌋.
      const keptIndices = filterGroupsWithEqualRewards({
        episodeRewards: result.episodes.map((e) => e.episodeReward),
        groupSize: s.rollout.groupSize,
        lastTry: !dyn || last,
      });
      const keepGroup = new Set<string>();
      for (const k of keptIndices) keepGroup.add((result.episodes[k] as EpisodeSummary).groupId);
      keptTrajectories += keptIndices.length;
      droppedGroups += this.#groups - keepGroup.size;
      for (const r of result.records) if (keepGroup.has(r.groupId)) kept.push(r);
      if (keptTrajectories >= target) break;
    }
    const first = results[0] as RolloutResult;
    const merged: RolloutResult = {
      records: kept,
      episodes: results.flatMap((r) => r.episodes),
      envFailures: results.reduce((s, r) => s + r.envFailures, 0),
      promptTruncations: results.reduce((s, r) => s + r.promptTruncations, 0),
      generateMs: results.reduce((s, r) => s + r.generateMs, 0),
      envMs: results.reduce((s, r) => s + r.envMs, 0),
    };
    const metrics = episodeMetrics('train', dyn ? merged : first);
    metrics['time/generate'] = merged.generateMs / 1000;
    metrics['time/env'] = merged.envMs / 1000;
    if (dyn) {
      metrics['dynamicSampling/tries'] = results.length;
      metrics['dynamicSampling/droppedGroups'] = droppedGroups;
    }
    if (engine !== undefined && o.policy.scoreResponses !== undefined && kept.length > 0) {
      // As verl does: the old log-probs are the trained policy's, recomputed in batched
      // forwards; the engine's own are kept only to measure how far they are.
      const t0 = performance.now();
      const scores = await o.policy.scoreResponses({
        promptTokenIds: kept.map((r) => r.promptTokenIds),
        responseTokenIds: kept.map((r) => r.responseTokenIds),
      });
      if (reported.logProbs) {
        const gap = logProbMismatch(
          kept.map((r) => r.responseLogProbs),
          scores.logProbs,
        );
        engineMetrics['rollout/engineLogProbAbsDiff'] = gap.meanAbs;
        engineMetrics['rollout/engineLogProbAbsDiffMax'] = gap.maxAbs;
        engineMetrics['rollout/engineProbAbsDiff'] = gap.meanAbsProb;
      }
      kept = kept.map((r, i) => ({ ...r, responseLogProbs: scores.logProbs[i] as number[] }));
      engineMetrics['time/recomputeLogProbs'] = (performance.now() - t0) / 1000;
    }
    Object.assign(metrics, engineMetrics);
    return { records: kept, result: results, metrics };
  }

  async #update(
    records: readonly StepRecord[],
    advantages: ArrayLike<number>,
    tokenAdvantages?: readonly (readonly number[])[],
  ): Promise<Metrics> {
    const o = this.#o;
    const s = this.#s;
    const rows: number[] = [];
    for (let i = 0; i < records.length; i++) {
      // With per-token advantages (PPO) a row carries nothing only when every token's is 0.
      const zero =
        tokenAdvantages !== undefined
          ? (tokenAdvantages[i] as readonly number[]).every((a) => a === 0)
          : advantages[i] === 0;
      if (s.training.dropZeroAdvantageRows && zero) continue;
      rows.push(i);
    }
    const size = s.training.miniBatchSize;
    const epochs = s.training.ppoEpochs;
    const perBatch: Record<string, number>[] = [];
    for (let epoch = 0; epoch < epochs; epoch++) {
      // Reference: no shuffling of mini-batches (`shuffle: False` in the paper's run).
      for (let start = 0; start < rows.length; start += size) {
        const chosen = rows.slice(start, start + size);
        const batch: TrainBatch = {
          promptTokenIds: chosen.map((i) => (records[i] as StepRecord).promptTokenIds),
          responseTokenIds: chosen.map((i) => (records[i] as StepRecord).responseTokenIds),
          oldLogProbs: chosen.map((i) => (records[i] as StepRecord).responseLogProbs),
          advantages: chosen.map((i) => advantages[i] as number),
          ...(tokenAdvantages !== undefined
            ? { tokenAdvantages: chosen.map((i) => tokenAdvantages[i] as readonly number[]) }
            : {}),
        };
        perBatch.push(await o.policy.trainStep(batch));
      }
    }
    const avg = averageMetrics(perBatch);
    const out: Metrics = {};
    for (const [k, v] of Object.entries(avg)) out[`update/${k}`] = v;
    out['update/rows'] = rows.length;
    out['update/keptFraction'] = records.length === 0 ? 0 : rows.length / records.length;
    out['update/miniBatches'] = perBatch.length;
    out['update/optimizerSteps'] = perBatch.filter((m) => !(m.skipped === 1)).length;
    const norms = perBatch.map((m) => m.gradNorm).filter((v): v is number => v !== undefined);
    if (norms.length > 0) out['update/gradNormMax'] = Math.max(...norms);
    if (o.policy.scoreResponses !== undefined && rows.length > 0) {
      // The rows' sampling log-probs are the policy before this iteration's update.
      const t0 = performance.now();
      const picked = rows.map((i) => records[i] as StepRecord);
      const scores = await o.policy.scoreResponses({
        promptTokenIds: picked.map((r) => r.promptTokenIds),
        responseTokenIds: picked.map((r) => r.responseTokenIds),
      });
      Object.assign(
        out,
        policyShiftMetrics(
          picked.map((r) => r.responseLogProbs),
          scores.logProbs,
          scores.entropies,
        ),
      );
      out['time/policyShift'] = (performance.now() - t0) / 1000;
    }
    return out;
  }

  /** The critic a PPO estimator needs: the given one, else the policy's `createCritic`. */
  async #startCritic(settings: CriticEstimatorSettings): Promise<Critic> {
    if (this.#o.critic !== undefined) return this.#o.critic;
    const critic = await createRunCritic(this.#o.policy, settings, this.#s.seed);
    this.#ownsCritic = true;
    return critic;
  }

  async #checkpoint(state: TrainerState): Promise<string> {
    const o = this.#o;
    const s = this.#s;
    const root = join(s.runDir, 'checkpoints');
    const name = `iter-${String(state.nextIteration).padStart(6, '0')}`;
    const dir = join(root, name);
    await writeDirAtomic(dir, async (tmp) => {
      const modelDir = join(tmp, 'model');
      await mkdir(modelDir, { recursive: true });
      await o.policy.save(modelDir);
      if (this.#critic !== undefined) {
        const criticDir = join(tmp, CRITIC_DIR);
        await mkdir(criticDir, { recursive: true });
        await this.#critic.save(criticDir);
      }
      await writeJsonAtomic(join(tmp, 'state.json'), state);
    });
    await writeJsonAtomic(join(root, 'latest.json'), { checkpoint: name });
    const keep = s.training.keepCheckpoints;
    const all = (await readdir(root)).filter((n) => /^iter-\d+$/.test(n)).sort();
    for (const old of all.slice(0, Math.max(0, all.length - keep)))
      await rm(join(root, old), { recursive: true, force: true });
    return dir;
  }

  /** Reads the latest checkpoint of the run folder, or undefined when there is none. */
  async #readLatest(): Promise<{ dir: string; state: TrainerState } | undefined> {
    const dir = await latestCheckpointDir(this.#s.runDir);
    if (dir === undefined) return undefined;
    const state = stateSchema.safeParse(await readJson(join(dir, 'state.json')));
    if (!state.success) {
      throw new DataError(`${dir}/state.json is not a trainer state: ${state.error.message}`, {
        details: { field: 'state' },
      });
    }
    return { dir, state: state.data };
  }

  /**
   * Trains. With `resume`, continues from the latest checkpoint of the run folder (model,
   * optimizer, iteration, metrics file cut back to what the checkpoint had seen).
   */
  async run(options: { resume?: boolean } = {}): Promise<TrainingSummary> {
    const o = this.#o;
    const s = this.#s;
    await mkdir(s.runDir, { recursive: true });
    const ppoSettings = o.estimator.critic;
    // The critic starts as a copy of the policy the RL phase starts from (verl: the same checkpoint).
    if (ppoSettings !== undefined && this.#critic === undefined)
      this.#critic = await this.#startCritic(ppoSettings);
    let start = 0;
    let metricsLines = 0;
    let resumedFrom: number | undefined;
    if (options.resume) {
      const latest = await this.#readLatest();
      if (latest) {
        if (latest.state.seed !== s.seed) {
          throw new ConfigError(
            `seed ${s.seed} differs from the checkpoint's seed ${latest.state.seed}; resume with --seed ${latest.state.seed}`,
            { details: { field: 'seed', value: s.seed } },
          );
        }
        await o.policy.load(join(latest.dir, 'model'));
        if (this.#critic !== undefined) {
          const criticDir = join(latest.dir, CRITIC_DIR);
          if (!existsSync(criticDir)) {
            throw new DataError(
              `${latest.dir} has no ${CRITIC_DIR}/ folder, and this run trains a critic (algorithm.name ppo); resume with the algorithm the run was started with, or start a new run`,
              { details: { field: 'checkpoint', path: criticDir } },
            );
          }
          await this.#critic.load(criticDir);
        }
        start = latest.state.nextIteration;
        metricsLines = latest.state.metricsLines;
        resumedFrom = start;
        // Lines written after the checkpoint are replayed by the resumed run: cut them.
        const kept = existsSync(this.metricsPath)
          ? readFileSync(this.metricsPath, 'utf8')
              .split('\n')
              .filter((l) => l.length > 0)
              .slice(0, metricsLines)
          : [];
        writeFileSync(this.metricsPath, kept.map((l) => `${l}\n`).join(''));
        o.onEvent?.({ type: 'resumed', iteration: start });
      }
    }
    if (resumedFrom === undefined) writeFileSync(this.metricsPath, '');
    const valEvery = s.validation.every;
    const checkpointEvery = s.training.checkpointEvery;
    let finalMetrics: Metrics | undefined;
    try {
      for (let iteration = start; iteration < s.training.iterations; iteration++) {
        const metrics: Metrics = { iteration };
        const tIter = performance.now();
        if (valEvery > 0 && iteration % valEvery === 0) {
          o.onEvent?.({ type: 'phase', iteration, phase: 'validate' });
          const val = await this.validate();
          Object.assign(metrics, val.metrics);
          await writeSamples(
            s.runDir,
            `val-${iteration}`,
            iteration,
            val.result,
            s.report.sampleTrajectories,
          );
        }
        o.onEvent?.({ type: 'phase', iteration, phase: 'rollout' });
        let t0 = performance.now();
        const rollout = await this.#rollout(iteration);
        Object.assign(metrics, rollout.metrics);
        metrics['time/rollout'] = (performance.now() - t0) / 1000;
        await writeSamples(
          s.runDir,
          `train-${iteration}`,
          iteration,
          rollout.result[0] as RolloutResult,
          s.report.sampleTrajectories,
        );

        o.onEvent?.({ type: 'phase', iteration, phase: 'advantage' });
        t0 = performance.now();
        const records = rollout.records;
        const critic = this.#critic;
        const ppo =
          ppoSettings !== undefined && critic !== undefined && records.length > 0
            ? await ppoAdvantages(critic, ppoSettings, records, this.#s.rollout.maxNewTokens)
            : undefined;
        const advantages =
          ppo !== undefined
            ? ppo.rowAdvantages
            : records.length > 0 && ppoSettings === undefined
              ? o.estimator(stepBatchFromRecords(records))
              : [];
        if (advantages.length !== records.length) {
          throw new DataError(
            `the advantage estimator returned ${advantages.length} values for ${records.length} rows; it must return one per row`,
            { details: { field: 'estimator' } },
          );
        }
        metrics['time/advantage'] = (performance.now() - t0) / 1000;
        Object.assign(metrics, stepGroupMetrics(records));
        // PPO: the statistics are over response tokens (the whitened advantages the actor sees).
        const advList = ppo !== undefined ? ppo.tokenAdvantages.flat() : Array.from(advantages);
        const adv = summary(advList);
        metrics['advantage/mean'] = adv.mean;
        metrics['advantage/min'] = adv.min;
        metrics['advantage/max'] = adv.max;
        metrics['advantage/zeroFraction'] =
          advList.length === 0 ? 0 : mean(advList.map((a) => (a === 0 ? 1 : 0)));
        metrics['train/negLogProb'] = sampledNegLogProb(records);

        o.onEvent?.({ type: 'phase', iteration, phase: 'update' });
        t0 = performance.now();
        if (ppo !== undefined && critic !== undefined && ppoSettings !== undefined) {
          const values = ppo.values.flat();
          metrics['critic/valuesMean'] = values.length === 0 ? 0 : mean(values);
          metrics['critic/returnsMean'] = mean(
            ppo.returns.flatMap((row, i) =>
              row.slice(0, (records[i] as StepRecord).responseTokenIds.length),
            ),
          );
          // verl: the critic first, then the actor once critic_warmup <= global_step (1-based).
          Object.assign(metrics, await updateCritic(critic, records, ppo, this.#s.training));
          metrics['time/updateCritic'] = (performance.now() - t0) / 1000;
          if (ppoSettings.resolved.criticWarmup <= iteration + 1)
            Object.assign(metrics, await this.#update(records, advantages, ppo.tokenAdvantages));
          else metrics['update/criticWarmup'] = 1;
        } else {
          Object.assign(metrics, await this.#update(records, advantages));
        }
        metrics['time/update'] = (performance.now() - t0) / 1000;
        metrics['time/iteration'] = (performance.now() - tIter) / 1000;

        appendLineSync(this.metricsPath, JSON.stringify(metrics));
        metricsLines++;
        finalMetrics = metrics;
        o.onEvent?.({ type: 'iteration', iteration, metrics });

        const isLast = iteration === s.training.iterations - 1;
        if (isLast || (checkpointEvery > 0 && (iteration + 1) % checkpointEvery === 0)) {
          o.onEvent?.({ type: 'phase', iteration, phase: 'checkpoint' });
          const dir = await this.#checkpoint({
            version: 1,
            nextIteration: iteration + 1,
            metricsLines,
            seed: s.seed,
          });
          o.onEvent?.({ type: 'checkpoint', iteration, dir });
        }
      }
      if (valEvery > 0) {
        // Final validation, after the last update; a run resumed after the last checkpoint redoes it.
        const iteration = s.training.iterations;
        o.onEvent?.({ type: 'phase', iteration, phase: 'validate' });
        const val = await this.validate();
        const metrics: Metrics = { iteration, final: 1, ...val.metrics };
        await writeSamples(
          s.runDir,
          `val-${iteration}`,
          iteration,
          val.result,
          s.report.sampleTrajectories,
        );
        appendLineSync(this.metricsPath, JSON.stringify(metrics));
        finalMetrics = metrics;
        o.onEvent?.({ type: 'iteration', iteration, metrics });
      }
    } finally {
      await this.close();
    }
    return { iterations: s.training.iterations, finalMetrics, resumedFrom };
  }

  /** Closes the environment pools (and frees a critic the trainer created). */
  async close(): Promise<void> {
    await Promise.all([this.#trainPool.close(), this.#valPool.close()]);
    if (this.#ownsCritic) {
      this.#critic?.dispose?.();
      this.#critic = undefined;
      this.#ownsCritic = false;
    }
  }
}
