/**
 * @agentrl/model-tfjs/internal — the pieces the model is built from and the WebGPU debug counter,
 * for benchmarks and for checking a backend: the fused WGSL kernels, GPU token sampling, the
 * row-block split helpers of the `ParameterStore`, and `countWebGPUDispatches`. They follow the
 * model's internals and may change in any release; training and generation never need them (the
 * main entry point, `@agentrl/model-tfjs`, has everything a user of the model calls).
 */

export { countWebGPUDispatches } from './backends/webgpu/dispatch-counter.ts';
export {
  FUSED_KERNELS,
  fusedRmsNorm,
  fusedRotary,
  fusedSwiGLU,
  fusedTokenLogProbs,
} from './backends/webgpu/kernels/fused.ts';
export { type GpuSamplingOptions, sampleTokensOnGpu } from './backends/webgpu/kernels/sample.ts';
export {
  blockRanges,
  gatherSplitRows,
  joinHost,
  matMulSplitRowsT,
  splitHost,
  splitRows,
} from './backends/webgpu/split.ts';
