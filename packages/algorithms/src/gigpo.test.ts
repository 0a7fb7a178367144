import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowsArbitrary, toBatch } from '../test/arbitraries.ts';
import { computeGiGPOAdvantages, type GiGPOMode } from './gigpo.ts';
import { computeGRPOAdvantages } from './grpo.ts';
import { computeStepReturns } from './returns.ts';
import { computeRLOOAdvantages } from './rloo.ts';

const modes: GiGPOMode[] = ['mean_norm', 'mean_std_norm'];

function samePartition(a: Int32Array, b: Int32Array): boolean {
  const f = new Map<number, number>();
  const g = new Map<number, number>();
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    if ((f.get(x) ?? y) !== y || (g.get(y) ?? x) !== x) return false;
    f.set(x, y);
    g.set(y, x);
  }
  return true;
}

describe('GiGPO properties', () => {
  it('exact grouping does not depend on the row order', () => {
    fc.assert(
      fc.property(
        rowsArbitrary,
        fc.constantFrom(...modes),
        fc.infiniteStream(fc.nat()),
        (rows, mode, randomness) => {
          const keys = rows.map(() => randomness.next().value as number);
          const perm = rows
            .map((_, i) => i)
            .sort((x, y) => (keys[x] as number) - (keys[y] as number) || x - y);
          const shuffled = perm.map((i) => rows[i]!);
          const options = { mode, gamma: 0.95, invalidActionPenalty: 0.1 };
          const base = computeGiGPOAdvantages(toBatch(rows), options);
          const moved = computeGiGPOAdvantages(toBatch(shuffled), options);
          const permuted = new Int32Array(perm.map((i) => base.stepGroupIds[i]!));
          expect(samePartition(permuted, moved.stepGroupIds)).toBe(true);
          perm.forEach((i, k) => {
            expect(moved.advantages[k]).toBeCloseTo(base.advantages[i]!, 9);
            expect(moved.stepReturns[k]).toBeCloseTo(base.stepReturns[i]!, 12);
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('ω = 0 gives exactly GRPO with the same normalisation', () => {
    fc.assert(
      fc.property(
        rowsArbitrary,
        fc.constantFrom(...modes),
        fc.constantFrom('per-step-sample' as const, 'per-trajectory' as const),
        (rows, mode, episodeStatistics) => {
          const batch = toBatch(rows);
          const gigpo = computeGiGPOAdvantages(batch, {
            mode,
            stepAdvantageWeight: 0,
            episodeStatistics,
          });
          const grpo = computeGRPOAdvantages(batch, {
            normalizeByStd: mode === 'mean_std_norm',
            episodeStatistics,
          });
          expect(Array.from(gigpo.advantages)).toEqual(Array.from(grpo.advantages));
          expect(Array.from(gigpo.episodeScores)).toEqual(Array.from(grpo.episodeScores));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('rows alone in their step group get a step advantage of exactly 0', () => {
    fc.assert(
      fc.property(
        rowsArbitrary,
        fc.constantFrom(...modes),
        fc.option(fc.constantFrom(0.5, 0.9)),
        (rows, mode, θ) => {
          const r = computeGiGPOAdvantages(toBatch(rows), {
            mode,
            similarityThreshold: θ ?? undefined,
          });
          const sizes = new Map<number, number>();
          for (const s of r.stepGroupIds) sizes.set(s, (sizes.get(s) ?? 0) + 1);
          r.stepGroupIds.forEach((s, i) => {
            if (sizes.get(s) === 1) expect(r.stepAdvantages[i]).toBe(0);
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('step groups never cross task groups', () => {
    fc.assert(
      fc.property(rowsArbitrary, (rows) => {
        const r = computeGiGPOAdvantages(toBatch(rows), {
          mode: 'mean_norm',
          similarityThreshold: 0.5,
        });
        const groupOf = new Map<number, string>();
        r.stepGroupIds.forEach((s, i) => {
          expect(groupOf.get(s) ?? rows[i]!.groupId).toBe(rows[i]!.groupId);
          groupOf.set(s, rows[i]!.groupId);
        });
      }),
      { numRuns: 100 },
    );
  });
});

describe('duplicate rows (batch-padding copies)', () => {
  // One group, trajectory A = (s0, r 0), (s1, r 10); B = (s0, r 0), (s2, r 0); then a copy of A's step 1.
  const batch = {
    groupIds: ['u', 'u', 'u', 'u', 'u'],
    trajectoryIds: ['A', 'A', 'B', 'B', 'A'],
    stepIndices: [0, 1, 0, 1, 1],
    anchors: ['s0', 's1', 's0', 's2', 's1'],
    envRewards: [0, 10, 0, 0, 10],
    actionValid: [true, true, true, true, true],
  };

  it('take the return and the episode reward of their original, not a second reward', () => {
    const r = computeStepReturns(batch, { gamma: 0.5 });
    expect(Array.from(r.stepReturns)).toEqual([5, 10, 0, 0, 10]);
    expect(Array.from(r.episodeRewards)).toEqual([10, 10, 0, 0, 10]);
  });

  it('count in the episode and step populations', () => {
    const r = computeGiGPOAdvantages(batch, { mode: 'mean_norm', gamma: 0.5 });
    // Episode population: [10, 10, 0, 0, 10] → μ = 6.
    expect(Array.from(r.episodeAdvantages)).toEqual([4, 4, -6, -6, 4]);
    // Step groups: s0 = {5, 0} → μ 2.5; s1 = {10, 10} (original and copy) → 0; s2 singleton → 0.
    expect(Array.from(r.stepAdvantages)).toEqual([2.5, 0, -2.5, 0, 0]);
    expect(r.stepGroupIds[1]).toBe(r.stepGroupIds[4]);
  });

  it('count in RLOO as step samples', () => {
    const r = computeRLOOAdvantages(batch, { invalidActionPenalty: 0 });
    // m = 5, mean 6: A_i = s·5/4 − 6·5/4.
    expect(Array.from(r.advantages)).toEqual([5, 5, -7.5, -7.5, 5]);
  });

  it('are found when the copy comes first in the trajectory order', () => {
    const reordered = computeStepReturns(
      {
        ...batch,
        trajectoryIds: ['A', 'B', 'A', 'B', 'A'],
        stepIndices: [1, 0, 0, 1, 1],
        anchors: ['s1', 's0', 's0', 's2', 's1'],
        envRewards: [10, 0, 0, 0, 10],
      },
      { gamma: 0.5 },
    );
    expect(Array.from(reordered.stepReturns)).toEqual([10, 0, 5, 0, 10]);
  });
});

describe('similarity grouping', () => {
  it('puts a row in the first passing cluster, compared with its first member', () => {
    const base =
      'You are in the middle of a room. Looking quickly around you, you see a cabinet 1.';
    const near = base.replace('cabinet 1', 'cabinet 2');
    const far = 'Nothing happens.';
    const r = computeGiGPOAdvantages(
      {
        groupIds: ['u', 'u', 'u', 'u'],
        trajectoryIds: ['A', 'B', 'C', 'D'],
        stepIndices: [0, 0, 0, 0],
        anchors: [base, far, near, far],
        envRewards: [1, 0, 0, 0],
        actionValid: [true, true, true, true],
      },
      { mode: 'mean_norm', similarityThreshold: 0.9 },
    );
    expect(Array.from(r.stepGroupIds)).toEqual([0, 1, 0, 1]);
  });

  it('lets autojunk decide for anchors of 200+ characters, as the reference does', () => {
    // Representative b of 260 characters dominated by a few letters: with autojunk those letters
    // are popular, the ratio collapses and the near-copy founds its own cluster.
    const rep = 'ab'.repeat(130);
    const copy = 'b' + 'ab'.repeat(129) + 'a';
    const r = computeGiGPOAdvantages(
      {
        groupIds: ['u', 'u'],
        trajectoryIds: ['A', 'B'],
        stepIndices: [0, 0],
        anchors: [rep, copy],
        envRewards: [0, 1],
        actionValid: [true, true],
      },
      { mode: 'mean_norm', similarityThreshold: 0.9 },
    );
    expect(r.stepGroupIds[0]).not.toBe(r.stepGroupIds[1]);
  });
});
