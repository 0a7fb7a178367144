/**
 * `Decoder`: the compute of a Qwen2 / Llama decoder over a {@link ParameterStore}: the forward pass
 * (with a KV cache), the LM head, and per-position logits, log-probs and entropies. Generation,
 * the train steps and the worker threads run on it; `CausalLM` (`model/causal-lm.ts`) extends it
 * with scoring, generation, training, worker threads and saving.
 */

import { InvalidInputError } from '@agentrl/core';
import type { CausalLMConfig } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import type { BackendName } from '../backends/select.ts';
import {
  fusedEntropy,
  fusedKernelsActive,
  fusedTokenLogProbs,
} from '../backends/webgpu/kernels/fused.ts';
import {
  buildMask,
  decoderForward,
  type ForwardInputs,
  type ForwardOutput,
  headLogits,
  type RotaryConstants,
} from './forward.ts';
import { inverseFrequencies, pickLogProbs, rotateHalfMatrix, tiedHeadInPlace } from './ops.ts';
import type { ParameterStore } from './parameter-store.ts';

/** Tensors of a right-padded batch: `[B, T-1]` log-probs (and entropies) of tokens 1..T-1. */
export interface TokenLogProbTensors {
  readonly logProbs: tf.Tensor2D;
  readonly entropies?: tf.Tensor2D;
}

/** Log-probs of `targets` (and entropies) of one group of logit rows `[n, V]`. */
function scoreLogits(
  logits: tf.Tensor2D,
  targets: Int32Array,
  withEntropy: boolean | undefined,
): { logProbs: tf.Tensor1D; entropies?: tf.Tensor1D } {
  // webgpu: one dispatch for the log-probs and one for the entropies, no [N, V] temporaries.
  const fusedH = withEntropy === true && fusedKernelsActive('entropy');
  if (fusedKernelsActive('tokenLogProbs')) {
    const logProbs = fusedTokenLogProbs(logits, tf.tensor1d(targets, 'int32')) as tf.Tensor1D;
    if (withEntropy !== true) return { logProbs };
    if (fusedH) return { logProbs, entropies: fusedEntropy(logits) as tf.Tensor1D };
  }
  const { logProbs, lse } = pickLogProbs(logits, targets);
  if (withEntropy !== true) return { logProbs: logProbs as tf.Tensor1D };
  if (fusedH) return { logProbs, entropies: fusedEntropy(logits) as tf.Tensor1D };
  const probs = tf.exp(tf.sub(logits, tf.expandDims(lse, -1)));
  const entropies = tf.sub(lse, tf.sum(tf.mul(probs, logits), -1)) as tf.Tensor1D;
  return { logProbs: logProbs as tf.Tensor1D, entropies };
}

/** The forward pass and the LM head of a decoder over its parameters. */
export class Decoder {
  readonly config: CausalLMConfig;
  /** The tfjs backend the weights live on. */
  readonly backend: BackendName;
  /** The weights, their storage, the LoRA adapters and the optimizer state. */
  readonly parameters: ParameterStore;
  readonly #rope: RotaryConstants;

  /** A decoder over `parameters` (owned from here on: {@link dispose} frees them). */
  constructor(config: CausalLMConfig, backend: BackendName, parameters: ParameterStore) {
    this.config = config;
    this.backend = backend;
    this.parameters = parameters;
    this.#rope = {
      invFreq: inverseFrequencies(config.headDim, config.ropeTheta),
      rotateHalf: rotateHalfMatrix(config.headDim),
    };
  }

  /**
   * Low-level forward pass (final-norm hidden states `[B·T, H]`); call inside `tf.tidy`. With LoRA
   * active the adapted projections add their factored term (no merged weight, no base gradient);
   * an inference pass inside a generation reads the weights merged once for it.
   */
  forward(given: ForwardInputs): ForwardOutput {
    const store = this.parameters;
    const inputs = { ...given, maxBindingBytes: given.maxBindingBytes ?? store.maxBindingBytes };
    const lora = store.lora;
    // An inference pass (inputs.inference) multiplies without custom gradients (see ops.ts).
    if (lora === undefined)
      return decoderForward(this.config, store.weight, this.#rope, inputs, store.blocks);
    const merged = inputs.inference === true ? store.mergedLoRAWeights() : undefined;
    if (merged !== undefined) {
      const get = (name: string) => merged.get(name) ?? store.weight(name);
      return decoderForward(this.config, get, this.#rope, inputs, store.blocks);
    }
    return decoderForward(
      this.config,
      store.weight,
      this.#rope,
      inputs,
      store.blocks,
      lora.lowRank,
    );
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
      return headLogits(
        this.config,
        this.parameters.weight,
        hidden,
        this.parameters.blocks,
        this.parameters.lora !== undefined,
      );
    const parts = this.parameters.transposedEmbedding().map((head) => tf.matMul(hidden, head));
    return (parts.length === 1 ? parts[0] : tf.concat(parts, 1)) as tf.Tensor2D;
  }

  /** Rows of logits one head call may produce: `[N, V]` float32 must fit `maxBindingBytes`. */
  logitsRowsPerCall(): number {
    const limit = this.parameters.maxBindingBytes;
    if (limit === undefined) return Number.POSITIVE_INFINITY;
    return Math.floor(limit / (this.config.vocabSize * 4));
  }

  #checkLogitsSize(rows: number): void {
    if (rows <= this.logitsRowsPerCall()) return;
    const V = this.config.vocabSize;
    throw new InvalidInputError(
      `one call's logits, ${rows} positions × ${V} vocabulary entries (${rows * V * 4} bytes), exceed the binding limit of ${this.parameters.maxBindingBytes} bytes (maxBindingBytes; on webgpu the adapter's maxStorageBufferBindingSize), and the GPU would return wrong numbers: lower microBatchSize in trainStep/sftStep so a micro-batch has at most ${this.logitsRowsPerCall()} response tokens, or generate for fewer prompts per call (scoring splits its rows by itself)`,
      { details: { field: 'microBatchSize', value: rows, limit: this.parameters.maxBindingBytes } },
    );
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

  /** Frees the parameters and the rotary constants. */
  dispose(): void {
    this.parameters.dispose();
    this.#rope.rotateHalf.dispose();
  }
}
