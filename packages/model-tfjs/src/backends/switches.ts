/**
 * Kernel switches of a backend, chosen when the backend is set up (`selectBackend`, and through it
 * `loadCausalLM` / `createCausalLM`: their `webgpu` and `wasm` options) and held with that tfjs
 * backend instance: every set-up states them again (an option left out is its default), and the
 * kernels read the switches of the backend they run on. Defaults are what the package is measured
 * with; the other settings exist to compare against tfjs's own kernels and to test limits.
 */
import * as tf from '@tensorflow/tfjs';

/** Which matrix product the wasm backend's `BatchMatMul` uses. */
export type WasmMatMulKernel = 'agentrl' | 'xnnpack';

/** The most a wasm32 heap can hold. */
export const WASM_HEAP_BYTES = 2 ** 32;

/**
 * Heap bytes the wasm matmul's packed-panel cache may hold by default. Past it, further operands
 * are packed per call (slower decode, same results): the cache copies every weight a decode step
 * multiplies, and for a model of ~2 GB (Qwen2.5-0.5B) weights plus copies would not fit the 4 GiB
 * heap.
 */
export const PACKED_PANEL_BUDGET_BYTES = 2 ** 30;

/** Environment variable that chooses the wasm `BatchMatMul` when the set-up does not. */
export const WASM_MATMUL_ENV_VAR = 'AGENTRL_WASM_MATMUL';

/** Switches of the wasm backend. */
export interface WasmSwitches {
  /**
   * `agentrl`: the relaxed-SIMD kernel of `wasm/gemm.ts`; `xnnpack`: tfjs-backend-wasm's own.
   * Default `agentrl` (or `AGENTRL_WASM_MATMUL`).
   */
  readonly matMul: WasmMatMulKernel;
  /** Heap bytes the memory checks assume. Default {@link WASM_HEAP_BYTES}; tests lower it. */
  readonly heapBytes: number;
  /** Heap bytes the packed-panel cache may hold. Default {@link PACKED_PANEL_BUDGET_BYTES}. */
  readonly packedPanelBudgetBytes: number;
}

/**
 * The fused WGSL kernels, each switchable on its own (off: the composed tfjs ops, the reference
 * the parity tests compare against): `matMul` (projections as `tf.fused.matMul` with the bias or
 * residual inside and transpose flags instead of transposes), `transposedMatMul` (products
 * `a · bᵀ` by our vec4 tiled program, `webgpu/kernels/matmul-nt.ts`, instead of tfjs's scalar
 * one: every linear layer's input gradient, a tied LM head read in place), `rmsNorm`, `swiglu`, `rotary`,
 * `attention` (passes over several query positions, forward and backward: prefill, scoring,
 * training), `decodeAttention` (passes of one query position: generation's decode steps),
 * `kvCache` (keys and values written straight into the cache layout, in a differentiated pass
 * with gradients of one dispatch each; generation's fixed-capacity
 * cache written in place), `tokenLogProbs` and `entropy` (scoring and the train steps' log-probs),
 * `adamw` (the update and the gradient norm).
 *
 * All are on by default. `attention` is the tiled (flash) kernels (`webgpu/kernels/flash-attention.ts`):
 * no `[T, S]` score matrix is ever held, where the composed ops (off) hold one per layer for the
 * backward pass (+12 GiB at a Qwen2.5-0.5B train step of 8 × 1024 tokens; the 1.5B step did not
 * fit an H100 without a fused attention). The earlier fused kernel for several positions (one
 * workgroup per query row) was 3.9× slower than the composed ops on an H100; the tiled kernels'
 * speed there is to be measured (benchmarks/model-gpu, `--ab-fused attention`). A head dim whose
 * tiles do not fit the device's workgroup memory composes attention even with the switch on.
 */
export const FUSED_KERNEL_NAMES = [
  'matMul',
  'transposedMatMul',
  'rmsNorm',
  'swiglu',
  'rotary',
  'attention',
  'decodeAttention',
  'kvCache',
  'tokenLogProbs',
  'entropy',
  'adamw',
] as const;

/** The name of one fused kernel switch. */
export type FusedKernelName = (typeof FUSED_KERNEL_NAMES)[number];

/** Which fused kernels are on. */
export type FusedKernelSwitches = Readonly<Record<FusedKernelName, boolean>>;

/** Switches of the webgpu backend. */
export interface WebGPUSwitches {
  /**
   * Which of the fused WGSL kernels the decoder, scoring and AdamW use. Default
   * {@link DEFAULT_FUSED_KERNELS}: all on. As an option: `true` / `false` for all,
   * or an object naming the ones that differ from the default.
   */
  readonly fusedKernels: FusedKernelSwitches;
  /** Generation picks tokens on the GPU. Default true. */
  readonly gpuSampling: boolean;
}

/** The `fusedKernels` option: all on or off, or per kernel (those left out keep their default). */
export type FusedKernelsOption = boolean | Partial<Record<FusedKernelName, boolean>>;

/** The wasm switches of a set-up that chooses none. */
export const DEFAULT_WASM_SWITCHES: WasmSwitches = {
  matMul: 'agentrl',
  heapBytes: WASM_HEAP_BYTES,
  packedPanelBudgetBytes: PACKED_PANEL_BUDGET_BYTES,
};

/** The fused kernels of a set-up that chooses none: all (see {@link FUSED_KERNEL_NAMES}). */
export const DEFAULT_FUSED_KERNELS: FusedKernelSwitches = allFusedKernels(true);

/** The webgpu switches of a set-up that chooses none. */
export const DEFAULT_WEBGPU_SWITCHES: WebGPUSwitches = {
  fusedKernels: DEFAULT_FUSED_KERNELS,
  gpuSampling: true,
};

/** Every fused kernel switch set to `on`. */
export function allFusedKernels(on: boolean): FusedKernelSwitches {
  return Object.fromEntries(FUSED_KERNEL_NAMES.map((n) => [n, on])) as FusedKernelSwitches;
}

/** Switches by tfjs backend instance: they live as long as the backend they were set up with. */
const held = new WeakMap<object, WasmSwitches | WebGPUSwitches>();

/** Holds `switches` for the registered backend `name` (what `selectBackend` does). */
export function holdSwitches(name: 'wasm', switches: WasmSwitches): void;
export function holdSwitches(name: 'webgpu', switches: WebGPUSwitches): void;
export function holdSwitches(name: string, switches: WasmSwitches | WebGPUSwitches): void {
  const backend = tf.findBackend(name);
  if (backend !== null) held.set(backend, switches);
}

function activeSwitches(name: string): WasmSwitches | WebGPUSwitches | undefined {
  return tf.getBackend() === name ? held.get(tf.backend()) : undefined;
}

/** The switches the active wasm backend was set up with (the defaults when wasm is not active). */
export function wasmSwitches(): WasmSwitches {
  return (activeSwitches('wasm') as WasmSwitches | undefined) ?? DEFAULT_WASM_SWITCHES;
}

/** The switches the active webgpu backend was set up with (the defaults when it is not active). */
export function webgpuSwitches(): WebGPUSwitches {
  return (activeSwitches('webgpu') as WebGPUSwitches | undefined) ?? DEFAULT_WEBGPU_SWITCHES;
}

/**
 * Training precision, a backend option held like the switches: `f32` (the default) or `mixed`,
 * which scales the loss dynamically (`train/loss-scale.ts`: the loss times a power of two before
 * the backward pass, the gradients divided by it before the update, a step with non-finite
 * gradients skipped and the scale backed off) and, on webgpu with `shader-f16`, gives the
 * matmuls half-precision inputs with `f32` accumulation (`webgpu/kernels/matmul-half.ts`).
 * Float32 weights and optimizer state either way; elsewhere `mixed` keeps `f32` products and
 * gives the `f32` updates (the scaling is exact) at the cost of one multiply per gradient.
 */
export const PRECISIONS = ['f32', 'mixed'] as const;

/** See {@link PRECISIONS}. */
export type Precision = (typeof PRECISIONS)[number];

const precisions = new WeakMap<object, Precision>();

/** Holds the training precision for the registered backend `name` (what `selectBackend` does). */
export function holdPrecision(name: string, precision: Precision): void {
  const backend = tf.findBackend(name);
  if (backend !== null) precisions.set(backend, precision);
}

/** The training precision the active backend was set up with (`f32` unless set). */
export function trainingPrecision(): Precision {
  return precisions.get(tf.backend()) ?? 'f32';
}
