import type { StepBatch } from '@agentrl/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ESTIMATORS } from './estimators.ts';
import { computeGaeAdvantageReturn, gaeAdvantages, maskedWhiten } from './gae.ts';
import { computePPOAdvantages, ppoRowScores, resolvePPOOptions, stepRowLayout } from './ppo.ts';

/** Two trajectories: A wins at its third step (reward 10), B fails; B's second action is invalid. */
const batch: StepBatch = {
  groupIds: ['a', 'a', 'a', 'b', 'b'],
  trajectoryIds: ['A', 'A', 'A', 'B', 'B'],
  stepIndices: [0, 1, 2, 0, 1],
  anchors: ['', '', '', '', ''],
  envRewards: [0, 0, 10, 0, 0],
  actionValid: [true, true, true, true, false],
};

describe('PPO step rows', () => {
  it('every step row scores its whole episode’s undiscounted reward, minus the penalty on its own invalid row only', () => {
    expect(Array.from(ppoRowScores(batch))).toEqual([10, 10, 10, 0, -0.1]);
    expect(Array.from(ppoRowScores(batch, { invalidActionPenalty: 0 }))).toEqual([
      10, 10, 10, 0, 0,
    ]);
  });

  it('puts the score on the last valid token and gives the critic one position more, except for a row that fills the response budget', () => {
    const layout = stepRowLayout([10, -0.1], [3, 4], 4);
    expect(layout.tokenLevelRewards).toEqual([
      [0, 0, 10, 0],
      [0, 0, 0, -0.1],
    ]);
    expect(layout.responseMask).toEqual([
      [1, 1, 1, 0],
      [1, 1, 1, 1],
    ]);
    expect(layout.criticMask).toEqual([
      [1, 1, 1, 1],
      [1, 1, 1, 1],
    ]);
  });

  it('refuses a row without response tokens, which has no token to carry its score', () => {
    expect(() => stepRowLayout([1], [0], 8)).toThrow(/row 0 has 0 response tokens/);
  });

  it('with the scripts’ gamma = lam = 1 every valid token’s target is the score and the post-response state’s target is 0', () => {
    const values = [
      [1, 2, 3, 4],
      [0.5, 0.5, 0.5, 0.5, 9],
      [2, 2],
      [0, 1],
      [7, 7, 7],
    ];
    const r = computePPOAdvantages({
      batch,
      responseLengths: [3, 4, 1, 1, 2],
      maxResponseLength: 8,
      values,
    });
    const want = [
      [10, 10, 10, 0],
      [10, 10, 10, 10, 0],
      [10, 0],
      [0, 0],
      [-0.1, -0.1, 0],
    ];
    expect(r.returns.map((row) => row.length)).toEqual(want.map((row) => row.length));
    want.forEach((row, i) => {
      row.forEach((g, t) => {
        expect((r.returns[i] as number[])[t]).toBeCloseTo(g, 12);
      });
    });
    // The extra critic value is read but not beyond the layout (row 1 gave 5 for 5 positions).
    expect(r.values[1]).toEqual([0.5, 0.5, 0.5, 0.5, 9]);
  });

  it('rejects a critic that values too few positions', () => {
    expect(() =>
      computePPOAdvantages({
        batch,
        responseLengths: [3, 3, 3, 3, 3],
        maxResponseLength: 8,
        values: [0, 1, 2, 3, 4].map(() => [0, 0, 0]),
      }),
    ).toThrow(/must value 4 positions/);
  });

  it('is registered as ppo, needs a critic, and declares its options with the scripts’ defaults', () => {
    expect(ESTIMATORS.ppo.critic).toBe(true);
    expect(Array.from(ESTIMATORS.ppo.estimate(batch, {}))).toEqual([10, 10, 10, 0, -0.1]);
    expect(resolvePPOOptions()).toMatchObject({
      gamma: 1,
      lam: 1,
      cliprangeValue: 0.5,
      criticLearningRate: 1e-5,
      criticWarmup: 0,
    });
    expect(() => resolvePPOOptions({ lambda: 0.9 } as never)).toThrow(
      /unknown key "lambda" in PPO options/,
    );
    expect(() => resolvePPOOptions({ gamma: 1.5 })).toThrow(/gamma must be in \[0, 1\]/);
  });
});

const rowsArbitrary = fc.array(
  fc.integer({ min: 1, max: 6 }).chain((L) =>
    fc.record({
      L: fc.constant(L),
      score: fc.double({ min: -20, max: 20, noNaN: true }),
      values: fc.array(fc.double({ min: -20, max: 20, noNaN: true }), {
        minLength: 7,
        maxLength: 7,
      }),
    }),
  ),
  { minLength: 2, maxLength: 6 },
);

describe('GAE properties', () => {
  it('with gamma = lam = 1 the raw advantage of every valid token is its score minus its value, and its return the score', () => {
    fc.assert(
      fc.property(rowsArbitrary, (rows) => {
        const layout = stepRowLayout(
          rows.map((r) => r.score),
          rows.map((r) => r.L),
          6,
        );
        const values = layout.tokenLevelRewards.map((row, i) =>
          (rows[i]?.values ?? []).slice(0, row.length),
        );
        const raw = gaeAdvantages(layout.tokenLevelRewards, values, { gamma: 1, lam: 1 });
        rows.forEach((r, i) => {
          for (let t = 0; t < r.L; t++) {
            const want = r.score - ((values[i] as number[])[t] as number);
            expect(Math.abs(((raw[i] as number[])[t] as number) - want)).toBeLessThanOrEqual(
              1e-9 * (1 + Math.abs(want)) * r.L,
            );
          }
        });
      }),
    );
  });

  it('never crosses rows: changing one row’s rewards or values leaves every other row’s raw advantages unchanged', () => {
    fc.assert(
      fc.property(
        rowsArbitrary,
        fc.double({ min: -5, max: 5, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rows, bump, gamma) => {
          const r = rows.map((x) => x.values.map((_, t) => (t === x.L - 1 ? x.score : 0)));
          const v = rows.map((x) => x.values);
          const before = gaeAdvantages(r, v, { gamma, lam: 0.9 });
          const v2 = v.map((row, i) => (i === 0 ? row.map((x) => x + bump) : row));
          const after = gaeAdvantages(r, v2, { gamma, lam: 0.9 });
          expect(after.slice(1)).toEqual(before.slice(1));
        },
      ),
    );
  });

  it('whitening uses the masked positions only: values under a zero mask do not move any valid token’s advantage, and are whitened, not zeroed', () => {
    fc.assert(
      fc.property(rowsArbitrary, fc.double({ min: -50, max: 50, noNaN: true }), (rows, junk) => {
        const mask = rows.map((x) => x.values.map((_, t) => (t < x.L ? 1 : 0)));
        const a = rows.map((x) => x.values);
        const masked = (rows[0] as { L: number }).L;
        fc.pre(mask.flat().reduce((s: number, m) => s + m, 0) >= 2 && masked < 7);
        const b = a.map((row, i) => row.map((x, t) => (i === 0 && t === masked ? junk : x)));
        const wa = maskedWhiten(a, mask);
        const wb = maskedWhiten(b, mask);
        mask.forEach((row, i) => {
          row.forEach((m, t) => {
            if (m === 1) expect((wb[i] as number[])[t]).toBe((wa[i] as number[])[t]);
          });
        });
        // A padded position is whitened like any other: (x − μ)/σ, not zero.
        const w0 = (wa[0] as number[])[masked] as number;
        const w1 = (wb[0] as number[])[masked] as number;
        if (Math.abs(junk - ((a[0] as number[])[masked] as number)) > 1e-3) expect(w1).not.toBe(w0);
      }),
    );
  });

  it('whitened advantages over the valid tokens have mean 0 and unbiased variance close to 1', () => {
    fc.assert(
      fc.property(rowsArbitrary, fc.double({ min: 0.5, max: 1, noNaN: true }), (rows, lam) => {
        const r = rows.map((x) => x.values.map((_, t) => (t === x.L - 1 ? x.score : 0)));
        const mask = rows.map((x) => x.values.map((_, t) => (t < x.L ? 1 : 0)));
        const raw = gaeAdvantages(
          r,
          rows.map((x) => x.values),
          { gamma: 1, lam },
        );
        const valid = raw.flatMap((row, i) => row.filter((_, t) => (mask[i] as number[])[t] === 1));
        const mean = valid.reduce((s, x) => s + x, 0) / valid.length;
        const variance = valid.reduce((s, x) => s + (x - mean) ** 2, 0) / (valid.length - 1);
        fc.pre(variance > 1e-3);
        const { advantages } = computeGaeAdvantageReturn(
          { tokenLevelRewards: r, values: rows.map((x) => x.values), responseMask: mask },
          { gamma: 1, lam },
        );
        const w = advantages.flatMap((row, i) =>
          row.filter((_, t) => (mask[i] as number[])[t] === 1),
        );
        const wm = w.reduce((s, x) => s + x, 0) / w.length;
        const wv = w.reduce((s, x) => s + (x - wm) ** 2, 0) / (w.length - 1);
        expect(Math.abs(wm)).toBeLessThan(1e-6);
        expect(Math.abs(wv - variance / (variance + 1e-8))).toBeLessThan(1e-6);
      }),
    );
  });
});
