/**
 * A float32 matrix product for the wasm backend, written here as WebAssembly bytes and run on the
 * backend's own heap. tfjs-backend-wasm 4.22 multiplies through XNNPACK built for 128-bit SIMD
 * without fused multiply-add: ~25 GFLOP/s on our 2-core EPYC for the model's shapes, and 10-40x
 * slower still when an operand is transposed. Node 24 ships WebAssembly relaxed SIMD,
 * whose `f32x4.relaxed_madd` compiles to an FMA instruction where the CPU has one: a register-tiled
 * kernel (4 rows × 8 columns of accumulators, the right operand packed into 8-column panels)
 * reaches ~47 GFLOP/s on the same shapes, and a transposed operand costs nothing because packing
 * and the left operand's strides absorb it.
 *
 * The module imports the backend's `WebAssembly.Memory`, so operands are read and results written
 * in place; only the packed panels of the right operand (and, when the column count is not a
 * multiple of 8, a padded result) take scratch space from the backend's allocator.
 */

import { functionCode, I32, moduleBytes, op, V128, type WasmMemory, webAssembly } from './emit.ts';

/** Rows of the register tile. */
const MR = 4;
/** Columns of the register tile (two 4-lane vectors). */
export const PANEL = 8;

/**
 * The body of `gemm{rows}(a, sI, sM, sK, bp, c, ldc, M, K, P)`: for row blocks of `rows` rows
 * (`M` a multiple of `rows`) and every 8-column panel `p < P`,
 * `C[i + m][p·8 + j] = Σ_k A[i + m][k] · Bp[p][k][j]`, with `A[i + m][k]` at byte
 * `a + i·sI + m·sM + k·sK` (plain rows: sI = sM; packed 4-row blocks: sM = 4, sK = 16), panels of
 * `K × 8` floats at `bp`, and row `i` of C at byte `c + i·ldc`.
 */
function gemmBody(rows: number, fma: boolean): number[] {
  // Parameters 0..9: a, sI, sM, sK, bp, c, ldc, M, K, P. i32 locals 10..: i, p, k, aPtr, bPtr, panel.
  const [a, sI, sM, sK, bp, c, ldc, M, K, P] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const [i, p, k, aPtr, bPtr, panel] = [10, 11, 12, 13, 14, 15];
  const rowOffset = 16; // i32 locals rowOffset + m = m · sM
  const acc = rowOffset + rows; // v128 accumulators acc + m·2 + v
  const bv = acc + rows * 2; // v128 panel vectors bv, bv + 1
  const av = bv + 2; // v128 broadcast of one A element
  const body: number[] = [];
  const emit = (...parts: number[][]) => {
    for (const part of parts) body.push(...part);
  };
  for (let m = 1; m < rows; m++) emit(op.get(sM), op.i32(m), op.mul, op.set(rowOffset + m));
  emit(op.i32(0), op.set(p), op.get(bp), op.set(panel));
  emit(op.block, op.loop); // panels
  emit(op.i32(0), op.set(i));
  emit(op.block, op.loop); // row blocks
  for (let r = 0; r < rows * 2; r++) emit(op.zero, op.set(acc + r));
  emit(op.get(a), op.get(i), op.get(sI), op.mul, op.add, op.set(aPtr));
  emit(op.get(panel), op.set(bPtr), op.get(K), op.set(k));
  emit(op.block, op.get(k), op.eqz, op.brIf(0), op.loop); // k (skipped when K = 0)
  for (let v = 0; v < 2; v++) emit(op.get(bPtr), op.load(v * 16), op.set(bv + v));
  for (let m = 0; m < rows; m++) {
    emit(op.get(aPtr));
    if (m > 0) emit(op.get(rowOffset + m), op.add);
    emit(op.splat(0), op.set(av));
    for (let v = 0; v < 2; v++) {
      const r = acc + m * 2 + v;
      if (fma) emit(op.get(av), op.get(bv + v), op.get(r), op.fMadd);
      else emit(op.get(av), op.get(bv + v), op.fMul, op.get(r), op.fAdd);
      emit(op.set(r));
    }
  }
  emit(op.get(aPtr), op.get(sK), op.add, op.set(aPtr));
  emit(op.get(bPtr), op.i32(PANEL * 4), op.add, op.set(bPtr));
  emit(op.get(k), op.i32(1), op.sub, op.tee(k), op.brIf(0), op.end, op.end);
  for (let m = 0; m < rows; m++) {
    for (let v = 0; v < 2; v++) {
      // c + (i + m)·ldc + p·32
      emit(op.get(c), op.get(i), op.i32(m), op.add, op.get(ldc), op.mul, op.add);
      emit(op.get(p), op.i32(PANEL * 4), op.mul, op.add);
      emit(op.get(acc + m * 2 + v), op.store(v * 16));
    }
  }
  emit(op.get(i), op.i32(rows), op.add, op.tee(i), op.get(M), op.ltU, op.brIf(0), op.end, op.end);
  emit(op.get(panel), op.get(K), op.i32(PANEL * 4), op.mul, op.add, op.set(panel));
  emit(op.get(p), op.i32(1), op.add, op.tee(p), op.get(P), op.ltU, op.brIf(0), op.end, op.end);
  body.push(0x0b);
  return functionCode(
    [
      [6 + rows, I32],
      [rows * 2 + 3, V128],
    ],
    body,
  );
}

/**
 * `copy{width}(src, sK, dst, blocks, K)`: for each block `q < blocks` and `k < K`, copies `width`
 * floats (1 or 2 vectors) from byte `src + q·width·4 + k·sK` to the next `width` floats at `dst`:
 * packs 8-column panels of a row-major B (width 8) or 4-row blocks of a transposed A (width 4).
 */
function copyBody(vectors: number): number[] {
  const [src, sK, dst, blocks, K] = [0, 1, 2, 3, 4];
  const [q, k, ptr, out] = [5, 6, 7, 8];
  const body: number[] = [];
  const emit = (...parts: number[][]) => {
    for (const part of parts) body.push(...part);
  };
  emit(op.get(dst), op.set(out), op.i32(0), op.set(q));
  emit(op.block, op.get(blocks), op.eqz, op.brIf(0), op.get(K), op.eqz, op.brIf(0), op.loop);
  emit(op.get(src), op.get(q), op.i32(vectors * 16), op.mul, op.add, op.set(ptr));
  emit(op.get(K), op.set(k), op.loop);
  for (let v = 0; v < vectors; v++)
    emit(op.get(out), op.get(ptr), op.load(v * 16), op.store(v * 16));
  emit(op.get(ptr), op.get(sK), op.add, op.set(ptr));
  emit(op.get(out), op.i32(vectors * 16), op.add, op.set(out));
  emit(op.get(k), op.i32(1), op.sub, op.tee(k), op.brIf(0), op.end);
  emit(op.get(q), op.i32(1), op.add, op.tee(q), op.get(blocks), op.ltU, op.brIf(0), op.end, op.end);
  body.push(0x0b);
  return functionCode([[4, I32]], body);
}

/**
 * `gather8(src, sK, sN, dst, panels, K)`: packs full 8-column panels of a B whose columns are
 * `sN` bytes apart (a transposed B): `dst[p][k][j] = B[k][p·8 + j]` at `src + k·sK + (p·8 + j)·sN`.
 */
function gatherBody(): number[] {
  const [src, sK, sN, dst, panels, K] = [0, 1, 2, 3, 4, 5];
  const [p, k, ptr, out, base] = [6, 7, 8, 9, 10];
  const col = 11; // i32 locals col + j = j · sN
  const body: number[] = [];
  const emit = (...parts: number[][]) => {
    for (const part of parts) body.push(...part);
  };
  for (let j = 1; j < PANEL; j++) emit(op.get(sN), op.i32(j), op.mul, op.set(col + j));
  emit(op.get(dst), op.set(out), op.get(src), op.set(base), op.i32(0), op.set(p));
  emit(op.block, op.get(panels), op.eqz, op.brIf(0), op.get(K), op.eqz, op.brIf(0), op.loop);
  emit(op.get(base), op.set(ptr), op.get(K), op.set(k), op.loop);
  for (let j = 0; j < PANEL; j++) {
    emit(op.get(out), op.get(ptr));
    if (j > 0) emit(op.get(col + j), op.add);
    emit(op.f32Load, op.f32Store(j * 4));
  }
  emit(op.get(ptr), op.get(sK), op.add, op.set(ptr));
  emit(op.get(out), op.i32(PANEL * 4), op.add, op.set(out));
  emit(op.get(k), op.i32(1), op.sub, op.tee(k), op.brIf(0), op.end);
  emit(op.get(base), op.get(col + PANEL - 1), op.add, op.get(sN), op.add, op.set(base));
  emit(op.get(p), op.i32(1), op.add, op.tee(p), op.get(panels), op.ltU, op.brIf(0), op.end, op.end);
  body.push(0x0b);
  return functionCode([[5 + PANEL, I32]], body);
}

/**
 * The module's bytes over an imported memory `env.memory`: `gemm4`, `gemm1`, `copy8` (B panels),
 * `copy4` (transposed-A blocks) and `gather8` (panels of a transposed B).
 */
export function gemmModuleBytes(fma: boolean): Uint8Array<ArrayBuffer> {
  const i32s = (n: number) => new Array<number>(n).fill(I32);
  return moduleBytes([
    { name: `gemm${MR}`, params: i32s(10), code: gemmBody(MR, fma) },
    { name: 'gemm1', params: i32s(10), code: gemmBody(1, fma) },
    { name: 'copy8', params: i32s(5), code: copyBody(2) },
    { name: 'copy4', params: i32s(5), code: copyBody(1) },
    { name: 'gather8', params: i32s(6), code: gatherBody() },
  ]);
}

type GemmFn = (
  a: number,
  sI: number,
  sM: number,
  sK: number,
  bp: number,
  c: number,
  ldc: number,
  M: number,
  K: number,
  P: number,
) => void;
type CopyFn = (src: number, sK: number, dst: number, blocks: number, K: number) => void;
type GatherFn = (
  src: number,
  sK: number,
  sN: number,
  dst: number,
  panels: number,
  K: number,
) => void;

/** Whether this engine accepts relaxed SIMD (the FMA kernel); otherwise multiply + add is used. */
export function relaxedSimdSupported(): boolean {
  return webAssembly.validate(gemmModuleBytes(true));
}

/** The heap of a tfjs wasm backend, as far as the kernel needs it. */
export interface WasmHeap {
  readonly memory: WasmMemory;
  malloc(bytes: number): number;
  free(pointer: number): void;
}

/** One operand in the heap: byte offset, and byte strides of its rows and columns. */
export interface StridedMatrix {
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
}

/** Below this many rows a transposed A is read in place rather than packed. */
const PACK_A_MIN_ROWS = 16;

/** A compiled kernel bound to one heap. */
export class WasmGemm {
  readonly fma: boolean;
  readonly #heap: WasmHeap;
  readonly #gemm4: GemmFn;
  readonly #gemm1: GemmFn;
  readonly #copy8: CopyFn;
  readonly #copy4: CopyFn;
  readonly #gather8: GatherFn;

  constructor(heap: WasmHeap, fma = relaxedSimdSupported()) {
    this.#heap = heap;
    this.fma = fma;
    const module = new webAssembly.Module(gemmModuleBytes(fma));
    const exports = new webAssembly.Instance(module, { env: { memory: heap.memory } }).exports;
    this.#gemm4 = exports[`gemm${MR}`] as GemmFn;
    this.#gemm1 = exports.gemm1 as GemmFn;
    this.#copy8 = exports.copy8 as CopyFn;
    this.#copy4 = exports.copy4 as CopyFn;
    this.#gather8 = exports.gather8 as GatherFn;
  }

  /** Bytes of scratch for the packed panels of a `K × N` right operand. */
  static packedBytes(K: number, N: number): number {
    return Math.ceil(N / PANEL) * K * PANEL * 4;
  }

  /**
   * Packs `B` (`K × N`, element `(k, n)` at byte `b.offset + k·rowStride + n·colStride`) into
   * zero-padded 8-column panels at byte `dst`.
   */
  pack(b: StridedMatrix, K: number, N: number, dst: number): void {
    const full = Math.floor(N / PANEL);
    if (b.colStride === 4) this.#copy8(b.offset, b.rowStride, dst, full, K);
    else this.#gather8(b.offset, b.rowStride, b.colStride, dst, full, K);
    if (full * PANEL === N) return;
    // The last, partial panel: zero-padded, in JS (K × 8 floats).
    const heap = new Float32Array(this.#heap.memory.buffer);
    const width = N - full * PANEL;
    const rs = b.rowStride >>> 2;
    const cs = b.colStride >>> 2;
    const base = (b.offset >>> 2) + full * PANEL * cs;
    let out = (dst >>> 2) + full * K * PANEL;
    for (let k = 0; k < K; k++) {
      const src = base + k * rs;
      for (let j = 0; j < PANEL; j++)
        heap[out + j] = j < width ? (heap[src + j * cs] as number) : 0;
      out += PANEL;
    }
  }

  /**
   * `C = A · B` with `A` `M × K` (strided), `B` already packed at `packed`, and `C` row-major with
   * row stride `ldc` bytes at byte `c`; `C` must have room for `ceil(N / 8) · 8` columns per row.
   * A transposed `A` (rows 4 bytes apart) with enough rows is first copied into 4-row blocks so
   * that the kernel reads it sequentially.
   */
  multiplyPacked(
    a: StridedMatrix,
    packed: number,
    c: number,
    ldc: number,
    M: number,
    K: number,
    N: number,
  ): void {
    const P = Math.ceil(N / PANEL);
    const full = M - (M % MR);
    if (full > 0) {
      if (a.rowStride === 4 && a.colStride !== 4 && full >= PACK_A_MIN_ROWS) {
        const blocks = this.#heap.malloc(full * K * 4);
        try {
          this.#copy4(a.offset, a.colStride, blocks, full / MR, K);
          this.#gemm4(blocks, K * 4, 4, MR * 4, packed, c, ldc, full, K, P);
        } finally {
          this.#heap.free(blocks);
        }
      } else {
        this.#gemm4(a.offset, a.rowStride, a.rowStride, a.colStride, packed, c, ldc, full, K, P);
      }
    }
    for (let i = full; i < M; i++) {
      const row = a.offset + i * a.rowStride;
      this.#gemm1(row, a.rowStride, a.rowStride, a.colStride, packed, c + i * ldc, ldc, 1, K, P);
    }
  }

  /**
   * `C = A · B` for strided `A` (`M × K`) and `B` (`K × N`) into the row-major `M × N` result at
   * byte `c`. Scratch comes from the heap's allocator and is freed before returning.
   */
  multiply(a: StridedMatrix, b: StridedMatrix, c: number, M: number, K: number, N: number): void {
    if (M === 0 || N === 0) return;
    if (K === 0) {
      new Float32Array(this.#heap.memory.buffer, c, M * N).fill(0);
      return;
    }
    const packed = this.#heap.malloc(WasmGemm.packedBytes(K, N));
    try {
      this.pack(b, K, N, packed);
      this.multiplyPackedInto(a, packed, c, M, K, N);
    } finally {
      this.#heap.free(packed);
    }
  }

  /** {@link multiplyPacked} into a dense `M × N` result, padding through scratch when N % 8 ≠ 0. */
  multiplyPackedInto(
    a: StridedMatrix,
    packed: number,
    c: number,
    M: number,
    K: number,
    N: number,
  ): void {
    if (N % PANEL === 0) {
      this.multiplyPacked(a, packed, c, N * 4, M, K, N);
      return;
    }
    const width = Math.ceil(N / PANEL) * PANEL;
    const scratch = this.#heap.malloc(M * width * 4);
    try {
      this.multiplyPacked(a, packed, scratch, width * 4, M, K, N);
      const heap = new Float32Array(this.#heap.memory.buffer);
      const s = scratch >>> 2;
      const d = c >>> 2;
      for (let i = 0; i < M; i++) heap.copyWithin(d + i * N, s + i * width, s + i * width + N);
    } finally {
      this.#heap.free(scratch);
    }
  }
}
