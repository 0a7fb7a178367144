/**
 * AdamW (decoupled weight decay, torch semantics) with global gradient-norm clipping. A step whose
 * gradient norm is not finite is skipped: no parameter or moment changes. On webgpu (fused
 * kernels active) the moments of groups of parameters live in flat blocks and a step takes one
 * dispatch per parameter plus a few per group (backends/webgpu/kernels/adamw.ts).
 */
import { ConfigError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import { WASM_OPTIMIZER_KERNELS, wasmOptimizerKernelsActive } from '../backends/wasm/kernels.ts';
import {
  adamwBlockMoments,
  adamwBlockParam,
  adamwGlobalNorm,
  momentsGroupLimit,
} from '../backends/webgpu/kernels/adamw.ts';
import { fusedAdamWUpdate, fusedKernelsActive } from '../backends/webgpu/kernels/fused.ts';
import { webgpuBindingLimit } from '../backends/webgpu/setup.ts';
import type { LossScaleOptions } from './loss-scale.ts';

/** Optimizer settings; defaults follow torch.optim.AdamW and verl's actor (clip 1.0). */
export interface OptimizerOptions {
  /** Learning rate. Required. */
  readonly learningRate: number;
  /** Adam β1. Default 0.9. */
  readonly beta1?: number;
  /** Adam β2. Default 0.999. */
  readonly beta2?: number;
  /** Adam ε. Default 1e-8. */
  readonly epsilon?: number;
  /** Decoupled weight decay. Default 0.01 (torch's AdamW default). */
  readonly weightDecay?: number;
  /** Clip the global gradient L2 norm to this; 0 or Infinity disables. Default 1.0. */
  readonly maxGradNorm?: number;
  /**
   * The dynamic loss scale's schedule under precision `mixed` (train/loss-scale.ts; read when a
   * model's first mixed-precision step creates its scaler). Ignored under `f32`.
   */
  readonly lossScale?: LossScaleOptions;
}

/** The hyperparameters of the last applied step, resolved (defaults filled in). */
export interface ResolvedOptimizerOptions {
  readonly learningRate: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  readonly weightDecay: number;
  readonly maxGradNorm: number;
}

/** A parameter whose moments live in a block: its elements start at `offset`. */
interface BlockMember {
  readonly variable: tf.Variable;
  readonly offset: number;
  readonly size: number;
}

/** The moments of several parameters in one flat variable: `[m of each member | v of each]`. */
export interface MomentBlock {
  readonly moments: tf.Variable;
  /** Elements of all members together (the block holds twice as many). */
  readonly total: number;
  readonly members: readonly BlockMember[];
}

/** How moments may be grouped into blocks. */
export interface BlockLimits {
  /** Most parameters per block (the moments dispatch binds each member's gradient). */
  readonly maxMembers: number;
  /** Largest block, in bytes (a block is bound whole). */
  readonly maxBlockBytes: number;
}

/**
 * The AdamW moments of every variable, plus the step count. Moments are held per variable, or,
 * for the webgpu fused step, packed into blocks; `moments`, `existingMoments` and `setMoments`
 * unpack them first, so callers always see one `m` and one `v` variable per parameter.
 */
export class AdamWState {
  step = 0;
  /** The settings of the last applied step (saved with the state, for the record). */
  lastOptions: ResolvedOptimizerOptions | undefined;
  readonly #m = new Map<string, tf.Variable>();
  readonly #v = new Map<string, tf.Variable>();
  #blocks: MomentBlock[] = [];
  #separate: tf.Variable[] = [];
  #layoutKey: string | undefined;
  readonly #packed = new Set<string>();

  moments(variable: tf.Variable): { m: tf.Variable; v: tf.Variable } {
    if (this.#packed.has(variable.name)) this.#unpack();
    let m = this.#m.get(variable.name);
    let v = this.#v.get(variable.name);
    if (m === undefined || v === undefined) {
      m = tf.variable(tf.zerosLike(variable), false);
      v = tf.variable(tf.zerosLike(variable), false);
      this.#m.set(variable.name, m);
      this.#v.set(variable.name, v);
    }
    return { m, v };
  }

  /** The moments already created for `variable`, if any (no allocation beyond unpacking). */
  existingMoments(variable: tf.Variable): { m: tf.Variable; v: tf.Variable } | undefined {
    if (this.#packed.has(variable.name)) this.#unpack();
    const m = this.#m.get(variable.name);
    const v = this.#v.get(variable.name);
    return m === undefined || v === undefined ? undefined : { m, v };
  }

  /** Sets the moments of `variable` to copies of `m` and `v` (the caller keeps ownership). */
  setMoments(variable: tf.Variable, m: tf.Tensor, v: tf.Tensor): void {
    const current = this.moments(variable);
    current.m.assign(m);
    current.v.assign(v);
  }

  /**
   * The moments of `variables` packed into blocks (made on first use, or when the variables or
   * limits change, from the moments held so far or zeros). A variable whose moments exceed
   * `maxBlockBytes` stays separate (returned in `separate`).
   */
  packedBlocks(
    variables: readonly tf.Variable[],
    limits: BlockLimits,
  ): { blocks: readonly MomentBlock[]; separate: readonly tf.Variable[] } {
    const key = `${variables.map((v) => v.name).join('\n')}|${limits.maxMembers}|${limits.maxBlockBytes}`;
    if (this.#layoutKey === key) return { blocks: this.#blocks, separate: this.#separate };
    this.#unpack();
    const groups: tf.Variable[][] = [];
    const separate: tf.Variable[] = [];
    let current: tf.Variable[] = [];
    let elements = 0;
    for (const variable of variables) {
      if (8 * variable.size > limits.maxBlockBytes) {
        separate.push(variable);
        continue;
      }
      if (
        current.length >= limits.maxMembers ||
        8 * (elements + variable.size) > limits.maxBlockBytes
      ) {
        groups.push(current);
        current = [];
        elements = 0;
      }
      current.push(variable);
      elements += variable.size;
    }
    if (current.length > 0) groups.push(current);
    this.#blocks = groups.map((members) => this.#pack(members));
    this.#separate = separate;
    this.#layoutKey = key;
    return { blocks: this.#blocks, separate };
  }

  #pack(variables: readonly tf.Variable[]): MomentBlock {
    const members: BlockMember[] = [];
    let total = 0;
    for (const variable of variables) {
      members.push({ variable, offset: total, size: variable.size });
      total += variable.size;
    }
    const flat = (which: Map<string, tf.Variable>) =>
      variables.map((variable) => {
        const held = which.get(variable.name);
        return held === undefined ? tf.zeros([variable.size]) : tf.reshape(held, [-1]);
      });
    const moments = tf.tidy(() =>
      tf.variable(tf.concat([...flat(this.#m), ...flat(this.#v)]), false),
    );
    for (const variable of variables) {
      this.#packed.add(variable.name);
      this.#m.get(variable.name)?.dispose();
      this.#v.get(variable.name)?.dispose();
      this.#m.delete(variable.name);
      this.#v.delete(variable.name);
    }
    return { moments, total, members };
  }

  /** Moves every block's moments back to one `m` and one `v` variable per parameter. */
  #unpack(): void {
    for (const block of this.#blocks) {
      for (const { variable, offset, size } of block.members) {
        const piece = (start: number) =>
          tf.tidy(() =>
            tf.variable(
              tf.reshape(tf.slice(block.moments, [start], [size]), variable.shape),
              false,
            ),
          );
        this.#m.set(variable.name, piece(offset));
        this.#v.set(variable.name, piece(block.total + offset));
      }
      block.moments.dispose();
    }
    this.#blocks = [];
    this.#separate = [];
    this.#layoutKey = undefined;
    this.#packed.clear();
  }

  dispose(): void {
    for (const t of [...this.#m.values(), ...this.#v.values()]) t.dispose();
    for (const block of this.#blocks) block.moments.dispose();
    this.#m.clear();
    this.#v.clear();
    this.#blocks = [];
    this.#separate = [];
    this.#layoutKey = undefined;
    this.#packed.clear();
  }
}

function checkPositive(value: number, field: string, allowZero: boolean): number {
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new ConfigError(
      `${field} must be a ${allowZero ? 'non-negative' : 'positive'} finite number, got ${value}`,
      { details: { field, value } },
    );
  }
  return value;
}

/** Global L2 norm of a set of gradients (a JS number). */
export async function globalNorm(grads: readonly tf.Tensor[]): Promise<number> {
  const norm = tf.tidy(() => {
    if (fusedKernelsActive('adamw')) return adamwGlobalNorm(grads);
    if (wasmOptimizerKernelsActive() && grads.length > 0) {
      // One call over every gradient instead of two kernels per gradient plus their sum.
      const inputs = grads as unknown as tf.NamedTensorMap;
      return tf.sqrt(
        tf.engine().runKernel(WASM_OPTIMIZER_KERNELS.sumOfSquares, inputs) as tf.Tensor,
      );
    }
    return tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g)))));
  });
  const value = (await norm.data())[0] as number;
  norm.dispose();
  return value;
}

/**
 * The fused webgpu step: the gradient norm on the GPU, one dispatch per moments block, one per
 * parameter. The block kernels read the norm themselves (clip scale; no change when it is not
 * finite), so nothing waits for it: it is read back once, after the whole step is queued, and a
 * non-finite norm then undoes the step count. Only a parameter too large for a block (its update
 * takes the clip scale as a number) makes the step read the norm first.
 */
async function applyFused(
  state: AdamWState,
  variables: readonly tf.Variable[],
  grads: readonly tf.Tensor[],
  resolved: ResolvedOptimizerOptions,
  unscale: number,
): Promise<{ gradNorm: number; skipped: boolean }> {
  const { blocks, separate } = state.packedBlocks(variables, {
    maxMembers: momentsGroupLimit(),
    maxBlockBytes: webgpuBindingLimit() ?? Number.POSITIVE_INFINITY,
  });
  const norm = tf.tidy(() => adamwGlobalNorm(grads, unscale));
  try {
    let gradNorm: number | undefined;
    if (separate.length > 0) {
      gradNorm = (await norm.data())[0] as number;
      if (!Number.isFinite(gradNorm)) return { gradNorm, skipped: true };
    }
    const before = { step: state.step, lastOptions: state.lastOptions };
    state.step += 1;
    state.lastOptions = resolved;
    const { learningRate: lr, beta1, beta2, epsilon: eps, weightDecay, maxGradNorm } = resolved;
    const clip = maxGradNorm > 0 && Number.isFinite(maxGradNorm) ? maxGradNorm : 0;
    const common = {
      lr,
      beta1,
      beta2,
      eps,
      weightDecay,
      bias1: 1 - beta1 ** state.step,
      bias2: 1 - beta2 ** state.step,
    };
    const gradOf = new Map(variables.map((v, i) => [v.name, grads[i] as tf.Tensor]));
    tf.tidy(() => {
      for (const block of blocks) {
        const memberGrads = block.members.map(
          ({ variable }) => gradOf.get(variable.name) as tf.Tensor,
        );
        const scalars = { ...common, clip, unscale };
        block.moments.assign(adamwBlockMoments(memberGrads, block.moments, norm, scalars));
        for (const { variable, offset } of block.members) {
          variable.assign(
            adamwBlockParam(variable, block.moments, norm, offset, block.total, scalars),
          );
        }
      }
      if (separate.length === 0) return;
      const n = gradNorm as number;
      const gradScale = clip > 0 && n > clip ? clip / (n + 1e-6) : 1;
      for (const variable of separate) {
        const { m, v } = state.moments(variable);
        const raw = gradOf.get(variable.name) as tf.Tensor;
        const g = unscale === 1 ? raw : tf.mul(raw, unscale);
        const next = fusedAdamWUpdate(variable, g, m, v, { ...common, gradScale });
        m.assign(next.m);
        v.assign(next.v);
        variable.assign(next.param);
      }
    });
    gradNorm ??= (await norm.data())[0] as number;
    if (!Number.isFinite(gradNorm)) {
      state.step = before.step;
      state.lastOptions = before.lastOptions;
      return { gradNorm, skipped: true };
    }
    return { gradNorm, skipped: false };
  } finally {
    norm.dispose();
  }
}

/**
 * Clips and applies `grads` (keyed like `variables`) with AdamW. Returns the pre-clip gradient
 * norm and whether the step was skipped (non-finite norm). `unscale` multiplies every gradient
 * first (the inverse of a loss scale, a power of two: exact): the fused webgpu step does it
 * inside its kernels, the other paths with one multiply per gradient.
 */
export async function applyAdamW(
  state: AdamWState,
  variables: readonly tf.Variable[],
  grads: readonly tf.Tensor[],
  options: OptimizerOptions,
  unscale = 1,
): Promise<{ gradNorm: number; skipped: boolean }> {
  const lr = checkPositive(options.learningRate, 'learningRate', true);
  const beta1 = options.beta1 ?? 0.9;
  const beta2 = options.beta2 ?? 0.999;
  const eps = options.epsilon ?? 1e-8;
  const wd = checkPositive(options.weightDecay ?? 0.01, 'weightDecay', true);
  const maxNorm = checkPositive(options.maxGradNorm ?? 1, 'maxGradNorm', true);
  const resolved: ResolvedOptimizerOptions = {
    learningRate: lr,
    beta1,
    beta2,
    epsilon: eps,
    weightDecay: wd,
    maxGradNorm: maxNorm,
  };
  if (fusedKernelsActive('adamw')) return applyFused(state, variables, grads, resolved, unscale);
  if (unscale !== 1) {
    const scaled = tf.tidy(() => grads.map((g) => tf.mul(g, unscale)));
    try {
      return await applyAdamW(state, variables, scaled, options);
    } finally {
      tf.dispose(scaled);
    }
  }
  const gradNorm = await globalNorm(grads);
  if (!Number.isFinite(gradNorm)) return { gradNorm, skipped: true };
  const coef =
    maxNorm > 0 && Number.isFinite(maxNorm) && gradNorm > maxNorm ? maxNorm / (gradNorm + 1e-6) : 1;
  state.step += 1;
  state.lastOptions = resolved;
  const bias1 = 1 - beta1 ** state.step;
  const bias2 = 1 - beta2 ** state.step;
  const wasmStep = wasmOptimizerKernelsActive();
  tf.tidy(() => {
    variables.forEach((variable, i) => {
      if (wasmStep) {
        // One SIMD pass per parameter, bit for bit the composed update below (backends/wasm/adamw.ts).
        const { m, v } = state.moments(variable);
        const scalars = { beta1, beta2, bias1, bias2, eps, lr, weightDecay: wd, gradScale: coef };
        const [param, m2, v2] = tf
          .engine()
          .runKernel(
            WASM_OPTIMIZER_KERNELS.adamwStep,
            { param: variable, grad: grads[i] as tf.Tensor, m, v },
            scalars as unknown as tf.NamedAttrMap,
          ) as tf.Tensor[];
        m.assign(m2 as tf.Tensor);
        v.assign(v2 as tf.Tensor);
        variable.assign(param as tf.Tensor);
        return;
      }
      const g = coef === 1 ? (grads[i] as tf.Tensor) : tf.mul(grads[i] as tf.Tensor, coef);
      const { m, v } = state.moments(variable);
      const m2 = tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1));
      const v2 = tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2));
      m.assign(m2);
      v.assign(v2);
      const update = tf.div(tf.div(m2, bias1), tf.add(tf.sqrt(tf.div(v2, bias2)), eps));
      const decayed = wd === 0 ? variable : tf.mul(variable, 1 - lr * wd);
      variable.assign(tf.sub(decayed, tf.mul(update, lr)));
    });
  });
  return { gradNorm, skipped: false };
}
