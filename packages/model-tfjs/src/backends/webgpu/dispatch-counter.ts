/**
 * Instrumentation of the webgpu backend for tests and benchmarks: how many compute dispatches a
 * call issues, how many bytes it reads back, and how long the host spends issuing them. Apart
 * from the backend's set-up (setup.ts): it patches tfjs's engine and backend only for the call.
 */
import * as tf from '@tensorflow/tfjs';
import { WebGPUError } from './errors.ts';

/**
 * Runs `fn` and counts the compute dispatches the webgpu backend records meanwhile (one per
 * kernel that runs a shader; reshapes and other metadata-only kernels dispatch nothing), the
 * bytes it copies back from GPU buffers to the host (tensor reads), and `hostMs`: the wall time
 * spent inside outermost kernel calls (tfjs's engine, the backend's shader-key, uniform, bind
 * group and command recording, queue submits). Kernels only record GPU work, so this is the
 * host's cost of issuing it; the GPU idles through it unless earlier work is still queued.
 */
export async function countWebGPUDispatches<T>(
  fn: () => T | Promise<T>,
): Promise<{ result: T; dispatches: number; readBytes: number; hostMs: number }> {
  if (tf.getBackend() !== 'webgpu') {
    throw new WebGPUError('validation', 'countWebGPUDispatches needs the webgpu backend active', {
      details: { backend: tf.getBackend() },
    });
  }
  const backend = tf.backend() as unknown as {
    recordAndSubmit: (...args: unknown[]) => unknown;
    getBufferData: (buffer: { size: number }) => Promise<unknown>;
  };
  const engine = tf.engine() as unknown as { runKernelFunc: (...args: unknown[]) => unknown };
  const ownKernelFunc = Object.hasOwn(engine, 'runKernelFunc');
  const originalKernelFunc = engine.runKernelFunc;
  const original = backend.recordAndSubmit;
  const originalRead = backend.getBufferData;
  let dispatches = 0;
  let readBytes = 0;
  let hostMs = 0;
  let depth = 0;
  backend.recordAndSubmit = (...args: unknown[]) => {
    dispatches += 1;
    return original.apply(backend, args);
  };
  backend.getBufferData = (buffer: { size: number }) => {
    readBytes += buffer.size;
    return originalRead.call(backend, buffer);
  };
  engine.runKernelFunc = (...args: unknown[]) => {
    const start = depth === 0 ? performance.now() : 0;
    depth += 1;
    try {
      return originalKernelFunc.apply(engine, args);
    } finally {
      depth -= 1;
      if (depth === 0) hostMs += performance.now() - start;
    }
  };
  try {
    const result = await fn();
    return { result, dispatches, readBytes, hostMs };
  } finally {
    backend.recordAndSubmit = original;
    backend.getBufferData = originalRead;
    if (ownKernelFunc) engine.runKernelFunc = originalKernelFunc;
    else delete (engine as { runKernelFunc?: unknown }).runKernelFunc;
  }
}
