/**
 * The training loop (spec §9–§11): grouped rollout → advantages → PPO mini-batch updates,
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
  DataError,
  type Policy,
  type StepBatch,
  type StepRecord,
  stepBatchFromRecords,
  type Tokenizer,
  type TrainablePolicy,
  type TrainBatch,
} from '@agentrl/core';
import { z } from 'zod';
import { policyAgent } from './agent.ts';
import { appendLineSync, readJson, writeDirAtomic, writeJsonAtomic } from './files.ts';
import type { Logger } from './logger.ts';
import {
  averageMetrics,
  episodeMetrics,
  type Metrics,
  policyShiftMetrics,
  sampledNegLogProb,
  stepGroupMetrics,
} from './metrics.ts';
import { EnvPool, type EnvSpec, type EpisodeSummary, type RolloutResult } from './rollout.ts';
import { writeSamples } from './samples.ts';
import { mean, summary } from './stats.ts';

/** Advantage estimator: one advantage per row of the batch (from `@agentrl/algorithms`). */
export type AdvantageEstimator = (batch: StepBatch) => ArrayLike<number>;

/** What the trainer reports while it works (the CLI draws progress from these). */
export type TrainerEvent =
  | { readonly type: 'phase'; readonly iteration: number; readonly phase: TrainerPhase }
  | { readonly type: 'iteration'; readonly iteration: number; readonly metrics: Metrics }
  | { readonly type: 'checkpoint'; readonly iteration: number; readonly dir: string }
  | { readonly type: 'resumed'; readonly iteration: number };

export type TrainerPhase = 'validate' | 'rollout' | 'advantage' | 'update' | 'checkpoint';

/** Options of a {@link Trainer}. Defaults follow the paper's run (spec §11.5) where one exists. */
export interface TrainerOptions {
  readonly policy: TrainablePolicy;
  readonly tokenizer: Tokenizer;
  readonly trainEnv: EnvSpec;
  /** Validation environment (a different split); default: `trainEnv`. */
  readonly valEnv?: EnvSpec;
  readonly estimator: AdvantageEstimator;
  /** Run folder: metrics.jsonl, samples/, checkpoints/. */
  readonly runDir: string;
  readonly iterations: number;
  /** Task groups per iteration B. */
  readonly groups: number;
  /** Members per group n. */
  readonly groupSize: number;
  readonly maxTurns: number;
  /** Env seed (spec §9.2); validation uses `seed + 1000`. */
  readonly seed: number;
  readonly maxNewTokens: number;
  readonly maxPromptTokens?: number;
  /** Rollout temperature in training. Default 1. */
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  /** Validation: episodes (group size 1), every k iterations (0 = never), temperature. */
  readonly valEpisodes?: number;
  readonly valEvery?: number;
  readonly valTemperature?: number;
  /** Step samples per PPO mini-batch. Default 256. */
  readonly miniBatchSize?: number;
  /** PPO epochs over the batch. Default 1. */
  readonly ppoEpochs?: number;
  /** Drop rows whose advantage is exactly 0 before the update. Default false. */
  readonly dropZeroAdvantageRows?: boolean;
  /** DAPO-style dynamic sampling (spec §8). Default off. */
  readonly dynamicSampling?: { readonly enabled: boolean; readonly maxTries?: number };
  /** Checkpoint every k iterations (0 = only at the end). Default 1. */
  readonly checkpointEvery?: number;
  /** Checkpoints kept on disk. Default 2. */
  readonly keepCheckpoints?: number;
  /** Trajectories kept per iteration for the report's browser. Default 4. */
  readonly sampleTrajectories?: number;
  readonly stepTimeoutMs?: number;
  readonly logger?: Logger;
  readonly onEvent?: (event: TrainerEvent) => void;
}

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

function checkPositiveInt(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(`${name} must be a positive integer, got ${value}`, {
      details: { field: name, value },
    });
  }
}

/** The GiGPO / GRPO / RLOO trainer. */
export class Trainer {
  readonly #o: TrainerOptions;
  readonly #trainPool: EnvPool;
  readonly #valPool: EnvPool;

  constructor(options: TrainerOptions) {
    for (const name of ['iterations', 'groups', 'groupSize', 'maxTurns', 'maxNewTokens'] as const)
      checkPositiveInt(name, options[name]);
    this.#o = options;
    this.#trainPool = new EnvPool(options.trainEnv, options.logger);
    this.#valPool = new EnvPool(options.valEnv ?? options.trainEnv, options.logger);
  }

  get metricsPath(): string {
    return join(this.#o.runDir, 'metrics.jsonl');
  }

  /** Runs validation alone (group size 1, seed + 1000) and returns its metrics and rollout. */
  async validate(
    policy: Policy = this.#o.policy,
  ): Promise<{ metrics: Metrics; result: RolloutResult }> {
    const o = this.#o;
    const agent = policyAgent(policy, o.tokenizer, {
      sampling: {
        maxNewTokens: o.maxNewTokens,
        temperature: o.valTemperature ?? 0.4,
        ...(o.topP !== undefined ? { topP: o.topP } : {}),
        ...(o.topK !== undefined ? { topK: o.topK } : {}),
      },
      ...(o.maxPromptTokens !== undefined ? { maxPromptTokens: o.maxPromptTokens } : {}),
    });
    const t0 = performance.now();
    // The held-out games are the same at every validation (rollout index 0), so curves compare.
    const result = await this.#valPool.rollout(agent, {
      groups: o.valEpisodes ?? 32,
      groupSize: 1,
      seed: o.seed + 1000,
      rolloutIndex: 0,
      maxTurns: o.maxTurns,
      samplingSeed: o.seed + 1000,
      idPrefix: 'val',
      ...(o.stepTimeoutMs !== undefined ? { stepTimeoutMs: o.stepTimeoutMs } : {}),
    });
    const metrics = episodeMetrics('val', result);
    metrics['time/validate'] = (performance.now() - t0) / 1000;
    return { metrics, result };
  }

  async #rollout(
    iteration: number,
  ): Promise<{ records: StepRecord[]; result: RolloutResult[]; metrics: Metrics }> {
    const o = this.#o;
    const agent = policyAgent(o.policy, o.tokenizer, {
      sampling: {
        maxNewTokens: o.maxNewTokens,
        temperature: o.temperature ?? 1,
        ...(o.topP !== undefined ? { topP: o.topP } : {}),
        ...(o.topK !== undefined ? { topK: o.topK } : {}),
      },
      ...(o.maxPromptTokens !== undefined ? { maxPromptTokens: o.maxPromptTokens } : {}),
    });
    const dyn = o.dynamicSampling?.enabled === true;
    const maxTries = dyn ? (o.dynamicSampling?.maxTries ?? 10) : 1;
    const target = o.groups * o.groupSize;
    const kept: StepRecord[] = [];
    const results: RolloutResult[] = [];
    let keptTrajectories = 0;
    let droppedGroups = 0;
    for (let attempt = 0; attempt < maxTries; attempt++) {
      const result = await this.#trainPool.rollout(agent, {
        groups: o.groups,
        groupSize: o.groupSize,
        seed: o.seed,
        rolloutIndex: iteration * maxTries + attempt,
        maxTurns: o.maxTurns,
        samplingSeed: o.seed * 7919 + iteration * 101 + attempt,
        idPrefix: `it${iteration}-t${attempt}`,
        ...(o.stepTimeoutMs !== undefined ? { stepTimeoutMs: o.stepTimeoutMs } : {}),
      });
      results.push(result);
      const last = attempt === maxTries - 1;
      // Dynamic sampling (DAPO): a group whose episode rewards are all equal carries no signal; the
      // last try keeps all. Episodes come in slot order: trajectory k is in group ⌊k / groupSize⌋.
      const keptIndices = filterGroupsWithEqualRewards({
        episodeRewards: result.episodes.map((e) => e.episodeReward),
        groupSize: o.groupSize,
        lastTry: !dyn || last,
      });
      const keepGroup = new Set<string>();
      for (const k of keptIndices) keepGroup.add((result.episodes[k] as EpisodeSummary).groupId);
      keptTrajectories += keptIndices.length;
      droppedGroups += o.groups - keepGroup.size;
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
    return { records: kept, result: results, metrics };
  }

  async #update(records: readonly StepRecord[], advantages: ArrayLike<number>): Promise<Metrics> {
    const o = this.#o;
    const rows: number[] = [];
    for (let i = 0; i < records.length; i++) {
      if (o.dropZeroAdvantageRows && advantages[i] === 0) continue;
      rows.push(i);
    }
    const size = o.miniBatchSize ?? 256;
    const epochs = o.ppoEpochs ?? 1;
    const perBatch: Record<string, number>[] = [];
    for (let epoch = 0; epoch < epochs; epoch++) {
      // Reference: no shuffling of mini-batches (spec §11.5).
      for (let start = 0; start < rows.length; start += size) {
        const chosen = rows.slice(start, start + size);
        const batch: TrainBatch = {
          promptTokenIds: chosen.map((i) => (records[i] as StepRecord).promptTokenIds),
          responseTokenIds: chosen.map((i) => (records[i] as StepRecord).responseTokenIds),
          oldLogProbs: chosen.map((i) => (records[i] as StepRecord).responseLogProbs),
          advantages: chosen.map((i) => advantages[i] as number),
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

  async #checkpoint(state: TrainerState): Promise<string> {
    const o = this.#o;
    const root = join(o.runDir, 'checkpoints');
    const name = `iter-${String(state.nextIteration).padStart(6, '0')}`;
    const dir = join(root, name);
    await writeDirAtomic(dir, async (tmp) => {
      const modelDir = join(tmp, 'model');
      await mkdir(modelDir, { recursive: true });
      await o.policy.save(modelDir);
      await writeJsonAtomic(join(tmp, 'state.json'), state);
    });
    await writeJsonAtomic(join(root, 'latest.json'), { checkpoint: name });
    const keep = o.keepCheckpoints ?? 2;
    const all = (await readdir(root)).filter((n) => /^iter-\d+$/.test(n)).sort();
    for (const old of all.slice(0, Math.max(0, all.length - keep)))
      await rm(join(root, old), { recursive: true, force: true });
    return dir;
  }

  /** Reads the latest checkpoint of the run folder, or undefined when there is none. */
  async #readLatest(): Promise<{ dir: string; state: TrainerState } | undefined> {
    const root = join(this.#o.runDir, 'checkpoints');
    const latestPath = join(root, 'latest.json');
    if (!existsSync(latestPath)) return undefined;
    const latest = latestSchema.safeParse(await readJson(latestPath));
    if (!latest.success) {
      throw new DataError(
        `${latestPath} is not a checkpoint pointer; delete it or start a new run`,
        {
          details: { field: 'checkpoint' },
        },
      );
    }
    const dir = join(root, latest.data.checkpoint);
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
    await mkdir(o.runDir, { recursive: true });
    let start = 0;
    let metricsLines = 0;
    let resumedFrom: number | undefined;
    if (options.resume) {
      const latest = await this.#readLatest();
      if (latest) {
        if (latest.state.seed !== o.seed) {
          throw new ConfigError(
            `seed ${o.seed} differs from the checkpoint's seed ${latest.state.seed}; resume with --seed ${latest.state.seed}`,
            { details: { field: 'seed', value: o.seed } },
          );
        }
        await o.policy.load(join(latest.dir, 'model'));
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
    const valEvery = o.valEvery ?? 5;
    const checkpointEvery = o.checkpointEvery ?? 1;
    let finalMetrics: Metrics | undefined;
    try {
      for (let iteration = start; iteration < o.iterations; iteration++) {
        const metrics: Metrics = { iteration };
        const tIter = performance.now();
        if (valEvery > 0 && iteration % valEvery === 0) {
          o.onEvent?.({ type: 'phase', iteration, phase: 'validate' });
          const val = await this.validate();
          Object.assign(metrics, val.metrics);
          await writeSamples(
            o.runDir,
            `val-${iteration}`,
            iteration,
            val.result,
            o.sampleTrajectories ?? 4,
          );
        }
        o.onEvent?.({ type: 'phase', iteration, phase: 'rollout' });
        let t0 = performance.now();
        const rollout = await this.#rollout(iteration);
        Object.assign(metrics, rollout.metrics);
        metrics['time/rollout'] = (performance.now() - t0) / 1000;
        await writeSamples(
          o.runDir,
          `train-${iteration}`,
          iteration,
          rollout.result[0] as RolloutResult,
          o.sampleTrajectories ?? 4,
        );

        o.onEvent?.({ type: 'phase', iteration, phase: 'advantage' });
        t0 = performance.now();
        const records = rollout.records;
        const advantages = records.length > 0 ? o.estimator(stepBatchFromRecords(records)) : [];
        if (advantages.length !== records.length) {
          throw new DataError(
            `the advantage estimator returned ${advantages.length} values for ${records.length} rows; it must return one per row`,
            { details: { field: 'estimator' } },
          );
        }
        metrics['time/advantage'] = (performance.now() - t0) / 1000;
        Object.assign(metrics, stepGroupMetrics(records));
        const advList = Array.from(advantages);
        const adv = summary(advList);
        metrics['advantage/mean'] = adv.mean;
        metrics['advantage/min'] = adv.min;
        metrics['advantage/max'] = adv.max;
        metrics['advantage/zeroFraction'] =
          advList.length === 0 ? 0 : mean(advList.map((a) => (a === 0 ? 1 : 0)));
        metrics['train/negLogProb'] = sampledNegLogProb(records);

        o.onEvent?.({ type: 'phase', iteration, phase: 'update' });
        t0 = performance.now();
        Object.assign(metrics, await this.#update(records, advantages));
        metrics['time/update'] = (performance.now() - t0) / 1000;
        metrics['time/iteration'] = (performance.now() - tIter) / 1000;

        appendLineSync(this.metricsPath, JSON.stringify(metrics));
        metricsLines++;
        finalMetrics = metrics;
        o.onEvent?.({ type: 'iteration', iteration, metrics });

        const isLast = iteration === o.iterations - 1;
        if (isLast || (checkpointEvery > 0 && (iteration + 1) % checkpointEvery === 0)) {
          o.onEvent?.({ type: 'phase', iteration, phase: 'checkpoint' });
          const dir = await this.#checkpoint({
            version: 1,
            nextIteration: iteration + 1,
            metricsLines,
            seed: o.seed,
          });
          o.onEvent?.({ type: 'checkpoint', iteration, dir });
        }
      }
      if (valEvery > 0) {
        // Final validation, after the last update; a run resumed after the last checkpoint redoes it.
        const iteration = o.iterations;
        o.onEvent?.({ type: 'phase', iteration, phase: 'validate' });
        const val = await this.validate();
        const metrics: Metrics = { iteration, final: 1, ...val.metrics };
        await writeSamples(
          o.runDir,
          `val-${iteration}`,
          iteration,
          val.result,
          o.sampleTrajectories ?? 4,
        );
        appendLineSync(this.metricsPath, JSON.stringify(metrics));
        finalMetrics = metrics;
        o.onEvent?.({ type: 'iteration', iteration, metrics });
      }
    } finally {
      await this.close();
    }
    return { iterations: o.iterations, finalMetrics, resumedFrom };
  }

  /** Closes the environment pools. */
  async close(): Promise<void> {
    await Promise.all([this.#trainPool.close(), this.#valPool.close()]);
  }
}
