/**
 * The one place that sets up TensorFlow.js's WebGPU backend on Dawn's Node binding (npm `webgpu`,
 * an optional dependency): Dawn's globals and `navigator.gpu` before the tfjs
 * backend is imported, our own device request (features flattened and filtered to what the adapter
 * has, the adapter's limits), adapter facts for logs and run metadata, and GPU errors turned into
 * typed errors instead of the silent stale results tfjs gives by default.
 */
import * as tf from '@tensorflow/tfjs';
import type { ModelLogger } from '../../logger.ts';
import type { FusedKernelsOption, WebGPUSwitches } from '../switches.ts';
import {
  SHRINK_ADVICE,
  WebGPUError,
  type WebGPUErrorKind,
  WebGPUUnavailableError,
} from './errors.ts';
import { registerWebGPUKernels } from './kernels/index.ts';
import { ENABLE_F16_MARKER } from './kernels/matmul-half.ts';
import { capBufferPool } from './memory.ts';

export { WebGPUError, type WebGPUErrorKind, WebGPUUnavailableError } from './errors.ts';

/** Options of the webgpu backend (passed as `webgpu` in `loadCausalLM` / `createCausalLM`). */
export interface WebGPUOptions extends Partial<Omit<WebGPUSwitches, 'fusedKernels'>> {
  /** Fused kernels: all on (`true`, the default) or off, or per kernel (see `switches.ts`). */
  readonly fusedKernels?: FusedKernelsOption;
  /**
   * Largest storage binding, in bytes, a kernel may use. Default and upper bound: the adapter's
   * `maxStorageBufferBindingSize` (2 GiB - 4 on an H100, 128 MiB on lavapipe). Tests set it small.
   */
  readonly maxBindingBytes?: number;
  /**
   * Most bytes tfjs's buffers may take on the device, its pool of free buffers included (default:
   * no cap). Past it the pool is emptied first, then the request fails with a `WebGPUError`
   * `out-of-memory` instead of the device's own out-of-memory error. Set it below the GPU's
   * memory to have the pool drained instead of the device running out.
   */
  readonly maxPoolBytes?: number;
  /** Adapter preference passed to `requestAdapter` (default `high-performance`). */
  readonly powerPreference?: 'high-performance' | 'low-power';
  /** Imports a module by name (default: dynamic `import`); tests inject a failing one. */
  readonly importModule?: (name: string) => Promise<unknown>;
}

/** What the chosen adapter is; logged and meant for run metadata. */
export interface WebGPUAdapterSummary {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  /** Driver description as Dawn reports it (e.g. `llvmpipe: Mesa 25.0.7 ...`, NVIDIA driver). */
  readonly driver: string;
  /** `isFallbackAdapter` as reported by the adapter. */
  readonly isFallbackAdapter: boolean;
  /** A CPU implementation (lavapipe / llvmpipe / SwiftShader): correct, far too slow to train. */
  readonly software: boolean;
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly features: readonly string[];
}

/**
 * An adapter's name for logs and reports: vendor, architecture and device; adapters that report
 * none (lavapipe reports empty strings) say what they are.
 */
export function adapterName(adapter: WebGPUAdapterSummary): string {
  return (
    [adapter.vendor, adapter.architecture, adapter.device].filter(Boolean).join(' ') ||
    (adapter.software ? 'software adapter (no name reported)' : 'adapter (no name reported)')
  );
}

/** {@link adapterName} and the driver, in one line. */
export function describeAdapter(adapter: WebGPUAdapterSummary): string {
  return `${adapterName(adapter)}, driver ${adapter.driver || 'not reported'}`;
}

// ---- the few WebGPU shapes used here (structural, so `@webgpu/types` is not needed) ----------

interface GpuAdapterInfoLike {
  readonly vendor?: string;
  readonly architecture?: string;
  readonly device?: string;
  readonly description?: string;
  readonly isFallbackAdapter?: boolean;
}

interface GpuErrorLike {
  readonly message: string;
  readonly constructor: { readonly name: string };
}

interface GpuDeviceLike {
  readonly limits: Readonly<Record<string, number>>;
  readonly features: ReadonlySet<string>;
  pushErrorScope(filter: 'validation' | 'out-of-memory' | 'internal'): void;
  popErrorScope(): Promise<GpuErrorLike | null>;
  addEventListener(
    type: 'uncapturederror',
    listener: (event: { error: GpuErrorLike; preventDefault?(): void }) => void,
  ): void;
  readonly lost?: Promise<{ readonly reason?: string; readonly message?: string }>;
  createBindGroup(descriptor: BindGroupDescriptorLike): unknown;
  createShaderModule(descriptor: { code: string }): unknown;
  readonly queue: { onSubmittedWorkDone(): Promise<void> };
}

interface BindGroupDescriptorLike {
  readonly entries: Iterable<{
    readonly binding: number;
    readonly resource: { readonly buffer?: { readonly size: number }; readonly size?: number };
  }>;
}

interface GpuAdapterLike {
  readonly limits: Readonly<Record<string, number>>;
  readonly features: ReadonlySet<string>;
  readonly info?: GpuAdapterInfoLike;
  readonly isFallbackAdapter?: boolean;
  requestDevice(descriptor: {
    requiredFeatures: string[];
    requiredLimits: Record<string, number>;
  }): Promise<GpuDeviceLike>;
}

interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<GpuAdapterLike | null>;
}

interface DawnModule {
  create(flags: string[]): GpuLike;
  globals: Record<string, unknown>;
}

interface WebGPUBackendModule {
  WebGPUBackend: new (device: never, adapterInfo?: never) => tf.KernelBackend;
}

// ---- typed errors ----------------------------------------------------------------------------

const INSTALL_HINT =
  'install a Vulkan driver and the loader: on a GPU machine the vendor driver (NVIDIA: its Vulkan ICD, usually /usr/share/vulkan/icd.d/nvidia_icd.json or /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; point VK_DRIVER_FILES at it if Vulkan does not find it) plus libvulkan1; for software Vulkan (tests only) Mesa lavapipe from bookworm-backports: `apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1` (.ci/setup-vulkan.sh does this)';

function kindOf(error: GpuErrorLike): WebGPUErrorKind {
  const name = error.constructor.name;
  if (name === 'GPUOutOfMemoryError') return 'out-of-memory';
  if (name === 'GPUInternalError') return 'internal';
  return 'validation';
}

function gpuError(error: GpuErrorLike, during: string, suppressed = 0): WebGPUError {
  const kind = kindOf(error);
  const first = error.message.split('\n')[0] ?? error.message;
  const fix =
    kind === 'out-of-memory'
      ? `${SHRINK_ADVICE}; webgpu.maxPoolBytes below the GPU memory drains the buffer pool before the device runs out`
      : 'a tensor may exceed maxStorageBufferBindingSize (split it by rows) or a kernel is invalid';
  const more =
    suppressed > 0
      ? ` (${suppressed} later GPU errors, most likely its consequences, not shown)`
      : '';
  return new WebGPUError(kind, `GPU ${kind} error during ${during}: ${first}; ${fix}${more}`, {
    details: { gpuMessage: error.message, suppressed },
  });
}

// ---- pure helpers (tested without a GPU) ----------------------------------------------------

/**
 * Flattens a `requiredFeatures` list (tfjs passes `[['bgra8unorm-storage']]`, a nested array) and
 * keeps only the features the adapter reports, without duplicates.
 */
export function filterRequiredFeatures(
  requested: Iterable<unknown>,
  supported: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  const visit = (item: unknown): void => {
    if (typeof item === 'string') {
      if (supported.has(item) && !out.includes(item)) out.push(item);
    } else if (item !== null && typeof item === 'object' && Symbol.iterator in item) {
      for (const inner of item as Iterable<unknown>) visit(inner);
    }
  };
  for (const item of requested) visit(item);
  return out;
}

/** Whether adapter facts describe a CPU implementation of Vulkan rather than a GPU. */
export function isSoftwareAdapter(info: GpuAdapterInfoLike): boolean {
  if (info.isFallbackAdapter === true) return true;
  const text = `${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`;
  return /llvmpipe|lavapipe|swiftshader|software|\bcpu\b/i.test(text);
}

/** The adapter summary of raw adapter facts. */
export function summarizeAdapter(adapter: GpuAdapterLike): WebGPUAdapterSummary {
  const info: GpuAdapterInfoLike = {
    ...adapter.info,
    isFallbackAdapter: adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false,
  };
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    driver: info.description ?? '',
    isFallbackAdapter: info.isFallbackAdapter === true,
    software: isSoftwareAdapter(info),
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize ?? 0,
    maxBufferSize: adapter.limits.maxBufferSize ?? 0,
    features: [...adapter.features].sort(),
  };
}

// ---- state ---------------------------------------------------------------------------------

interface WebGPUState {
  readonly summary: WebGPUAdapterSummary;
  readonly device: GpuDeviceLike;
  /** Current cap on one binding (bytes). */
  bindingLimit: number;
  /** Current cap on the buffer pool (bytes), if any. */
  poolLimit: number | undefined;
  /** The first GPU error no scope captured since the last report (later ones are counted). */
  readonly uncaptured: GpuErrorLike[];
  suppressed: number;
  /** Why the device was lost, once it was (never cleared: a lost device stays lost). */
  lost?: { readonly reason: string; readonly message: string };
}

let state: WebGPUState | undefined;

/**
 * Environment variable with Dawn instance toggles to enable (comma-separated), read when Dawn is
 * first loaded: on NVIDIA, `allow_unsafe_apis,vulkan_enable_f16_on_nvidia` exposes `shader-f16`
 * (half-precision matmul inputs under precision `mixed`), which Dawn keeps off there by default.
 */
export const DAWN_FEATURES_ENV_VAR = 'AGENTRL_DAWN_FEATURES';
const dawnByImporter = new WeakMap<object, { module: DawnModule; gpu: GpuLike }>();

// Literal specifiers, so that a bundler (scripts/pack-gpu-run.sh) can see and bundle them.
const defaultImport = (name: string): Promise<unknown> =>
  name === 'webgpu'
    ? import('webgpu')
    : name === '@tensorflow/tfjs-backend-webgpu'
      ? import('@tensorflow/tfjs-backend-webgpu')
      : import(name);

async function loadDawn(importModule: (name: string) => Promise<unknown>): Promise<{
  module: DawnModule;
  gpu: GpuLike;
}> {
  const cached = dawnByImporter.get(importModule);
  if (cached !== undefined) return cached;
  let module: DawnModule;
  try {
    module = (await importModule('webgpu')) as DawnModule;
  } catch (cause) {
    throw new WebGPUUnavailableError(
      'the optional dependency "webgpu" (Dawn for Node) cannot be loaded; install it (`pnpm add webgpu@0.6.2` / `npm i webgpu@0.6.2`) to use the webgpu backend',
      { cause, details: { package: 'webgpu' } },
    );
  }
  Object.assign(globalThis, module.globals);
  const toggles = process.env[DAWN_FEATURES_ENV_VAR];
  const loaded = {
    module,
    gpu: module.create(toggles ? [`enable-dawn-features=${toggles}`] : []),
  };
  dawnByImporter.set(importModule, loaded);
  return loaded;
}

/** Asks Dawn for an adapter without activating anything; `undefined` when there is none. */
export async function probeWebGPUAdapter(
  options: WebGPUOptions = {},
): Promise<WebGPUAdapterSummary | undefined> {
  const { gpu } = await loadDawn(options.importModule ?? defaultImport);
  const adapter = await gpu.requestAdapter({
    powerPreference: options.powerPreference ?? 'high-performance',
  });
  return adapter === null ? undefined : summarizeAdapter(adapter);
}

/** The error thrown when Dawn finds no adapter: what to install, and `VK_DRIVER_FILES`. */
export function noAdapterError(): WebGPUUnavailableError {
  const files = process.env.VK_DRIVER_FILES ?? process.env.VK_ICD_FILENAMES;
  return new WebGPUUnavailableError(
    `no WebGPU adapter found (Dawn saw no usable Vulkan device; VK_DRIVER_FILES is ${files === undefined ? 'unset' : JSON.stringify(files)}); ${INSTALL_HINT}`,
    { details: { VK_DRIVER_FILES: files ?? null } },
  );
}

function checkBindGroup(descriptor: BindGroupDescriptorLike): void {
  const s = state;
  if (s === undefined) return;
  for (const entry of descriptor.entries) {
    const size = entry.resource.size ?? entry.resource.buffer?.size;
    if (size !== undefined && size > s.bindingLimit) {
      throw new WebGPUError(
        'binding-limit',
        `a kernel would bind ${size} bytes (binding ${entry.binding}) but the limit is ${s.bindingLimit} bytes (maxStorageBufferBindingSize); tfjs would silently return stale data: keep tensors smaller (split large parameters by rows, score in smaller chunks)`,
        { details: { bytes: size, limit: s.bindingLimit, binding: entry.binding } },
      );
    }
  }
}

function poolLimitOf(requested: number | undefined): number | undefined {
  if (requested === undefined) return undefined;
  if (!Number.isFinite(requested) || requested <= 0) {
    throw new WebGPUError(
      'validation',
      `webgpu.maxPoolBytes is ${requested}; use a positive number of bytes (or leave it out for no cap)`,
      { details: { field: 'webgpu.maxPoolBytes', value: requested } },
    );
  }
  return requested;
}

function clampLimit(requested: number | undefined, adapterLimit: number): number {
  if (requested === undefined) return adapterLimit;
  if (!Number.isFinite(requested) || requested <= 0) {
    throw new WebGPUError(
      'validation',
      `webgpu.maxBindingBytes is ${requested}; use a positive number of bytes`,
      { details: { field: 'webgpu.maxBindingBytes', value: requested } },
    );
  }
  return Math.min(requested, adapterLimit);
}

/**
 * Creates the device (once), sets `navigator.gpu`, imports the tfjs WebGPU backend and registers
 * a `webgpu` backend factory on that device. Does not activate it (`tf.setBackend('webgpu')`
 * does). With `requireHardware`, a software adapter is refused (automatic selection).
 * Throws {@link WebGPUUnavailableError} when no adapter is found.
 */
export async function initWebGPU(
  options: WebGPUOptions & {
    readonly logger?: ModelLogger;
    readonly requireHardware?: boolean;
  } = {},
): Promise<WebGPUAdapterSummary> {
  if (state !== undefined) {
    state.bindingLimit = clampLimit(
      options.maxBindingBytes,
      state.summary.maxStorageBufferBindingSize,
    );
    state.poolLimit = poolLimitOf(options.maxPoolBytes);
    if (options.requireHardware === true && state.summary.software) {
      throw new WebGPUUnavailableError(
        `the WebGPU adapter is software (${state.summary.device}); automatic selection uses only a GPU`,
      );
    }
    return state.summary;
  }
  const importModule = options.importModule ?? defaultImport;
  const { gpu } = await loadDawn(importModule);
  const adapter = await gpu.requestAdapter({
    powerPreference: options.powerPreference ?? 'high-performance',
  });
  if (adapter === null) throw noAdapterError();
  const summary = summarizeAdapter(adapter);
  if (options.requireHardware === true && summary.software) {
    throw new WebGPUUnavailableError(
      `the WebGPU adapter is software (${summary.device}, ${summary.driver}); automatic selection uses only a GPU (set AGENTRL_TFJS_BACKEND=webgpu to force it)`,
      { details: { adapter: summary } },
    );
  }
  const limits = adapter.limits;
  const requiredLimits: Record<string, number> = {};
  for (const name of [
    'maxComputeWorkgroupStorageSize',
    'maxComputeWorkgroupsPerDimension',
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeWorkgroupSizeX',
    'maxComputeInvocationsPerWorkgroup',
    // tfjs leaves this at the default (8); its AddN and concat bind one buffer per input.
    'maxStorageBuffersPerShaderStage',
  ]) {
    const value = limits[name];
    if (value !== undefined) requiredLimits[name] = value;
  }
  const requiredFeatures = filterRequiredFeatures(
    ['timestamp-query', ['bgra8unorm-storage'], 'shader-f16'],
    adapter.features,
  );
  const device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
  const uncaptured: GpuErrorLike[] = [];
  // Dawn's Node binding prints every uncaptured error unless the event is cancelled, and after an
  // out-of-memory error every later use of the failed buffer raises another (hundreds of lines
  // per step): keep the first for the typed error, count the rest, print none.
  device.addEventListener('uncapturederror', (event) => {
    event.preventDefault?.();
    if (uncaptured.length === 0) uncaptured.push(event.error);
    else if (state !== undefined) state.suppressed += 1;
  });
  void device.lost?.then((info) => {
    if (state !== undefined && info.reason !== 'destroyed') {
      state.lost = { reason: info.reason ?? 'unknown', message: info.message ?? '' };
    }
  });
  // Bindings over the limit fail silently in tfjs; refuse them synchronously, on the op call.
  const createBindGroup = device.createBindGroup.bind(device);
  Object.defineProperty(device, 'createBindGroup', {
    configurable: true,
    value: (descriptor: BindGroupDescriptorLike) => {
      checkBindGroup(descriptor);
      return createBindGroup(descriptor);
    },
  });

  // tfjs writes the whole shader; ours that use f16 mark themselves for the directive WGSL
  // wants before any declaration.
  const createShaderModule = device.createShaderModule.bind(device);
  Object.defineProperty(device, 'createShaderModule', {
    configurable: true,
    value: (descriptor: { code: string }) =>
      createShaderModule(
        descriptor.code.includes(ENABLE_F16_MARKER)
          ? { ...descriptor, code: `enable f16;\n${descriptor.code}` }
          : descriptor,
      ),
  });

  // tfjs-backend-webgpu registers itself only if navigator.gpu exists when it is imported.
  const nav = (globalThis as { navigator?: object }).navigator;
  if (nav === undefined) {
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      writable: true,
      value: { gpu },
    });
  } else if (!('gpu' in nav) || (nav as { gpu?: unknown }).gpu === undefined) {
    Object.defineProperty(nav, 'gpu', { configurable: true, value: gpu });
  }
  const backendModule = (await importModule(
    '@tensorflow/tfjs-backend-webgpu',
  )) as WebGPUBackendModule;
  const info = adapter.info;
  registerWebGPUKernels({
    maxStorageBuffersPerShaderStage: device.limits.maxStorageBuffersPerShaderStage ?? 8,
    shaderF16: device.features.has('shader-f16'),
  });
  if (tf.findBackendFactory('webgpu') !== null) tf.removeBackend('webgpu');
  tf.registerBackend(
    'webgpu',
    () => {
      const backend = new backendModule.WebGPUBackend(device as never, info as never);
      capBufferPool(backend, () => state?.poolLimit);
      return guardReads(backend);
    },
    3,
  );
  state = {
    summary,
    device,
    bindingLimit: clampLimit(options.maxBindingBytes, summary.maxStorageBufferBindingSize),
    poolLimit: poolLimitOf(options.maxPoolBytes),
    uncaptured,
    suppressed: 0,
  };
  options.logger?.info?.(
    `webgpu adapter: ${summary.vendor} ${summary.device} (${summary.driver})${summary.software ? ' [software]' : ''}`,
    { adapter: summary },
  );
  return summary;
}

/** Wraps the backend's async read so GPU errors raised by the work it waited on are thrown there. */
function guardReads(backend: tf.KernelBackend): tf.KernelBackend {
  const read = backend.read.bind(backend);
  Object.defineProperty(backend, 'read', {
    configurable: true,
    value: async (dataId: object) => {
      const values = await read(dataId);
      throwPendingGpuErrors('reading a tensor');
      return values;
    },
  });
  // tfjs reads GPU data synchronously through OffscreenCanvas, which Node lacks (a bare
  // ReferenceError); values still on the CPU (small tensors) read fine.
  const readSync = backend.readSync.bind(backend);
  Object.defineProperty(backend, 'readSync', {
    configurable: true,
    value: (dataId: object) => {
      try {
        return readSync(dataId);
      } catch (cause) {
        if (!(cause instanceof ReferenceError)) throw cause;
        throw new WebGPUError(
          'validation',
          'synchronous tensor reads (dataSync, arraySync) of GPU data are not available on the webgpu backend in Node; use `await tensor.data()` / `await tensor.array()`',
          { cause },
        );
      }
    },
  });
  return backend;
}

/** Throws the first GPU error reported since the last call (uncaptured by any scope), if any. */
export function throwPendingGpuErrors(during: string): void {
  const s = state;
  if (s === undefined) return;
  if (s.lost !== undefined) {
    throw new WebGPUError(
      'device-lost',
      `the GPU device was lost (${s.lost.reason}${s.lost.message ? `: ${s.lost.message}` : ''}) during ${during}; restart the process (a lost device does not come back), and if it was out of memory, use a smaller batch or model`,
      { details: { reason: s.lost.reason, gpuMessage: s.lost.message } },
    );
  }
  if (s.uncaptured.length === 0) return;
  const first = s.uncaptured[0] as GpuErrorLike;
  const suppressed = s.suppressed;
  s.uncaptured.length = 0;
  s.suppressed = 0;
  throw gpuError(first, during, suppressed);
}

/**
 * Runs `fn` inside device error scopes (validation, out-of-memory), submits the pending GPU work
 * and throws a {@link WebGPUError} if any error was raised by it. Outside webgpu it just runs `fn`.
 */
export async function withGpuErrorScope<T>(during: string, fn: () => T | Promise<T>): Promise<T> {
  const s = state;
  if (s === undefined || tf.getBackend() !== 'webgpu') return fn();
  s.device.pushErrorScope('validation');
  s.device.pushErrorScope('out-of-memory');
  let result: T;
  try {
    result = await fn();
    // Submit what tfjs has recorded (its compute pass must be ended first).
    const backend = tf.backend() as {
      commandEncoder?: unknown;
      endComputePassEncoder?: () => void;
      submitQueue?: () => void;
    };
    if (backend.commandEncoder) {
      backend.endComputePassEncoder?.();
      backend.submitQueue?.();
    }
    await s.device.queue.onSubmittedWorkDone();
  } finally {
    const oom = await s.device.popErrorScope();
    const validation = await s.device.popErrorScope();
    const error = oom ?? validation;
    if (error !== null) {
      s.uncaptured.length = 0;
      s.suppressed = 0;
      // biome-ignore lint/correctness/noUnsafeFinally: the GPU error is the real cause of any failure.
      throw gpuError(error, during);
    }
  }
  return result;
}

/** The adapter in use once {@link initWebGPU} has run (for logs and run metadata). */
export function webgpuAdapter(): WebGPUAdapterSummary | undefined {
  return state?.summary;
}

/** The binding cap kernels are held to (bytes), once the backend is initialised. */
export function webgpuBindingLimit(): number | undefined {
  return state?.bindingLimit;
}

/** Which backend tfjs runs on and, on webgpu, the adapter: for run metadata. */
export function backendInfo(): { backend: string; adapter?: WebGPUAdapterSummary } {
  const backend = tf.getBackend();
  const adapter = backend === 'webgpu' ? state?.summary : undefined;
  return adapter === undefined ? { backend } : { backend, adapter };
}
