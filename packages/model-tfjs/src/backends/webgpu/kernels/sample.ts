/**
 * Next-token choice on the GPU: one dispatch picks a token per row of the last
 * position's logits `[B, V]` and writes `[B, 2]` = (token id, log-prob), so a decode step reads
 * back 8·B bytes instead of 4·B·V. It makes the same choice as `sampleToken` (generate/sampling.ts) given
 * the same logits and the row's uniform draw, which the caller takes from the row's `Rng` in JS
 * (so a row's stream does not depend on the backend):
 *
 * - greedy: the first index of the maximum; log-prob under `softmax(logits)`;
 * - otherwise, with `s = 1/T` and mass `p_i = exp(s·l_i − lse)` (the untruncated distribution):
 *   top-k keeps the logits `>=` the k-th largest (ties included); top-p keeps, in descending
 *   order (ties in index order), the pool's tokens until their pool-normalised mass reaches `p`;
 *   the draw `u` then walks the kept tokens' masses (in index order without top-p, in descending
 *   order with it) to the first cumulative mass above `u · kept mass`.
 *
 * No sort: one workgroup per row finds thresholds by bisection over the logits' order-preserving
 * 32-bit keys (32 reductions per threshold), and walks index order with a per-thread chunk scan.
 * Sums are f32 in a different order than the JS float64 loops, so the two may differ only when
 * the draw (or the top-p mass) falls within float rounding of a cumulative boundary.
 */
import * as tf from '@tensorflow/tfjs';
import { webgpuSwitches } from '../../switches.ts';
import {
  flatDispatch,
  registerProgramKernels,
  type WebGPUProgram,
  wgslReduce,
} from './programs.ts';

export const SAMPLE_KERNEL = 'AgentrlSampleTokens';

/** Sampling settings of the kernel (validated by the caller, as `sampleToken`'s). */
export interface GpuSamplingOptions {
  /** 0 = greedy. */
  readonly temperature: number;
  /** 0 disables; `>= V` disables. */
  readonly topK: number;
  /** 1 disables. */
  readonly topP: number;
}

const THREADS = 256;

const SAMPLE_WGSL = `
  const BLOCK = ${THREADS};
  var<workgroup> scratch : array<f32, ${THREADS}>;
  var<workgroup> uscratch : array<u32, ${THREADS}>;
  var<private> rowBase : i32;
  var<private> rowCols : i32;
  var<private> lse : f32;

  ${wgslReduce('reduceSum', 'f32', 'scratch', (a, b) => `${a} + ${b}`)}
  ${wgslReduce('reduceMax', 'f32', 'scratch', (a, b) => `max(${a}, ${b})`)}
  ${wgslReduce('reduceMaxU', 'u32', 'uscratch', (a, b) => `max(${a}, ${b})`)}
  ${wgslReduce('reduceMinU', 'u32', 'uscratch', (a, b) => `min(${a}, ${b})`)}

  // An unsigned key with the order of the floats (-0 taken as +0).
  fn orderKey(x : f32) -> u32 {
    let b = bitcast<u32>(select(x, 0.0, x == 0.0));
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
  }
  fn keyValue(k : u32) -> f32 {
    return bitcast<f32>(select(~k, k & 0x7fffffffu, (k & 0x80000000u) != 0u));
  }
  fn massOf(l : f32) -> f32 { return exp(l * uniforms.scale - lse); }

  // mode 0: count of keys >= k; 1: mass of keys >= k; 2: count of keys == k.
  fn weightOf(l : f32, k : u32, mode : i32) -> f32 {
    let key = orderKey(l);
    if (mode == 2) { return select(0.0, 1.0, key == k); }
    if (key < k) { return 0.0; }
    return select(1.0, massOf(l), mode == 1);
  }
  fn measure(k : u32, mode : i32, tid : i32) -> f32 {
    var acc = 0.0;
    for (var c = tid; c < rowCols; c += BLOCK) { acc += weightOf(logits[rowBase + c], k, mode); }
    return reduceSum(acc, tid);
  }

  // The largest key K in [lo, hi] whose measure (keys >= K) is above goal (>= if inclusive).
  fn searchKey(lo0 : u32, hi0 : u32, goal : f32, mode : i32, inclusive : bool, tid : i32) -> u32 {
    var lo = lo0;
    var hi = hi0;
    for (var it = 0; it < 32; it++) {
      let mid = lo + (hi - lo + 1u) / 2u;
      let m = measure(mid, mode, tid);
      let ok = select(m > goal, m >= goal, inclusive);
      lo = select(lo, mid, ok);
      hi = select(mid - 1u, hi, ok);
    }
    return lo;
  }

  // In index order, the first element whose running weight (mode 1: mass of keys >= k; mode 2:
  // one per key == k) exceeds goal; past the total, the last element with that key condition.
  fn walk(k : u32, mode : i32, goal : f32, tid : i32) -> i32 {
    let chunk = (rowCols + BLOCK - 1) / BLOCK;
    let start = min(tid * chunk, rowCols);
    let end = min(start + chunk, rowCols);
    var part = 0.0;
    var lastHere = -1;
    for (var c = start; c < end; c++) {
      let l = logits[rowBase + c];
      part += weightOf(l, k, mode);
      let key = orderKey(l);
      if ((mode == 2 && key == k) || (mode != 2 && key >= k)) { lastHere = c; }
    }
    // Exclusive prefix of the per-thread sums, serially, so the intervals tile exactly.
    scratch[tid] = part;
    workgroupBarrier();
    if (tid == 0) {
      var cum = 0.0;
      for (var t = 0; t < BLOCK; t++) { cum += scratch[t]; scratch[t] = cum; }
    }
    workgroupBarrier();
    let incl = scratch[tid];
    let excl = select(0.0, scratch[max(tid - 1, 0)], tid > 0);
    workgroupBarrier();
    var pick = -1;
    if (excl <= goal && goal < incl) {
      var cum = excl;
      pick = lastHere;
      for (var c = start; c < end; c++) {
        cum += weightOf(logits[rowBase + c], k, mode);
        if (cum > goal) { pick = c; break; }
      }
    }
    let claimed = i32(reduceMaxU(u32(pick + 1), tid)) - 1;
    let last = i32(reduceMaxU(u32(lastHere + 1), tid)) - 1;
    return select(last, claimed, claimed >= 0);
  }

  fn main(index : i32) {
    let row = i32(workgroupId.y * numWorkgroups.x + workgroupId.x);
    let tid = i32(localId.x);
    let inRange = row < uniforms.rows;
    rowCols = select(0, uniforms.cols, inRange);
    rowBase = row * rowCols;
    var mx = -3.402823e+38;
    var kmin = 0xffffffffu;
    var kmax = 0u;
    for (var c = tid; c < rowCols; c += BLOCK) {
      let l = logits[rowBase + c];
      mx = max(mx, l);
      kmin = min(kmin, orderKey(l));
      kmax = max(kmax, orderKey(l));
    }
    let rowMax = reduceMax(mx, tid);
    let keyLo = reduceMinU(kmin, tid);
    let keyHi = reduceMaxU(kmax, tid);
    let smax = rowMax * uniforms.scale;
    var acc = 0.0;
    for (var c = tid; c < rowCols; c += BLOCK) { acc += exp(logits[rowBase + c] * uniforms.scale - smax); }
    lse = smax + log(reduceSum(acc, tid));
    var chosen = 0;
    if (uniforms.greedy == 1) {
      var first = 0xffffffffu;
      for (var c = tid; c < rowCols; c += BLOCK) {
        if (logits[rowBase + c] == rowMax) { first = min(first, u32(c)); }
      }
      chosen = i32(reduceMinU(first, tid));
    } else {
      let u = select(0.0, draws[min(row, uniforms.rows - 1)], inRange);
      var cut = keyLo;
      if (uniforms.topK > 0) {
        cut = searchKey(keyLo, keyHi, f32(uniforms.topK) - 0.5, 0, false, tid);
      }
      if (uniforms.topP < 1.0) {
        let pool = measure(cut, 1, tid);
        let kp = searchKey(cut, keyHi, uniforms.topP * pool, 1, true, tid);
        let above = measure(kp + 1u, 1, tid);
        let tieCount = measure(kp, 2, tid);
        let tieMass = massOf(keyValue(kp));
        let kept = clamp(ceil((uniforms.topP * pool - above) / tieMass), 1.0, tieCount);
        let goal = u * (above + kept * tieMass);
        let ks = searchKey(kp, keyHi, goal, 1, false, tid);
        let aboveS = measure(ks + 1u, 1, tid);
        let countS = measure(ks, 2, tid);
        let prior = select(aboveS, above, ks == kp);
        let avail = select(countS, kept, ks == kp);
        let j = clamp(floor((goal - prior) / massOf(keyValue(ks))) + 1.0, 1.0, avail);
        chosen = walk(ks, 2, j - 0.5, tid);
      } else {
        var total = 1.0;
        if (uniforms.topK > 0) { total = measure(cut, 1, tid); }
        chosen = walk(cut, 1, u * total, tid);
      }
    }
    if (tid == 0 && inRange) {
      result[row * 2] = f32(chosen);
      result[row * 2 + 1] = logits[rowBase + chosen] * uniforms.scale - lse;
    }
  }
`;

function sampleProgram(rows: number): WebGPUProgram {
  return {
    variableNames: ['logits', 'draws'],
    outputShape: [rows, 2],
    shaderKey: 'agentrl_sample_tokens',
    dispatchLayout: { x: [0, 1] },
    dispatch: flatDispatch(rows),
    workgroupSize: [THREADS, 1, 1],
    size: false,
    uniforms: 'scale : f32, topP : f32, topK : i32, greedy : i32, rows : i32, cols : i32,',
    getUserCode: () => SAMPLE_WGSL,
  };
}

/** Registers the sampling kernel for the webgpu backend (idempotent). */
export function registerSamplingKernel(): void {
  registerProgramKernels({
    [SAMPLE_KERNEL]: {
      inputs: ['logits', 'draws'],
      build: ([logits], { temperature, topK, topP }) => {
        const [rows, cols] = (logits as tf.TensorInfo).shape as [number, number];
        const greedy = temperature === 0;
        const k = greedy || (topK as number) >= cols ? 0 : (topK as number);
        return {
          program: sampleProgram(rows),
          uniforms: [
            { type: 'float32', data: [greedy ? 1 : 1 / (temperature as number)] },
            { type: 'float32', data: [greedy ? 1 : (topP as number)] },
            { type: 'int32', data: [k] },
            { type: 'int32', data: [greedy ? 1 : 0] },
            { type: 'int32', data: [rows] },
            { type: 'int32', data: [cols] },
          ],
        };
      },
    },
  });
}

/** Vocabularies up to this size keep exact token ids in the kernel's float32 output. */
export const MAX_GPU_SAMPLING_VOCAB = 1 << 24;

/** Whether webgpu is active and was set up with GPU sampling on (`webgpu.gpuSampling`, default on). */
export function gpuSamplingEnabled(): boolean {
  return tf.getBackend() === 'webgpu' && webgpuSwitches().gpuSampling;
}

/**
 * Picks one token per row of `logits` `[B, V]` on webgpu with the row's uniform `draws[b]` in
 * [0, 1) (ignored when greedy). Returns `[B, 2]` float32: (token id, log-prob under the
 * untruncated `softmax(logits / T)`; T = 1 when greedy). Webgpu backend only.
 */
export function sampleTokensOnGpu(
  logits: tf.Tensor2D,
  draws: tf.Tensor1D,
  options: GpuSamplingOptions,
): tf.Tensor2D {
  const attrs = {
    temperature: options.temperature,
    topK: options.topK,
    topP: options.topP,
  };
  return tf.engine().runKernel(SAMPLE_KERNEL, { logits, draws }, attrs) as tf.Tensor2D;
}
