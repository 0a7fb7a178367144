/**
 * The critic of PPO with GAE (`Critic` of `@agentrl/core`) over a `CausalLM`, as verl-agent builds
 * it (`CriticWorker` in `verl/workers/fsdp_workers.py`, `DataParallelPPOCritic` in
 * `verl/workers/critic/dp_critic.py`): a separate copy of the policy's weights (the base
 * transformer with its final norm; the LM head is not used) followed by a scalar value head
 * `score = Linear(hidden, 1)` with a bias, freshly initialised (normal, std 0.02, bias 0; the
 * way transformers initialises a token-classification head), and its own AdamW optimizer.
 *
 * The value of response token t is read at sequence position `P + t − 1` (the hidden state of the
 * token before it: the state from which token t is generated), and one more value after the last
 * response token (the state after the response; the trainer's target for it is 0). The loss is
 * `valueLoss` of `@agentrl/algorithms/losses` (clipped, no ½ factor).
 *
 * A checkpoint folder holds the backbone as an HF folder in float32 with its optimizer state
 * (`optimizer.safetensors`) and the head with its moments (`value-head.safetensors`, `score.weight`
 * in the `[1, hidden]` layout of a torch Linear), so a resumed run continues exactly.
 */
import { join } from 'node:path';
import { valueLoss } from '@agentrl/algorithms/losses';
import {
  type Critic,
  type CriticOptions,
  type CriticTrainBatch,
  DataError,
  InvalidInputError,
  Rng,
  type SftBatch,
} from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import {
  CausalLM,
  loadCausalLM,
  type NamedTensor,
  readSafetensors,
  writeSafetensors,
} from '../index.ts';
import { AdamWState, applyAdamW } from '../train/optimizer.ts';

/** The value head's file inside a critic folder. */
export const VALUE_HEAD_FILE = 'value-head.safetensors';

/** Standard deviation of the head's initial weights (transformers' `initializer_range`). */
const HEAD_INIT_STD = 0.02;

/** Rows valued per forward pass in {@link TfjsCritic.values}. */
const VALUE_CHUNK_ROWS = 16;

/** Options of {@link TfjsCritic}: a run's critic settings (`lossAggMode` resolved). */
export interface TfjsCriticOptions extends CriticOptions {
  readonly lossAggMode: string;
}

function rowsMatch(batch: SftBatch, field: string, rows: readonly unknown[]): void {
  if (rows.length !== batch.promptTokenIds.length) {
    throw new InvalidInputError(
      `${field} has ${rows.length} rows but promptTokenIds has ${batch.promptTokenIds.length}; one per row`,
      { details: { field } },
    );
  }
}

function padded(rows: readonly (readonly number[])[], width: number): tf.Tensor2D {
  const data = new Float32Array(rows.length * width);
  rows.forEach((r, b) => {
    for (let j = 0; j < r.length; j++) data[b * width + j] = r[j] as number;
  });
  return tf.tensor2d(data, [rows.length, width]);
}

/** A critic: a copy of a policy's `CausalLM` with a scalar value head. */
export class TfjsCritic implements Critic {
  readonly model: CausalLM;
  readonly options: TfjsCriticOptions;
  /** `[hidden, 1]`. */
  readonly #weight: tf.Variable;
  /** `[1]`. */
  readonly #bias: tf.Variable;

  private constructor(model: CausalLM, options: TfjsCriticOptions) {
    this.model = model;
    this.options = options;
    const H = model.config.hiddenSize;
    const rng = Rng.fromSeed(options.seed).split('critic value head');
    const w = new Float32Array(H);
    for (let i = 0; i < H; i++) w[i] = rng.normal(0, HEAD_INIT_STD);
    this.#weight = tf.variable(tf.tensor2d(w, [H, 1]), true);
    this.#bias = tf.variable(tf.zeros([1]), true);
  }

  /** A critic whose backbone is a copy of `policyModel`'s current (effective) weights. */
  static fromModel(policyModel: CausalLM, options: TfjsCriticOptions): TfjsCritic {
    const copy = new CausalLM(
      policyModel.config,
      policyModel.backend,
      policyModel.parameters.cloneWeights(),
      {
        trainable: true,
        ...(policyModel.maxBindingBytes !== undefined
          ? { maxBindingBytes: policyModel.maxBindingBytes }
          : {}),
      },
    );
    return new TfjsCritic(copy, options);
  }

  /** The variables one critic step updates: the backbone's and the head's. */
  #variables(): tf.Variable[] {
    return [...this.model.parameters.trainableVariables(), this.#weight, this.#bias];
  }

  /**
   * Values `[B, maxL + 1]` of rows of prompts and responses: column t of row b is the head at
   * the position before response token t (t ≤ L_b; later columns repeat column 0). Call inside
   * `tf.tidy`.
   */
  #valueTensor(
    prompts: readonly (readonly number[])[],
    responses: readonly (readonly number[])[],
    inference: boolean,
  ): tf.Tensor2D {
    const B = prompts.length;
    const W = Math.max(...responses.map((r) => r.length)) + 1;
    // One pad token after each response: the state after the last response token is then a
    // position the forward pass returns (it drops the last position of the longest row).
    const sequences = prompts.map((p, b) => [...p, ...(responses[b] as readonly number[]), 0]);
    const T = Math.max(2, ...sequences.map((s) => s.length));
    const index = new Int32Array(B * W);
    prompts.forEach((p, b) => {
      if (p.length === 0) {
        throw new InvalidInputError(
          `promptTokenIds of row ${b} is empty; a critic values the state after at least one prompt token`,
          { details: { field: `promptTokenIds[${b}]` } },
        );
      }
      const L = (responses[b] as readonly number[]).length;
      for (let t = 0; t < W; t++) index[b * W + t] = b * (T - 1) + p.length - 1 + (t <= L ? t : 0);
    });
    const { hidden } = this.model.positionHidden(sequences, index, inference);
    return tf.reshape(tf.add(tf.matMul(hidden, this.#weight), this.#bias), [B, W]) as tf.Tensor2D;
  }

  /** L + 1 values per row of L response tokens (see `Critic` of `@agentrl/core`). */
  async values(batch: SftBatch): Promise<number[][]> {
    rowsMatch(batch, 'responseTokenIds', batch.responseTokenIds);
    const out: number[][] = [];
    for (let start = 0; start < batch.promptTokenIds.length; start += VALUE_CHUNK_ROWS) {
      const prompts = batch.promptTokenIds.slice(start, start + VALUE_CHUNK_ROWS);
      const responses = batch.responseTokenIds.slice(start, start + VALUE_CHUNK_ROWS);
      const t = tf.tidy(() => this.#valueTensor(prompts, responses, true));
      const rows = (await t.array()) as number[][];
      t.dispose();
      rows.forEach((row, b) => {
        out.push(row.slice(0, (responses[b] as readonly number[]).length + 1));
      });
    }
    return out;
  }

  #state(): AdamWState {
    const store = this.model.parameters;
    if (!(store.optimizerState instanceof AdamWState)) store.optimizerState = new AdamWState();
    return store.optimizerState as AdamWState;
  }

  /**
   * One AdamW step on the clipped value loss over the batch, in micro-batches of
   * `microBatchSize` rows whose losses are divided by the micro-batch count and whose gradients are
   * summed (as verl's `update_critic`; verl divides by the count of a full mini-batch, so its short
   * last mini-batch weighs less, where here every batch weighs the same); the global norm is
   * clipped and a non-finite one skips the step.
   */
  async trainStep(batch: CriticTrainBatch): Promise<Record<string, number>> {
    const n = batch.promptTokenIds.length;
    rowsMatch(batch, 'responseTokenIds', batch.responseTokenIds);
    rowsMatch(batch, 'oldValues', batch.oldValues);
    rowsMatch(batch, 'returns', batch.returns);
    rowsMatch(batch, 'mask', batch.mask);
    for (let i = 0; i < n; i++) {
      const width = (batch.mask[i] as readonly number[]).length;
      const L = (batch.responseTokenIds[i] as readonly number[]).length;
      if (
        width > L + 1 ||
        (batch.oldValues[i] as readonly number[]).length !== width ||
        (batch.returns[i] as readonly number[]).length !== width
      ) {
        throw new InvalidInputError(
          `row ${i}: mask, oldValues and returns must have the same length, at most ${L + 1} (response tokens + 1)`,
          { details: { field: 'mask', row: i } },
        );
      }
    }
    const size = this.options.microBatchSize ?? Math.max(1, n);
    const starts: number[] = [];
    for (let s = 0; s < n; s += size) starts.push(s);
    const variables = this.#variables();
    let acc: tf.Tensor[] | undefined;
    let lossSum = 0;
    let clipSum = 0;
    for (const start of starts) {
      const end = Math.min(n, start + size);
      const pick = <T>(rows: readonly T[]) => rows.slice(start, end);
      const mask = pick(batch.mask);
      const W = Math.max(1, ...mask.map((r) => r.length));
      let clipfrac: tf.Scalar | undefined;
      const { value, grads } = tf.variableGrads(() => {
        const full = this.#valueTensor(
          pick(batch.promptTokenIds),
          pick(batch.responseTokenIds),
          false,
        );
        const vpreds = tf.slice(full, [0, 0], [end - start, W]);
        const r = valueLoss(
          {
            vpreds,
            returns: padded(pick(batch.returns), W),
            values: padded(pick(batch.oldValues), W),
            responseMask: padded(mask, W),
          },
          {
            cliprangeValue: this.options.cliprangeValue,
            lossAggMode: this.options.lossAggMode as never,
          },
        );
        clipfrac = tf.keep(r.vfClipfrac);
        return tf.div(r.vfLoss, starts.length) as tf.Scalar;
      }, variables);
      const list = variables.map((v) => grads[v.name] ?? tf.zerosLike(v));
      if (acc === undefined) acc = list;
      else {
        const previous: tf.Tensor[] = acc;
        acc = previous.map((a, i) => tf.add(a, list[i] as tf.Tensor));
        tf.dispose([...previous, ...list]);
      }
      lossSum += (await value.data())[0] as number;
      clipSum += ((await (clipfrac as tf.Scalar).data())[0] as number) / starts.length;
      tf.dispose([value, clipfrac as tf.Scalar]);
    }
    const o = this.options;
    const { gradNorm, skipped } = await applyAdamW(this.#state(), variables, acc ?? [], {
      learningRate: o.learningRate,
      weightDecay: o.weightDecay,
      maxGradNorm: o.maxGradNorm,
    });
    tf.dispose(acc ?? []);
    this.model.weightsChanged();
    return { vfLoss: lossSum, vfClipfrac: clipSum, gradNorm, skipped: skipped ? 1 : 0 };
  }

  /** The head's weight `[1, hidden]` and bias `[1]` (torch Linear layout), as plain arrays. */
  async head(): Promise<{ weight: Float32Array; bias: Float32Array }> {
    return {
      weight: (await this.#weight.data()) as Float32Array,
      bias: (await this.#bias.data()) as Float32Array,
    };
  }

  /** Writes the backbone (F32 HF folder + optimizer state) and the head with its moments. */
  async save(dir: string): Promise<void> {
    await this.model.save(dir, { dtype: 'F32' });
    await this.model.saveTrainingState(dir);
    const H = this.model.config.hiddenSize;
    const tensors = new Map<string, NamedTensor>();
    const put = async (name: string, t: tf.Tensor, shape: number[]) => {
      tensors.set(name, { dtype: 'F32', shape, data: (await t.data()) as Float32Array });
    };
    await put('score.weight', this.#weight, [1, H]);
    await put('score.bias', this.#bias, [1]);
    const state = this.model.parameters.optimizerState;
    if (state instanceof AdamWState && state.step > 0) {
      for (const [name, v, shape] of [
        ['score.weight', this.#weight, [1, H]],
        ['score.bias', this.#bias, [1]],
      ] as const) {
        const moments = state.existingMoments(v);
        if (moments === undefined) continue;
        await put(`${name}.exp_avg`, moments.m, [...shape]);
        await put(`${name}.exp_avg_sq`, moments.v, [...shape]);
      }
    }
    await writeSafetensors(join(dir, VALUE_HEAD_FILE), tensors);
  }

  /** Restores what {@link TfjsCritic.save} wrote. */
  async load(dir: string): Promise<void> {
    const path = join(dir, VALUE_HEAD_FILE);
    const saved = await readSafetensors(path);
    const H = this.model.config.hiddenSize;
    const get = (name: string, size: number, required: boolean) => {
      const t = saved.get(name);
      if (t === undefined && !required) return undefined;
      if (t === undefined || t.data.length !== size) {
        throw new DataError(
          `${path}: tensor ${name} is ${t === undefined ? 'missing' : `of ${t.data.length} values, expected ${size}`}; the critic was saved from another model`,
          { details: { path, name } },
        );
      }
      return t.data as Float32Array;
    };
    const weight = get('score.weight', H, true) as Float32Array;
    const bias = get('score.bias', 1, true) as Float32Array;
    const loaded = await loadCausalLM(dir, { backend: this.model.backend });
    try {
      this.model.copyWeightsFrom(loaded);
    } finally {
      loaded.dispose();
    }
    await this.model.loadTrainingState(dir);
    this.#weight.assign(tf.tensor2d(weight, [H, 1]));
    this.#bias.assign(tf.tensor1d(bias));
    const state = this.#state();
    for (const [name, v, size] of [
      ['score.weight', this.#weight, H],
      ['score.bias', this.#bias, 1],
    ] as const) {
      const m = get(`${name}.exp_avg`, size, false);
      const s = get(`${name}.exp_avg_sq`, size, false);
      if (m === undefined || s === undefined) continue;
      tf.tidy(() => state.setMoments(v, tf.tensor(m, v.shape), tf.tensor(s, v.shape)));
    }
    this.model.weightsChanged();
  }

  /** Frees the backbone copy and the head. */
  dispose(): void {
    this.model.dispose();
    this.#weight.dispose();
    this.#bias.dispose();
  }
}
