/**
 * @agentrl/model-tfjs — a trainable Qwen2-family causal LM in TensorFlow.js. The fused kernels, the
 * row-block split helpers and the WebGPU dispatch counter are `@agentrl/model-tfjs/internal`.
 */

export {
  bf16ToF32,
  type CausalLMConfig,
  type CausalLMConfigInput,
  encodeSafetensors,
  type FloatDType,
  f16ToF32,
  f32ToBf16,
  f32ToF16,
  type NamedTensor,
  parseConfig,
  readCheckpointTensors,
  readSafetensors,
  readSafetensorsFile,
  writeSafetensors,
} from '@agentrl/core/checkpoint';
export {
  BACKEND_ENV_VAR,
  type BackendName,
  type BackendOptions,
  NATIVE_PACKAGES,
  selectBackend,
} from './backends/select.ts';
export {
  DEFAULT_WASM_SWITCHES,
  DEFAULT_WEBGPU_SWITCHES,
  FUSED_KERNEL_NAMES,
  type FusedKernelName,
  type FusedKernelSwitches,
  type FusedKernelsOption,
  PRECISIONS,
  type Precision,
  WASM_MATMUL_ENV_VAR,
  type WasmMatMulKernel,
  type WasmSwitches,
  type WebGPUSwitches,
} from './backends/switches.ts';
export { wasmMatMul } from './backends/wasm/kernels.ts';
export {
  measureWebGPUMemory,
  releaseWebGPUFreeBuffers,
  type WebGPUMemoryPeaks,
  webgpuBytes,
} from './backends/webgpu/memory.ts';
export {
  adapterName,
  backendInfo,
  describeAdapter,
  initWebGPU,
  probeWebGPUAdapter,
  type WebGPUAdapterSummary,
  WebGPUError,
  type WebGPUErrorKind,
  type WebGPUOptions,
  WebGPUUnavailableError,
  webgpuAdapter,
  webgpuBindingLimit,
  withGpuErrorScope,
} from './backends/webgpu/setup.ts';
export { Decoder, type TokenLogProbTensors } from './decoder/decoder.ts';
export { LORA_TARGETS, LoRAAdapters, type LoRAOptions } from './decoder/lora.ts';
export {
  type ParameterStorage,
  ParameterStore,
  type ParameterStoreOptions,
} from './decoder/parameter-store.ts';
export { type GenerationModel, generateTokens } from './generate/generate.ts';
export { type SampledToken, sampleToken, type TokenSamplingOptions } from './generate/sampling.ts';
export { type SavableModel, type SaveOptions, saveCausalLM } from './io/save.ts';
export {
  loadTrainingState,
  OPTIMIZER_STATE_FILE,
  saveTrainingState,
} from './io/training-state.ts';
export type { ModelLogger } from './logger.ts';
export {
  CausalLM,
  type CausalLMOptions,
  defaultWorkerCount,
  PARALLEL_GENERATE_MIN_ROWS,
  PARALLEL_SCORE_MIN_ROWS,
  type ScoreOptions,
  type TokenScores,
} from './model/causal-lm.ts';
export {
  type CreateOptions,
  createCausalLM,
  type LoadOptions,
  loadCausalLM,
} from './model/load.ts';
export { type ThreadWork, WorkerPool } from './parallel/worker-pool.ts';
export {
  HFTokenizer,
  type HFTokenizerOptions,
  loadQwen25Tokenizer,
  loadTokenizer,
  qwen25TokenizerDir,
  type TokenizerFiles,
} from './tokenizer/hf-tokenizer.ts';
export { byteLevelSymbols, type LetterDigitRuns, splitPieces } from './tokenizer/pieces.ts';
export {
  buildWordVocabulary,
  WORD_VOCABULARY_SPECIALS,
  type WordVocabularyOptions,
  writeTokenizerFiles,
} from './tokenizer/word-vocabulary.ts';
export {
  DynamicLossScaler,
  type LossScaleOptions,
  type LossScaleState,
  resolveLossScaleOptions,
} from './train/loss-scale.ts';
export {
  AdamWState,
  type OptimizerOptions,
  type ResolvedOptimizerOptions,
} from './train/optimizer.ts';
export type {
  GradientJob,
  PolicySample,
  SupervisedSample,
} from './train/samples.ts';
export {
  computeGradients,
  defaultPolicyLoss,
  type GradientSums,
  type GradientWorkers,
  type PolicyLossFn,
  responseTensors,
  type SupervisedStepOptions,
  type TrainableModel,
  type TrainStepOptions,
  type TrainStepResult,
} from './train/steps.ts';
export { withStreamingBackprop } from './train/streaming-backprop.ts';
