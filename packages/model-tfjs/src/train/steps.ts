/**
 * Training steps over micro-batches with gradient accumulation: the PPO actor loss of
 * `@agentrl/algorithms` (or any loss over the same inputs) and a supervised masked next-token
 * step for warm starts. Everything runs inside `tf.tidy`; only the accumulated gradients and the
 * optimizer state live between micro-batches.
 */
import { type ActorLossInputs, type ActorLossOptions, actorLoss } from '@agentrl/algorithms/losses';
import { InvalidInputError } from '@agentrl/core';
import type { CausalLMConfig } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import type { BackendName } from '../backends/select.ts';
import { trainingPrecision } from '../backends/switches.ts';
import { releasePackedPanels } from '../backends/wasm/kernels.ts';
import { checkWasmTraining, isWasmHeapFailure, wasmHeapFailure } from '../backends/wasm/memory.ts';
import { fusedKernelsActive, fusedTokenLogProbs } from '../backends/webgpu/kernels/fused.ts';
import { accumulatingInto } from '../backends/webgpu/kernels/grad-accumulator.ts';
import { pickLogProbs } from '../decoder/ops.ts';
import type { ParameterStore } from '../decoder/parameter-store.ts';
import { DynamicLossScaler, type LossScaleOptions } from './loss-scale.ts';
import { AdamWState, applyAdamW, type OptimizerOptions } from './optimizer.ts';
import type { GradientJob, PolicySample, SupervisedSample, WorkerGradients } from './samples.ts';
import { withStreamingBackprop } from './streaming-backprop.ts';

/**
 * Threads that hold copies of the weights and compute gradient sums of a shard of a step
 * (`parallel/worker-pool.ts`): a step splits its micro-batches between the calling thread and
 * them, and sends them the new weights after the update.
 */
export interface GradientWorkers {
  readonly size: number;
  /** Per-thread work counts, the calling thread first (see `ThreadWork` in worker-pool.ts). */
  readonly work?: readonly { microBatches: number }[];
  gradients(index: number, job: GradientJob): Promise<WorkerGradients>;
  syncWeights(store: ParameterStore): Promise<void>;
}

/**
 * What training needs of a model: its config and backend, its parameters (weights, adapters,
 * optimizer state), the positions' logits, and the worker threads it splits a step across.
 */
export interface TrainableModel {
  readonly config: CausalLMConfig;
  readonly backend: BackendName;
  readonly parameters: ParameterStore;
  readonly workerPool?: GradientWorkers | undefined;
  positionLogits(
    sequences: readonly (readonly number[])[],
    rows?: Int32Array,
    temperature?: number,
  ): { logits: tf.Tensor2D; T: number };
}

/** A loss over one micro-batch's tensors (`[B, R]`; `logits` `[B, R, V]` when requested). */
export type PolicyLossFn = (inputs: ActorLossInputs<tf.Tensor, tf.Tensor>) => {
  loss: tf.Scalar;
  metrics?: Readonly<Record<string, tf.Scalar | undefined>>;
};

/** Options of {@link trainPolicyStep}. */
export interface TrainStepOptions extends OptimizerOptions {
  /** Options of `actorLoss` from `@agentrl/algorithms/losses` (clip ratios, KL and entropy coefficients, aggregation). */
  readonly loss?: ActorLossOptions;
  /** Replaces the default `actorLoss(inputs, options.loss)`. */
  readonly lossFn?: PolicyLossFn;
  /** Pass response logits to the loss (entropy term). Default: unless `loss.entropyCoeff` is 0. */
  readonly withLogits?: boolean;
  /** Samples per forward/backward pass; gradients are accumulated. Default: all at once. */
  readonly microBatchSize?: number;
  /** Rollout temperature: logits are divided by it, as when old log-probs were scored. Default 1. */
  readonly temperature?: number;
}

/** What one optimizer step did. */
export interface TrainStepResult {
  /** Sample-weighted mean of the micro-batch losses. */
  readonly loss: number;
  /** Global gradient L2 norm before clipping. */
  readonly gradNorm: number;
  /** True when the norm was not finite and no update was applied. */
  readonly skipped: boolean;
  /** Sample-weighted means of the loss's metrics (pgClipfrac, ppoKl, entropyLoss, klLoss...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** The loss scale this step used (precision `mixed` only). */
  readonly lossScale?: number;
}

function toRow(
  value: number | readonly number[],
  length: number,
  field: string,
): readonly number[] {
  if (typeof value === 'number') return Array.from({ length }, () => value);
  if (value.length !== length) {
    throw new InvalidInputError(
      `${field} has ${value.length} values for ${length} response tokens`,
      { details: { field } },
    );
  }
  return value;
}

function padded(rows: readonly (readonly number[])[], width: number): tf.Tensor2D {
  const data = new Float32Array(rows.length * width);
  rows.forEach((r, b) => {
    for (let j = 0; j < r.length; j++) data[b * width + j] = r[j] as number;
  });
  return tf.tensor2d(data, [rows.length, width]);
}

/**
 * Response log-probs `[B, R]` (and logits `[B, R, V]` when asked), R = longest response, for
 * prompt+response sequences; call inside `tf.tidy`.
 */
export function responseTensors(
  model: Pick<TrainableModel, 'config' | 'positionLogits'>,
  prompts: readonly (readonly number[])[],
  responses: readonly (readonly number[])[],
  options: { temperature?: number; withLogits?: boolean } = {},
): { logProbs: tf.Tensor2D; logits?: tf.Tensor3D } {
  const B = prompts.length;
  const R = Math.max(1, ...responses.map((r) => r.length));
  const sequences = prompts.map((p, b) => [...p, ...(responses[b] as readonly number[])]);
  const T = Math.max(2, ...sequences.map((s) => s.length));
  const index = new Int32Array(B * R);
  prompts.forEach((p, b) => {
    if (p.length === 0)
      throw new InvalidInputError(
        `promptIds of sample ${b} is empty; a response needs at least one prompt token`,
        { details: { field: `samples[${b}].promptIds` } },
      );
    const n = (responses[b] as readonly number[]).length;
    for (let j = 0; j < R; j++) index[b * R + j] = b * (T - 1) + (j < n ? p.length + j - 1 : 0);
  });
  const { logits } = model.positionLogits(sequences, index, options.temperature ?? 1);
  const targets = new Int32Array(B * R);
  responses.forEach((r, b) => {
    for (let j = 0; j < R; j++) targets[b * R + j] = j < r.length ? (r[j] as number) : 0;
  });
  // On webgpu: one fused dispatch each way instead of the logsumexp + gather chain over [N, V].
  const picked = fusedKernelsActive('tokenLogProbs')
    ? fusedTokenLogProbs(logits, tf.tensor1d(targets, 'int32'))
    : pickLogProbs(logits, targets).logProbs;
  const logProbs = tf.reshape(picked, [B, R]) as tf.Tensor2D;
  if (options.withLogits !== true) return { logProbs };
  return { logProbs, logits: tf.reshape(logits, [B, R, model.config.vocabSize]) };
}

function stateOf(store: ParameterStore): AdamWState {
  if (!(store.optimizerState instanceof AdamWState)) store.optimizerState = new AdamWState();
  return store.optimizerState as AdamWState;
}

/**
 * Consecutive micro-batches of at most `size` items (default all); with worker threads, also of
 * at most ⌈items / threads⌉, so every thread gets one when the batch has rows enough.
 */
function chunks<T>(items: readonly T[], size: number | undefined, threads = 1): T[][] {
  if (size !== undefined && (!Number.isInteger(size) || size <= 0))
    throw new InvalidInputError(`microBatchSize must be a positive integer, got ${size}`, {
      details: { field: 'microBatchSize', value: size },
    });
  const n = Math.max(
    1,
    Math.min(size ?? items.length, Math.ceil(items.length / Math.max(1, threads))),
  );
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}

/** The threads a step of `model` runs on: the calling thread and its workers. */
function threadsOf(model: TrainableModel): number {
  return 1 + (model.workerPool?.size ?? 0);
}

/** Gradients summed over micro-batches (one tensor per variable), with loss and metric sums. */
export interface GradientSums {
  readonly grads: tf.Tensor[] | undefined;
  readonly loss: number;
  readonly metrics: Record<string, number>;
}

type MicroBatchLoss = {
  loss: tf.Scalar;
  metrics?: Readonly<Record<string, tf.Scalar | undefined>>;
};

function policyLossOf(
  model: TrainableModel,
  mb: readonly PolicySample[],
  job: Extract<GradientJob, { kind: 'policy' }>,
  lossFn: PolicyLossFn,
): MicroBatchLoss {
  const R = Math.max(1, ...mb.map((s) => s.responseIds.length));
  const rows = mb.map((s) => {
    const n = s.responseIds.length;
    return {
      advantages: toRow(s.advantage, n, 'advantage'),
      old: toRow(s.oldLogProbs, n, 'oldLogProbs'),
      ref: s.refLogProbs === undefined ? undefined : toRow(s.refLogProbs, n, 'refLogProbs'),
      mask:
        s.responseMask === undefined
          ? toRow(1, n, 'mask')
          : toRow(s.responseMask, n, 'responseMask'),
    };
  });
  const out = responseTensors(
    model,
    mb.map((s) => s.promptIds),
    mb.map((s) => s.responseIds),
    {
      ...(job.temperature !== undefined ? { temperature: job.temperature } : {}),
      withLogits: job.withLogits,
    },
  );
  const hasRef = rows.every((r) => r.ref !== undefined);
  return lossFn({
    logProb: out.logProbs,
    oldLogProb: padded(
      rows.map((r) => r.old),
      R,
    ),
    advantages: padded(
      rows.map((r) => r.advantages),
      R,
    ),
    responseMask: padded(
      rows.map((r) => r.mask),
      R,
    ),
    ...(hasRef
      ? {
          refLogProb: padded(
            rows.map((r) => r.ref as readonly number[]),
            R,
          ),
        }
      : {}),
    ...(out.logits !== undefined ? { logits: out.logits } : {}),
  });
}

function sftLossOf(model: TrainableModel, mb: readonly SupervisedSample[]): MicroBatchLoss {
  const R = Math.max(1, ...mb.map((s) => s.responseIds.length));
  const { logProbs } = responseTensors(
    model,
    mb.map((s) => s.promptIds),
    mb.map((s) => s.responseIds),
  );
  const mask = padded(
    mb.map((s) => s.responseIds.map(() => 1)),
    R,
  );
  const count = Math.max(
    1,
    mb.reduce((a, s) => a + s.responseIds.length, 0),
  );
  return { loss: tf.div(tf.neg(tf.sum(tf.mul(logProbs, mask))), count) as tf.Scalar };
}

/** The default policy loss: `actorLoss` of `@agentrl/algorithms/losses` with its metrics. */
export function defaultPolicyLoss(options: ActorLossOptions | undefined): PolicyLossFn {
  return (inputs) => {
    const r = actorLoss(inputs, options);
    return {
      loss: r.policyLoss,
      metrics: {
        pgLoss: r.pgLoss,
        pgClipfrac: r.pgClipfrac,
        ppoKl: r.ppoKl,
        pgClipfracLower: r.pgClipfracLower,
        entropyLoss: r.entropyLoss,
        klLoss: r.klLoss,
      },
    };
  };
}

/**
 * Sums `weight · loss(microBatch)` gradients over the job's micro-batches, each forward/backward
 * inside `tf.tidy`; only the running sums stay alive between micro-batches.
 */
export async function computeGradients(
  model: TrainableModel,
  job: GradientJob,
  lossFn?: PolicyLossFn,
): Promise<GradientSums> {
  const variables = model.parameters.trainableVariables();
  const policyLoss = job.kind === 'policy' ? (lossFn ?? defaultPolicyLoss(job.loss)) : undefined;
  let acc: tf.Tensor[] | undefined;
  let lossSum = 0;
  const metricSums: Record<string, number> = {};
  const lossScale = job.lossScale ?? 1;
  try {
    for (let m = 0; m < job.microBatches.length; m++) {
      const weight = job.weights[m] as number;
      let kept: Record<string, tf.Scalar> = {};
      // From the second micro-batch on, kernels that compute a variable's whole gradient add its
      // running sum themselves (backends/webgpu/kernels/grad-accumulator.ts); the rest are added here.
      const sums = new Map<object, tf.Tensor>(
        acc === undefined ? [] : variables.map((v, i) => [v, (acc as tf.Tensor[])[i] as tf.Tensor]),
      );
      const next = tf.tidy(() => {
        const {
          result: { value, grads },
          included,
        } = accumulatingInto(sums, () =>
          withStreamingBackprop(() =>
            tf.variableGrads(() => {
              const out =
                job.kind === 'policy'
                  ? policyLossOf(
                      model,
                      job.microBatches[m] as readonly PolicySample[],
                      job,
                      policyLoss as PolicyLossFn,
                    )
                  : sftLossOf(model, job.microBatches[m] as readonly SupervisedSample[]);
              kept = {};
              for (const [k, v] of Object.entries(out.metrics ?? {}))
                if (v !== undefined) kept[k] = tf.keep(v);
              return tf.mul(out.loss, weight * lossScale) as tf.Scalar;
            }, variables),
          ),
        );
        const summed = variables.map((v, i) => {
          const g = grads[v.name] ?? tf.zerosLike(v);
          return acc === undefined || included.has(v) ? g : tf.add(acc[i] as tf.Tensor, g);
        });
        return [value, ...summed];
      });
      if (acc !== undefined) tf.dispose(acc);
      const [value, ...summed] = next as [tf.Scalar, ...tf.Tensor[]];
      acc = summed;
      lossSum += (await value.data())[0] as number;
      value.dispose();
      for (const [k, v] of Object.entries(kept)) {
        metricSums[k] = (metricSums[k] ?? 0) + weight * ((await v.data())[0] as number);
        v.dispose();
      }
    }
  } catch (error) {
    if (acc !== undefined) tf.dispose(acc);
    throw error;
  }
  return { grads: acc, loss: lossSum / lossScale, metrics: metricSums };
}

/** Splits a job's micro-batches round-robin into `n` shards (shard 0 runs on the calling thread). */
function shardJob(job: GradientJob, n: number): GradientJob[] {
  return Array.from({ length: n }, (_, k) => {
    const pick = <T>(items: readonly T[]) => items.filter((_, i) => i % n === k);
    return {
      ...job,
      microBatches: pick<readonly never[]>(job.microBatches as readonly (readonly never[])[]),
      weights: pick(job.weights),
    } as GradientJob;
  }).filter((j) => j.microBatches.length > 0);
}

/** Runs a job (across the model's worker threads when it has them), then one AdamW step. */
/** The loss scaler of a store's training under precision `mixed` (created on first use). */
const scalers = new WeakMap<ParameterStore, DynamicLossScaler>();

function scalerOf(store: ParameterStore, options: LossScaleOptions | undefined): DynamicLossScaler {
  let scaler = scalers.get(store);
  if (scaler === undefined) {
    scaler = new DynamicLossScaler(options);
    scalers.set(store, scaler);
  }
  return scaler;
}

async function runJob(
  model: TrainableModel,
  job: GradientJob,
  options: OptimizerOptions,
  lossFn?: PolicyLossFn,
): Promise<TrainStepResult> {
  const store = model.parameters;
  if (!store.trainable) {
    throw new InvalidInputError('this model is frozen (a frozenCopy); train the original model', {
      details: { field: 'model' },
    });
  }
  if (model.backend === 'wasm') {
    const trainable = store.trainableVariables().reduce((n, v) => n + v.size, 0);
    checkWasmTraining(store.count(), trainable, store.lora !== undefined);
    releasePackedPanels();
  }
  const pool = model.workerPool;
  if (pool !== undefined && lossFn !== undefined) {
    throw new InvalidInputError(
      'a custom lossFn cannot run on worker threads; use loss options or stopWorkers()',
      { details: { field: 'lossFn' } },
    );
  }
  const scaler = trainingPrecision() === 'mixed' ? scalerOf(store, options.lossScale) : undefined;
  const lossScale = scaler?.scale ?? 1;
  if (lossScale !== 1) job = { ...job, lossScale };
  const shards = pool === undefined ? [job] : shardJob(job, pool.size + 1);
  const work = pool?.work?.[0];
  if (work !== undefined) work.microBatches += (shards[0] as GradientJob).microBatches.length;
  const remote =
    pool === undefined ? [] : shards.slice(1).map((shard, i) => pool.gradients(i, shard));
  let local: GradientSums | undefined;
  try {
    local = await computeGradients(model, shards[0] as GradientJob, lossFn);
    const results = await Promise.all(remote);
    let grads = local.grads;
    let loss = local.loss;
    const metrics = { ...local.metrics };
    for (const r of results) {
      loss += r.loss;
      for (const [k, v] of Object.entries(r.metrics)) metrics[k] = (metrics[k] ?? 0) + v;
      if (grads === undefined) continue;
      const current: tf.Tensor[] = grads;
      grads = tf.tidy(() =>
        current.map((g, i) => tf.add(g, tf.tensor(r.grads[i] as Float32Array, g.shape))),
      );
      tf.dispose(current);
    }
    local = { grads, loss, metrics };
    if (grads === undefined) return { loss: 0, gradNorm: 0, skipped: true, metrics: {} };
    // Divided by the loss scale, a power of two: exact, so the update equals the unscaled one
    // unless a value overflowed (inside the fused webgpu step's kernels, no dispatch of its own).
    const { gradNorm, skipped } = await applyAdamW(
      stateOf(store),
      store.trainableVariables(),
      grads,
      options,
      1 / lossScale,
    );
    scaler?.update(!skipped);
    if (!skipped) store.weightsChanged();
    if (!skipped && pool !== undefined) await pool.syncWeights(store);
    return { loss, gradNorm, skipped, metrics, ...(scaler === undefined ? {} : { lossScale }) };
  } catch (error) {
    if (model.backend === 'wasm' && isWasmHeapFailure(error))
      throw wasmHeapFailure(error, tf.memory().numBytes);
    throw error;
  } finally {
    if (local?.grads !== undefined) tf.dispose(local.grads);
  }
}

/** One policy-gradient optimizer step over `samples` (PPO actor loss by default). */
export function trainPolicyStep(
  model: TrainableModel,
  samples: readonly PolicySample[],
  options: TrainStepOptions,
): Promise<TrainStepResult> {
  samples.forEach((s, b) => {
    const n = s.responseIds.length;
    toRow(s.advantage, n, `samples[${b}].advantage`);
    toRow(s.oldLogProbs, n, `samples[${b}].oldLogProbs`);
    if (s.refLogProbs !== undefined) toRow(s.refLogProbs, n, `samples[${b}].refLogProbs`);
    if (s.responseMask !== undefined) toRow(s.responseMask, n, `samples[${b}].responseMask`);
  });
  const microBatches = chunks(samples, options.microBatchSize, threadsOf(model));
  const job: GradientJob = {
    kind: 'policy',
    microBatches,
    weights: microBatches.map((mb) => mb.length / samples.length),
    withLogits: options.withLogits ?? options.loss?.entropyCoeff !== 0,
    ...(options.loss !== undefined ? { loss: options.loss } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
  };
  return runJob(model, job, options, options.lossFn);
}

/** Options of {@link trainSupervisedStep}. */
export interface SupervisedStepOptions extends OptimizerOptions {
  /** Samples per forward/backward pass. Default: all at once. */
  readonly microBatchSize?: number;
}

/**
 * One supervised optimizer step: the mean negative log-likelihood over every response token of
 * the batch (token-mean across micro-batches, exact under accumulation).
 */
export function trainSupervisedStep(
  model: TrainableModel,
  samples: readonly SupervisedSample[],
  options: SupervisedStepOptions,
): Promise<TrainStepResult> {
  const totalTokens = samples.reduce((a, s) => a + s.responseIds.length, 0);
  if (totalTokens === 0)
    throw new InvalidInputError('sftStep needs at least one response token in the batch', {
      details: { field: 'samples' },
    });
  const microBatches = chunks(samples, options.microBatchSize, threadsOf(model));
  return runJob(
    model,
    {
      kind: 'sft',
      microBatches,
      weights: microBatches.map(
        (mb) => mb.reduce((a, s) => a + s.responseIds.length, 0) / totalTokens,
      ),
    },
    options,
  );
}
