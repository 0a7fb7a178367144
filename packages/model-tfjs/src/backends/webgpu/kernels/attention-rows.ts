/**
 * The WGSL pieces the forward attention (attention.ts) and its backward kernels
 * (attention-backward.ts) share: the uniforms they declare and pass, and where a query row's
 * query, keys, values and mask row start.
 */
import type * as tf from '@tensorflow/tfjs';
import { type ProgramUniform, rowProgram, type WebGPUProgram } from './programs.ts';

/** The uniform fields of every attention program. */
export const ATTENTION_UNIFORMS =
  'rows : i32, T : i32, S : i32, kS : i32, nh : i32, nkv : i32, maskBatch : i32, scale : f32,';

/**
 * The values of {@link ATTENTION_UNIFORMS} for `q`, `kT`, `mask` and a dispatch of `rows` rows.
 * `S`, the keys attended to, is the mask's width; `kS`, the positions the keys and values hold,
 * is the cache's (a cache of fixed capacity holds more than are written yet).
 */
export function attentionUniforms(
  q: tf.TensorInfo,
  kT: tf.TensorInfo,
  mask: tf.TensorInfo,
  rows: number,
): ProgramUniform[] {
  const [, T, nh, d] = q.shape as [number, number, number, number];
  return [
    { type: 'int32', data: [rows] },
    { type: 'int32', data: [T] },
    { type: 'int32', data: [mask.shape[3] as number] },
    { type: 'int32', data: [kT.shape[3] as number] },
    { type: 'int32', data: [nh] },
    { type: 'int32', data: [kT.shape[1] as number] },
    { type: 'int32', data: [mask.shape[0] as number] },
    { type: 'float32', data: [1 / Math.sqrt(d)] },
  ];
}

/**
 * Indices of the query row of this workgroup, r = (b·T + t)·nh + i (a workgroup past the last row
 * works on row 0 with no keys, so it still reaches every barrier), its kv head, and the starts of
 * its keys, values and mask row.
 */
export const QUERY_ROW = `
    let inRange = row < uniforms.rows;
    let r = select(0, row, inRange);
    let S = select(0, uniforms.S, inRange);
    let nh = uniforms.nh;
    let T = uniforms.T;
    let i = r % nh;
    let t = (r / nh) % T;
    let b = r / (nh * T);
    let kvh = i / (nh / uniforms.nkv);
    let kBase = (b * uniforms.nkv + kvh) * D * uniforms.kS;
    let vBase = (b * uniforms.nkv + kvh) * uniforms.kS * D;
    let mBase = (select(0, b, uniforms.maskBatch > 1) * T + t) * uniforms.S;`;

/** WGSL: `sc`, the masked score of key `s` against the (pre-scaled) query array `q`. */
export function attentionScore(q: string): string {
  return `var sc = mask[mBase + s];
      for (var k = 0; k < D; k++) { sc += ${q}[k] * kT[kBase + k * uniforms.kS + s]; }`;
}

/**
 * A program with one workgroup per query row of `q` (`[B, T, nh, d]`, B·T·nh rows): `body` runs
 * after {@link QUERY_ROW} with `D` = d, the shader is keyed `<name>_d<d>`, and the uniforms are
 * {@link attentionUniforms}. `outputShape` gets B, T, nh and d.
 */
export function queryRowProgram(
  name: string,
  inputs: string[],
  outputShape: (B: number, T: number, nh: number, d: number) => number[],
  body: string,
  [q, kT, mask]: readonly [tf.TensorInfo, tf.TensorInfo, tf.TensorInfo],
): { program: WebGPUProgram; uniforms: ProgramUniform[] } {
  const [B, T, nh, d] = q.shape as [number, number, number, number];
  const rows = B * T * nh;
  const program = rowProgram(
    `${name}_d${d}`,
    inputs,
    outputShape(B, T, nh, d),
    rows,
    `${QUERY_ROW}
    ${body}`,
    ATTENTION_UNIFORMS,
    `const D = ${d};`,
  );
  return { program, uniforms: attentionUniforms(q, kT, mask, rows) };
}
