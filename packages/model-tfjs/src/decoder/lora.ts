/**
 * LoRA adapters (Hu et al. 2021, arXiv 2106.09685) on the attention and MLP projections: the
 * effective weight is `W + (α / r) · A · B` with `A` `[in, r]` and `B` `[r, out]` (our `[in, out]`
 * layout), `B` starting at zero so the model is unchanged at first. Base weights are frozen while
 * adapters are active. Train steps and single forward passes compute the factored form
 * `x · W + (α / r) · (x · A) · B` (see `linear` in ops.ts); generation merges once per call;
 * saving writes merged weights, so the checkpoint loads anywhere unchanged.
 */
import { createRng, InvalidInputError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import type { LowRank } from './ops.ts';

/** The projections LoRA can target (the suffix of the HF parameter name). */
export const LORA_TARGETS = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
] as const;

/** Options of `model.enableLoRA`. */
export interface LoRAOptions {
  /** Adapter rank r. */
  readonly rank: number;
  /** Scale numerator α; the update is scaled by α / r. Default: 2·r. */
  readonly alpha?: number;
  /** Projections to adapt. Default: all of {@link LORA_TARGETS}. */
  readonly targets?: readonly (typeof LORA_TARGETS)[number][];
  /** Seed of A's initialisation. Default 0. */
  readonly seed?: number | string;
}

/** Active adapters: per targeted weight name, its A and B. */
export class LoRAAdapters {
  readonly scale: number;
  readonly rank: number;
  /** α as resolved (default 2·r). */
  readonly alpha: number;
  /** The targeted projections, in {@link LORA_TARGETS} order. */
  readonly targets: readonly (typeof LORA_TARGETS)[number][];
  /** Seed of A's initialisation (of the saved adapters' when `loadTrainingState` replaced them). */
  seed: number | string;
  readonly adapters = new Map<string, { a: tf.Variable; b: tf.Variable }>();

  constructor(weights: ReadonlyMap<string, tf.Variable>, options: LoRAOptions) {
    const { rank } = options;
    if (!Number.isInteger(rank) || rank <= 0) {
      throw new InvalidInputError(`LoRA rank must be a positive integer, got ${rank}`, {
        details: { field: 'rank', value: rank },
      });
    }
    const targets = new Set<string>(options.targets ?? LORA_TARGETS);
    for (const t of targets) {
      if (!(LORA_TARGETS as readonly string[]).includes(t)) {
        throw new InvalidInputError(`LoRA target ${t} is not one of ${LORA_TARGETS.join(', ')}`, {
          details: { field: 'targets', value: t },
        });
      }
    }
    this.rank = rank;
    this.alpha = options.alpha ?? 2 * rank;
    this.scale = this.alpha / rank;
    this.targets = LORA_TARGETS.filter((t) => targets.has(t));
    this.seed = options.seed ?? 0;
    const rng = createRng(this.seed).split('lora');
    for (const [name, w] of weights) {
      const m = /\.([a-z_]+)\.weight$/.exec(name);
      if (m === null || !targets.has(m[1] as string)) continue;
      const [inDim, outDim] = w.shape as [number, number];
      // A ~ N(0, 1/in) keeps x·A at the scale of x; B = 0 makes the initial update zero.
      const a = new Float32Array(inDim * rank);
      for (let i = 0; i < a.length; i++) a[i] = rng.normal(0, 1 / Math.sqrt(inDim));
      this.adapters.set(name, {
        a: tf.variable(tf.tensor2d(a, [inDim, rank]), true, `${w.name}/lora_A`),
        b: tf.variable(tf.zeros([rank, outDim]), true, `${w.name}/lora_B`),
      });
    }
  }

  /** `W + scale · A · B` for adapted weights, `W` otherwise; call inside `tf.tidy`. */
  effective(name: string, base: tf.Tensor): tf.Tensor {
    const adapter = this.adapters.get(name);
    if (adapter === undefined) return base;
    return tf.add(base, tf.mul(tf.matMul(adapter.a, adapter.b), this.scale));
  }

  /** The adapter of a weight (HF name) for the factored forward, if it has one. */
  readonly lowRank = (name: string): LowRank | undefined => {
    const adapter = this.adapters.get(name);
    if (adapter === undefined) return undefined;
    return { a: adapter.a as tf.Tensor2D, b: adapter.b as tf.Tensor2D, scale: this.scale };
  };

  /** The adapter variables, in a stable order. */
  variables(): tf.Variable[] {
    return [...this.adapters.values()].flatMap((x) => [x.a, x.b]);
  }

  dispose(): void {
    tf.dispose(this.variables());
    this.adapters.clear();
  }
}
