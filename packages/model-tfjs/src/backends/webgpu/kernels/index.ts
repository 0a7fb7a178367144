/**
 * Every kernel this package adds to or changes in the tfjs webgpu backend, registered in one place
 * (called once by `initWebGPU`).
 */
import { registerAdamWKernels } from './adamw.ts';
import { registerChunkedAddN } from './addn.ts';
import { registerAttentionKernel } from './attention.ts';
import { registerColumnSum } from './column-sum.ts';
import { registerFlashAttentionKernels } from './flash-attention.ts';
import { registerFusedKernels } from './fused.ts';
import { registerKvCacheKernels } from './kv-cache.ts';
import { registerHalfMatMul } from './matmul-half.ts';
import { registerMatMulNT } from './matmul-nt.ts';
import { registerProjectionKernels } from './projections.ts';
import { registerResidualKernels } from './residual.ts';
import { registerSamplingKernel } from './sample.ts';

/** Device facts the kernels depend on. */
export interface KernelLimits {
  readonly maxStorageBuffersPerShaderStage: number;
  /** The device has `shader-f16` (half-precision matmul inputs under precision `mixed`). */
  readonly shaderF16: boolean;
}

/** Registers (idempotently) the package's webgpu kernels. */
export function registerWebGPUKernels(limits: KernelLimits): void {
  registerChunkedAddN(limits.maxStorageBuffersPerShaderStage);
  registerFusedKernels();
  registerColumnSum();
  registerResidualKernels();
  registerProjectionKernels();
  registerMatMulNT();
  registerHalfMatMul(limits.shaderF16);
  registerAttentionKernel();
  registerFlashAttentionKernels();
  registerKvCacheKernels();
  registerSamplingKernel();
  registerAdamWKernels(limits.maxStorageBuffersPerShaderStage);
}
