import { isAgentRLError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it, vi } from 'vitest';
import { BACKEND_ENV_VAR, NATIVE_PACKAGES, selectBackend } from './select.ts';

function recordingLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) },
  };
}

const missingBinding = (name: string): unknown => {
  throw new Error(`Cannot find module '${name}' (binding absent)`);
};

describe('backend selection', () => {
  it('falls through tensorflow to wasm when the native bindings cannot be loaded, and logs why', async () => {
    const { lines, logger } = recordingLogger();
    const tried: string[] = [];
    const chosen = await selectBackend({
      env: {},
      logger,
      loadModule: (name) => {
        tried.push(name);
        return missingBinding(name);
      },
    });
    expect(chosen).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
    expect(tried).toEqual([NATIVE_PACKAGES[0], 'webgpu', ...NATIVE_PACKAGES.slice(1)]);
    expect(lines).toContain('tensorflow backend unavailable');
    expect(lines).toContain('tfjs backend: wasm');
  });

  it('falls through to wasm with the real optional packages, present but unbuilt or absent, without loading them', async () => {
    await tf.setBackend('cpu');
    const warnings: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.push(args.map(String).join(' '));
    });
    const { lines, logger } = recordingLogger();
    try {
      await expect(selectBackend({ env: {}, logger })).resolves.toBe('wasm');
    } finally {
      warn.mockRestore();
    }
    // An unbuilt native package is refused before loading: loading one registers its kernels
    // and the next one printed a re-registration warning for each of them.
    expect(warnings.filter((w) => w.includes('already registered'))).toEqual([]);
    expect(tf.getKernelsForBackend('tensorflow')).toEqual([]);
    expect(lines).toContain('tensorflow backend unavailable');
  });

  it('honours the environment override and an explicit option over it', async () => {
    await expect(selectBackend({ env: { [BACKEND_ENV_VAR]: 'cpu' } })).resolves.toBe('cpu');
    await expect(
      selectBackend({ env: { [BACKEND_ENV_VAR]: 'cpu' }, backend: 'wasm' }),
    ).resolves.toBe('wasm');
  });

  it('throws BACKEND_UNAVAILABLE when an explicitly requested backend cannot start', async () => {
    await expect(
      selectBackend({ backend: 'tensorflow', loadModule: missingBinding }),
    ).rejects.toSatisfy(
      (e: unknown) =>
        isAgentRLError(e, 'BACKEND_UNAVAILABLE') && e.message.includes('binding absent'),
    );
    await expect(
      selectBackend({ backend: 'webgpu', loadModule: missingBinding }),
    ).rejects.toSatisfy((e: unknown) => isAgentRLError(e, 'BACKEND_UNAVAILABLE'));
  });

  it('rejects an unknown backend name in the environment with BAD_CONFIG', async () => {
    await expect(selectBackend({ env: { [BACKEND_ENV_VAR]: 'gpu' } })).rejects.toSatisfy(
      (e: unknown) => isAgentRLError(e, 'BAD_CONFIG') && e.message.includes(BACKEND_ENV_VAR),
    );
  });
});
