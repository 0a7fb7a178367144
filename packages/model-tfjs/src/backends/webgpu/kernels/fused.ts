/**
 * Fused WGSL kernels for the decoder's elementwise and row-wise pieces (measured on an H100: the
 * time goes to per-dispatch host overhead, about 0.4–0.5 ms a kernel, so fewer dispatches is the first lever). Each
 * op runs one dispatch forward on webgpu, has its gradient, and falls back to the composed tfjs
 * ops on every other backend (the reference the parity tests compare against).
 */
import * as tf from '@tensorflow/tfjs';
import { type FusedKernelName, webgpuSwitches } from '../../switches.ts';
import { columnSum } from './column-sum.ts';
import {
  elementwiseProgram,
  type ProgramKernel,
  type ProgramUniform,
  registerProgramKernels,
  rowProgram,
} from './programs.ts';

/** Kernel names, registered for the webgpu backend only. */
export const FUSED_KERNELS = {
  rmsNorm: 'AgentrlRmsNorm',
  rmsNormGradX: 'AgentrlRmsNormGradX',
  rmsNormGradWRows: 'AgentrlRmsNormGradWRows',
  swiglu: 'AgentrlSwiGLU',
  swigluGradGate: 'AgentrlSwiGLUGradGate',
  swigluGradUp: 'AgentrlSwiGLUGradUp',
  rotary: 'AgentrlRotary',
  tokenLogProbs: 'AgentrlTokenLogProbs',
  tokenLogProbsGrad: 'AgentrlTokenLogProbsGrad',
  entropy: 'AgentrlEntropy',
  entropyGrad: 'AgentrlEntropyGrad',
  adamwMoment1: 'AgentrlAdamWMoment1',
  adamwMoment2: 'AgentrlAdamWMoment2',
  adamwParam: 'AgentrlAdamWParam',
} as const;

/** The scalars of one AdamW update (uniforms of the AdamW kernels). */
export interface AdamWScalars {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  /** `1 - beta1^step`, `1 - beta2^step`. */
  readonly bias1: number;
  readonly bias2: number;
  /** Gradient scale from norm clipping (1 when not clipped). */
  readonly gradScale: number;
}

const ADAMW_UNIFORMS =
  'lr : f32, beta1 : f32, beta2 : f32, eps : f32, wd : f32, bias1 : f32, bias2 : f32, gscale : f32,';
const ADAMW_NEW_MOMENTS = `let g = grad[index] * uniforms.gscale;
        let m2 = uniforms.beta1 * m[index] + (1.0 - uniforms.beta1) * g;
        let v2 = uniforms.beta2 * v[index] + (1.0 - uniforms.beta2) * g * g;`;
const adamwUniforms = (a: Record<string, number>): ProgramUniform[] =>
  ['lr', 'beta1', 'beta2', 'eps', 'weightDecay', 'bias1', 'bias2', 'gradScale'].map((k) => ({
    type: 'float32',
    data: [a[k] as number],
  }));

const rowsCols = (t: tf.TensorInfo): [number, number] => {
  const cols = t.shape[t.shape.length - 1] as number;
  return [t.shape.reduce((a, b) => a * b, 1) / cols, cols];
};

/** WGSL: `rowMax`, the largest of the row's `logits` (`cols` entries from `base`). */
const ROW_MAX = `var m = -3.402823e+38;
          for (var c = tid; c < cols; c += BLOCK) { m = max(m, logits[base + c]); }
          let rowMax = reduceMax(m, tid);`;

/** WGSL: `lse`, the row's log-sum-exp (shifted by `rowMax`). */
const LOG_SUM_EXP = `${ROW_MAX}
          var s = 0.0;
          for (var c = tid; c < cols; c += BLOCK) { s += exp(logits[base + c] - rowMax); }
          let lse = rowMax + log(reduceSum(s, tid));`;

/** WGSL: `total` = Σ e^(l − rowMax) and `weighted` = Σ e^(l − rowMax) · l over the row. */
const SOFTMAX_SUMS = `${ROW_MAX}
          var s = 0.0;
          var sl = 0.0;
          for (var c = tid; c < cols; c += BLOCK) {
            let l = logits[base + c];
            let e = exp(l - rowMax);
            s += e;
            sl += e * l;
          }
          let total = reduceSum(s, tid);
          let weighted = reduceSum(sl, tid);`;

/** WGSL: `r = 1 / sqrt(mean(x²) + eps)` of the row (`cols` entries from `base`). */
export const INVERSE_RMS = `var ss = 0.0;
          for (var c = tid; c < cols; c += BLOCK) { let v = x[base + c]; ss += v * v; }
          let r = inverseSqrt(reduceSum(ss, tid) / f32(cols) + uniforms.eps);`;

/**
 * A row kernel of the RMSNorm family over `x` `[..., H]` with uniforms `eps`, `rows`, `cols`:
 * `body` runs after a prelude defining `cols` (0 past the last row: no early return, the
 * reductions need every workgroup's barriers) and `base`, the row's first index.
 */
export function normRowKernel(name: string, inputs: string[], body: string): ProgramKernel {
  return {
    inputs,
    build: ([x], { eps }) => {
      const [rows, cols] = rowsCols(x as tf.TensorInfo);
      return {
        program: rowProgram(
          name,
          inputs,
          [...(x as tf.TensorInfo).shape],
          rows,
          `let inRange = row < uniforms.rows;
          let cols = select(0, uniforms.cols, inRange);
          let base = row * cols;
          ${body}`,
          'eps : f32, rows : i32, cols : i32,',
        ),
        uniforms: [
          { type: 'float32', data: [eps as number] },
          { type: 'int32', data: [rows] },
          { type: 'int32', data: [cols] },
        ],
      };
    },
  };
}

const builders: Record<string, ProgramKernel> = {
  [FUSED_KERNELS.rmsNorm]: normRowKernel(
    'rmsnorm',
    ['x', 'w'],
    `${INVERSE_RMS}
          for (var c = tid; c < cols; c += BLOCK) { result[base + c] = x[base + c] * r * w[c]; }`,
  ),
  // dx = r·w·dy − x·r³·Σ(dy·w·x)/H
  [FUSED_KERNELS.rmsNormGradX]: normRowKernel(
    'rmsnorm_grad_x',
    ['x', 'w', 'dy'],
    `var ss = 0.0;
          var dot = 0.0;
          for (var c = tid; c < cols; c += BLOCK) {
            let v = x[base + c];
            ss += v * v;
            dot += dy[base + c] * w[c] * v;
          }
          let r = inverseSqrt(reduceSum(ss, tid) / f32(cols) + uniforms.eps);
          let d = reduceSum(dot, tid) * r * r * r / f32(cols);
          for (var c = tid; c < cols; c += BLOCK) {
            result[base + c] = r * w[c] * dy[base + c] - x[base + c] * d;
          }`,
  ),
  // dy · x · r per element; summed over rows by the caller to give dw.
  [FUSED_KERNELS.rmsNormGradWRows]: normRowKernel(
    'rmsnorm_grad_w_rows',
    ['x', 'dy'],
    `${INVERSE_RMS}
          for (var c = tid; c < cols; c += BLOCK) { result[base + c] = dy[base + c] * x[base + c] * r; }`,
  ),
  [FUSED_KERNELS.swiglu]: {
    inputs: ['g', 'u'],
    build: ([g]) => ({
      program: elementwiseProgram(
        'swiglu',
        ['g', 'u'],
        [...(g as tf.TensorInfo).shape],
        `let a = g[index];
        result[index] = a / (1.0 + exp(-a)) * u[index];`,
      ),
      uniforms: [],
    }),
  },
  // d/dg [g·σ(g)·u] = u·σ(g)·(1 + g·(1 − σ(g)))
  [FUSED_KERNELS.swigluGradGate]: {
    inputs: ['g', 'u', 'dy'],
    build: ([g]) => ({
      program: elementwiseProgram(
        'swiglu_grad_gate',
        ['g', 'u', 'dy'],
        [...(g as tf.TensorInfo).shape],
        `let a = g[index];
        let s = 1.0 / (1.0 + exp(-a));
        result[index] = dy[index] * u[index] * s * (1.0 + a * (1.0 - s));`,
      ),
      uniforms: [],
    }),
  },
  [FUSED_KERNELS.swigluGradUp]: {
    inputs: ['g', 'dy'],
    build: ([g]) => ({
      program: elementwiseProgram(
        'swiglu_grad_up',
        ['g', 'dy'],
        [...(g as tf.TensorInfo).shape],
        `let a = g[index];
        result[index] = dy[index] * a / (1.0 + exp(-a));`,
      ),
      uniforms: [],
    }),
  },
  // x·cos + rotate_half(x)·sin·sign over x [B, T, heads, d] and tables [B, T, 1 or heads, d].
  [FUSED_KERNELS.rotary]: {
    inputs: ['x', 'cosT', 'sinT'],
    build: ([x, table], { sign }) => {
      const shape = (x as tf.TensorInfo).shape;
      const d = shape[shape.length - 1] as number;
      const heads = shape[shape.length - 2] as number;
      const tShape = (table as tf.TensorInfo).shape;
      // Tables repeated over heads index like x; one row per position is shared by the heads.
      const perHead = tShape.length === shape.length && tShape[tShape.length - 2] === heads;
      const tableHeads = perHead ? heads : 1;
      return {
        program: elementwiseProgram(
          'rotary',
          ['x', 'cosT', 'sinT'],
          [...shape],
          `let d = uniforms.d;
          let half = d / 2;
          let k = index % d;
          let t = (index / (d * uniforms.heads)) * (d * uniforms.tableHeads)
            + select(0, index % (d * uniforms.heads) - k, uniforms.tableHeads > 1) + k;
          var partner = 0.0;
          if (k < half) { partner = -x[index + half]; } else { partner = x[index - half]; }
          result[index] = x[index] * cosT[t] + partner * sinT[t] * uniforms.sign;`,
          'd : i32, heads : i32, tableHeads : i32, sign : f32,',
        ),
        uniforms: [
          { type: 'int32', data: [d] },
          { type: 'int32', data: [heads] },
          { type: 'int32', data: [tableHeads] },
          { type: 'float32', data: [sign as number] },
        ],
      };
    },
  },
  // logits[n, t_n] − logsumexp(logits[n]) for logits [N, V] and int32 targets [N].
  [FUSED_KERNELS.tokenLogProbs]: {
    inputs: ['logits', 'targets'],
    build: ([logits]) => {
      const [rows, cols] = rowsCols(logits as tf.TensorInfo);
      return {
        program: rowProgram(
          'token_log_probs',
          ['logits', 'targets'],
          [rows],
          rows,
          `let inRange = row < uniforms.rows; // no early return: the reductions need every workgroup's barriers
          let cols = select(0, uniforms.cols, inRange);
          let base = row * cols;
          ${LOG_SUM_EXP}
          if (tid == 0 && inRange) { result[row] = logits[base + targets[row]] - lse; }`,
          'rows : i32, cols : i32,',
        ),
        uniforms: [
          { type: 'int32', data: [rows] },
          { type: 'int32', data: [cols] },
        ],
      };
    },
  },
  // AdamW (torch semantics, decoupled decay): three elementwise dispatches per parameter.
  [FUSED_KERNELS.adamwMoment1]: {
    inputs: ['grad', 'm', 'v'],
    build: ([g], attrs) => ({
      program: elementwiseProgram(
        'adamw_m',
        ['grad', 'm', 'v'],
        [...(g as tf.TensorInfo).shape],
        `${ADAMW_NEW_MOMENTS}
        result[index] = m2;`,
        ADAMW_UNIFORMS,
      ),
      uniforms: adamwUniforms(attrs),
    }),
  },
  [FUSED_KERNELS.adamwMoment2]: {
    inputs: ['grad', 'm', 'v'],
    build: ([g], attrs) => ({
      program: elementwiseProgram(
        'adamw_v',
        ['grad', 'm', 'v'],
        [...(g as tf.TensorInfo).shape],
        `${ADAMW_NEW_MOMENTS}
        result[index] = v2;`,
        ADAMW_UNIFORMS,
      ),
      uniforms: adamwUniforms(attrs),
    }),
  },
  [FUSED_KERNELS.adamwParam]: {
    inputs: ['param', 'grad', 'm', 'v'],
    build: ([p], attrs) => ({
      program: elementwiseProgram(
        'adamw_param',
        ['param', 'grad', 'm', 'v'],
        [...(p as tf.TensorInfo).shape],
        `${ADAMW_NEW_MOMENTS}
        let update = (m2 / uniforms.bias1) / (sqrt(v2 / uniforms.bias2) + uniforms.eps);
        result[index] = param[index] * (1.0 - uniforms.lr * uniforms.wd) - uniforms.lr * update;`,
        ADAMW_UNIFORMS,
      ),
      uniforms: adamwUniforms(attrs),
    }),
  },
  // H[n] = lse − Σ_v p_v·l_v for logits [N, V]
  [FUSED_KERNELS.entropy]: {
    inputs: ['logits'],
    build: ([logits]) => {
      const [rows, cols] = rowsCols(logits as tf.TensorInfo);
      return {
        program: rowProgram(
          'entropy',
          ['logits'],
          [rows],
          rows,
          `let inRange = row < uniforms.rows;
          let cols = select(0, uniforms.cols, inRange);
          let base = row * cols;
          ${SOFTMAX_SUMS}
          if (tid == 0 && inRange) { result[row] = rowMax + log(total) - weighted / total; }`,
          'rows : i32, cols : i32,',
        ),
        uniforms: [
          { type: 'int32', data: [rows] },
          { type: 'int32', data: [cols] },
        ],
      };
    },
  },
  // dlogits[n, v] = −dy[n] · p_v · (l_v − E_p[l])
  [FUSED_KERNELS.entropyGrad]: {
    inputs: ['logits', 'dy'],
    build: ([logits]) => {
      const [rows, cols] = rowsCols(logits as tf.TensorInfo);
      return {
        program: rowProgram(
          'entropy_grad',
          ['logits', 'dy'],
          [rows, cols],
          rows,
          `let inRange = row < uniforms.rows;
          let cols = select(0, uniforms.cols, inRange);
          let base = row * cols;
          ${SOFTMAX_SUMS}
          let mean = weighted / total;
          let g = select(0.0, dy[row], inRange);
          for (var c = tid; c < cols; c += BLOCK) {
            let l = logits[base + c];
            result[base + c] = -g * exp(l - rowMax) / total * (l - mean);
          }`,
          'rows : i32, cols : i32,',
        ),
        uniforms: [
          { type: 'int32', data: [rows] },
          { type: 'int32', data: [cols] },
        ],
      };
    },
  },
  // dlogits[n, v] = dy[n] · ([v = t_n] − softmax(logits[n])[v])
  [FUSED_KERNELS.tokenLogProbsGrad]: {
    inputs: ['logits', 'targets', 'dy'],
    build: ([logits]) => {
      const [rows, cols] = rowsCols(logits as tf.TensorInfo);
      return {
        program: rowProgram(
          'token_log_probs_grad',
          ['logits', 'targets', 'dy'],
          [rows, cols],
          rows,
          `let inRange = row < uniforms.rows; // no early return: the reductions need every workgroup's barriers
          let cols = select(0, uniforms.cols, inRange);
          let base = row * cols;
          ${LOG_SUM_EXP}
          let t = select(0, targets[row], inRange);
          let g = select(0.0, dy[row], inRange);
          for (var c = tid; c < cols; c += BLOCK) {
            let hit = select(0.0, 1.0, c == t);
            result[base + c] = g * (hit - exp(logits[base + c] - lse));
          }`,
          'rows : i32, cols : i32,',
        ),
        uniforms: [
          { type: 'int32', data: [rows] },
          { type: 'int32', data: [cols] },
        ],
      };
    },
  },
};

/** Registers every fused kernel for the webgpu backend (idempotent). */
export function registerFusedKernels(): void {
  registerProgramKernels(builders);
}

const onWebGPU = (): boolean => tf.getBackend() === 'webgpu';

/**
 * Whether the fused kernel `name` is used now: webgpu, set up with that kernel of
 * `webgpu.fusedKernels` on (the default; off compares with tfjs's own kernels).
 */
export function fusedKernelsActive(name: FusedKernelName): boolean {
  return onWebGPU() && webgpuSwitches().fusedKernels[name];
}

function run(
  kernel: string,
  inputs: Record<string, tf.Tensor>,
  attrs: Record<string, number> = {},
) {
  return tf.engine().runKernel(kernel, inputs as tf.NamedTensorMap, attrs) as tf.Tensor;
}

// ---- ops -------------------------------------------------------------------------------------

/** The composed reference: `w ⊙ x / sqrt(mean(x²) + eps)` over the last axis. */
export function rmsNormComposed<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  const meanSquare = tf.mean(tf.square(x), -1, true);
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight) as T;
}

const rmsNormByEps = new Map<number, (x: tf.Tensor, w: tf.Tensor) => tf.Tensor>();

/** RMSNorm in one dispatch on webgpu (backward: 3), composed elsewhere. */
export function fusedRmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  if (!onWebGPU()) return rmsNormComposed(x, weight, eps);
  let op = rmsNormByEps.get(eps);
  if (op === undefined) {
    op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const [xs, w, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
      save([xs, w]);
      return {
        value: run(FUSED_KERNELS.rmsNorm, { x: xs, w }, { eps }),
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
          const [sx, sw] = saved as [tf.Tensor, tf.Tensor];
          const g = dy as tf.Tensor;
          const dx = run(FUSED_KERNELS.rmsNormGradX, { x: sx, w: sw, dy: g }, { eps });
          const rowsDw = run(FUSED_KERNELS.rmsNormGradWRows, { x: sx, dy: g }, { eps });
          const dw = columnSum(rowsDw);
          rowsDw.dispose();
          return [dx, dw];
        },
      };
    }) as (x: tf.Tensor, w: tf.Tensor) => tf.Tensor;
    rmsNormByEps.set(eps, op);
  }
  return op(x, weight) as T;
}

/** The composed reference: `silu(gate) ⊙ up`. */
export function swigluComposed<T extends tf.Tensor>(gate: T, up: T): T {
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as T;
}

const swigluOp = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [g, u, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
  save([g, u]);
  return {
    value: run(FUSED_KERNELS.swiglu, { g, u }),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const [sg, su] = saved as [tf.Tensor, tf.Tensor];
      const d = dy as tf.Tensor;
      return [
        run(FUSED_KERNELS.swigluGradGate, { g: sg, u: su, dy: d }),
        run(FUSED_KERNELS.swigluGradUp, { g: sg, dy: d }),
      ];
    },
  };
}) as (g: tf.Tensor, u: tf.Tensor) => tf.Tensor;

/** `silu(gate) ⊙ up` in one dispatch on webgpu (backward: 2), composed elsewhere. */
export function fusedSwiGLU<T extends tf.Tensor>(gate: T, up: T): T {
  if (!onWebGPU()) return swigluComposed(gate, up);
  return swigluOp(gate, up) as T;
}

/** The composed reference: half-split rotary of `x` `[B, T, heads, d]`, tables `[B, T, 1, d]`. */
export function rotaryComposed<T extends tf.Tensor>(x: T, cos: tf.Tensor, sin: tf.Tensor): T {
  const d = x.shape[x.rank - 1] as number;
  const half = d / 2;
  const [a, b] = tf.split(x, [half, half], -1) as [tf.Tensor, tf.Tensor];
  const rotated = tf.concat([tf.neg(b), a], -1);
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as T;
}

/**
 * Half-split rotary embedding in one dispatch on webgpu (backward: 1, no gradient for the
 * tables, which are constants), composed elsewhere.
 */
export function fusedRotary<T extends tf.Tensor>(x: T, cos: tf.Tensor, sin: tf.Tensor): T {
  if (!onWebGPU()) return rotaryComposed(x, cos, sin);
  // The tables are constants: captured (and saved) rather than inputs, so the backward pass
  // computes no gradient for them.
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xs, save] = args as [tf.Tensor, tf.GradSaveFunc];
    save([cos, sin]);
    return {
      value: run(FUSED_KERNELS.rotary, { x: xs, cosT: cos, sinT: sin }, { sign: 1 }),
      // The rotation is orthogonal: its transpose is the rotation by the opposite angle.
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [c, s] = saved as [tf.Tensor, tf.Tensor];
        return [run(FUSED_KERNELS.rotary, { x: dy as tf.Tensor, cosT: c, sinT: s }, { sign: -1 })];
      },
    };
  }) as (x: tf.Tensor) => tf.Tensor;
  return op(x) as T;
}

/** The composed reference: `logits[n, t_n] − logsumexp(logits[n])`. */
export function tokenLogProbsComposed(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  const V = logits.shape[1];
  const N = logits.shape[0];
  const flat = tf.add(tf.mul(tf.range(0, N, 1, 'int32'), tf.scalar(V, 'int32')), targets);
  const picked = tf.gather(tf.reshape(logits, [-1]), flat);
  return tf.sub(picked, tf.logSumExp(logits, -1)) as tf.Tensor1D;
}

/**
 * Token log-probs (log-softmax gathered at the targets) of `[N, V]` logits in one dispatch on
 * webgpu (backward: 1), composed elsewhere. `targets` is int32 `[N]`.
 */
export function fusedTokenLogProbs(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  if (!onWebGPU()) return tokenLogProbsComposed(logits, targets);
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [l, save] = args as [tf.Tensor, tf.GradSaveFunc];
    save([l, targets]);
    return {
      value: run(FUSED_KERNELS.tokenLogProbs, { logits: l, targets }),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [sl, st] = saved as [tf.Tensor, tf.Tensor];
        return [
          run(FUSED_KERNELS.tokenLogProbsGrad, { logits: sl, targets: st, dy: dy as tf.Tensor }),
        ];
      },
    };
  }) as (logits: tf.Tensor) => tf.Tensor;
  return op(logits) as tf.Tensor1D;
}

/**
 * One AdamW update of `param` with its moments, in three dispatches on webgpu (new m, new v, new
 * parameter, each computed from the old values) instead of ~15 composed kernels; composed
 * elsewhere. Returns the new tensors; the caller assigns them. The optimizer uses it on webgpu
 * only for a parameter whose moments are too large for a moments block (adamw.ts).
 */
export function fusedAdamWUpdate(
  param: tf.Tensor,
  grad: tf.Tensor,
  m: tf.Tensor,
  v: tf.Tensor,
  a: AdamWScalars,
): { param: tf.Tensor; m: tf.Tensor; v: tf.Tensor } {
  if (!onWebGPU()) {
    const g = a.gradScale === 1 ? grad : tf.mul(grad, a.gradScale);
    const m2 = tf.add(tf.mul(m, a.beta1), tf.mul(g, 1 - a.beta1));
    const v2 = tf.add(tf.mul(v, a.beta2), tf.mul(tf.square(g), 1 - a.beta2));
    const update = tf.div(tf.div(m2, a.bias1), tf.add(tf.sqrt(tf.div(v2, a.bias2)), a.eps));
    const decayed = a.weightDecay === 0 ? param : tf.mul(param, 1 - a.lr * a.weightDecay);
    return { param: tf.sub(decayed, tf.mul(update, a.lr)), m: m2, v: v2 };
  }
  const attrs = { ...a } as unknown as Record<string, number>;
  return {
    m: run(FUSED_KERNELS.adamwMoment1, { grad, m, v }, attrs),
    v: run(FUSED_KERNELS.adamwMoment2, { grad, m, v }, attrs),
    param: run(FUSED_KERNELS.adamwParam, { param, grad, m, v }, attrs),
  };
}

/** The composed reference: `-Σ_v p_v log p_v` per row of `[N, V]` logits. */
export function entropyComposed(logits: tf.Tensor2D): tf.Tensor1D {
  const lse = tf.logSumExp(logits, -1);
  const probs = tf.exp(tf.sub(logits, tf.expandDims(lse, -1)));
  return tf.sub(lse, tf.sum(tf.mul(probs, logits), -1)) as tf.Tensor1D;
}

const entropyOp = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [logits, save] = args as [tf.Tensor, tf.GradSaveFunc];
  save([logits]);
  return {
    value: run(FUSED_KERNELS.entropy, { logits }),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [
      run(FUSED_KERNELS.entropyGrad, { logits: saved[0] as tf.Tensor, dy: dy as tf.Tensor }),
    ],
  };
}) as (logits: tf.Tensor) => tf.Tensor;

/** Entropy of each row's softmax in one dispatch on webgpu (backward: 1), composed elsewhere. */
export function fusedEntropy(logits: tf.Tensor2D): tf.Tensor1D {
  if (!onWebGPU()) return entropyComposed(logits);
  return entropyOp(logits) as tf.Tensor1D;
}
