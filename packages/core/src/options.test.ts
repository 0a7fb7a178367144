import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAgentRLError } from './errors.ts';
import { checkOptionKeys, closestKey, type OptionsSchema } from './options.ts';

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

  it('checks the keys of nested object options and names their path', () => {
    expect(() => checkOptionKeys({ generator: { distractor: 2 } }, schema, 'env.options')).toThrow(
      /unknown key "env\.options\.generator\.distractor": .* did you mean "distractors"/,
    );
    expect(() => checkOptionKeys({ gama: 1 }, schema, 'GiGPO options')).toThrow(
      /unknown key "gama" in GiGPO options: .* did you mean "gamma"/,
    );
  });
});

describe('closestKey', () => {
  it('finds a transposed spelling', () => {
    expect(closestKey('maxStpes', ['source', 'split', 'maxSteps', 'dataDir', 'cacheSize'])).toBe(
      'maxSteps',
    );
  });

  it('returns the key itself when it is a candidate, and always one of the candidates', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.string({ maxLength: 12 }),
        (candidates, pick, other) => {
          const key = candidates[pick % candidates.length] as string;
          expect(closestKey(key, candidates)).toBe(key);
          expect(candidates).toContain(closestKey(other, candidates));
        },
      ),
    );
  });
});
