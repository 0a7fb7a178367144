import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from './closest.ts';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent swaps as one edit each', () => {
    expect(editDistance('iterations', 'iterations')).toBe(0);
    expect(editDistance('iteratons', 'iterations')).toBe(1);
    expect(editDistance('iterationss', 'iterations')).toBe(1);
    expect(editDistance('iterafions', 'iterations')).toBe(1);
    expect(editDistance('itreations', 'iterations')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('is symmetric, zero only for equal strings, and bounded by the longer length', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = editDistance(a, b);
        expect(editDistance(b, a)).toBe(d);
        expect(d === 0).toBe(a === b);
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
  });
});

describe('closestName', () => {
  const flags = ['config', 'preset', 'set', 'seed', 'iterations', 'run-dir', 'resume'];

  it('names the flag one typo away', () => {
    expect(closestName('iteratons', flags)).toBe('iterations');
    expect(closestName('run_dir', flags)).toBe('run-dir');
    expect(closestName('Config', flags)).toBe('config');
    expect(closestName('resmue', flags)).toBe('resume');
  });

  it('completes a prefix of three or more characters', () => {
    expect(closestName('iter', flags)).toBe('iterations');
  });

  it('suggests nothing for a name that resembles no candidate', () => {
    expect(closestName('temperature', flags)).toBeUndefined();
    expect(closestName('x', flags)).toBeUndefined();
    expect(closestName('anything', [])).toBeUndefined();
  });

  it('always returns one of the candidates, and the name itself when it is one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        fc.string({ maxLength: 8 }),
        (candidates, name) => {
          const found = closestName(name, candidates);
          if (found !== undefined) expect(candidates).toContain(found);
          const exact = candidates[0] as string;
          expect(closestName(exact, candidates)?.toLowerCase()).toBe(exact.toLowerCase());
        },
      ),
    );
  });
});
