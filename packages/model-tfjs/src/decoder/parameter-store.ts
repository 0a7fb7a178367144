/**
 * `ParameterStore`: the weights of one model as tfjs variables under their Hugging Face names, how
 * each is stored (whole, or in row blocks under the binding limit), the LoRA adapters over them,
 * the caches derived from them (merged LoRA weights while generating, the transposed tied head)
 * and the optimizer state of whatever trains. Training, saving, the training state and the worker
 * threads read and change the weights here; the model class adds the compute on top.
 */

import { InvalidInputError } from '@agentrl/core';
import type { CausalLMConfig } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import type { BackendName } from '../backends/select.ts';
import { webgpuBindingLimit } from '../backends/webgpu/setup.ts';
import { blockRanges, joinHost, splitHost } from '../backends/webgpu/split.ts';
import type { BlockLookup } from './forward.ts';
import { LoRAAdapters, type LoRAOptions } from './lora.ts';
import { type ParameterSpec, parameterSpecs } from './parameters.ts';

let storeCounter = 0;

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

/** Options of the {@link ParameterStore} constructor. */
export interface ParameterStoreOptions {
  /** Whether the variables take gradients. Default true. */
  readonly trainable?: boolean;
  /** Largest tensor one kernel may bind (bytes), already resolved against the device's limit. */
  readonly maxBindingBytes?: number | undefined;
}

/**
 * The binding limit a store on `backend` keeps to: the requested one (checked), capped on webgpu by
 * the device's (which is also the default there); elsewhere only what was requested.
 */
export function resolveBindingLimit(
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

function memoryShape(spec: ParameterSpec): [number, number] | [number] {
  if (spec.shape.length === 1) return [spec.shape[0]];
  const [rows, cols] = spec.shape as readonly [number, number];
  return spec.transposed ? [cols, rows] : [rows, cols];
}

/** The weights of one model, their storage, LoRA adapters, derived caches and optimizer state. */
export class ParameterStore {
  readonly trainable: boolean;
  /** Largest tensor (bytes) one kernel may bind, when limited; bigger parameters are blocks. */
  readonly maxBindingBytes: number | undefined;
  /** Parameters held whole. */
  readonly #variables = new Map<string, tf.Variable>();
  /** Parameters held as blocks (over `maxBindingBytes`). */
  readonly #split = new Map<
    string,
    { axis: 0 | 1; shape: [number, number]; blocks: tf.Variable[] }
  >();
  readonly #names: string[] = [];
  /** Optimizer state owned by the training module (AdamW moments, step count). */
  optimizerState: unknown;
  /**
   * Set while worker threads hold copies of the weights: they train full weights only, so
   * adapters cannot be enabled meanwhile.
   */
  mirroredByWorkers = false;
  #lora: LoRAAdapters | undefined;
  /** Merged LoRA weights (`W + scale·A·B`) held while generations run (see {@link withMergedLoRA}). */
  #merged: Map<string, tf.Tensor> | undefined;
  /** Generations running that use {@link #merged}. */
  #mergedUsers = 0;
  /** Transposed tied-head blocks for inference (one when the embedding is whole). */
  #transposedHead: tf.Tensor2D[] | undefined;

  /**
   * Wraps in-memory weights (HF names; linear weights already `[in, out]`). Takes ownership of
   * the tensors. The embedding or LM head may be given as its blocks (as {@link storage} holds
   * them); a whole one over `maxBindingBytes` is split here, through host memory (its values must
   * still be on the host, as for a tensor just created from an array).
   */
  constructor(
    config: CausalLMConfig,
    weights: ReadonlyMap<string, tf.Tensor | readonly tf.Tensor[]>,
    options: ParameterStoreOptions = {},
  ) {
    this.trainable = options.trainable ?? true;
    this.maxBindingBytes = options.maxBindingBytes;
    const id = storeCounter++;
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
  readonly weight = (name: string): tf.Variable => {
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

  /** The blocks of a parameter held split, or `undefined` when it is whole. */
  readonly blocks: BlockLookup = (name) =>
    this.#split.get(name)?.blocks as tf.Tensor2D[] | undefined;

  /** Names of the parameters held in blocks. */
  splitNames(): string[] {
    return [...this.#split.keys()];
  }

  /** How a parameter is stored: whole, or in blocks along an axis of its in-memory layout. */
  storage(name: string): ParameterStorage {
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
  async read(name: string): Promise<Float32Array> {
    const storage = this.storage(name);
    const pieces = await Promise.all(storage.variables.map((v) => v.data()));
    if (storage.axis === undefined) return Float32Array.from(pieces[0] as Float32Array);
    return joinHost(pieces as Float32Array[], storage.shape as [number, number], storage.axis);
  }

  /** Parameter names in checkpoint order. */
  names(): string[] {
    return [...this.#names];
  }

  /**
   * Every weight variable, in checkpoint order (linear weights `[in, out]`); a parameter held in
   * blocks contributes its blocks, in order (see {@link storage}).
   */
  variables(): tf.Variable[] {
    return this.#names.flatMap((name) => this.storage(name).variables);
  }

  /** Total number of parameters. */
  count(): number {
    let n = 0;
    for (const v of this.variables()) n += v.size;
    return n;
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
   * then update only the adapters (and the optimizer state is reset).
   */
  enableLoRA(options: LoRAOptions): void {
    if (this.mirroredByWorkers) {
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
  readonly effectiveWeight = (name: string): tf.Tensor => {
    const w = this.weight(name);
    return this.#lora === undefined ? w : this.#lora.effective(name, w);
  };

  /**
   * Runs a generation with the LoRA weights merged once (`W + scale·A·B` per adapted weight, held
   * until the last concurrent generation ends or the weights change): a decode step then costs
   * what it costs without LoRA, where the factored form adds four small products per projection
   * and step. Memory: one copy of the adapted weights while generating.
   */
  async withMergedLoRA<T>(f: () => Promise<T>): Promise<T> {
    if (this.#lora === undefined) return f();
    this.#mergedUsers++;
    try {
      return await f();
    } finally {
      this.#mergedUsers--;
      if (this.#mergedUsers === 0) this.#dropMerged();
    }
  }

  /**
   * The merged LoRA weights while a generation runs under {@link withMergedLoRA} (built on first
   * use), else `undefined`: an inference pass reads them in place of the factored form.
   */
  mergedLoRAWeights(): ReadonlyMap<string, tf.Tensor> | undefined {
    const lora = this.#lora;
    if (lora === undefined || this.#mergedUsers === 0) return undefined;
    if (this.#merged === undefined) {
      const merged = new Map<string, tf.Tensor>();
      for (const name of lora.adapters.keys())
        merged.set(name, tf.keep(tf.tidy(() => this.effectiveWeight(name))));
      this.#merged = merged;
    }
    return this.#merged;
  }

  #dropMerged(): void {
    if (this.#merged !== undefined) tf.dispose([...this.#merged.values()]);
    this.#merged = undefined;
  }

  /**
   * The tied head for inference: the embedding's blocks transposed once (`[H, rows]` each) and
   * kept until the weights change. Not differentiable.
   */
  transposedEmbedding(): readonly tf.Tensor2D[] {
    if (this.#transposedHead === undefined) {
      const blocks = this.blocks('model.embed_tokens.weight') ?? [
        this.weight('model.embed_tokens.weight') as tf.Tensor2D,
      ];
      this.#transposedHead = blocks.map((b) => tf.keep(tf.transpose(b) as tf.Tensor2D));
    }
    return this.#transposedHead;
  }

  /** Drops caches derived from the weights; call after changing variables outside train steps. */
  weightsChanged(): void {
    // Merged LoRA weights are rebuilt by the next inference pass that needs them.
    this.#dropMerged();
    if (this.#transposedHead !== undefined) tf.dispose(this.#transposedHead);
    this.#transposedHead = undefined;
  }

  /**
   * Copies of the weights for a new store (same storage: blocks stay blocks); with LoRA active,
   * of the effective (merged) weights.
   */
  cloneWeights(): Map<string, tf.Tensor | tf.Tensor[]> {
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
    return weights;
  }

  /**
   * Copies another store's weights (same config, same storage: blocks where this store has them)
   * into this one.
   */
  copyFrom(other: ParameterStore): void {
    for (const name of this.#names) {
      const mine = this.storage(name).variables;
      const theirs = other.storage(name).variables;
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

  /** Frees every tensor the store owns (weights, adapters, caches, optimizer state). */
  dispose(): void {
    for (const v of this.#variables.values()) v.dispose();
    this.#variables.clear();
    for (const split of this.#split.values()) tf.dispose(split.blocks);
    this.#split.clear();
    this.#lora?.dispose();
    this.#lora = undefined;
    this.weightsChanged();
    this.#resetOptimizer();
  }
}
