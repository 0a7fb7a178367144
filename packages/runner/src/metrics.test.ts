import type { StepRecord } from '@agentrl/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { policyShiftMetrics, stepGroupMetrics } from './metrics.ts';

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

describe('stepGroupMetrics', () => {
  const step = (groupId: string, anchor: string, action: string): StepRecord => ({
    groupId,
    trajectoryId: `${groupId}-${anchor}-${action}`,
    stepIndex: 0,
    anchor,
    reward: 0,
    actionValid: true,
    action,
    promptTokenIds: [],
    responseTokenIds: [],
    responseLogProbs: [],
    terminated: false,
    truncated: false,
    won: false,
  });

  it('counts step groups by task group and anchor, and the shared ones where every member took one action', () => {
    const m = stepGroupMetrics([
      step('g0', 'kitchen', 'go to fridge 1'),
      step('g0', 'kitchen', 'go to fridge 1'),
      step('g0', 'kitchen', 'go to fridge 1'),
      step('g0', 'fridge', 'open fridge 1'),
      step('g0', 'fridge', 'take apple 1'),
      step('g1', 'kitchen', 'go to fridge 1'),
      step('g1', 'kitchen', 'go to fridge 1'),
      step('g1', 'sink', 'look'),
    ]);
    // Groups: g0/kitchen (3, one action), g0/fridge (2, two actions), g1/kitchen (2, one action),
    // g1/sink (a singleton, not counted in the one-action share).
    expect(m).toMatchObject({
      'stepGroups/count': 4,
      'stepGroups/sizeMean': 2,
      'stepGroups/sizeMax': 3,
      'stepGroups/singletonFraction': 0.25,
      'stepGroups/oneActionFraction': 2 / 3,
    });
    expect(stepGroupMetrics([])['stepGroups/oneActionFraction']).toBe(0);
  });

  it('keeps the one-action share in [0, 1] and at 1 when every group has one action', () => {
    const records = fc.array(
      fc.tuple(
        fc.constantFrom('g0', 'g1'),
        fc.constantFrom('a', 'b', 'c'),
        fc.constantFrom('x', 'y'),
      ),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(records, (rs) => {
        const all = stepGroupMetrics(rs.map(([g, a, x]) => step(g, a, x)));
        const f = all['stepGroups/oneActionFraction'] as number;
        expect(f).toBeGreaterThanOrEqual(0);
        expect(f).toBeLessThanOrEqual(1);
        const one = stepGroupMetrics(rs.map(([g, a]) => step(g, a, 'same')));
        const shared = new Set(rs.map(([g, a]) => `${g}/${a}`)).size < rs.length;
        expect(one['stepGroups/oneActionFraction']).toBe(shared ? 1 : 0);
      }),
    );
  });
});
