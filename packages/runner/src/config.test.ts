import { describe, expect, it } from 'vitest';
import { parseRunConfig } from './config.ts';

const base = {
  env: { id: 'test/corridor-v1' },
  model: { backend: 'module', module: 'some-model' },
  algorithm: { name: 'gigpo', options: { mode: 'mean_norm' } },
};

function message(input: unknown): string {
  try {
    parseRunConfig(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected parseRunConfig to reject the config');
}

describe('unknown keys in a run config', () => {
  it('at the top level name the closest top-level key', () => {
    expect(message({ ...base, trainng: { iterations: 2 } })).toMatch(
      /unknown key "trainng": remove it or check its spelling; did you mean "training"\?/,
    );
  });

  it('in a section name the section and its closest key', () => {
    expect(message({ ...base, rollout: { groupsize: 4 } })).toMatch(
      /unknown key "rollout\.groupsize": .* did you mean "groupSize"\?/,
    );
  });

  it("in algorithm.options are checked against the estimator's declared options", () => {
    const input = {
      ...base,
      algorithm: { name: 'gigpo', options: { mode: 'mean_norm', stepAdvantageW: 0 } },
    };
    expect(message(input)).toMatch(
      /unknown key "algorithm\.options\.stepAdvantageW": .* did you mean "stepAdvantageWeight"\?/,
    );
    const grpo = { ...base, algorithm: { name: 'grpo', options: { mode: 'mean_norm' } } };
    expect(message(grpo)).toMatch(/unknown key "algorithm\.options\.mode"/);
  });

  it('accept every declared key, so a correct config parses', () => {
    const config = parseRunConfig({
      ...base,
      algorithm: { name: 'gigpo', options: { mode: 'mean_norm', stepAdvantageWeight: 0 } },
    });
    expect(config.algorithm.options).toEqual({ mode: 'mean_norm', stepAdvantageWeight: 0 });
  });
});

describe("the sft section's stopping rule", () => {
  it('is off unless sft.stopLoss is given, averages 50 steps by default, and refuses a loss that is not positive', () => {
    expect(parseRunConfig(base).sft.stopLoss).toBeUndefined();
    const config = parseRunConfig({ ...base, sft: { steps: 1500, stopLoss: 0.25 } });
    expect(config.sft).toMatchObject({ steps: 1500, stopLoss: 0.25, stopWindow: 50 });
    expect(message({ ...base, sft: { stopLoss: 0 } })).toMatch(/sft\.stopLoss/);
    expect(message({ ...base, sft: { stopLoss: 0.25, stopWindow: 0 } })).toMatch(/sft\.stopWindow/);
  });
});
