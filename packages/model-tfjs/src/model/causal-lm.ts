/**
 * `CausalLM`: a Qwen2 / Llama decoder held as tfjs variables under their Hugging Face names, with
 * scoring (`tokenLogProbs`), KV-cache generation (the core `Policy`), training steps and saving.
 */

import { availableParallelism } from 'node:os';
import {
  type GenerationResult,
  InvalidInputError,
  type Policy,
  type SamplingOptions,
} from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import type { BackendName } from '../backends/select.ts';
import {
  fusedEntropy,
  fusedKernelsActive,
  fusedTokenLogProbs,
} from '../backends/webgpu/kernels/fused.ts';
import { webgpuBindingLimit } from '../backends/webgpu/setup.ts';
import { blockRanges, joinHost, splitHost } from '../backends/webgpu/split.ts';
import { generateTokens } from '../generate/generate.ts';
import { type SaveOptions, saveCausalLM } from '../io/save.ts';
import { loadTrainingState, saveTrainingState } from '../io/training-state.ts';
import type { ModelLogger } from '../logger.ts';
import { WorkerPool } from '../parallel/worker-pool.ts';
import {
  type PolicySample,
  type SupervisedSample,
  type SupervisedStepOptions,
  type TrainStepOptions,
  type TrainStepResult,
  trainPolicyStep,
  trainSupervisedStep,
} from '../train/steps.ts';
import type { CausalLMConfig } from './config.ts';
import {
  type BlockLookup,
  buildMask,
  decoderForward,
  type ForwardInputs,
  type ForwardOutput,
  headLogits,
  type RotaryConstants,
} from './forward.ts';
import { LoRAAdapters, type LoRAOptions } from './lora.ts';
import {
  inverseFrequencies,
  pickLogProbs,
  rotateHalfMatrix,
  tiedHeadInPlace,
  withoutGradients,
} from './ops.ts';
import { type ParameterSpec, parameterSpecs } from './parameters.ts';

let modelCounter = 0;

/**
 * Parameters that may be held as blocks when larger than the binding limit, and the axis of their
 * in-memory layout the blocks cut: the embedding `[V, H]` by rows, the untied head (held
 * `[H, V]`) by columns; both are row blocks of the HF `[V, H]` matrix.
 */
const SPLITTABLE: ReadonlyMap<string, 0 | 1> = new Map([
  ['model.embed_tokens.weight', 0],
  ['lm_head.weight', 1],
]);

/** How one parameter is stored: whole (one variable) or split along `axis` into blocks. */
export interface ParameterStorage {
  /** In-memory shape of the whole parameter (linear weights `[in, out]`). */
  readonly shape: readonly number[];
  /** The axis the blocks cut, for a split parameter. */
  readonly axis?: 0 | 1;
  /** The one variable, or the blocks in order. */
  readonly variables: readonly tf.Variable[];
}

/** Options of the {@link CausalLM} constructor. */
export interface CausalLMOptions {
  readonly trainable?: boolean;
  readonly logger?: ModelLogger;
  /**
   * Largest tensor, in bytes, one kernel may bind: the embedding and LM head are held as row
   * blocks under it, and one call's logits must fit it. On webgpu it defaults to (and is capped by)
   * the device's binding limit (`maxStorageBufferBindingSize`); elsewhere nothing is split unless
   * it is given (tests).
   */
  readonly maxBindingBytes?: number;
}

function memoryShape(spec: ParameterSpec): [number, number] | [number] {
  if (spec.shape.length === 1) return [spec.shape[0]];
  const [rows, cols] = spec.shape as readonly [number, number];
  return spec.transposed ? [cols, rows] : [rows, cols];
}

function resolveBindingLimit(
  backend: BackendName,
  requested: number | undefined,
): number | undefined {
  if (requested !== undefined && !(Number.isFinite(requested) && requested > 0)) {
    throw new InvalidInputError(
      `maxBindingBytes is ${requested}; use a positive number of bytes (or leave it unset)`,
      { details: { field: 'maxBindingBytes', value: requested } },
    );
  }
  const device = backend === 'webgpu' ? webgpuBindingLimit() : undefined;
  if (device === undefined) return requested;
  return requested === undefined ? device : Math.min(requested, device);
}

/** Batches smaller than this generate on the calling thread even when workers run. */
export const PARALLEL_GENERATE_MIN_ROWS = 32;

/** Options of {@link CausalLM.tokenLogProbs} / {@link CausalLM.scoreTokens}. */
export interface ScoreOptions {
  /** Divide logits by this before the softmax (match the rollout temperature). Default 1. */
  readonly temperature?: number;
  /** Upper bound on logits elements per forward chunk (memory). Default 2^24. */
  readonly maxLogitsPerChunk?: number;
}

/** Per-token log-probs and entropies of each sequence (length `len - 1` each). */
export interface TokenScores {
  readonly logProbs: number[][];
  readonly entropies: number[][];
}

/** Tensors of a right-padded batch: `[B, T-1]` log-probs (and entropies) of tokens 1..T-1. */
export interface TokenLogProbTensors {
  readonly logProbs: tf.Tensor2D;
  readonly entropies?: tf.Tensor2D;
}

function checkSequences(
  sequences: readonly (readonly number[])[],
  vocabSize: number,
  field: string,
): void {
  sequences.forEach((seq, b) => {
    seq.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= vocabSize) {
        throw new InvalidInputError(
          `${field}[${b}][${i}] = ${t} is not a token id in [0, ${vocabSize}); check the tokenizer matches the model`,
          { details: { field: `${field}[${b}][${i}]`, value: t } },
        );
      }
    });
  });
}

/** Log-probs of `targets` (and entropies) of one group of logit rows `[n, V]`. */
function scoreLogits(
  logits: tf.Tensor2D,
  targets: Int32Array,
  withEntropy: boolean | undefined,
): { logProbs: tf.Tensor1D; entropies?: tf.Tensor1D } {
  if (fusedKernelsActive()) {
    // webgpu: one dispatch for the log-probs and one for the entropies, no [N, V] temporaries.
    const logProbs = fusedTokenLogProbs(logits, tf.tensor1d(targets, 'int32')) as tf.Tensor1D;
    if (withEntropy !== true) return { logProbs };
    return { logProbs, entropies: fusedEntropy(logits) as tf.Tensor1D };
  }
  const { logProbs, lse } = pickLogProbs(logits, targets);
  if (withEntropy !== true) return { logProbs: logProbs as tf.Tensor1D };
  const probs = tf.exp(tf.sub(logits, tf.expandDims(lse, -1)));
  const entropies = tf.sub(lse, tf.sum(tf.mul(probs, logits), -1)) as tf.Tensor1D;
  return { logProbs: logProbs as tf.Tensor1D, entropies };
}

/** A decoder-only causal LM in tfjs. Create with `loadCausalLM` or `createCausalLM`. */
export class CausalLM implements Policy {
  readonly config: CausalLMConfig;
  /** The tfjs backend the model was created on. */
  readonly backend: BackendName;
  readonly logger: ModelLogger | undefined;
  readonly trainable: boolean;
  /**
   * Largest tensor (bytes) one kernel may bind, when limited (see {@link CausalLMOptions}): the
   * embedding and LM head are held as row blocks under it.
   */
  readonly maxBindingBytes: number | undefined;
  /** Parameters held whole. */
  readonly #variables = new Map<string, tf.Variable>();
  /** Parameters held as blocks (over `maxBindingBytes`). */
  readonly #split = new Map<
    string,
    { axis: 0 | 1; shape: [number, number]; blocks: tf.Variable[] }
  >();
  readonly #names: string[] = [];
  readonly #rope: RotaryConstants;
  /** Optimizer state owned by the training module (AdamW moments, step count). */
  optimizerState: unknown;
  #pool: WorkerPool | undefined;
  #lora: LoRAAdapters | undefined;
  /** Merged LoRA weights (`W + scale·A·B`) held while generations run (see {@link #withMergedLoRA}). */
  #merged: Map<string, tf.Tensor> | undefined;
  /** Generations running that use {@link #merged}. */
  #mergedUsers = 0;
  /** Transposed tied-head blocks for inference (one when the embedding is whole). */
  #inferenceHead: tf.Tensor2D[] | undefined;
  readonly #blocks: BlockLookup = (name) =>
    this.#split.get(name)?.blocks as tf.Tensor2D[] | undefined;

  /** The worker threads sharing this model's steps, if started. */
  get workerPool(): WorkerPool | undefined {
    return this.#pool;
  }

  /**
   * Starts `count` worker threads (default: available cores - 1), each with a copy of the
   * weights on the same backend; train steps and generation then split their batch across the
   * calling thread and the workers. Worth it on wasm (one core per backend instance).
   */
  async startWorkers(count = Math.max(0, availableParallelism() - 1)): Promise<void> {
    await this.stopWorkers();
    if (this.#split.size > 0 && count > 0) {
      throw new InvalidInputError(
        `worker threads copy whole weights, and ${[...this.#split.keys()].join(', ')} is held in row blocks (over maxBindingBytes ${this.maxBindingBytes}); train on one thread`,
        { details: { field: 'count', value: count } },
      );
    }
    if (this.#lora !== undefined && count > 0) {
      throw new InvalidInputError(
        'worker threads train full weights; call mergeLoRA() first or train LoRA on one thread',
        { details: { field: 'lora' } },
      );
    }
    if (!Number.isInteger(count) || count < 0) {
      throw new InvalidInputError(`worker count must be a non-negative integer, got ${count}`, {
        details: { field: 'count', value: count },
      });
    }
    if (count > 0) this.#pool = await WorkerPool.start(this, count);
  }

  /** Stops the worker threads (the model keeps working on the calling thread). */
  async stopWorkers(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.terminate();
  }

  /** Sends the current weights to the workers (after changing weights outside a train step). */
  async syncWorkers(): Promise<void> {
    await this.#pool?.syncWeights(this);
  }

  /**
   * Wraps in-memory weights (HF names; linear weights already `[in, out]`). Takes ownership of
   * the tensors. The embedding or LM head may be given as its blocks (as {@link parameterStorage}
   * holds them); a whole one over `maxBindingBytes` is split here, through host memory (its
   * values must still be on the host, as for a tensor just created from an array).
   */
  constructor(
    config: CausalLMConfig,
    backend: BackendName,
    weights: ReadonlyMap<string, tf.Tensor | readonly tf.Tensor[]>,
    options: CausalLMOptions = {},
  ) {
    this.config = config;
    this.backend = backend;
    this.logger = options.logger;
    this.trainable = options.trainable ?? true;
    this.maxBindingBytes = resolveBindingLimit(backend, options.maxBindingBytes);
    const id = modelCounter++;
    const specs = parameterSpecs(config);
    let stored = 0;
    try {
      for (const spec of specs) {
        const given = weights.get(spec.name);
        if (given === undefined)
          throw new InvalidInputError(`missing weight ${spec.name}`, {
            details: { field: spec.name },
          });
        this.#names.push(spec.name);
        stored += 1;
        this.#store(spec, given, `agentrl_m${id}/${spec.name}`);
      }
    } catch (error) {
      // Free what was stored and the tensors not reached (all of them are owned here).
      tf.dispose([
        ...this.#variables.values(),
        ...[...this.#split.values()].flatMap((x) => x.blocks),
      ]);
      for (const spec of specs.slice(stored)) {
        const rest = weights.get(spec.name);
        if (rest !== undefined) tf.dispose(rest instanceof tf.Tensor ? rest : [...rest]);
      }
      throw error;
    }
    this.#rope = {
      invFreq: inverseFrequencies(config.headDim, config.ropeTheta),
      rotateHalf: rotateHalfMatrix(config.headDim),
    };
  }

  #store(spec: ParameterSpec, given: tf.Tensor | readonly tf.Tensor[], varName: string): void {
    const shape = memoryShape(spec);
    const axis = SPLITTABLE.get(spec.name);
    const limit = this.maxBindingBytes;
    const bytes = shape.reduce((a, b) => a * b, 1) * 4;
    if (given instanceof tf.Tensor && (limit === undefined || bytes <= limit)) {
      this.#variables.set(spec.name, tf.variable(given, this.trainable, varName));
      given.dispose();
      return;
    }
    if (axis === undefined || shape.length !== 2) {
      if (given instanceof tf.Tensor) given.dispose();
      else tf.dispose([...given]);
      throw new InvalidInputError(
        `parameter ${spec.name} [${shape.join(', ')}] is ${bytes} bytes, over the binding limit of ${limit} bytes (maxBindingBytes); only the embedding and the LM head are held in row blocks: raise maxBindingBytes`,
        { details: { field: 'maxBindingBytes', value: limit, parameter: spec.name } },
      );
    }
    const whole = shape as [number, number];
    let blocks: tf.Tensor[];
    if (given instanceof tf.Tensor) {
      // Cut on the host: no kernel may bind the whole matrix (on webgpu it would return stale data).
      const sizes = blockRanges(whole[axis], whole[1 - axis] as number, limit as number).map(
        ([start, end]) => end - start,
      );
      const pieces = splitHost(given.dataSync() as Float32Array, whole, axis, sizes);
      given.dispose();
      blocks = pieces.map((data, k) => {
        const n = sizes[k] as number;
        return tf.tensor2d(data, axis === 0 ? [n, whole[1]] : [whole[0], n]);
      });
    } else {
      blocks = [...given];
      const other = 1 - axis;
      const total = blocks.reduce((a, b) => a + (b.shape[axis] ?? 0), 0);
      if (
        total !== whole[axis] ||
        blocks.some((b) => b.rank !== 2 || b.shape[other] !== whole[other])
      ) {
        tf.dispose(blocks);
        throw new InvalidInputError(
          `the blocks of ${spec.name} (${blocks.map((b) => `[${b.shape.join(', ')}]`).join(', ')}) do not tile its [${whole.join(', ')}] layout along axis ${axis}`,
          { details: { field: spec.name } },
        );
      }
    }
    this.#split.set(spec.name, {
      axis,
      shape: whole,
      blocks: blocks.map((t, k) => {
        const v = tf.variable(t, this.trainable, `${varName}/block${k}`);
        t.dispose();
        return v;
      }),
    });
  }

  /**
   * The parameter tensor under its HF name (linear weights `[in, out]`). A parameter held in
   * blocks (over `maxBindingBytes`: the embedding or LM head of a large model on webgpu) has no
   * whole tensor, since no kernel could bind one: this throws, naming `readWeight` (the joined
   * values, on the host) and `parameterStorage` (the blocks).
   */
  weight = (name: string): tf.Variable => {
    const v = this.#variables.get(name);
    if (v !== undefined) return v;
    const split = this.#split.get(name);
    if (split !== undefined) {
      throw new InvalidInputError(
        `${name} is held as ${split.blocks.length} blocks (its [${split.shape.join(', ')}] float32 values exceed maxBindingBytes ${this.maxBindingBytes}); use await model.readWeight(name) for the joined values or model.parameterStorage(name).variables for the blocks`,
        { details: { field: 'name', value: name } },
      );
    }
    throw new InvalidInputError(`the model has no parameter ${name}`, {
      details: { field: 'name', value: name },
    });
  };

  /** How a parameter is stored: whole, or in blocks along an axis of its in-memory layout. */
  parameterStorage(name: string): ParameterStorage {
    const split = this.#split.get(name);
    if (split !== undefined)
      return { shape: split.shape, axis: split.axis, variables: split.blocks };
    const v = this.weight(name);
    return { shape: v.shape, variables: [v] };
  }

  /**
   * The values of a parameter in its in-memory layout (linear weights `[in, out]`), joined on the
   * host when it is held in blocks. A copy: changing it changes nothing.
   */
  async readWeight(name: string): Promise<Float32Array> {
    const storage = this.parameterStorage(name);
    const pieces = await Promise.all(storage.variables.map((v) => v.data()));
    if (storage.axis === undefined) return Float32Array.from(pieces[0] as Float32Array);
    return joinHost(pieces as Float32Array[], storage.shape as [number, number], storage.axis);
  }

  /** Parameter names in checkpoint order. */
  parameterNames(): string[] {
    return [...this.#names];
  }

  /** The variables an optimizer step updates: the LoRA adapters when active, else every weight. */
  trainableVariables(): tf.Variable[] {
    return this.#lora?.variables() ?? this.variables();
  }

  /** Active LoRA adapters, if any. */
  get lora(): LoRAAdapters | undefined {
    return this.#lora;
  }

  /**
   * Adds LoRA adapters to the attention/MLP projections and freezes the base weights; train steps
   * then update only the adapters (and reset the optimizer state). Not combinable with workers.
   */
  enableLoRA(options: LoRAOptions): void {
    if (this.#pool !== undefined) {
      throw new InvalidInputError(
        'stop worker threads before enabling LoRA (workers train full weights only)',
        { details: { field: 'workers' } },
      );
    }
    if (this.#lora !== undefined) this.mergeLoRA();
    this.#lora = new LoRAAdapters(this.#variables, options);
    this.#resetOptimizer();
  }

  /** Folds the adapters into the base weights (`W += scale·A·B`) and drops them. */
  mergeLoRA(): void {
    const lora = this.#lora;
    if (lora === undefined) return;
    tf.tidy(() => {
      for (const name of lora.adapters.keys()) {
        const v = this.weight(name);
        v.assign(lora.effective(name, v));
      }
    });
    lora.dispose();
    this.#lora = undefined;
    this.#resetOptimizer();
    this.weightsChanged();
  }

  #resetOptimizer(): void {
    const state = this.optimizerState as { dispose?: () => void } | undefined;
    state?.dispose?.();
    this.optimizerState = undefined;
  }

  /** The weight the forward pass uses (LoRA update included); call inside `tf.tidy`. */
  effectiveWeight = (name: string): tf.Tensor => {
    const w = this.weight(name);
    return this.#lora === undefined ? w : this.#lora.effective(name, w);
  };

  /**
   * Every weight variable, in checkpoint order (linear weights `[in, out]`); a parameter held in
   * blocks contributes its blocks, in order (see {@link parameterStorage}).
   */
  variables(): tf.Variable[] {
    return this.#names.flatMap((name) => this.parameterStorage(name).variables);
  }

  /** Total number of parameters. */
  numParameters(): number {
    let n = 0;
    for (const v of this.variables()) n += v.size;
    return n;
  }

  /**
   * Low-level forward pass (final-norm hidden states `[B·T, H]`); call inside `tf.tidy`. With LoRA
   * active the adapted projections add their factored term (no merged weight, no base gradient);
   * an inference pass inside a generation reads the weights merged once for it.
   */
  forward(inputs: ForwardInputs): ForwardOutput {
    const lora = this.#lora;
    const inference = inputs.inference === true;
    const run = () => {
      if (lora === undefined)
        return decoderForward(this.config, this.weight, this.#rope, inputs, this.#blocks);
      if (inference && this.#mergedUsers > 0) {
        const merged = this.#mergedWeights(lora);
        const get = (name: string) => merged.get(name) ?? this.weight(name);
        return decoderForward(this.config, get, this.#rope, inputs, this.#blocks);
      }
      return decoderForward(
        this.config,
        this.weight,
        this.#rope,
        inputs,
        this.#blocks,
        lora.lowRank,
      );
    };
    return inference ? withoutGradients(run) : run();
  }

  #mergedWeights(lora: LoRAAdapters): Map<string, tf.Tensor> {
    if (this.#merged === undefined) {
      const merged = new Map<string, tf.Tensor>();
      for (const name of lora.adapters.keys())
        merged.set(name, tf.keep(tf.tidy(() => this.effectiveWeight(name))));
      this.#merged = merged;
    }
    return this.#merged;
  }

  /**
   * Runs a generation with the LoRA weights merged once (`W + scale·A·B` per adapted weight, held
   * until the last concurrent generation ends or the weights change): a decode step then costs
   * what it costs without LoRA, where the factored form adds four small products per projection
   * and step. Memory: one copy of the adapted weights while generating.
   */
  async #withMergedLoRA<T>(f: () => Promise<T>): Promise<T> {
    if (this.#lora === undefined) return f();
    this.#mergedUsers++;
    try {
      return await f();
    } finally {
      this.#mergedUsers--;
      if (this.#mergedUsers === 0) this.#dropMerged();
    }
  }

  #dropMerged(): void {
    if (this.#merged !== undefined) tf.dispose([...this.#merged.values()]);
    this.#merged = undefined;
  }

  /**
   * Logits `[N, V]` of hidden states `[N, H]`; call inside `tf.tidy`. With `inference`, a tied
   * head uses a cached transposed embedding (not differentiable): on wasm a matmul against a new
   * tensor repacks it every call, ~10x the cost of the decode-step matmul itself.
   */
  logits(hidden: tf.Tensor2D, options: { inference?: boolean } = {}): tf.Tensor2D {
    this.#checkLogitsSize(hidden.shape[0]);
    // The cached transposed head serves backends whose matmul wants the plain layout (XNNPACK:
    // a matmul against a new transposed tensor repacks it every call); ours reads it in place.
    if (options.inference !== true || !this.config.tieWordEmbeddings || tiedHeadInPlace())
      return headLogits(this.config, this.weight, hidden, this.#blocks, this.#lora !== undefined);
    if (this.#inferenceHead === undefined) {
      const blocks = this.#blocks('model.embed_tokens.weight') ?? [
        this.weight('model.embed_tokens.weight') as tf.Tensor2D,
      ];
      this.#inferenceHead = blocks.map((b) => tf.keep(tf.transpose(b) as tf.Tensor2D));
    }
    const parts = this.#inferenceHead.map((head) => tf.matMul(hidden, head));
    return (parts.length === 1 ? parts[0] : tf.concat(parts, 1)) as tf.Tensor2D;
  }

  /** Rows of logits one head call may produce: `[N, V]` float32 must fit `maxBindingBytes`. */
  logitsRowsPerCall(): number {
    const limit = this.maxBindingBytes;
    if (limit === undefined) return Number.POSITIVE_INFINITY;
    return Math.floor(limit / (this.config.vocabSize * 4));
  }

  #checkLogitsSize(rows: number): void {
    if (rows <= this.logitsRowsPerCall()) return;
    const V = this.config.vocabSize;
    throw new InvalidInputError(
      `one call's logits, ${rows} positions × ${V} vocabulary entries (${rows * V * 4} bytes), exceed the binding limit of ${this.maxBindingBytes} bytes (maxBindingBytes; on webgpu the adapter's maxStorageBufferBindingSize), and the GPU would return wrong numbers: lower microBatchSize in trainStep/sftStep so a micro-batch has at most ${this.logitsRowsPerCall()} response tokens, or generate for fewer prompts per call (scoring splits its rows by itself)`,
      { details: { field: 'microBatchSize', value: rows, limit: this.maxBindingBytes } },
    );
  }

  /** Drops caches derived from the weights; call after changing variables outside train steps. */
  weightsChanged(): void {
    // Merged LoRA weights are rebuilt by the next inference pass that needs them.
    this.#dropMerged();
    if (this.#inferenceHead !== undefined) tf.dispose(this.#inferenceHead);
    this.#inferenceHead = undefined;
  }

  /**
   * Logits `[N, V]` (divided by `temperature`) that predict token `t + 1` of sequence `b`, for the
   * flat positions `rows[n] = b·(T-1) + t` of the right-padded batch (all positions when absent);
   * call inside `tf.tidy`. Right pads sit after every real query, so the causal mask alone keeps
   * them from changing any real value.
   */
  positionLogits(
    sequences: readonly (readonly number[])[],
    rows?: Int32Array,
    temperature = 1,
    inference = false,
  ): { logits: tf.Tensor2D; T: number } {
    const { hidden, T } = this.positionHidden(sequences, rows, inference);
    const logits = this.logits(hidden, { inference });
    return { logits: temperature === 1 ? logits : tf.div(logits, temperature), T };
  }

  /**
   * Final-norm hidden states `[N, H]` at the positions {@link positionLogits} scores (all
   * `B·(T-1)` of them when `rows` is absent); call inside `tf.tidy`.
   */
  positionHidden(
    sequences: readonly (readonly number[])[],
    rows?: Int32Array,
    inference = false,
  ): { hidden: tf.Tensor2D; T: number } {
    const B = sequences.length;
    const T = Math.max(2, ...sequences.map((s) => s.length));
    const ids = new Int32Array(B * T);
    const positions = new Int32Array(B * T);
    for (let b = 0; b < B; b++) {
      const seq = sequences[b] as readonly number[];
      for (let t = 0; t < T; t++) {
        positions[b * T + t] = t;
        if (t < seq.length) ids[b * T + t] = seq[t] as number;
      }
    }
    const { hidden } = this.forward({
      ids: tf.tensor2d(ids, [B, T], 'int32'),
      positions,
      mask: buildMask(undefined, B, T, T),
      inference,
    });
    const H = this.config.hiddenSize;
    let used = tf.reshape(tf.slice(tf.reshape(hidden, [B, T, H]), [0, 0, 0], [B, T - 1, H]), [
      B * (T - 1),
      H,
    ]) as tf.Tensor2D;
    if (rows !== undefined) used = tf.gather(used, tf.tensor1d(rows, 'int32'));
    return { hidden: used, T };
  }

  /**
   * Log-probs (and optionally entropies) of tokens 1..T-1 of a right-padded batch, as tensors
   * `[B, T-1]`, differentiable; call inside `tf.tidy`.
   */
  tokenLogProbTensors(
    sequences: readonly (readonly number[])[],
    options: { temperature?: number; withEntropy?: boolean; inference?: boolean } = {},
  ): TokenLogProbTensors {
    const B = sequences.length;
    const temperature = options.temperature ?? 1;
    const inference = options.inference ?? false;
    const { hidden, T } = this.positionHidden(sequences, undefined, inference);
    const targets = new Int32Array(B * (T - 1));
    sequences.forEach((seq, b) => {
      for (let t = 0; t < T - 1; t++)
        targets[b * (T - 1) + t] = t + 1 < seq.length ? (seq[t + 1] as number) : 0;
    });
    // Rows in groups whose logits fit one binding (all at once unless the limit is small).
    const N = B * (T - 1);
    const per = Math.max(1, Math.min(N, this.logitsRowsPerCall()));
    const logProbParts: tf.Tensor1D[] = [];
    const entropyParts: tf.Tensor1D[] = [];
    for (let start = 0; start < N; start += per) {
      const n = Math.min(per, N - start);
      const h =
        n === N ? hidden : (tf.slice(hidden, [start, 0], [n, hidden.shape[1]]) as tf.Tensor2D);
      const raw = this.logits(h, { inference });
      const logits = temperature === 1 ? raw : (tf.div(raw, temperature) as tf.Tensor2D);
      const part = scoreLogits(logits, targets.subarray(start, start + n), options.withEntropy);
      logProbParts.push(part.logProbs);
      if (part.entropies !== undefined) entropyParts.push(part.entropies);
    }
    const join = (parts: tf.Tensor1D[]) =>
      tf.reshape(parts.length === 1 ? (parts[0] as tf.Tensor1D) : tf.concat(parts), [
        B,
        T - 1,
      ]) as tf.Tensor2D;
    const logProbs = join(logProbParts);
    if (options.withEntropy !== true) return { logProbs };
    return { logProbs, entropies: join(entropyParts) };
  }

  /** `log p(t_i | t_<i)` for i >= 1 of every sequence (spec A5); a ragged batch in one call. */
  async tokenLogProbs(
    sequences: readonly (readonly number[])[],
    options: ScoreOptions = {},
  ): Promise<number[][]> {
    return (await this.#score(sequences, options, false)).logProbs;
  }

  /** Log-probs and entropies (nats, full vocabulary) at the same positions as `tokenLogProbs`. */
  async scoreTokens(
    sequences: readonly (readonly number[])[],
    options: ScoreOptions = {},
  ): Promise<TokenScores> {
    return this.#score(sequences, options, true);
  }

  async #score(
    sequences: readonly (readonly number[])[],
    options: ScoreOptions,
    withEntropy: boolean,
  ): Promise<TokenScores> {
    checkSequences(sequences, this.config.vocabSize, 'sequences');
    const budget = options.maxLogitsPerChunk ?? 2 ** 24;
    const logProbs: number[][] = [];
    const entropies: number[][] = [];
    let start = 0;
    while (start < sequences.length) {
      let end = start;
      let maxLen = 2;
      while (end < sequences.length) {
        const len = Math.max(maxLen, (sequences[end] as readonly number[]).length);
        if (end > start && (end - start + 1) * len * this.config.vocabSize > budget) break;
        maxLen = len;
        end++;
      }
      const chunk = sequences.slice(start, end);
      const out = tf.tidy(() => {
        const r = this.tokenLogProbTensors(chunk, {
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
          withEntropy,
          inference: true,
        });
        return r.entropies === undefined ? [r.logProbs] : [r.logProbs, r.entropies];
      });
      const values = await Promise.all(out.map((t) => t.data()));
      tf.dispose(out);
      const width = maxLen - 1;
      chunk.forEach((seq, b) => {
        const n = Math.max(0, seq.length - 1);
        logProbs.push(Array.from((values[0] as Float32Array).subarray(b * width, b * width + n)));
        if (withEntropy)
          entropies.push(
            Array.from((values[1] as Float32Array).subarray(b * width, b * width + n)),
          );
      });
      start = end;
    }
    return { logProbs, entropies };
  }

  /** Batched KV-cache generation (core `Policy`); see `generateTokens` for the conventions. */
  generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<GenerationResult> {
    checkSequences(prompts, this.config.vocabSize, 'prompts');
    const pool = this.#pool;
    // A decode step's cost is mostly per-step overhead, not rows: splitting a small batch across
    // threads only adds messaging (measured slower at 8 rows), so only large batches are split.
    if (pool === undefined || prompts.length < PARALLEL_GENERATE_MIN_ROWS) {
      return this.#withMergedLoRA(() => generateTokens(this, prompts, sampling));
    }
    return this.#generateParallel(pool, prompts, sampling);
  }

  async #generateParallel(
    pool: WorkerPool,
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<GenerationResult> {
    const shards = Math.min(pool.size + 1, prompts.length);
    const per = Math.ceil(prompts.length / shards);
    const parts: Promise<GenerationResult>[] = [];
    for (let k = 1; k < shards; k++) {
      const slice = prompts.slice(k * per, (k + 1) * per).map((p) => [...p]);
      if (slice.length > 0) parts.push(pool.generate(k - 1, slice, sampling, k * per));
    }
    const local = await generateTokens(this, prompts.slice(0, per), sampling, 0);
    const results = [local, ...(await Promise.all(parts))];
    return {
      tokenIds: results.flatMap((r) => r.tokenIds),
      logProbs: results.flatMap((r) => r.logProbs),
      finishReasons: results.flatMap((r) => r.finishReasons),
    };
  }

  /** Writes the model as an HF folder (`config.json` + safetensors) in the config's dtype. */
  save(dir: string, options: SaveOptions = {}): Promise<void> {
    return saveCausalLM(this, dir, options);
  }

  /**
   * Writes the optimizer state (AdamW moments, step count, last hyperparameters) to
   * `dir/optimizer.safetensors`, atomically; with `save(dir)` a checkpoint that resumes exactly.
   * With LoRA active it writes the adapters (`lora.safetensors`) and their moments instead: load
   * them into the unmerged base to resume (`save` still writes merged weights, for export).
   */
  saveTrainingState(dir: string): Promise<void> {
    return saveTrainingState(this, dir);
  }

  /**
   * Restores the optimizer state `saveTrainingState` wrote (load the weights separately), and the
   * LoRA adapters when it has them (load the unmerged base first); throws a `DataError` naming the
   * file and tensor when it does not match this model's parameters or base.
   */
  loadTrainingState(dir: string): Promise<void> {
    return loadTrainingState(this, dir);
  }

  /** One optimizer step of the policy loss (PPO actor loss by default) over step samples. */
  trainStep(samples: readonly PolicySample[], options: TrainStepOptions): Promise<TrainStepResult> {
    return trainPolicyStep(this, samples, options);
  }

  /** One supervised (masked next-token) optimizer step over prompt/response pairs. */
  sftStep(
    samples: readonly SupervisedSample[],
    options: SupervisedStepOptions,
  ): Promise<TrainStepResult> {
    return trainSupervisedStep(this, samples, options);
  }

  /**
   * A frozen (non-trainable) copy of the current weights, e.g. the KL reference model; with LoRA
   * active, of the effective (merged) weights.
   */
  frozenCopy(): CausalLM {
    const weights = new Map<string, tf.Tensor | tf.Tensor[]>();
    for (const name of this.#variables.keys())
      weights.set(
        name,
        tf.tidy(() => tf.clone(this.effectiveWeight(name))),
      );
    for (const [name, split] of this.#split)
      weights.set(
        name,
        split.blocks.map((b) => tf.clone(b)),
      );
    return new CausalLM(this.config, this.backend, weights, {
      trainable: false,
      ...(this.logger ? { logger: this.logger } : {}),
      ...(this.maxBindingBytes !== undefined ? { maxBindingBytes: this.maxBindingBytes } : {}),
    });
  }

  /**
   * Copies another model's weights (same config, same storage: blocks where this model has them)
   * into this one, e.g. to refresh a reference.
   */
  copyWeightsFrom(other: CausalLM): void {
    for (const name of this.#names) {
      const mine = this.parameterStorage(name).variables;
      const theirs = other.parameterStorage(name).variables;
      if (
        mine.length !== theirs.length ||
        mine.some((v, k) => v.shape.join() !== theirs[k]?.shape.join())
      ) {
        throw new InvalidInputError(
          `copyWeightsFrom: ${name} is stored as ${mine.length} block(s) here and ${theirs.length} in the other model; create both with the same config and maxBindingBytes`,
          { details: { field: name } },
        );
      }
      mine.forEach((v, k) => {
        v.assign(theirs[k] as tf.Variable);
      });
    }
    this.weightsChanged();
  }

  /** Frees every tensor the model owns (and stops its workers). */
  dispose(): void {
    void this.stopWorkers();
    for (const v of this.#variables.values()) v.dispose();
    this.#variables.clear();
    for (const split of this.#split.values()) tf.dispose(split.blocks);
    this.#split.clear();
    this.#rope.rotateHalf.dispose();
    this.#lora?.dispose();
    this.#lora = undefined;
    this.weightsChanged();
    const state = this.optimizerState as { dispose?: () => void } | undefined;
    state?.dispose?.();
    this.optimizerState = undefined;
  }
}
