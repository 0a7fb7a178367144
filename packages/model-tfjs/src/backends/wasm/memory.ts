/**
 * The wasm backend keeps every tensor in one WebAssembly memory, which a wasm32 module can grow to
 * 4 GiB at most (measured with tfjs-backend-wasm 4.22: 64 MiB tensors allocated up to 4,096 MiB,
 * then `RuntimeError: memory access out of bounds`). A model or a training step that cannot fit
 * is refused before it starts, with what would fit instead, rather than failing deep inside a
 * kernel with that RuntimeError.
 */
import { AgentRLError } from '@agentrl/core';
import { wasmSwitches } from '../switches.ts';
import { webAssembly } from './emit.ts';

/** The heap size the checks assume: the set-up's `wasm.heapBytes` (the wasm32 maximum unless a test lowers it). */
const heapLimit = (): number => wasmSwitches().heapBytes;

const GIB = 2 ** 30;
const gib = (bytes: number) => `${(bytes / GIB).toFixed(2)} GiB`;

const ELSEWHERE =
  'the webgpu backend (a GPU, see the package README) or tfjs-node have no such limit';

/** The heap cannot hold what was asked (`BACKEND_FAILURE`, details: bytes, limitBytes). */
export class WasmMemoryError extends AgentRLError {
  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super('BACKEND_FAILURE', message, { details, ...(cause === undefined ? {} : { cause }) });
  }
}

/** Refuses to load `parameters` float32 weights onto the wasm backend when they cannot fit. */
export function checkWasmWeights(parameters: number): void {
  const limit = heapLimit();
  const bytes = parameters * 4;
  if (bytes < limit) return;
  throw new WasmMemoryError(
    `${parameters.toLocaleString('en-US')} parameters take ${gib(bytes)} as float32, more than the wasm backend's heap holds (${gib(limit)}, the wasm32 maximum); ${ELSEWHERE}`,
    { bytes, limitBytes: limit, parameters },
  );
}

/**
 * Refuses a train step on wasm whose lower bound cannot fit: every weight, plus a gradient and
 * two AdamW moments per trainable value (activations come on top).
 */
export function checkWasmTraining(parameters: number, trainable: number, lora: boolean): void {
  const limit = heapLimit();
  const bytes = 4 * (parameters + 3 * trainable);
  if (bytes < limit) return;
  const fix = lora
    ? `lower the LoRA rank or target fewer projections; ${ELSEWHERE}`
    : `train LoRA adapters instead (model.enableLoRA, or model.options.lora in a runner config: the frozen base needs no gradient or moments); ${ELSEWHERE}`;
  throw new WasmMemoryError(
    `a train step of this model needs at least ${gib(bytes)} on wasm (${parameters.toLocaleString('en-US')} weights plus a gradient and two AdamW moments for each of ${trainable.toLocaleString('en-US')} trainable values, before activations), more than its heap holds (${gib(limit)}); ${fix}`,
    { bytes, limitBytes: limit, parameters, trainable },
  );
}

/** Whether `error` is the wasm engine's failure when the heap is exhausted. */
export function isWasmHeapFailure(error: unknown): boolean {
  return (
    error instanceof webAssembly.RuntimeError &&
    /memory access out of bounds|out of memory|^Aborted\(/i.test((error as Error).message)
  );
}

/** A failed allocation of `bytes` of kernel scratch (the allocator returned 0). */
export function heapAllocationFailure(bytes: number, tensorBytes: number): WasmMemoryError {
  const limit = heapLimit();
  return new WasmMemoryError(
    `the wasm heap has no room for ${bytes} bytes of matmul scratch (tensors hold ${gib(tensorBytes)}; the heap holds ${gib(limit)} at most): use smaller micro-batches or shorter sequences, or ${ELSEWHERE}`,
    { bytes, tensorBytes, limitBytes: limit },
  );
}

/**
 * The error to throw for a wasm RuntimeError raised by a step: usually the heap ran out. The
 * backend's memory may be inconsistent afterwards; the message says to restart.
 */
export function wasmHeapFailure(error: unknown, tensorBytes: number): WasmMemoryError {
  const limit = heapLimit();
  return new WasmMemoryError(
    `the wasm backend failed with "${(error as Error).message}" holding ${gib(tensorBytes)} in tensors: its heap (${gib(limit)} at most) was most likely exhausted by this step's activations; use smaller micro-batches (microBatchSize) or shorter sequences, or ${ELSEWHERE}. The backend's memory may be inconsistent now: restart the process`,
    { tensorBytes, limitBytes: limit },
    error,
  );
}
