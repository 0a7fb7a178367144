/**
 * The backward pass of the fused attention (attention.ts) in four WGSL dispatches, flash-style:
 * per query row the log-sum-exp of its scores and `Σ dO·O`; then dQ per query row, dK and dV per
 * key column, each recomputing the probabilities from the scores instead of storing them.
 * With `p = exp(score − lse)`, `dP = dO·v`, `dS = p·(dP − Σ dO·O)`:
 * `dQ = scale·Σ_s dS·k`, `dK = scale·Σ_(i,t) dS·q`, `dV = Σ_(i,t) p·dO` (i over the query heads
 * that share the kv head).
 */
import * as tf from '@tensorflow/tfjs';
import {
  ATTENTION_UNIFORMS,
  attentionScore,
  attentionUniforms,
  queryRowProgram,
} from './attention-rows.ts';
import { type ProgramKernel, registerProgramKernels, rowProgram } from './programs.ts';

export const ATTENTION_BACKWARD_KERNELS = {
  stats: 'AgentrlAttentionBwdStats',
  dq: 'AgentrlAttentionBwdQ',
  dk: 'AgentrlAttentionBwdK',
  dv: 'AgentrlAttentionBwdV',
} as const;

/** Kernel builders by name; inputs in the order given. */
export const attentionBackwardBuilders: Record<string, ProgramKernel> = {
  // [rows, 2]: (lse of the row's scores, Σ_k dO·O)
  [ATTENTION_BACKWARD_KERNELS.stats]: {
    inputs: ['q', 'kT', 'mask', 'dO', 'O'],
    build: ([q, kT, mask]) =>
      queryRowProgram(
        'attention_bwd_stats',
        ['q', 'kT', 'mask', 'dO', 'O'],
        (B, T, nh) => [B * T * nh, 2],
        `var qv : array<f32, D>;
          var dd = 0.0;
          for (var k = 0; k < D; k++) {
            qv[k] = q[r * D + k] * uniforms.scale;
            dd += dO[r * D + k] * O[r * D + k];
          }
          var m = -3.402823e+38;
          for (var s = tid; s < S; s += BLOCK) { ${attentionScore('qv')} m = max(m, sc); }
          let rowMax = reduceMax(m, tid);
          var l = 0.0;
          for (var s = tid; s < S; s += BLOCK) { ${attentionScore('qv')} l += exp(sc - rowMax); }
          let total = reduceSum(l, tid);
          if (tid == 0 && inRange) {
            result[r * 2] = rowMax + log(total);
            result[r * 2 + 1] = dd;
          }`,
        [q, kT, mask] as [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo],
      ),
  },
  // dQ [B, T, nh, d], one workgroup per query row.
  [ATTENTION_BACKWARD_KERNELS.dq]: {
    inputs: ['q', 'kT', 'v', 'mask', 'dO', 'stats'],
    build: ([q, kT, , mask]) =>
      queryRowProgram(
        'attention_bwd_q',
        ['q', 'kT', 'v', 'mask', 'dO', 'stats'],
        (B, T, nh, d) => [B, T, nh, d],
        `var qv : array<f32, D>;
          var go : array<f32, D>;
          for (var k = 0; k < D; k++) { qv[k] = q[r * D + k] * uniforms.scale; go[k] = dO[r * D + k]; }
          let lse = stats[r * 2];
          let dd = stats[r * 2 + 1];
          var acc : array<f32, D>;
          for (var s = tid; s < S; s += BLOCK) {
            ${attentionScore('qv')}
            let p = exp(sc - lse);
            var dp = 0.0;
            for (var k = 0; k < D; k++) { dp += go[k] * v[vBase + s * D + k]; }
            let ds = p * (dp - dd);
            for (var k = 0; k < D; k++) { acc[k] += ds * kT[kBase + k * uniforms.kS + s]; }
          }
          for (var k = 0; k < D; k++) {
            let a = reduceSum(acc[k], tid);
            if (tid == 0 && inRange) { result[r * D + k] = a * uniforms.scale; }
          }`,
        [q, kT, mask] as [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo],
      ),
  },
  // dK [B, nkv, d, S] (transposed, like kT) and dV [B, nkv, S, d]: one workgroup per key column,
  // threads over the (query head of the group, position) pairs.
  ...Object.fromEntries(
    (['dk', 'dv'] as const).map((which) => [
      ATTENTION_BACKWARD_KERNELS[which],
      {
        inputs: ['q', 'kT', 'v', 'mask', 'dO', 'stats'],
        build: ([q, kT, , mask]: tf.TensorInfo[]) => {
          const shape = (q as tf.TensorInfo).shape;
          const B = shape[0] as number;
          const d = shape[3] as number;
          const nkv = (kT as tf.TensorInfo).shape[1] as number;
          const S = (kT as tf.TensorInfo).shape[3] as number;
          const columns = B * nkv * S;
          const write =
            which === 'dk'
              ? `result[((b * uniforms.nkv + kvh) * D + k) * uniforms.S + s] = a * uniforms.scale;`
              : `result[((b * uniforms.nkv + kvh) * uniforms.S + s) * D + k] = a;`;
          const accumulate =
            which === 'dk'
              ? `var dp = 0.0;
                for (var k = 0; k < D; k++) { dp += dO[r * D + k] * vv[k]; }
                let ds = p * (dp - stats[r * 2 + 1]);
                for (var k = 0; k < D; k++) { acc[k] += ds * q[r * D + k]; }`
              : `for (var k = 0; k < D; k++) { acc[k] += p * dO[r * D + k]; }`;
          return {
            program: rowProgram(
              `attention_bwd_${which}_d${d}`,
              ['q', 'kT', 'v', 'mask', 'dO', 'stats'],
              which === 'dk' ? [B, nkv, d, S] : [B, nkv, S, d],
              columns,
              `let inRange = row < uniforms.rows;
              let c = select(0, row, inRange);
              let s = c % uniforms.S;
              let kvh = (c / uniforms.S) % uniforms.nkv;
              let b = c / (uniforms.S * uniforms.nkv);
              let nh = uniforms.nh;
              let T = uniforms.T;
              let g = nh / uniforms.nkv;
              let kBase = (b * uniforms.nkv + kvh) * D * uniforms.S;
              let vBase = (b * uniforms.nkv + kvh) * uniforms.S * D;
              var kk : array<f32, D>;
              var vv : array<f32, D>;
              for (var k = 0; k < D; k++) {
                kk[k] = kT[kBase + k * uniforms.S + s];
                vv[k] = v[vBase + s * D + k];
              }
              let pairs = select(0, g * T, inRange);
              var acc : array<f32, D>;
              for (var j = tid; j < pairs; j += BLOCK) {
                let i = kvh * g + j / T;
                let t = j % T;
                let r = (b * T + t) * nh + i;
                let mIndex = (select(0, b, uniforms.maskBatch > 1) * T + t) * uniforms.S + s;
                var sc = mask[mIndex];
                for (var k = 0; k < D; k++) { sc += q[r * D + k] * uniforms.scale * kk[k]; }
                let p = exp(sc - stats[r * 2]);
                ${accumulate}
              }
              for (var k = 0; k < D; k++) {
                let a = reduceSum(acc[k], tid);
                if (tid == 0 && inRange) { ${write} }
              }`,
              ATTENTION_UNIFORMS,
              `const D = ${d};`,
            ),
            uniforms: attentionUniforms(
              q as tf.TensorInfo,
              kT as tf.TensorInfo,
              mask as tf.TensorInfo,
              columns,
            ),
          };
        },
      },
    ]),
  ),
};

/** Registers the four backward kernels for webgpu (idempotent). */
export function registerAttentionBackwardKernels(): void {
  registerProgramKernels(attentionBackwardBuilders);
}

/** dQ, dK (as `[B, nkv, d, S]`), dV of the fused attention in four dispatches. */
export function attentionBackwardFused(
  q: tf.Tensor,
  kT: tf.Tensor,
  v: tf.Tensor,
  mask: tf.Tensor,
  out: tf.Tensor,
  dOut: tf.Tensor,
): [tf.Tensor, tf.Tensor, tf.Tensor] {
  const run = (name: string, inputs: Record<string, tf.Tensor>) =>
    tf.engine().runKernel(name, inputs as tf.NamedTensorMap) as tf.Tensor;
  const stats = run(ATTENTION_BACKWARD_KERNELS.stats, { q, kT, mask, dO: dOut, O: out });
  const all = { q, kT, v, mask, dO: dOut, stats };
  return [
    run(ATTENTION_BACKWARD_KERNELS.dq, all),
    run(ATTENTION_BACKWARD_KERNELS.dk, all),
    run(ATTENTION_BACKWARD_KERNELS.dv, all),
  ];
}
