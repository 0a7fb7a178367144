import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { policyShiftMetrics } from './metrics.ts';

const rows = fc.array(fc.array(fc.double({ min: -20, max: 0, noNaN: true }), { maxLength: 6 }), {
  minLength: 1,
  maxLength: 5,
});

describe('policyShiftMetrics', () => {
  it('is zero when the policy did not move', () => {
    fc.assert(
      fc.property(rows, (before) => {
        const m = policyShiftMetrics(before, before);
        if (before.flat().length === 0) expect(m).toEqual({});
        else {
          expect(m['policy/klBeforeAfter']).toBe(0);
          expect(m['policy/absDeltaLogProb']).toBe(0);
        }
      }),
    );
  });

  it('never reports a negative KL, and the mean |Δ log-prob| never exceeds the largest', () => {
    fc.assert(
      fc.property(rows, rows, (before, after) => {
        const m = policyShiftMetrics(before, after);
        if (m['policy/klBeforeAfter'] === undefined) return;
        expect(m['policy/klBeforeAfter']).toBeGreaterThanOrEqual(0);
        expect(m['policy/absDeltaLogProb']).toBeLessThanOrEqual(
          (m['policy/maxAbsDeltaLogProb'] as number) + 1e-12,
        );
      }),
    );
  });

  it('matches the k3 estimator by hand and averages entropies per token', () => {
    const m = policyShiftMetrics([[-1, -2]], [[-0.5, -2.5]], [[1, 3]]);
    const k3 = (d: number) => Math.exp(d) - d - 1;
    expect(m['policy/klBeforeAfter']).toBeCloseTo((k3(0.5) + k3(-0.5)) / 2, 12);
    expect(m['policy/absDeltaLogProb']).toBeCloseTo(0.5, 12);
    expect(m['policy/entropy']).toBe(2);
  });
});
