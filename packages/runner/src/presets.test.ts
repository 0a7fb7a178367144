import { describe, expect, it } from 'vitest';
import { parseRunConfig } from './config.ts';
import { PRESETS } from './presets.ts';

describe('presets', () => {
  for (const [name, preset] of Object.entries(PRESETS)) {
    it(`${name} is a valid config once a model folder exists`, () => {
      const model = { ...preset.model, path: '.' };
      const config = parseRunConfig({ ...preset, model });
      expect(config.rollout.batchSize % config.rollout.groupSize).toBe(0);
    });
  }

  it("alfworld-paper holds the settings of the paper's ALFWorld run", () => {
    const c = parseRunConfig({
      ...PRESETS['alfworld-paper'],
      model: { ...PRESETS['alfworld-paper']?.model, path: '.' },
    });
    expect([
      c.rollout.batchSize / c.rollout.groupSize,
      c.rollout.groupSize,
      c.rollout.maxTurns,
    ]).toEqual([16, 8, 50]);
    expect(c.algorithm.options).toMatchObject({ gamma: 0.95, stepAdvantageWeight: 1 });
    expect(c.model.options).toMatchObject({ learningRate: 1e-6, klLossCoef: 0.01 });
    expect(c.validation).toMatchObject({ every: 5, episodes: 128, temperature: 0.4 });
  });
});
