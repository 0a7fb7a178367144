import { probeWebGPUAdapter, selectBackend } from '@agentrl/model-tfjs';
import { describe, expect, it } from 'vitest';
import { countSteps, subtractCounts } from './dispatch-count.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
if (adapter === undefined) {
  console.log('model-gpu dispatch counts: no WebGPU adapter (.ci/setup-vulkan.sh), skipped');
}
const sum = (counts: Readonly<Record<string, number>>) =>
  Object.values(counts).reduce((a, b) => a + b, 0);

describe('subtractCounts', () => {
  it('keeps the keys whose difference is not zero, largest first, divided when asked', () => {
    expect(subtractCounts({ a: 4, b: 2, c: 1 }, { a: 2, b: 2, d: 2 }, 2)).toEqual({
      a: 1,
      d: -1,
      c: 0.5,
    });
  });
});

describe.skipIf(adapter === undefined)('dispatch counts on webgpu', () => {
  it('attribute every dispatch of a train, LoRA and decode step to a kernel, and one layer its share', async () => {
    await selectBackend({ backend: 'webgpu' });
    const r = await countSteps({ name: 'two-layer', layers: 2, heads: 4, kvHeads: 2 });
    for (const step of [r.train, r.lora, r.decode]) {
      expect(step.total).toBeGreaterThan(0);
      expect(sum(step.byKernel)).toBe(step.total);
    }
    // A layer's share: its matmuls and attention, forward and backward, and its AdamW updates.
    expect(sum(r.trainPerLayer)).toBeGreaterThan(0);
    expect(sum(r.loraPerLayer)).toBeGreaterThan(0);
    expect(Object.keys(r.decodePerLayer).some((k) => k.startsWith('AgentrlAttention'))).toBe(true);
    expect(Object.keys(r.trainPerLayer).some((k) => k.startsWith('AgentrlFlashAttentionDQ'))).toBe(
      true,
    );
  }, 0);
});
