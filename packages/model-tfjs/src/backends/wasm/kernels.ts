/**
 * Kernels registered for the wasm backend, here and only here: `UnsortedSegmentSum`, which the
 * backend lacks (the gradient of `GatherV2`, the embedding lookup, needs it), written in JS over the
 * backend's heap; and `BatchMatMul`, replaced by the relaxed-SIMD kernel of `gemm.ts` (about
 * twice XNNPACK's speed on our shapes, and transposed operands at no extra cost).
 * The set-up's `wasm.matMul: 'xnnpack'` switches back to the backend's own kernel (benchmarks compare
 * both; see `../switches.ts`).
 * `Sum` over leading axes and `Identity` are replaced too (see each). Two kernels of our own serve
 * the optimizer: `AgentrlAdamWStep` (one SIMD pass per parameter,
 * `adamw.ts`) and `AgentrlSumOfSquares` (the squared global gradient norm in one call).
 */
import * as tf from '@tensorflow/tfjs';
import { type WasmMatMulKernel, wasmSwitches } from '../switches.ts';
import { type AdamWStepScalars, WasmAdamW } from './adamw.ts';
import { type WasmMemory, webAssembly } from './emit.ts';
import { type StridedMatrix, WasmGemm, type WasmHeap } from './gemm.ts';
import { heapAllocationFailure } from './memory.ts';

interface WasmBackendLike {
  readSync(dataId: unknown): ArrayLike<number>;
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array | Int32Array;
  dataIdMap: {
    get(dataId: unknown): { memoryOffset: number } | undefined;
    has(dataId: unknown): boolean;
  };
  disposeData(dataId: unknown, force?: boolean): boolean;
  incRef(dataId: unknown): void;
  wasm: {
    asm?: { memory?: unknown };
    wasmMemory?: unknown;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
  };
}

let registered = false;

/** What tfjs passes a kernel function. */
interface KernelArgs {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}

/**
 * The `BatchMatMul` the active wasm backend runs: `agentrl` only when it is chosen, registered and
 * bound to the backend's heap (a backend on shared memory, the threaded build, falls back).
 */
export function wasmMatMul(): WasmMatMulKernel {
  if (tf.getBackend() !== 'wasm' || wasmSwitches().matMul !== 'agentrl') return 'xnnpack';
  const kernel = tf.getKernel('BatchMatMul', 'wasm');
  if (kernel?.kernelFunc !== (batchMatMul as unknown as tf.KernelFunc)) return 'xnnpack';
  return gemmFor(tf.backend() as unknown as WasmBackendLike) === null ? 'xnnpack' : 'agentrl';
}

const gemms = new WeakMap<object, WasmGemm | null>();

/** Rows up to which a right operand's packed panels are kept for reuse (decode steps). */
const CACHE_MAX_ROWS = 64;

/**
 * `bytes` from the backend's allocator, as an unsigned address; a failed allocation (0) throws
 * instead of letting a kernel write at address 0, which corrupts the heap.
 */
function heapAlloc(backend: WasmBackendLike, bytes: number): number {
  const pointer = backend.wasm._malloc(bytes) >>> 0;
  if (pointer === 0 && bytes > 0) throw heapAllocationFailure(bytes, tf.memory().numBytes);
  return pointer;
}

/**
 * Packed panels of right operands, by tensor data and transpose flag, for products with few rows
 * (a decode step multiplies 8 rows by every weight matrix: packing each weight on every call
 * would cost as much as the product). tfjs tensor data never changes, so an entry is valid until
 * the data is disposed, when the backend's `disposeData`, wrapped here, frees it.
 */
class PackedCache {
  readonly #entries = new Map<
    unknown,
    { transposeB: boolean; K: number; N: number; pointer: number }[]
  >();
  readonly #backend: WasmBackendLike;
  /** Heap bytes held by packed panels. */
  bytes = 0;

  constructor(backend: WasmBackendLike) {
    this.#backend = backend;
    const dispose = backend.disposeData.bind(backend);
    backend.disposeData = (dataId: unknown, force?: boolean) => {
      const result = dispose(dataId, force);
      if (this.#entries.has(dataId) && !backend.dataIdMap.has(dataId)) this.#drop(dataId);
      return result;
    };
  }

  /** The packed panels of `b` (packing them on first use); `undefined` past the budget. */
  get(
    gemm: WasmGemm,
    b: tf.TensorInfo,
    matrix: StridedMatrix,
    transposeB: boolean,
    K: number,
    N: number,
  ): number | undefined {
    const list = this.#entries.get(b.dataId) ?? [];
    // Reshapes share data: the logical shape is part of the key.
    const hit = list.find((e) => e.transposeB === transposeB && e.K === K && e.N === N);
    if (hit !== undefined) return hit.pointer;
    if (this.bytes + WasmGemm.packedBytes(K, N) > wasmSwitches().packedPanelBudgetBytes)
      return undefined;
    const pointer = heapAlloc(this.#backend, WasmGemm.packedBytes(K, N));
    gemm.pack(matrix, K, N, pointer);
    list.push({ transposeB, K, N, pointer });
    this.bytes += WasmGemm.packedBytes(K, N);
    this.#entries.set(b.dataId, list);
    return pointer;
  }

  /** Frees every cached panel (they are rebuilt on next use). */
  clear(): void {
    for (const dataId of [...this.#entries.keys()]) this.#drop(dataId);
  }

  #drop(dataId: unknown): void {
    for (const e of this.#entries.get(dataId) ?? []) {
      this.#backend.wasm._free(e.pointer);
      this.bytes -= WasmGemm.packedBytes(e.K, e.N);
    }
    this.#entries.delete(dataId);
  }
}

const packedCaches = new WeakMap<object, PackedCache>();

/** Heap bytes the active wasm backend holds in packed right operands (0 elsewhere). */
export function wasmPackedBytes(): number {
  if (tf.getBackend() !== 'wasm') return 0;
  return packedCaches.get(tf.backend() as unknown as object)?.bytes ?? 0;
}

/**
 * Frees the active wasm backend's cached packed panels (a train step does this first: the panels
 * speed up decoding, and the step needs the heap room more). Returns the bytes freed.
 */
export function releasePackedPanels(): number {
  if (tf.getBackend() !== 'wasm') return 0;
  const cache = packedCaches.get(tf.backend() as unknown as object);
  const bytes = cache?.bytes ?? 0;
  cache?.clear();
  return bytes;
}

function packedCacheFor(backend: WasmBackendLike): PackedCache {
  let cache = packedCaches.get(backend);
  if (cache === undefined) {
    cache = new PackedCache(backend);
    packedCaches.set(backend, cache);
  }
  return cache;
}

/** The backend heap's `WebAssembly.Memory` when our modules can import it (not shared memory). */
function heapMemory(backend: WasmBackendLike): WasmMemory | null {
  const memory = backend.wasm.asm?.memory ?? backend.wasm.wasmMemory;
  return memory instanceof webAssembly.Memory && memory.buffer instanceof ArrayBuffer
    ? memory
    : null;
}

/** `make(memory)` for this backend's heap, or null where the heap cannot be imported or it fails. */
function bindToHeap<T>(backend: WasmBackendLike, make: (memory: WasmMemory) => T): T | null {
  const memory = heapMemory(backend);
  if (memory === null) return null;
  try {
    return make(memory);
  } catch {
    return null;
  }
}

/** The kernel bound to this backend's heap, or null where it cannot run (shared memory). */
function gemmFor(backend: WasmBackendLike): WasmGemm | null {
  let gemm = gemms.get(backend);
  if (gemm !== undefined) return gemm;
  gemm = bindToHeap(backend, (memory) => {
    const heap: WasmHeap = {
      memory,
      malloc: (bytes) => heapAlloc(backend, bytes),
      free: (pointer) => backend.wasm._free(pointer),
    };
    return new WasmGemm(heap);
  });
  gemms.set(backend, gemm);
  return gemm;
}

/** The backend's own kernels that ours replace, kept for the cases ours leave to them. */
const originals = new Map<string, tf.KernelConfig>();
const originalsReady = new WeakMap<object, Set<string>>();

function runOriginal(kernelName: string, args: KernelArgs): tf.TensorInfo {
  const config = originals.get(kernelName) as tf.KernelConfig;
  const backend = args.backend as object;
  let ready = originalsReady.get(backend);
  if (ready === undefined) {
    ready = new Set();
    originalsReady.set(backend, ready);
  }
  if (!ready.has(kernelName)) {
    // Our registration replaced this kernel, so the backend may never have run its set-up.
    config.setupFunc?.(backend as tf.KernelBackend);
    ready.add(kernelName);
  }
  return config.kernelFunc(args as Parameters<tf.KernelFunc>[0]) as tf.TensorInfo;
}

const runXnnpack = (args: KernelArgs): tf.TensorInfo => runOriginal('BatchMatMul', args);

/**
 * `Sum` over leading axes (the gradient of a broadcast bias or norm weight, `[N, H] → [H]`) as
 * column sums in one pass: the backend's own kernel transposes the input first. Other reductions
 * go to the backend's kernel.
 */
function sum(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmBackendLike;
  const x = args.inputs.x as tf.TensorInfo;
  const rank = x.shape.length;
  const axes = tf.util
    .parseAxisParam(args.attrs?.axis as number | number[], [...x.shape])
    .sort((a, b) => a - b);
  const leading = axes.length > 0 && axes.length < rank && axes.every((a, i) => a === i);
  if (!leading || x.dtype !== 'float32') return runOriginal('Sum', args);
  const k = axes.length;
  const rows = x.shape.slice(0, k).reduce((a, b) => a * b, 1);
  const cols = x.shape.slice(k).reduce((a, b) => a * b, 1);
  const outShape =
    args.attrs?.keepDims === true ? x.shape.map((d, i) => (i < k ? 1 : d)) : x.shape.slice(k);
  const out = backend.makeOutput(outShape, 'float32');
  const src = backend.typedArrayFromHeap(x) as Float32Array;
  const acc = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) acc[c] = (acc[c] as number) + (src[base + c] as number);
  }
  (backend.typedArrayFromHeap(out) as Float32Array).set(acc);
  return out;
}

function offsetOf(backend: WasmBackendLike, info: tf.TensorInfo): number {
  const entry = backend.dataIdMap.get(info.dataId);
  if (entry === undefined) throw new Error('BatchMatMul: an input tensor has no wasm heap data');
  return entry.memoryOffset;
}

/** Output batch index → input batch index under numpy broadcasting of the outer dimensions. */
function batchIndexer(
  inDims: readonly number[],
  outDims: readonly number[],
): (b: number) => number {
  const size = inDims.reduce((x, y) => x * y, 1);
  if (size === 1) return () => 0;
  const total = outDims.reduce((x, y) => x * y, 1);
  if (size === total) return (b) => b;
  const padded = [...new Array<number>(outDims.length - inDims.length).fill(1), ...inDims];
  return (b) => {
    let index = 0;
    let stride = 1;
    let rest = b;
    for (let d = outDims.length - 1; d >= 0; d--) {
      const outDim = outDims[d] as number;
      const coord = rest % outDim;
      rest = Math.floor(rest / outDim);
      const inDim = padded[d] as number;
      if (inDim !== 1) index += coord * stride;
      stride *= inDim;
    }
    return index;
  };
}

function batchMatMul(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmBackendLike;
  const gemm = wasmSwitches().matMul === 'agentrl' ? gemmFor(backend) : null;
  if (gemm === null) return runXnnpack(args);
  const a = args.inputs.a as tf.TensorInfo;
  const b = args.inputs.b as tf.TensorInfo;
  const transposeA = args.attrs?.transposeA === true;
  const transposeB = args.attrs?.transposeB === true;
  if (a.dtype !== 'float32' || b.dtype !== 'float32') {
    throw new Error(`BatchMatMul on wasm takes float32 tensors, got ${a.dtype} and ${b.dtype}`);
  }
  const ra = a.shape.length;
  const rb = b.shape.length;
  const M = (transposeA ? a.shape[ra - 1] : a.shape[ra - 2]) as number;
  const K = (transposeA ? a.shape[ra - 2] : a.shape[ra - 1]) as number;
  const Kb = (transposeB ? b.shape[rb - 1] : b.shape[rb - 2]) as number;
  const N = (transposeB ? b.shape[rb - 2] : b.shape[rb - 1]) as number;
  if (K !== Kb) {
    throw new Error(
      `Error in matMul: inner shapes (${K}) and (${Kb}) of Tensors with shapes ${a.shape} and ${b.shape} and transposeA=${transposeA} and transposeB=${transposeB} must match.`,
    );
  }
  const outerA = a.shape.slice(0, -2);
  const outerB = b.shape.slice(0, -2);
  const outer = tf.broadcast_util.assertAndGetBroadcastShape(outerA, outerB);
  const batch = outer.reduce((x, y) => x * y, 1);
  const out = backend.makeOutput([...outer, M, N], 'float32');
  const aIndex = batchIndexer(outerA, outer);
  const bIndex = batchIndexer(outerB, outer);
  const aBase = offsetOf(backend, a);
  const bBase = offsetOf(backend, b);
  const cBase = offsetOf(backend, out);
  const aMatrix = (i: number): StridedMatrix => ({
    offset: aBase + i * M * K * 4,
    rowStride: transposeA ? 4 : K * 4,
    colStride: transposeA ? M * 4 : 4,
  });
  const bMatrix = (i: number): StridedMatrix => ({
    offset: bBase + i * K * N * 4,
    rowStride: transposeB ? 4 : N * 4,
    colStride: transposeB ? K * 4 : 4,
  });
  if (M * N === 0) return out;
  const singleB = outerB.reduce((x, y) => x * y, 1) === 1;
  if (singleB && K > 0 && M <= CACHE_MAX_ROWS) {
    const packed = packedCacheFor(backend).get(gemm, b, bMatrix(0), transposeB, K, N);
    if (packed !== undefined) {
      for (let i = 0; i < batch; i++) {
        gemm.multiplyPackedInto(aMatrix(aIndex(i)), packed, cBase + i * M * N * 4, M, K, N);
      }
      return out;
    }
  }
  if (singleB && batch > 1 && K > 0) {
    // One right operand for every batch entry: pack it once.
    const packed = heapAlloc(backend, WasmGemm.packedBytes(K, N));
    try {
      gemm.pack(bMatrix(0), K, N, packed);
      for (let i = 0; i < batch; i++) {
        gemm.multiplyPackedInto(aMatrix(aIndex(i)), packed, cBase + i * M * N * 4, M, K, N);
      }
    } finally {
      backend.wasm._free(packed);
    }
    return out;
  }
  for (let i = 0; i < batch; i++) {
    gemm.multiply(aMatrix(aIndex(i)), bMatrix(bIndex(i)), cBase + i * M * N * 4, M, K, N);
  }
  return out;
}

function unsortedSegmentSum(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmBackendLike;
  const x = args.inputs.x as tf.TensorInfo;
  const ids = args.inputs.segmentIds as tf.TensorInfo;
  const numSegments = Number(args.attrs?.numSegments);
  const inner = x.shape.slice(ids.shape.length).reduce((a, b) => a * b, 1);
  const outShape = [numSegments, ...x.shape.slice(ids.shape.length)];
  const out = backend.makeOutput(outShape, x.dtype);
  const dst = backend.typedArrayFromHeap(out);
  dst.fill(0);
  const src = backend.readSync(x.dataId);
  const seg = backend.readSync(ids.dataId);
  for (let i = 0; i < seg.length; i++) {
    const s = seg[i] as number;
    if (s < 0 || s >= numSegments) continue;
    const so = i * inner;
    const d = s * inner;
    for (let j = 0; j < inner; j++) dst[d + j] = (dst[d + j] as number) + (src[so + j] as number);
  }
  return out;
}

/**
 * `Identity` sharing its input's data, as the cpu backend's does: tfjs clones every tensor it
 * saves for the backward pass through this kernel, and the backend's own version copies the data
 * each time (196 copies in one step of the tiny configuration). Tensor data is never written
 * after creation, so sharing is safe; the backend counts references as it does for `Reshape`.
 */
function identity(args: KernelArgs): tf.TensorInfo {
  const x = args.inputs.x as tf.TensorInfo;
  if (x.dtype === 'string') return runOriginal('Identity', args);
  (args.backend as WasmBackendLike).incRef(x.dataId);
  return { dataId: x.dataId, shape: [...x.shape], dtype: x.dtype };
}

/** Kernel names of the optimizer's wasm kernels. */
export const WASM_OPTIMIZER_KERNELS = {
  adamwStep: 'AgentrlAdamWStep',
  sumOfSquares: 'AgentrlSumOfSquares',
} as const;

const adamws = new WeakMap<object, WasmAdamW | null>();

function adamwFor(backend: WasmBackendLike): WasmAdamW | null {
  let kernel = adamws.get(backend);
  if (kernel !== undefined) return kernel;
  kernel = bindToHeap(backend, (memory) => new WasmAdamW(memory));
  adamws.set(backend, kernel);
  return kernel;
}

/** Whether the active backend is wasm with the optimizer kernels able to run on its heap. */
export function wasmOptimizerKernelsActive(): boolean {
  return (
    tf.getBackend() === 'wasm' &&
    tf.getKernel(WASM_OPTIMIZER_KERNELS.adamwStep, 'wasm') !== undefined &&
    adamwFor(tf.backend() as unknown as WasmBackendLike) !== null
  );
}

/** Inputs param, grad, m, v (float32, same shape); outputs the new param, m and v. */
function adamwStep(args: KernelArgs): tf.TensorInfo[] {
  const backend = args.backend as WasmBackendLike;
  const kernel = adamwFor(backend);
  if (kernel === null) throw new Error('AgentrlAdamWStep: the wasm heap cannot be shared');
  const { param, grad, m, v } = args.inputs as Record<string, tf.TensorInfo>;
  const tensors = [param, grad, m, v] as tf.TensorInfo[];
  const n = tensors[0]?.shape.reduce((a, b) => a * b, 1) ?? 0;
  for (const t of tensors) {
    if (t.dtype !== 'float32' || t.shape.reduce((a, b) => a * b, 1) !== n) {
      throw new Error('AgentrlAdamWStep takes float32 param, grad, m and v of one size');
    }
  }
  const shape = (param as tf.TensorInfo).shape;
  const outs = [0, 1, 2].map(() => backend.makeOutput([...shape], 'float32'));
  const attrs = (args.attrs ?? {}) as unknown as AdamWStepScalars;
  kernel.step(
    {
      param: offsetOf(backend, param as tf.TensorInfo),
      grad: offsetOf(backend, grad as tf.TensorInfo),
      m: offsetOf(backend, m as tf.TensorInfo),
      v: offsetOf(backend, v as tf.TensorInfo),
      outParam: offsetOf(backend, outs[0] as tf.TensorInfo),
      outM: offsetOf(backend, outs[1] as tf.TensorInfo),
      outV: offsetOf(backend, outs[2] as tf.TensorInfo),
    },
    n,
    attrs,
  );
  return outs;
}

/** `Σ x²` over every element of every input (accumulated in float64), as a float32 scalar. */
function sumOfSquares(args: KernelArgs): tf.TensorInfo {
  const backend = args.backend as WasmBackendLike;
  const inputs = Object.values(args.inputs) as tf.TensorInfo[];
  const out = backend.makeOutput([], 'float32');
  let total = 0;
  for (const t of inputs) {
    const x = backend.typedArrayFromHeap(t) as Float32Array;
    let sum = 0;
    for (let i = 0; i < x.length; i++) {
      const v = x[i] as number;
      sum += v * v;
    }
    total += sum;
  }
  (backend.typedArrayFromHeap(out) as Float32Array)[0] = total;
  return out;
}

/** Registers the missing wasm kernels once (idempotent). */
export function registerWasmKernels(): void {
  if (registered) return;
  registered = true;
  const replace = (kernelName: string, kernelFunc: tf.KernelFunc) => {
    const original = tf.getKernel(kernelName, 'wasm');
    if (original === undefined || original.kernelFunc === kernelFunc) return;
    originals.set(kernelName, original);
    tf.unregisterKernel(kernelName, 'wasm');
    tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc });
  };
  replace('BatchMatMul', batchMatMul as unknown as tf.KernelFunc);
  replace('Sum', sum as unknown as tf.KernelFunc);
  replace('Identity', identity as unknown as tf.KernelFunc);
  if (tf.getKernel(WASM_OPTIMIZER_KERNELS.adamwStep, 'wasm') === undefined) {
    tf.registerKernel({
      kernelName: WASM_OPTIMIZER_KERNELS.adamwStep,
      backendName: 'wasm',
      kernelFunc: adamwStep as unknown as tf.KernelFunc,
    });
    tf.registerKernel({
      kernelName: WASM_OPTIMIZER_KERNELS.sumOfSquares,
      backendName: 'wasm',
      kernelFunc: sumOfSquares as unknown as tf.KernelFunc,
    });
  }
  if (tf.getKernel('UnsortedSegmentSum', 'wasm') === undefined) {
    tf.registerKernel({
      kernelName: 'UnsortedSegmentSum',
      backendName: 'wasm',
      kernelFunc: unsortedSegmentSum as unknown as tf.KernelFunc,
    });
  }
}
