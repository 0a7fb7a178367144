/**
 * Backend selection. Automatic order: tensorflow (tfjs-node-gpu) -> webgpu (a hardware
 * adapter only; see webgpu/setup.ts beside it) -> tensorflow (tfjs-node) -> wasm -> cpu. An option or
 * `AGENTRL_TFJS_BACKEND` forces any of them (webgpu on a software adapter included).
 * The native packages are optional dependencies and may be present but unbuilt, so presence
 * proves nothing: each is required inside try/catch and a failure falls through to the next.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { AgentRLError, ConfigError, closestName } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { ModelLogger } from '../logger.ts';
import {
  allFusedKernels,
  DEFAULT_WASM_SWITCHES,
  DEFAULT_WEBGPU_SWITCHES,
  FUSED_KERNEL_NAMES,
  type FusedKernelSwitches,
  type FusedKernelsOption,
  holdPrecision,
  holdSwitches,
  PRECISIONS,
  type Precision,
  WASM_MATMUL_ENV_VAR,
  type WasmSwitches,
  type WebGPUSwitches,
} from './switches.ts';
import { registerWasmKernels } from './wasm/kernels.ts';
import { initWebGPU, type WebGPUOptions } from './webgpu/setup.ts';

/** The tfjs backends this package can run on. */
export type BackendName = 'tensorflow' | 'webgpu' | 'wasm' | 'cpu';

const BACKENDS: readonly BackendName[] = ['tensorflow', 'webgpu', 'wasm', 'cpu'];

/** Environment variable that overrides the automatic choice. */
export const BACKEND_ENV_VAR = 'AGENTRL_TFJS_BACKEND';

/** Options of {@link selectBackend}. */
export interface BackendOptions {
  /** Force a backend; otherwise `AGENTRL_TFJS_BACKEND`, otherwise the automatic order. */
  readonly backend?: BackendName;
  /** Receives which backend was chosen and why others were skipped. */
  readonly logger?: ModelLogger;
  /** Environment to read the override from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Loads a module by name (default: `require`); tests inject a failing loader. */
  readonly loadModule?: (name: string) => unknown;
  /**
   * Settings of the webgpu backend: binding cap, adapter preference, and its kernel switches
   * (`fusedKernels`, `gpuSampling`; see `switches.ts`).
   */
  readonly webgpu?: WebGPUOptions;
  /** Kernel switches of the wasm backend (`matMul`, `heapBytes`, `packedPanelBudgetBytes`). */
  readonly wasm?: Partial<WasmSwitches>;
  /**
   * Training precision on the chosen backend: `f32` (default) or `mixed` (dynamic loss scaling,
   * and on webgpu with `shader-f16` half-precision matmul inputs; see `PRECISIONS` in
   * switches.ts).
   */
  readonly precision?: Precision;
}

const nodeRequire = createRequire(import.meta.url);
const defaultLoad = (name: string): unknown => nodeRequire(name);

/** The native packages that register the `tensorflow` backend, most capable first. */
export const NATIVE_PACKAGES = ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'] as const;

function parseBackendName(value: string, field: string): BackendName {
  const name = value.trim().toLowerCase();
  if ((BACKENDS as readonly string[]).includes(name)) return name as BackendName;
  throw new ConfigError(`${field} is ${JSON.stringify(value)}; use one of ${BACKENDS.join(', ')}`, {
    details: { field, value },
  });
}

/**
 * Why a native tfjs package cannot work without loading it, or `undefined` when it may: not
 * installed, or installed without its native binding (`tfjs_binding.node` under `lib/napi-vN`, which its
 * install script downloads; the workspace disables that script). Loading such a package registers
 * its ~230 kernels before failing, and a second package then prints a warning for each one.
 */
function nativeBindingMissing(pkg: string): string | undefined {
  let root: string;
  try {
    root = dirname(nodeRequire.resolve(`${pkg}/package.json`));
  } catch {
    return `${pkg}: not installed`;
  }
  const lib = join(root, 'lib');
  const built =
    existsSync(lib) &&
    readdirSync(lib).some(
      (d) => d.startsWith('napi-v') && existsSync(join(lib, d, 'tfjs_binding.node')),
    );
  return built
    ? undefined
    : `${pkg}: installed without its native binding (its install script did not run; see the package README)`;
}

async function tryTensorflow(
  load: (name: string) => unknown,
  logger: ModelLogger | undefined,
  packages: readonly string[] = NATIVE_PACKAGES,
): Promise<string | undefined> {
  const failures: string[] = [];
  for (const pkg of packages) {
    const missing = load === defaultLoad ? nativeBindingMissing(pkg) : undefined;
    if (missing !== undefined) {
      failures.push(missing);
      continue;
    }
    try {
      load(pkg);
      if (
        tf.findBackend('tensorflow') !== null ||
        tf.engine().registryFactory.tensorflow !== undefined
      ) {
        return undefined;
      }
      failures.push(`${pkg}: loaded but registered no "tensorflow" backend`);
    } catch (error) {
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      failures.push(`${pkg}: ${message}`);
      // A failed native package has usually registered its kernels already; the next one would
      // only fail the same way after printing a re-registration warning per kernel.
      if (tf.getKernelsForBackend('tensorflow').length > 0) break;
    }
  }
  const reason = failures.join('; ');
  logger?.info?.('tensorflow backend unavailable', { reason });
  return reason;
}

async function activate(name: BackendName): Promise<boolean> {
  if (name === 'wasm') registerWasmKernels();
  try {
    const ok = await tf.setBackend(name);
    if (ok) await tf.ready();
    // The cpu backend prints an install hint on first use in Node; libraries do not print.
    if (ok && name === 'cpu') Object.assign(tf.backend(), { firstUse: false });
    return ok && tf.getBackend() === name;
  } catch {
    return false;
  }
}

function positiveBytes(value: number | undefined, field: string): number | undefined {
  if (value === undefined || (Number.isFinite(value) && value > 0)) return value;
  throw new ConfigError(
    `${field} is ${value}; use a positive number of bytes (or leave it unset)`,
    {
      details: { field, value },
    },
  );
}

/** The wasm switches of a set-up: its options, else `AGENTRL_WASM_MATMUL`, else the defaults. */
function wasmSwitchesOf(
  options: Partial<WasmSwitches> | undefined,
  env: Readonly<Record<string, string | undefined>>,
): WasmSwitches {
  const fromEnv = env[WASM_MATMUL_ENV_VAR]?.trim();
  const matMul = options?.matMul ?? (fromEnv === '' ? undefined : fromEnv);
  const field = options?.matMul !== undefined ? 'wasm.matMul' : WASM_MATMUL_ENV_VAR;
  if (matMul !== undefined && matMul !== 'agentrl' && matMul !== 'xnnpack') {
    throw new ConfigError(`${field} is ${JSON.stringify(matMul)}; use agentrl or xnnpack`, {
      details: { field, value: matMul },
    });
  }
  return {
    matMul: matMul ?? DEFAULT_WASM_SWITCHES.matMul,
    heapBytes:
      positiveBytes(options?.heapBytes, 'wasm.heapBytes') ?? DEFAULT_WASM_SWITCHES.heapBytes,
    packedPanelBudgetBytes:
      positiveBytes(options?.packedPanelBudgetBytes, 'wasm.packedPanelBudgetBytes') ??
      DEFAULT_WASM_SWITCHES.packedPanelBudgetBytes,
  };
}

/** The fused kernel switches of a `webgpu.fusedKernels` option (validated). */
export function fusedKernelsOf(option: FusedKernelsOption | undefined): FusedKernelSwitches {
  if (option === undefined) return DEFAULT_WEBGPU_SWITCHES.fusedKernels;
  if (typeof option === 'boolean') return allFusedKernels(option);
  const out: Record<string, boolean> = { ...DEFAULT_WEBGPU_SWITCHES.fusedKernels };
  for (const [name, on] of Object.entries(option)) {
    if (!(FUSED_KERNEL_NAMES as readonly string[]).includes(name)) {
      const near = closestName(name, FUSED_KERNEL_NAMES);
      throw new ConfigError(
        `webgpu.fusedKernels.${name} is not a fused kernel${near === undefined ? '' : ` (did you mean ${near}?)`}; the kernels are ${FUSED_KERNEL_NAMES.join(', ')}`,
        { details: { field: `webgpu.fusedKernels.${name}`, value: on } },
      );
    }
    if (typeof on !== 'boolean') {
      throw new ConfigError(
        `webgpu.fusedKernels.${name} is ${JSON.stringify(on)}; use true or false`,
        { details: { field: `webgpu.fusedKernels.${name}`, value: on } },
      );
    }
    out[name] = on;
  }
  return out as FusedKernelSwitches;
}

function webgpuSwitchesOf(options: WebGPUOptions | undefined): WebGPUSwitches {
  return {
    fusedKernels: fusedKernelsOf(options?.fusedKernels),
    gpuSampling: options?.gpuSampling ?? DEFAULT_WEBGPU_SWITCHES.gpuSampling,
  };
}

/**
 * Chooses, initialises and activates a backend; returns its name. An explicit request that cannot
 * be satisfied throws (`BACKEND_UNAVAILABLE`) rather than silently running elsewhere. The chosen
 * backend holds the kernel switches of this call (`webgpu`, `wasm`; defaults for those left out).
 */
export async function selectBackend(options: BackendOptions = {}): Promise<BackendName> {
  const env = options.env ?? process.env;
  // Checked before anything starts, whichever backend is chosen.
  const wasm = wasmSwitchesOf(options.wasm, env);
  const webgpu = webgpuSwitchesOf(options.webgpu);
  const precision = options.precision ?? 'f32';
  if (!(PRECISIONS as readonly string[]).includes(precision)) {
    throw new ConfigError(
      `precision is ${JSON.stringify(precision)}; use one of ${PRECISIONS.join(', ')}`,
      { details: { field: 'precision', value: precision } },
    );
  }
  const name = await chooseBackend(options);
  holdPrecision(name, precision);
  if (name === 'wasm') holdSwitches('wasm', wasm);
  if (name === 'webgpu') holdSwitches('webgpu', webgpu);
  return name;
}

async function chooseBackend(options: BackendOptions): Promise<BackendName> {
  const env = options.env ?? process.env;
  const load = options.loadModule ?? defaultLoad;
  const logger = options.logger;
  const loadModule = options.loadModule;
  const webgpu: WebGPUOptions = {
    ...(loadModule === undefined ? {} : { importModule: async (name) => loadModule(name) }),
    ...options.webgpu,
  };
  const fromEnv = env[BACKEND_ENV_VAR];
  const requested =
    options.backend !== undefined
      ? parseBackendName(options.backend, 'backend')
      : fromEnv !== undefined && fromEnv.trim() !== ''
        ? parseBackendName(fromEnv, BACKEND_ENV_VAR)
        : undefined;

  if (requested !== undefined) {
    // Also when webgpu is already active: applies the options (binding cap) of this call.
    if (requested === 'webgpu') await initWebGPU({ ...webgpu, logger });
    if (tf.getBackend() === requested) return requested;
    let reason = '';
    if (requested === 'tensorflow') reason = (await tryTensorflow(load, logger)) ?? '';
    if (reason === '' && (await activate(requested))) {
      logger?.info?.(`tfjs backend: ${requested}`, {
        backend: requested,
        source: options.backend !== undefined ? 'option' : BACKEND_ENV_VAR,
      });
      return requested;
    }
    throw new AgentRLError(
      'BACKEND_UNAVAILABLE',
      `tfjs backend "${requested}" could not be initialised${reason ? ` (${reason})` : ''}; install its package (see the @agentrl/model-tfjs README) or choose wasm or cpu`,
      { details: { backend: requested, reason } },
    );
  }

  const current = tf.getBackend();
  if ((current === 'tensorflow' || current === 'wasm') && tf.findBackend(current) !== null) {
    if (current === 'wasm') registerWasmKernels();
    return current;
  }
  const [gpuPackage, ...cpuPackages] = NATIVE_PACKAGES;
  for (const packages of [[gpuPackage], 'webgpu', cpuPackages] as const) {
    if (packages === 'webgpu') {
      try {
        await initWebGPU({ ...webgpu, logger, requireHardware: true });
        if (await activate('webgpu')) {
          logger?.info?.('tfjs backend: webgpu', { backend: 'webgpu', source: 'auto' });
          return 'webgpu';
        }
      } catch (error) {
        const reason = error instanceof Error ? error.message.split(';')[0] : String(error);
        logger?.info?.('webgpu backend unavailable', { reason });
      }
    } else if (
      (await tryTensorflow(load, logger, packages as readonly string[])) === undefined &&
      (await activate('tensorflow'))
    ) {
      logger?.info?.('tfjs backend: tensorflow', { backend: 'tensorflow', source: 'auto' });
      return 'tensorflow';
    }
  }
  for (const name of ['wasm', 'cpu'] as const) {
    if (await activate(name)) {
      logger?.info?.(`tfjs backend: ${name}`, { backend: name, source: 'auto' });
      return name;
    }
    logger?.warn?.(`tfjs backend ${name} failed to initialise`);
  }
  throw new AgentRLError(
    'BACKEND_UNAVAILABLE',
    'no tfjs backend could be initialised (tried tensorflow, wasm, cpu)',
  );
}
