/**
 * The typed errors of the webgpu backend (set-up in `setup.ts`, buffer pool in `memory.ts`).
 */
import { AgentRLError } from '@agentrl/core';

/** No usable WebGPU adapter (or the `webgpu` package is missing): `BACKEND_UNAVAILABLE`. */
export class WebGPUUnavailableError extends AgentRLError {
  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super('BACKEND_UNAVAILABLE', message, options);
  }
}

/** Kinds of GPU failure turned into {@link WebGPUError}. */
export type WebGPUErrorKind =
  | 'validation'
  | 'out-of-memory'
  | 'internal'
  | 'binding-limit'
  | 'device-lost';

/** A GPU validation / out-of-memory / binding-limit / device-lost failure: `BACKEND_FAILURE`. */
export class WebGPUError extends AgentRLError {
  readonly kind: WebGPUErrorKind;
  constructor(
    kind: WebGPUErrorKind,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super('BACKEND_FAILURE', message, { ...options, details: { kind, ...options?.details } });
    this.kind = kind;
  }
}

/**
 * What an out-of-memory error on webgpu tells the user to shrink, in the order that costs least:
 * the micro-batch, the generation size, the memory-lean fused attention (slower on full
 * sequences; see `webgpu.fusedKernels`), the model.
 */
export const SHRINK_ADVICE =
  'lower microBatchSize in trainStep/sftStep, generate for fewer prompts per call or fewer maxNewTokens, turn on webgpu.fusedKernels.attention (attention without a score matrix per layer: less memory, slower training), use a smaller model, or free tensors (tf.dispose) between steps';
