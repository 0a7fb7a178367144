import { describe, expect, it } from 'vitest';
import { CPU_RECIPE, SMOKE_SIZES } from './model.ts';
import { type DemoBudgetBase, demoSettings, sftStopRule } from './phases.ts';

/** A smoke-sized budget with `fields` over it. */
const budget = (fields: Partial<DemoBudgetBase>): DemoBudgetBase => ({
  ...CPU_RECIPE,
  ...SMOKE_SIZES,
  name: 'test',
  maxTurns: 3,
  sftSteps: 12,
  ...fields,
});

const PARTS = {
  seed: 7,
  runDir: '/tmp/agentrl-demo-kit',
  maxNewTokens: 9,
  invalidActionPenalty: 0,
};

describe("a demo's budget as the runner's phase settings", () => {
  it('warm-starts from the expert on seeds apart from the run, with the budget’s SFT sizes and no stopping rule at sftStopLoss 0', () => {
    const s = demoSettings(budget({ sftStopLoss: 0 }), PARTS);
    expect(s.warmStart.source).toBe('expert');
    expect(s.sft).toMatchObject({ episodes: 8, steps: 12, batchSize: 8, seed: 5007 });
    expect(s.sft.stopLoss).toBeUndefined();
    expect(sftStopRule(budget({ sftStopLoss: 0 }))).toBeUndefined();
  });

  it('keeps a stopping rule with its window, as runSft takes it', () => {
    const b = budget({ sftStopLoss: 0.25, sftStopWindow: 3 });
    expect(demoSettings(b, PARTS).sft).toMatchObject({ stopLoss: 0.25, stopWindow: 3 });
    expect(sftStopRule(b)).toEqual({ meanLoss: 0.25, window: 3 });
  });

  it('runs GiGPO on the budget’s groups and measures the headline on the validation’s episodes', () => {
    const s = demoSettings(budget({}), { ...PARTS, similarityThreshold: 0.9 });
    expect(s.algorithm).toEqual({
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        gamma: 0.95,
        invalidActionPenalty: 0,
        similarityThreshold: 0.9,
      },
    });
    expect(s.rollout).toMatchObject({ batchSize: 4, groupSize: 2, maxTurns: 3, maxNewTokens: 9 });
    expect(s.training).toMatchObject({ iterations: 2, dropZeroAdvantageRows: true });
    expect(s.validation).toMatchObject({ episodes: 4, every: 1, temperature: 0.4 });
    expect(s.finalEval).toEqual({ enabled: true });
  });
});
