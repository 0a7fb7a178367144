/**
 * What the benchmark reads from TensorFlow.js's webgpu backend (4.22) besides wall time: summed
 * kernel time from timestamp queries over an async call, peak buffer bytes, a real GPU sync, and
 * releasing the buffer pool between workloads. These use backend internals the model package
 * does not wrap; every access is checked, so a tfjs upgrade that renames them fails loudly here.
 */
import * as tf from '@tensorflow/tfjs';

interface PooledBuffer {
  readonly size: number;
  destroy(): void;
}

interface BufferManagerLike {
  numBytesUsed: number;
  numBytesAllocated: number;
  numFreeBuffers: number;
  freeBuffers: Map<string, PooledBuffer[]>;
  acquireBuffer: (...args: unknown[]) => unknown;
}

interface TimerEntry {
  readonly name: string;
  readonly query: Promise<number>;
}

type TimerList = (TimerEntry | TimerList)[];

interface WebGPUBackendLike {
  readonly bufferManager: BufferManagerLike;
  readonly supportTimestampQuery: boolean;
  activeTimers?: TimerList | null;
  readonly commandEncoder?: unknown;
  endComputePassEncoder(): void;
  submitQueue(): void;
  readonly queue: { onSubmittedWorkDone(): Promise<void> };
}

function webgpuBackend(): WebGPUBackendLike {
  if (tf.getBackend() !== 'webgpu') {
    throw new Error(`the webgpu backend is not active (tfjs is on ${tf.getBackend()})`);
  }
  const b = tf.backend() as unknown as Partial<WebGPUBackendLike>;
  const bm = b.bufferManager as Partial<BufferManagerLike> | undefined;
  if (
    bm === undefined ||
    typeof bm.numBytesUsed !== 'number' ||
    typeof bm.acquireBuffer !== 'function' ||
    !(bm.freeBuffers instanceof Map) ||
    typeof b.submitQueue !== 'function' ||
    typeof b.endComputePassEncoder !== 'function' ||
    b.queue === undefined
  ) {
    throw new Error(
      'the tfjs webgpu backend lacks the internals this benchmark reads (bufferManager, submitQueue, queue); it was written against @tensorflow/tfjs-backend-webgpu 4.22',
    );
  }
  return b as WebGPUBackendLike;
}

/** Submits what tfjs has recorded and waits until the GPU has finished it. */
export async function syncGpu(): Promise<void> {
  const b = webgpuBackend();
  if (b.commandEncoder) {
    b.endComputePassEncoder();
    b.submitQueue();
  }
  await b.queue.onSubmittedWorkDone();
}

/** Kernel time of a call, or why there is none. */
export type KernelTime =
  | { readonly kernelMs: number; readonly kernels: number }
  | { readonly kernelMs: null; readonly reason: string };

function flatten(list: TimerList, out: TimerEntry[] = []): TimerEntry[] {
  for (const item of list) {
    if (Array.isArray(item)) flatten(item, out);
    else out.push(item);
  }
  return out;
}

/**
 * Runs `fn` (async allowed) with tfjs's per-program timestamp queries on and sums the GPU time of
 * every kernel it dispatched. Each kernel then gets its own compute pass and submit, so the wall
 * time of this call is not the step's wall time: measure that separately, uninstrumented.
 * `tf.time` cannot do this: it times only the kernels recorded synchronously inside its callback.
 */
export async function kernelTime(fn: () => Promise<unknown>): Promise<KernelTime> {
  const b = webgpuBackend();
  if (!b.supportTimestampQuery) {
    return {
      kernelMs: null,
      reason: "the adapter does not expose the 'timestamp-query' feature",
    };
  }
  if (b.activeTimers != null) {
    return { kernelMs: null, reason: 'another timing (tf.time / tf.profile) is in progress' };
  }
  const timers: TimerList = [];
  b.activeTimers = timers;
  try {
    await fn();
    await syncGpu();
  } finally {
    b.activeTimers = undefined;
  }
  const entries = flatten(timers);
  const times = await Promise.all(entries.map((e) => e.query));
  return { kernelMs: times.reduce((a, t) => a + t, 0), kernels: entries.length };
}

// ---- buffer bytes ----------------------------------------------------------------------------

interface Peaks {
  inUse: number;
  pool: number;
}

const peaks = new WeakMap<BufferManagerLike, Peaks>();

function tracked(): { bm: BufferManagerLike; peak: Peaks } {
  const bm = webgpuBackend().bufferManager;
  let peak = peaks.get(bm);
  if (peak === undefined) {
    const p: Peaks = { inUse: bm.numBytesUsed, pool: bm.numBytesAllocated };
    peak = p;
    const acquire = bm.acquireBuffer.bind(bm);
    bm.acquireBuffer = (...args: unknown[]) => {
      const buffer = acquire(...args);
      if (bm.numBytesUsed > p.inUse) p.inUse = bm.numBytesUsed;
      if (bm.numBytesAllocated > p.pool) p.pool = bm.numBytesAllocated;
      return buffer;
    };
    peaks.set(bm, p);
  }
  return { bm, peak };
}

/** Starts peak tracking afresh from the bytes held now. */
export function resetPeakBytes(): void {
  const { bm, peak } = tracked();
  peak.inUse = bm.numBytesUsed;
  peak.pool = bm.numBytesAllocated;
}

/**
 * Peak bytes since the last reset: `inUse` in buffers tensors (and staging/uniform buffers)
 * held, `pool` allocated on the device including tfjs's free-buffer pool (what the GPU really
 * gave; compare with torch's `max_memory_reserved`).
 */
export function peakBytes(): { inUse: number; pool: number } {
  const { peak } = tracked();
  return { inUse: peak.inUse, pool: peak.pool };
}

/** Destroys the buffers tfjs keeps in its free pool (between workloads); returns bytes freed. */
export function releaseFreeBuffers(): number {
  const bm = webgpuBackend().bufferManager;
  let freed = 0;
  for (const list of bm.freeBuffers.values()) {
    for (const buffer of list) {
      buffer.destroy();
      freed += buffer.size;
    }
    bm.numFreeBuffers -= list.length;
    list.length = 0;
  }
  bm.numBytesAllocated -= freed;
  return freed;
}
