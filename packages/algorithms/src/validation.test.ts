import { readFileSync } from 'node:fs';
import { AgentRLError } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import { ESTIMATOR_NAMES, ESTIMATORS } from './estimators.ts';
import { computeGiGPOAdvantages, type GiGPOOptions } from './gigpo.ts';
import { computeGRPOAdvantages } from './grpo.ts';
import { computeRLOOAdvantages } from './rloo.ts';

const good = {
  groupIds: ['u', 'u'],
  trajectoryIds: ['A', 'B'],
  stepIndices: [0, 0],
  anchors: ['s', 's'],
  envRewards: [0, 1],
  actionValid: [true, false],
};

function thrown(f: () => unknown): AgentRLError {
  try {
    f();
  } catch (error) {
    if (error instanceof AgentRLError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('bad input is rejected with an error naming the field', () => {
  it('columns of different lengths', () => {
    const e = thrown(() =>
      computeGiGPOAdvantages({ ...good, anchors: ['s'] }, { mode: 'mean_norm' }),
    );
    expect(e.code).toBe('BAD_INPUT');
    expect(e.message).toMatch(/anchors/);
    expect(e.details['field']).toBe('anchors');
  });

  it('a non-finite reward', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const e = thrown(() => computeGRPOAdvantages({ ...good, envRewards: [0, bad] }));
      expect(e.message).toMatch(/envRewards\[1\]/);
    }
  });

  it('an unknown or missing mode', () => {
    expect(
      thrown(() => computeGiGPOAdvantages(good, { mode: 'z_norm' } as unknown as GiGPOOptions))
        .message,
    ).toMatch(/mode/);
    const missing = thrown(() => computeGiGPOAdvantages(good, {} as GiGPOOptions));
    expect(missing.code).toBe('BAD_CONFIG');
    expect(missing.message).toMatch(/mode is required/);
  });

  it('a similarity threshold outside (0, 1)', () => {
    for (const bad of [0, 1, -0.5, 1.5, Number.NaN]) {
      const e = thrown(() =>
        computeGiGPOAdvantages(good, { mode: 'mean_norm', similarityThreshold: bad }),
      );
      expect(e.details['field']).toBe('similarityThreshold');
    }
  });

  it('a negative or fractional step index', () => {
    for (const bad of [-1, 0.5]) {
      const e = thrown(() => computeRLOOAdvantages({ ...good, stepIndices: [0, bad] }));
      expect(e.details['field']).toBe('stepIndices');
    }
  });

  it('an unknown episode-statistics population and a negative penalty', () => {
    expect(
      thrown(() =>
        computeGRPOAdvantages(good, { episodeStatistics: 'per-group' as 'per-trajectory' }),
      ).details['field'],
    ).toBe('episodeStatistics');
    expect(
      thrown(() => computeGRPOAdvantages(good, { invalidActionPenalty: -0.1 })).details['field'],
    ).toBe('invalidActionPenalty');
  });
});

describe('an empty batch', () => {
  it('returns empty arrays', () => {
    const empty = {
      groupIds: [],
      trajectoryIds: [],
      stepIndices: [],
      anchors: [],
      envRewards: [],
      actionValid: [],
    };
    const r = computeGiGPOAdvantages(empty, { mode: 'mean_std_norm', similarityThreshold: 0.9 });
    expect(r.advantages.length).toBe(0);
    expect(r.stepGroupIds.length).toBe(0);
    expect(computeGRPOAdvantages(empty).advantages.length).toBe(0);
  });
});

describe('defaults follow the reference', () => {
  it('the invalid-action penalty is 0.1 and ε is 1e-6', () => {
    const r = computeGRPOAdvantages(good);
    expect(Array.from(r.episodeScores)).toEqual([0, 1 - 0.1]);
  });
  it('a single-value episode population gives the raw score (μ = 0, σ = 1)', () => {
    const one = { ...good, groupIds: ['u', 'v'] };
    const r = computeGRPOAdvantages(one, { invalidActionPenalty: 0 });
    expect(Array.from(r.advantages)).toEqual([0, 1 / (1 + 1e-6)]);
  });
});

describe('options that went through JSON', () => {
  it('read null as absent (the default applies)', () => {
    const withNulls = computeGiGPOAdvantages(good, {
      mode: 'mean_norm',
      gamma: null,
      similarityThreshold: null,
      invalidActionPenalty: null,
      episodeStatistics: null,
    } as unknown as GiGPOOptions);
    const plain = computeGiGPOAdvantages(good, { mode: 'mean_norm' });
    expect(Array.from(withNulls.advantages)).toEqual(Array.from(plain.advantages));
  });
});

describe('unknown option keys are rejected, naming the key and the closest declared one', () => {
  it('a misspelt GiGPO step weight (stepAdvantageW) does not silently keep ω = 1', () => {
    const e = thrown(() =>
      computeGiGPOAdvantages(good, {
        mode: 'mean_norm',
        stepAdvantageW: 0,
      } as unknown as GiGPOOptions),
    );
    expect(e.code).toBe('BAD_CONFIG');
    expect(e.message).toMatch(
      /unknown key "stepAdvantageW" in GiGPO options: .* did you mean "stepAdvantageWeight"\?/,
    );
  });

  it('each registered estimator checks its own keys (a GiGPO-only key is unknown to GRPO)', () => {
    for (const name of ESTIMATOR_NAMES) {
      const registration = ESTIMATORS[name];
      const valid = name === 'gigpo' ? { mode: 'mean_norm' } : {};
      expect(registration.estimate(good, valid)).toHaveLength(2);
      expect(() => registration.estimate(good, { ...valid, gammma: 0.9 })).toThrow(
        /unknown key "gammma"/,
      );
    }
    expect(() => ESTIMATORS.grpo.estimate(good, { stepAdvantageWeight: 1 })).toThrow(
      /unknown key "stepAdvantageWeight" in GRPO options/,
    );
  });
});

describe('the README documents the registry', () => {
  it('lists every option of every registered estimator', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const name of ESTIMATOR_NAMES) {
      expect(readme, name).toContain(`\`${name}\``);
      for (const key of Object.keys(ESTIMATORS[name].options))
        expect(readme, `${name}.${key}`).toContain(`\`${key}\``);
    }
  });
});
