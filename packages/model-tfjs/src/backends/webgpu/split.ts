/**
 * Row-split matrices for parameters larger than one GPU binding: a WebGPU
 * binding may not exceed `maxStorageBufferBindingSize` (2 GiB - 4 on an H100), and a 7B model's
 * 151,936 × 3,584 float32 embedding is 2.18 GB. Such a matrix is held as consecutive row blocks,
 * each under the limit; lookups and the LM head work block by block, and their gradients are
 * per block, so no kernel ever binds the whole matrix.
 */
import { InvalidInputError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';

/** Rows per block so that a `[rows, cols]` float32 block fits `maxBytes`. */
export function rowsPerBlock(cols: number, maxBytes: number): number {
  const rows = Math.floor(maxBytes / (cols * 4));
  if (rows < 1) {
    throw new InvalidInputError(
      `one row of ${cols} float32 values (${cols * 4} bytes) exceeds the binding limit of ${maxBytes} bytes; raise maxBindingBytes`,
      { details: { field: 'maxBindingBytes', value: maxBytes } },
    );
  }
  return rows;
}

/** Row ranges `[start, end)` of the blocks of a `rows`-row matrix. */
export function blockRanges(rows: number, cols: number, maxBytes: number): [number, number][] {
  const per = rowsPerBlock(cols, maxBytes);
  const out: [number, number][] = [];
  for (let start = 0; start < rows; start += per) out.push([start, Math.min(rows, start + per)]);
  return out;
}

/**
 * Splits a `[rows, cols]` matrix into row blocks each at most `maxBytes` (float32). The input
 * is not disposed. Slicing happens on the backend the tensor lives on: on webgpu, split a matrix
 * that is still on the cpu (as loaded from a checkpoint), then move the blocks.
 */
export function splitRows(matrix: tf.Tensor2D, maxBytes: number): tf.Tensor2D[] {
  const [rows, cols] = matrix.shape;
  return blockRanges(rows, cols, maxBytes).map(([start, end]) =>
    tf.slice(matrix, [start, 0], [end - start, cols]),
  );
}

/** `matrix[ids]` for a row-split matrix: `[ids.length, cols]`; differentiable in the blocks. */
export function gatherSplitRows(blocks: readonly tf.Tensor2D[], ids: tf.Tensor1D): tf.Tensor2D {
  return tf.tidy(() => {
    let offset = 0;
    let out: tf.Tensor2D | undefined;
    const intIds = ids.dtype === 'int32' ? ids : tf.cast(ids, 'int32');
    for (const block of blocks) {
      const n = block.shape[0];
      const local = tf.sub(intIds, tf.scalar(offset, 'int32'));
      const inside = tf.logicalAnd(tf.greaterEqual(local, 0), tf.less(local, n));
      const rows = tf.gather(block, tf.clipByValue(local, 0, n - 1));
      const part = tf.mul(rows, tf.expandDims(tf.cast(inside, 'float32'), 1)) as tf.Tensor2D;
      out = out === undefined ? part : (tf.add(out, part) as tf.Tensor2D);
      offset += n;
    }
    if (out === undefined) {
      throw new InvalidInputError('gatherSplitRows needs at least one block', {
        details: { field: 'blocks', value: 0 },
      });
    }
    return out;
  });
}

/**
 * `x · matrixᵀ` for a row-split `[V, H]` matrix (the tied LM head): `[N, V]`, computed block by
 * block and concatenated. Keep `N · V · 4` bytes under the limit too (score in row chunks).
 */
export function matMulSplitRowsT(x: tf.Tensor2D, blocks: readonly tf.Tensor2D[]): tf.Tensor2D {
  return tf.tidy(() => {
    const parts = blocks.map((block) => tf.matMul(x, tf.transpose(block)));
    return (parts.length === 1 ? parts[0] : tf.concat(parts, 1)) as tf.Tensor2D;
  });
}

/**
 * Host-side pieces of a row-major `[rows, cols]` matrix cut along `axis` (0: consecutive rows;
 * 1: consecutive columns) at `sizes` (each block's extent on that axis, summing to the axis).
 * Blocks are built on the host and uploaded, so no kernel ever reads the whole matrix.
 */
export function splitHost(
  data: Float32Array,
  shape: readonly [number, number],
  axis: 0 | 1,
  sizes: readonly number[],
): Float32Array[] {
  const [rows, cols] = shape;
  checkSizes(shape, axis, sizes, data.length);
  const out: Float32Array[] = [];
  let start = 0;
  for (const n of sizes) {
    if (axis === 0) {
      out.push(data.slice(start * cols, (start + n) * cols));
    } else {
      const piece = new Float32Array(rows * n);
      for (let r = 0; r < rows; r++)
        piece.set(data.subarray(r * cols + start, r * cols + start + n), r * n);
      out.push(piece);
    }
    start += n;
  }
  return out;
}

/** The inverse of {@link splitHost}: the whole `[rows, cols]` matrix from its blocks. */
export function joinHost(
  pieces: readonly ArrayLike<number>[],
  shape: readonly [number, number],
  axis: 0 | 1,
): Float32Array {
  const [rows, cols] = shape;
  const sizes = pieces.map((p) => p.length / (axis === 0 ? cols : rows));
  const out = new Float32Array(rows * cols);
  checkSizes(shape, axis, sizes, out.length);
  let start = 0;
  pieces.forEach((piece, k) => {
    const n = sizes[k] as number;
    if (axis === 0) {
      out.set(piece, start * cols);
    } else {
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < n; c++) out[r * cols + start + c] = piece[r * n + c] as number;
      }
    }
    start += n;
  });
  return out;
}

function checkSizes(
  shape: readonly [number, number],
  axis: 0 | 1,
  sizes: readonly number[],
  length: number,
): void {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (
    length !== shape[0] * shape[1] ||
    total !== shape[axis] ||
    sizes.some((n) => !Number.isInteger(n) || n <= 0)
  ) {
    throw new InvalidInputError(
      `blocks of extents [${sizes.join(', ')}] along axis ${axis} do not tile a [${shape.join(', ')}] matrix of ${length} values`,
      { details: { field: 'blocks', value: sizes } },
    );
  }
}
