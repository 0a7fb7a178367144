/**
 * @agentrl/model-tfjs — a trainable Qwen2-family causal LM in TensorFlow.js.
 */
export {
  BACKEND_ENV_VAR,
  type BackendName,
  type BackendOptions,
  NATIVE_PACKAGES,
  selectBackend,
} from './backend.ts';
export {
  type CreateOptions,
  createCausalLM,
  type LoadOptions,
  loadCausalLM,
} from './checkpoint.ts';
export { type CausalLMConfig, type CausalLMConfigInput, parseConfig } from './config.ts';
export { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './dtype.ts';
export type { ModelLogger } from './logger.ts';
export { LORA_TARGETS, LoRAAdapters, type LoRAOptions } from './lora.ts';
export {
  CausalLM,
  type CausalLMOptions,
  type ParameterStorage,
  type ScoreOptions,
  type TokenScores,
} from './model.ts';
export {
  AdamWState,
  type OptimizerOptions,
  type ResolvedOptimizerOptions,
} from './optimizer.ts';
export { WorkerPool } from './parallel.ts';
export {
  encodeSafetensors,
  type FloatDType,
  type NamedTensor,
  readCheckpointTensors,
  readSafetensors,
  readSafetensorsFile,
  writeSafetensors,
} from './safetensors.ts';
export { type SampledToken, sampleToken, type TokenSamplingOptions } from './sampling.ts';
export { type SaveOptions, saveCausalLM } from './save.ts';
export {
  HFTokenizer,
  type HFTokenizerOptions,
  loadQwen25Tokenizer,
  loadTokenizer,
  qwen25TokenizerDir,
  type TokenizerFiles,
} from './tokenizer.ts';
export {
  computeGradients,
  defaultPolicyLoss,
  type GradientJob,
  type GradientSums,
  type PolicyLossFn,
  type PolicySample,
  responseTensors,
  type SupervisedSample,
  type SupervisedStepOptions,
  type TrainStepOptions,
  type TrainStepResult,
} from './train.ts';
export {
  loadTrainingState,
  OPTIMIZER_STATE_FILE,
  saveTrainingState,
} from './training-state.ts';
export { setWasmMatMul, type WasmMatMulKernel, wasmMatMul } from './wasm-kernels.ts';
export {
  FUSED_KERNELS,
  fusedRmsNorm,
  fusedRotary,
  fusedSwiGLU,
  fusedTokenLogProbs,
  setFusedKernels,
} from './webgpu/kernels/fused.ts';
export { sampleTokensOnGpu, setGpuSampling } from './webgpu/kernels/sample.ts';
export {
  adapterName,
  backendInfo,
  countWebGPUDispatches,
  describeAdapter,
  initWebGPU,
  probeWebGPUAdapter,
  setWebGPUBindingLimit,
  type WebGPUAdapterSummary,
  WebGPUError,
  type WebGPUErrorKind,
  type WebGPUOptions,
  WebGPUUnavailableError,
  webgpuAdapter,
  webgpuBindingLimit,
  withGpuErrorScope,
} from './webgpu/setup.ts';
export {
  blockRanges,
  gatherSplitRows,
  joinHost,
  matMulSplitRowsT,
  splitHost,
  splitRows,
} from './webgpu/split.ts';
export {
  buildWordVocabulary,
  splitWords,
  WORD_VOCABULARY_SPECIALS,
  type WordVocabularyOptions,
  writeTokenizerFiles,
} from './word-vocabulary.ts';
