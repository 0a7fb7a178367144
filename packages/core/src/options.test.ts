import { describe, expect, it } from 'vitest';
import { isAgentRLError } from './errors.ts';
import { checkOptionKeys, type OptionsSchema } from './options.ts';

const schema: OptionsSchema = {
  gamma: { description: 'discount', default: 1 },
  stepAdvantageWeight: { description: 'ω', default: 1 },
  generator: {
    description: 'household generator',
    options: { distractors: { description: 'objects', default: 1 } },
  },
};

describe('checkOptionKeys', () => {
  it('accepts declared keys, nested ones included', () => {
    expect(() =>
      checkOptionKeys(
        { gamma: 0.9, stepAdvantageWeight: 0, generator: { distractors: 2 } },
        schema,
        'x',
      ),
    ).not.toThrow();
  });

  it('rejects an unknown key with a BAD_CONFIG error naming the key, where it was found and the closest key', () => {
    try {
      checkOptionKeys({ stepAdvantageW: 0 }, schema, 'algorithm.options');
      expect.unreachable();
    } catch (error) {
      expect(isAgentRLError(error) && error.code).toBe('BAD_CONFIG');
      expect((error as Error).message).toMatch(
        /^unknown key "algorithm\.options\.stepAdvantageW": remove it or check its spelling; did you mean "stepAdvantageWeight"\?/,
      );
      expect(isAgentRLError(error) && error.details.field).toBe('algorithm.options.stepAdvantageW');
    }
  });

  it('names no key when none is a plausible typo, and lists the valid ones', () => {
    expect(() => checkOptionKeys({ mode: 'mean_norm' }, schema, 'algorithm.options')).toThrow(
      /^unknown key "algorithm\.options\.mode": remove it or check its spelling \(valid keys: gamma, stepAdvantageWeight, generator\)$/,
    );
  });

  it('checks the keys of nested object options and names their path', () => {
    expect(() => checkOptionKeys({ generator: { distractor: 2 } }, schema, 'env.options')).toThrow(
      /unknown key "env\.options\.generator\.distractor": .* did you mean "distractors"/,
    );
    expect(() => checkOptionKeys({ gama: 1 }, schema, 'GiGPO options')).toThrow(
      /unknown key "gama" in GiGPO options: .* did you mean "gamma"/,
    );
  });
});
