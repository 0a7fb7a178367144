/**
 * `TrainablePolicy` (`@agentrl/core`) over a `CausalLM`: generation is the model's KV-cache
 * `generate`; `trainStep` maps a trainer mini-batch onto the model's PPO step (actor loss of
 * `@agentrl/algorithms`), `sftStep` onto its supervised step; save/load write and read an HF
 * folder plus the optimizer state (and KL reference), so a resumed run continues exactly. With
 * LoRA the checkpoint's HF folder holds merged weights for export, and the resume reads the
 * adapters and their moments onto the run's base model, which the checkpoint names and hashes
 * (`lora-base.json`).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ActorLossOptions } from '@agentrl/algorithms';
import {
  ConfigError,
  type Critic,
  type CriticOptions,
  DataError,
  type GenerationResult,
  type Policy,
  type ResponseScores,
  type SamplingOptions,
  type SftBatch,
  type TrainablePolicy,
  type TrainBatch,
} from '@agentrl/core';
import {
  checkLoRABase,
  hashModelFiles,
  LORA_BASE_FILE,
  type LoRABase,
  writeLoRABase,
} from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import {
  type CausalLM,
  type LoRAAdapters,
  loadCausalLM,
  type NamedTensor,
  readSafetensors,
  writeSafetensors,
} from '../index.ts';
import { TfjsCritic } from './critic.ts';

/** Sub-folder of a checkpoint holding the frozen KL reference's weights. */
const REFERENCE_DIR = 'reference';

/**
 * With LoRA the KL reference is the base plus the adapters when it was frozen: a LoRA checkpoint
 * stores those adapters (same names as `lora.safetensors`), not a second copy of the base.
 */
const REFERENCE_LORA_FILE = 'reference-lora.safetensors';

/** The adapter variables of `lora` by tensor name (`<weight>.lora_A` / `.lora_B`), in order. */
function adapterVariables(lora: LoRAAdapters): Map<string, tf.Variable> {
  const out = new Map<string, tf.Variable>();
  for (const [name, { a, b }] of lora.adapters) {
    const prefix = name.replace(/\.weight$/, '');
    out.set(`${prefix}.lora_A`, a);
    out.set(`${prefix}.lora_B`, b);
  }
  return out;
}

/** Optimizer and loss settings of {@link TfjsTrainablePolicy}. */
export interface TfjsPolicyOptions {
  /** Learning rate of the RL updates. */
  readonly learningRate: number;
  /** Learning rate of the supervised warm start. Default: `learningRate`. */
  readonly sftLearningRate?: number;
  /** `actorLoss` options (clip ratios, dual clip, KL / entropy coefficients, aggregation). */
  readonly loss?: ActorLossOptions;
  /** Rollout temperature the old log-probs were sampled at. Default 1. */
  readonly temperature?: number;
  /** Rows per forward/backward pass (gradient accumulation). Default: all. */
  readonly microBatchSize?: number;
  /** Global gradient-norm clip. Default 1. */
  readonly maxGradNorm?: number;
  readonly weightDecay?: number;
  /**
   * The folder the model's weights were loaded from. A LoRA checkpoint records it (path and file
   * hashes) as the base of its adapters; required to save one.
   */
  readonly basePath?: string;
}

/** A `CausalLM` as a {@link TrainablePolicy}. */
export class TfjsTrainablePolicy implements TrainablePolicy, Policy {
  readonly model: CausalLM;
  readonly options: TfjsPolicyOptions;
  /** Frozen copy of the initial weights: the KL reference (only when `loss.klLossCoef` > 0). */
  #reference: CausalLM | undefined;
  /** With LoRA, the adapter values the reference was frozen with (by tensor name). */
  #referenceAdapters: Map<string, tf.Tensor> | undefined;
  /** The LoRA base as recorded in checkpoints (hashed once, at the first LoRA save or a load). */
  #loraBase: Promise<LoRABase> | undefined;

  constructor(model: CausalLM, options: TfjsPolicyOptions) {
    this.model = model;
    this.options = options;
  }

  /**
   * Fixes the KL reference to the current weights (call after a warm start, as verl's reference
   * is the model RL starts from). Done automatically at the first update when KL is on.
   */
  freezeReference(): void {
    this.#disposeReference();
    this.#reference = this.model.frozenCopy();
    const lora = this.model.lora;
    if (lora !== undefined) {
      this.#referenceAdapters = new Map(
        [...adapterVariables(lora)].map(([name, v]) => [name, tf.clone(v)]),
      );
    }
  }

  #disposeReference(): void {
    this.#reference?.dispose();
    this.#reference = undefined;
    tf.dispose([...(this.#referenceAdapters?.values() ?? [])]);
    this.#referenceAdapters = undefined;
  }

  async #refLogProbs(batch: TrainBatch): Promise<number[][] | undefined> {
    if (!((this.options.loss?.klLossCoef ?? 0) > 0)) return undefined;
    if (!this.#reference) this.freezeReference();
    const sequences = batch.promptTokenIds.map((p, i) => [
      ...p,
      ...(batch.responseTokenIds[i] as readonly number[]),
    ]);
    const scores = await (this.#reference as CausalLM).tokenLogProbs(sequences, {
      temperature: this.options.temperature ?? 1,
    });
    // tokenLogProbs scores tokens 1..T-1: the response tokens are the last R of each row.
    return scores.map((row, i) =>
      row.slice(row.length - (batch.responseTokenIds[i] as readonly number[]).length),
    );
  }

  generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<GenerationResult> {
    return this.model.generate(prompts, sampling);
  }

  #optimizer(learningRate: number) {
    const o = this.options;
    return {
      learningRate,
      ...(o.maxGradNorm !== undefined ? { maxGradNorm: o.maxGradNorm } : {}),
      ...(o.weightDecay !== undefined ? { weightDecay: o.weightDecay } : {}),
      ...(o.microBatchSize !== undefined ? { microBatchSize: o.microBatchSize } : {}),
    };
  }

  async trainStep(batch: TrainBatch): Promise<Record<string, number>> {
    const ref = await this.#refLogProbs(batch);
    const samples = batch.advantages.map((advantage, i) => ({
      promptIds: batch.promptTokenIds[i] as readonly number[],
      responseIds: batch.responseTokenIds[i] as readonly number[],
      oldLogProbs: batch.oldLogProbs[i] as readonly number[],
      // Per-token advantages (PPO with a critic) replace the row's broadcast one.
      advantage: batch.tokenAdvantages?.[i] ?? advantage,
      ...(ref ? { refLogProbs: ref[i] as number[] } : {}),
    }));
    const result = await this.model.trainStep(samples, {
      ...this.#optimizer(this.options.learningRate),
      ...(this.options.loss ? { loss: this.options.loss } : {}),
      temperature: this.options.temperature ?? 1,
    });
    return {
      loss: result.loss,
      gradNorm: result.gradNorm,
      skipped: result.skipped ? 1 : 0,
      ...result.metrics,
      numTensors: tf.memory().numTensors,
    };
  }

  /**
   * A critic for PPO with GAE: a copy of the current weights with a fresh scalar value head and
   * its own AdamW (`TfjsCritic`); its value loss aggregates like this policy's actor loss unless
   * `options.lossAggMode` says otherwise (verl's critic takes the actor's mode).
   */
  async createCritic(options: CriticOptions): Promise<Critic> {
    return TfjsCritic.fromModel(this.model, {
      ...options,
      lossAggMode: options.lossAggMode ?? this.options.loss?.lossAggMode ?? 'token-mean',
    });
  }

  async sftStep(batch: SftBatch): Promise<Record<string, number>> {
    const samples = batch.promptTokenIds.map((promptIds, i) => ({
      promptIds,
      responseIds: batch.responseTokenIds[i] as readonly number[],
    }));
    const result = await this.model.sftStep(
      samples,
      this.#optimizer(this.options.sftLearningRate ?? this.options.learningRate),
    );
    return {
      loss: result.loss,
      gradNorm: result.gradNorm,
      ...result.metrics,
      numTensors: tf.memory().numTensors,
    };
  }

  /** Response-token log-probs and entropies under the current weights, at the rollout temperature. */
  async scoreResponses(batch: SftBatch): Promise<ResponseScores> {
    const sequences = batch.promptTokenIds.map((p, i) => [
      ...p,
      ...(batch.responseTokenIds[i] as readonly number[]),
    ]);
    const scores = await this.model.scoreTokens(sequences, {
      temperature: this.options.temperature ?? 1,
    });
    // scoreTokens scores tokens 1..T-1: the response tokens are the last R of each row.
    const tail = (rows: number[][]) =>
      rows.map((row, i) =>
        row.slice(row.length - (batch.responseTokenIds[i] as readonly number[]).length),
      );
    return { logProbs: tail(scores.logProbs), entropies: tail(scores.entropies) };
  }

  /**
   * Writes a checkpoint that resumes exactly: the weights as an HF folder in float32 (what tfjs
   * trains; a bf16 copy would round them), the AdamW state (`optimizer.safetensors`) and, when a
   * KL reference is held, its weights under `reference/`. With LoRA the HF folder holds the merged
   * weights (for export); the adapters and their moments (`lora.safetensors`, see model-tfjs
   * `saveTrainingState`) resume on the base named in `lora-base.json`, and the reference is the
   * adapter values it was frozen with (`reference-lora.safetensors`).
   */
  async save(dir: string): Promise<void> {
    await this.model.save(dir, { dtype: 'F32' });
    await this.model.saveTrainingState(dir);
    if (this.model.lora !== undefined) {
      if (this.#loraBase === undefined) {
        const basePath = this.options.basePath;
        if (basePath === undefined) {
          throw new ConfigError(
            'a LoRA checkpoint names the base folder its adapters apply to: create TfjsTrainablePolicy with basePath (the folder the model was loaded from)',
            { details: { field: 'basePath' } },
          );
        }
        this.#loraBase = hashModelFiles(basePath).then((files) => ({
          path: resolve(basePath),
          files,
        }));
      }
      await writeLoRABase(dir, await this.#loraBase);
    }
    if (this.#reference !== undefined && this.#referenceAdapters !== undefined) {
      const tensors = new Map<string, NamedTensor>();
      for (const [name, t] of this.#referenceAdapters) {
        tensors.set(name, { dtype: 'F32', shape: t.shape, data: (await t.data()) as Float32Array });
      }
      await writeSafetensors(join(dir, REFERENCE_LORA_FILE), tensors);
    } else if (this.#reference !== undefined) {
      await this.#reference.save(join(dir, REFERENCE_DIR), { dtype: 'F32' });
    }
  }

  /** Frees the model and the reference. */
  dispose(): void {
    this.#disposeReference();
    this.model.dispose();
  }

  /**
   * The reference of a LoRA checkpoint: the base with the saved adapter values, copied merged
   * (the same computation as when it was frozen, so the same bits); the live adapters are put back.
   */
  async #loadReferenceAdapters(path: string): Promise<void> {
    const lora = this.model.lora;
    if (lora === undefined) {
      throw new DataError(
        `${path} holds the KL reference's LoRA adapters, but the checkpoint loaded no adapters`,
        { details: { path } },
      );
    }
    const saved = await readSafetensors(path);
    const variables = adapterVariables(lora);
    for (const [name, v] of variables) {
      const t = saved.get(name);
      if (t === undefined || t.shape.join(',') !== v.shape.join(',')) {
        throw new DataError(
          `${path}: tensor ${name} is ${t === undefined ? 'missing' : `of shape [${t.shape.join(', ')}], expected [${v.shape.join(', ')}]`}; the reference does not match the checkpoint's adapters`,
          { details: { path, name } },
        );
      }
    }
    const live = [...variables.values()].map((v) => tf.clone(v));
    try {
      this.#referenceAdapters = new Map();
      for (const [name, v] of variables) {
        const value = tf.tensor((saved.get(name) as NamedTensor).data, v.shape);
        v.assign(value);
        this.#referenceAdapters.set(name, value);
      }
      this.#reference = this.model.frozenCopy();
    } finally {
      [...variables.values()].forEach((v, k) => {
        v.assign(live[k] as tf.Tensor);
      });
      tf.dispose(live);
    }
  }

  /** Restores what {@link TfjsTrainablePolicy.save} wrote: weights, optimizer state, KL reference. */
  async load(dir: string): Promise<void> {
    const backend = { backend: this.model.backend };
    if (existsSync(join(dir, LORA_BASE_FILE))) {
      const base = await checkLoRABase(join(dir, LORA_BASE_FILE));
      // The model was loaded from its basePath; load the recorded base when that is another one.
      // (loadTrainingState also compares sampled base values with those the adapters saw.)
      const from = this.options.basePath === undefined ? undefined : resolve(this.options.basePath);
      if (from !== base.path) {
        const loaded = await loadCausalLM(base.path, backend);
        try {
          this.model.copyWeightsFrom(loaded);
        } finally {
          loaded.dispose();
        }
      }
      this.#loraBase = Promise.resolve(base);
    } else {
      const loaded = await loadCausalLM(dir, backend);
      try {
        this.model.copyWeightsFrom(loaded);
      } finally {
        loaded.dispose();
      }
    }
    await this.model.syncWorkers();
    await this.model.loadTrainingState(dir);
    this.#disposeReference();
    if (existsSync(join(dir, REFERENCE_LORA_FILE))) {
      await this.#loadReferenceAdapters(join(dir, REFERENCE_LORA_FILE));
    } else if (existsSync(join(dir, REFERENCE_DIR, 'config.json'))) {
      const reference = await loadCausalLM(join(dir, REFERENCE_DIR), backend);
      try {
        this.#reference = reference.frozenCopy();
      } finally {
        reference.dispose();
      }
    }
  }
}
