import { isAgentRLError } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import {
  describeAdapter,
  filterRequiredFeatures,
  initWebGPU,
  isSoftwareAdapter,
  noAdapterError,
  summarizeAdapter,
} from './setup.ts';

describe('webgpu set-up helpers', () => {
  it('flattens the nested feature list tfjs asks for and keeps only what the adapter has', () => {
    const supported = new Set(['timestamp-query', 'bgra8unorm-storage']);
    expect(
      filterRequiredFeatures(
        ['timestamp-query', ['bgra8unorm-storage'], ['shader-f16'], 'timestamp-query'],
        supported,
      ),
    ).toEqual(['timestamp-query', 'bgra8unorm-storage']);
    expect(filterRequiredFeatures([['shader-f16']], new Set())).toEqual([]);
  });

  it('tells software Vulkan (lavapipe) from a GPU', () => {
    expect(
      isSoftwareAdapter({
        vendor: 'mesa',
        architecture: 'software',
        device: 'llvmpipe-llvm-15',
        description: 'llvmpipe: Mesa 25.0.7',
      }),
    ).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'nvidia', device: 'x', isFallbackAdapter: true })).toBe(
      true,
    );
    expect(
      isSoftwareAdapter({
        vendor: 'nvidia',
        architecture: 'hopper',
        device: 'NVIDIA H100 80GB HBM3',
        description: 'NVIDIA: 580.159',
      }),
    ).toBe(false);
  });

  it('summarises an adapter with vendor, device, driver and binding limit', () => {
    const summary = summarizeAdapter({
      info: {
        vendor: 'nvidia',
        architecture: 'hopper',
        device: 'H100',
        description: 'NVIDIA: 580',
      },
      limits: { maxStorageBufferBindingSize: 2_147_483_644, maxBufferSize: 2 ** 34 },
      features: new Set(['timestamp-query']),
      requestDevice: () => Promise.reject(new Error('unused')),
    });
    expect(summary).toMatchObject({
      vendor: 'nvidia',
      device: 'H100',
      driver: 'NVIDIA: 580',
      software: false,
      maxStorageBufferBindingSize: 2_147_483_644,
      features: ['timestamp-query'],
    });
    expect(describeAdapter(summary)).toBe('nvidia hopper H100, driver NVIDIA: 580');
    // lavapipe reports empty strings: the line says what it is instead of "( , )".
    expect(
      describeAdapter({
        ...summary,
        vendor: '',
        architecture: '',
        device: '',
        driver: '',
        software: true,
      }),
    ).toBe('software adapter (no name reported), driver not reported');
  });

  it('names what to install and VK_DRIVER_FILES when no adapter appears', async () => {
    const fakeDawn = {
      create: () => ({ requestAdapter: async () => null }),
      globals: {},
    };
    await expect(initWebGPU({ importModule: async () => fakeDawn })).rejects.toSatisfy(
      (e: unknown) =>
        isAgentRLError(e, 'BACKEND_UNAVAILABLE') &&
        e.message.includes('VK_DRIVER_FILES') &&
        e.message.includes('mesa-vulkan-drivers'),
    );
    expect(noAdapterError().message).toContain('nvidia_icd.json');
  });

  it('names the optional package when webgpu cannot be imported', async () => {
    await expect(
      initWebGPU({
        importModule: async (name) => {
          throw new Error(`Cannot find package '${name}'`);
        },
      }),
    ).rejects.toSatisfy(
      (e: unknown) =>
        isAgentRLError(e, 'BACKEND_UNAVAILABLE') && e.message.includes('webgpu@0.6.2'),
    );
  });
});
