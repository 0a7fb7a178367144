import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { BACKEND_ENV_VAR, selectBackend } from '../select.ts';
import { backendInfo, probeWebGPUAdapter, webgpuAdapter } from './setup.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`webgpu selection tests skipped${skipReason}`);

const missing = (name: string): unknown => {
  throw new Error(`Cannot find module '${name}'`);
};

function recorder() {
  const lines: { message: string; details?: Readonly<Record<string, unknown>> }[] = [];
  const log = (message: string, details?: Readonly<Record<string, unknown>>) => {
    lines.push(details === undefined ? { message } : { message, details });
  };
  return { lines, logger: { info: log, warn: log } };
}

describe.skipIf(adapter === undefined)(`webgpu backend selection${skipReason}`, () => {
  it.skipIf(adapter?.software !== true)(
    'skips a software adapter in automatic selection and says why (skipped: the adapter is a GPU)',
    async () => {
      await tf.setBackend('cpu');
      const { lines, logger } = recorder();
      // Only the native packages fail to load; webgpu is real (a software adapter here).
      const load = (name: string) =>
        name.startsWith('@tensorflow/tfjs-node') ? missing(name) : null;
      const chosen = await selectBackend({
        env: {},
        logger,
        loadModule: load,
        webgpu: { importModule: (name) => import(name) },
      });
      expect(chosen).toBe('wasm');
      const skipped = lines.find((l) => l.message === 'webgpu backend unavailable');
      expect(String(skipped?.details?.reason)).toMatch(/software/);
    },
  );

  it(`is forced by ${BACKEND_ENV_VAR}=webgpu, software adapter included, and logs the adapter`, async () => {
    const { lines, logger } = recorder();
    const chosen = await selectBackend({ env: { [BACKEND_ENV_VAR]: 'webgpu' }, logger });
    expect(chosen).toBe('webgpu');
    expect(tf.getBackend()).toBe('webgpu');
    expect(lines.map((l) => l.message)).toContain('tfjs backend: webgpu');
    expect(webgpuAdapter()?.device).toBe(adapter?.device);
    expect(backendInfo()).toEqual({ backend: 'webgpu', adapter: webgpuAdapter() });
  });
});
