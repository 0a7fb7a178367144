/**
 * Batched generation with a KV cache. Prompts are left-padded; each row's positions
 * start at 0 at its first real token and pad key columns are masked, so a padded row decodes
 * exactly as it would alone. Each row samples from its own seeded `Rng` (same seed and prompts,
 * same tokens); rows that stopped keep a slot in the batch until every row is done. The choice is
 * made in JS on the last position's logits (`sampleToken`), or on webgpu by one GPU dispatch
 * (`backends/webgpu/kernels/sample.ts`) fed with the same per-row draws, so a decode step reads back only
 * the B sampled ids and their log-probs instead of the `[B, V]` logits.
 */

import {
  createRng,
  type FinishReason,
  type GenerationResult,
  InvalidInputError,
  type Rng,
  type SamplingOptions,
} from '@agentrl/core';
import type { CausalLMConfig } from '@agentrl/core/checkpoint';
import * as tf from '@tensorflow/tfjs';
import { allocateLayerCache } from '../backends/webgpu/kernels/kv-cache.ts';
import {
  gpuSamplingEnabled,
  MAX_GPU_SAMPLING_VOCAB,
  sampleTokensOnGpu,
} from '../backends/webgpu/kernels/sample.ts';
import {
  buildMask,
  type ForwardInputs,
  type ForwardOutput,
  type LayerCache,
  writesCacheInPlace,
} from '../decoder/forward.ts';
import {
  type SampledToken,
  sampleToken,
  type TokenSamplingOptions,
  validateSampling,
} from './sampling.ts';

/** What generation needs of a model: its config, the forward pass and the LM head. */
export interface GenerationModel {
  readonly config: CausalLMConfig;
  forward(inputs: ForwardInputs): ForwardOutput;
  logits(hidden: tf.Tensor2D, options?: { inference?: boolean }): tf.Tensor2D;
}

function lastLogits(
  model: GenerationModel,
  hidden: tf.Tensor2D,
  B: number,
  T: number,
): tf.Tensor2D {
  const H = model.config.hiddenSize;
  // A decode step's hidden states are the last positions already (a slice would be a dispatch).
  const last =
    T === 1
      ? hidden
      : (tf.reshape(tf.slice(tf.reshape(hidden, [B, T, H]), [0, T - 1, 0], [B, 1, H]), [
          B,
          H,
        ]) as tf.Tensor2D);
  return model.logits(last, { inference: true });
}

/** New positions a generation's KV cache holds at first (beyond the prompt); see generateTokens. */
export const CACHE_STEPS = 128;

/** `tf.tidy(fn)`, disposing `owned` too when `fn` throws. */
function tidyOrDispose<T extends tf.TensorContainer>(owned: tf.Tensor[], fn: () => T): T {
  try {
    return tf.tidy(fn);
  } catch (error) {
    tf.dispose(owned);
    throw error;
  }
}

/**
 * One token per row that is not done, from `[B, V]` logits (disposed here). On webgpu the rows'
 * draws are taken in JS exactly where `sampleToken` takes them (one per non-greedy token) and the
 * choice runs on the GPU; only `[B, 2]` (id, log-prob) is read back.
 */
async function chooseTokens(
  logits: tf.Tensor2D,
  options: TokenSamplingOptions,
  rngs: readonly Rng[],
  done: readonly boolean[],
): Promise<(SampledToken | undefined)[]> {
  const [B, V] = logits.shape;
  if (gpuSamplingEnabled() && V <= MAX_GPU_SAMPLING_VOCAB) {
    const draws = new Float32Array(B);
    if (options.temperature > 0) {
      for (let b = 0; b < B; b++) if (!done[b]) draws[b] = (rngs[b] as Rng).next();
    }
    const picked = tf.tidy(() => sampleTokensOnGpu(logits, tf.tensor1d(draws), options));
    logits.dispose();
    const values = (await picked.data()) as Float32Array;
    picked.dispose();
    return done.map((d, b) =>
      d ? undefined : { token: values[2 * b] as number, logProb: values[2 * b + 1] as number },
    );
  }
  const values = (await logits.data()) as Float32Array;
  logits.dispose();
  return done.map((d, b) =>
    d ? undefined : sampleToken(values.subarray(b * V, (b + 1) * V), options, rngs[b] as Rng),
  );
}

/**
 * Generates up to `maxNewTokens` per prompt. Stops a row at a stop id (kept in the response;
 * default: the config's EOS ids) or at the length limit. `logProbs` follow `sampleToken`.
 */
export async function generateTokens(
  model: GenerationModel,
  prompts: readonly (readonly number[])[],
  sampling: SamplingOptions,
  rowOffset = 0,
): Promise<GenerationResult> {
  const options: TokenSamplingOptions = {
    temperature: sampling.temperature ?? 1,
    topK: sampling.topK ?? 0,
    topP: sampling.topP ?? 1,
  };
  validateSampling(options);
  if (!Number.isInteger(sampling.maxNewTokens) || sampling.maxNewTokens < 0) {
    throw new InvalidInputError(
      `sampling.maxNewTokens must be an integer >= 0, got ${sampling.maxNewTokens}`,
      { details: { field: 'maxNewTokens', value: sampling.maxNewTokens } },
    );
  }
  prompts.forEach((p, b) => {
    if (p.length === 0)
      throw new InvalidInputError(`prompts[${b}] is empty; every prompt needs at least one token`, {
        details: { field: `prompts[${b}]` },
      });
  });
  const B = prompts.length;
  const tokenIds: number[][] = prompts.map(() => []);
  const logProbs: number[][] = prompts.map(() => []);
  const finishReasons: FinishReason[] = prompts.map(() => 'length');
  if (B === 0 || sampling.maxNewTokens === 0) return { tokenIds, logProbs, finishReasons };
  const stop = new Set(sampling.stopTokenIds ?? model.config.eosTokenIds);
  // One stream per row, keyed by the row's index in the whole batch: a row samples the same
  // tokens whatever the batch split (worker threads) around it.
  const seed = sampling.seed ?? 0;
  const rngs = prompts.map((_, b) => createRng(`${seed}/row${rowOffset + b}`));
  const P = Math.max(...prompts.map((p) => p.length));
  const keyValid: boolean[][] = [];
  const ids = new Int32Array(B * P);
  const positions = new Int32Array(B * P);
  const nextPosition: number[] = [];
  prompts.forEach((p, b) => {
    const pad = P - p.length;
    keyValid.push(Array.from({ length: P }, (_, s) => s >= pad));
    for (let s = 0; s < P; s++) {
      ids[b * P + s] = s >= pad ? (p[s - pad] as number) : 0;
      positions[b * P + s] = s >= pad ? s - pad : 0;
    }
    nextPosition.push(p.length);
  });

  // Where the forward pass writes the cache in place (webgpu), the cache is allocated at a
  // capacity and written step by step; else each step appends into new tensors. The capacity
  // starts at the prompt plus CACHE_STEPS new positions (or the generation's final length, the last
  // token never being fed back, if smaller) and doubles when full: rows that stop early under a
  // large maxNewTokens do not hold a cache of its full length, and the pool keeps at most the
  // capacities it went through (under twice the final one).
  const finalLength = P + sampling.maxNewTokens - 1;
  let capacity = Math.min(finalLength, P + CACHE_STEPS);
  const fixed = writesCacheInPlace(true)
    ? Array.from({ length: model.config.numHiddenLayers }, () => ({
        ...allocateLayerCache(B, model.config.numKeyValueHeads, model.config.headDim, capacity),
        length: 0,
      }))
    : undefined;
  const flatten = (cache: readonly LayerCache[]) => cache.flatMap((c) => [c.k, c.v]);
  const prefill = tidyOrDispose(fixed === undefined ? [] : flatten(fixed), () => {
    const out = model.forward({
      ids: tf.tensor2d(ids, [B, P], 'int32'),
      positions,
      mask: buildMask(keyValid, B, P, P),
      inference: true,
      ...(fixed === undefined ? {} : { cache: fixed }),
    });
    return {
      logits: lastLogits(model, out.hidden, B, P),
      cache: fixed === undefined ? flatten(out.cache) : [],
    };
  });
  let cacheFlat = fixed === undefined ? prefill.cache : flatten(fixed);
  let logitsTensor: tf.Tensor2D = prefill.logits;
  const done = prompts.map(() => false);
  try {
    for (let step = 0; step < sampling.maxNewTokens; step++) {
      const chosen = await chooseTokens(logitsTensor, options, rngs, done);
      const next = new Int32Array(B);
      for (let b = 0; b < B; b++) {
        const pick = chosen[b];
        if (pick === undefined) continue;
        const { token, logProb } = pick;
        (tokenIds[b] as number[]).push(token);
        (logProbs[b] as number[]).push(logProb);
        next[b] = token;
        if (stop.has(token)) {
          done[b] = true;
          finishReasons[b] = 'stop';
        }
      }
      if (done.every(Boolean) || step + 1 === sampling.maxNewTokens) {
        logitsTensor = tf.zeros([1, 1]);
        break;
      }
      const stepPositions = nextPosition.slice();
      for (let b = 0; b < B; b++) {
        (keyValid[b] as boolean[]).push(true);
        nextPosition[b] = (nextPosition[b] as number) + 1;
      }
      const S = (keyValid[0] as boolean[]).length;
      if (fixed !== undefined && S > capacity) {
        const grown = Math.min(finalLength, Math.max(S, 2 * capacity));
        const more = grown - capacity;
        const old = cacheFlat;
        cacheFlat = old.map((t, i) =>
          tf.pad(
            t,
            i % 2 === 0
              ? [
                  [0, 0],
                  [0, 0],
                  [0, 0],
                  [0, more],
                ]
              : [
                  [0, 0],
                  [0, 0],
                  [0, more],
                  [0, 0],
                ],
          ),
        );
        tf.dispose(old);
        capacity = grown;
      }
      const cache: LayerCache[] = [];
      for (let i = 0; i < cacheFlat.length; i += 2) {
        const k = cacheFlat[i] as tf.Tensor4D;
        const v = cacheFlat[i + 1] as tf.Tensor4D;
        cache.push(fixed === undefined ? { k, v } : { k, v, length: S - 1 });
      }
      const result = tf.tidy(() => {
        const out = model.forward({
          ids: tf.tensor2d(next, [B, 1], 'int32'),
          positions: stepPositions,
          mask: buildMask(keyValid, B, 1, S),
          inference: true,
          cache,
        });
        return {
          logits: lastLogits(model, out.hidden, B, 1),
          cache: fixed === undefined ? flatten(out.cache) : [],
        };
      });
      if (fixed === undefined) {
        tf.dispose(cacheFlat);
        cacheFlat = result.cache;
      }
      logitsTensor = result.logits;
    }
  } finally {
    logitsTensor.dispose();
    tf.dispose(cacheFlat);
  }
  return { tokenIds, logProbs, finishReasons };
}
