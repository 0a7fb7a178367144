import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAgentRLError } from './errors.ts';
import {
  assertWeightsVersion,
  logProbMismatch,
  policyRolloutEngine,
  WeightSyncError,
} from './rollout-engine.ts';
import { ScriptedPolicy } from './test/scripted-policy.ts';

const rows = fc.array(fc.array(fc.double({ min: -30, max: 0, noNaN: true }), { maxLength: 8 }), {
  maxLength: 6,
});

describe('logProbMismatch', () => {
  it('is zero for identical log-probs and counts every token', () => {
    fc.assert(
      fc.property(rows, (a) => {
        const m = logProbMismatch(a, a);
        expect(m).toMatchObject({ meanAbs: 0, maxAbs: 0, meanAbsProb: 0 });
        expect(m.count).toBe(a.reduce((n, r) => n + r.length, 0));
      }),
    );
  });

  it('is symmetric, and the mean never exceeds the largest difference', () => {
    fc.assert(
      fc.property(
        rows.chain((a) =>
          fc.tuple(
            fc.constant(a),
            fc.tuple(
              ...a.map((r) =>
                fc.array(fc.double({ min: -30, max: 0, noNaN: true }), {
                  minLength: r.length,
                  maxLength: r.length,
                }),
              ),
            ),
          ),
        ),
        ([a, b]) => {
          const ab = logProbMismatch(a, b);
          const ba = logProbMismatch(b, a);
          expect(ab.meanAbs).toBeCloseTo(ba.meanAbs, 12);
          expect(ab.maxAbs).toBe(ba.maxAbs);
          expect(ab.meanAbs).toBeLessThanOrEqual(ab.maxAbs + 1e-12);
          expect(ab.meanAbsProb).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it('measures log-prob and probability differences of a worked example', () => {
    const m = logProbMismatch([[Math.log(0.5), Math.log(0.25)]], [[Math.log(0.5), Math.log(0.5)]]);
    expect(m.count).toBe(2);
    expect(m.maxAbs).toBeCloseTo(Math.log(2), 12);
    expect(m.meanAbs).toBeCloseTo(Math.log(2) / 2, 12);
    expect(m.meanAbsProb).toBeCloseTo(0.125, 12);
  });

  it('rejects rows of different lengths with a typed error naming the row', () => {
    expect(() => logProbMismatch([[0, 0]], [[0]])).toThrow(/row 0 has 2 engine log-probs but 1/);
    expect(() => logProbMismatch([[0]], [])).toThrow(/1 engine rows but 0 trainer rows/);
  });
});

describe('assertWeightsVersion', () => {
  it('passes a result sampled from the expected version and rejects a stale one', () => {
    expect(() => assertWeightsVersion('x', { weightsVersion: 3 }, 3)).not.toThrow();
    try {
      assertWeightsVersion('llama.cpp', { weightsVersion: 2 }, 3);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WeightSyncError);
      expect(isAgentRLError(error, 'WEIGHT_SYNC')).toBe(true);
      expect((error as Error).message).toMatch(/version 2, but the trainer is at version 3/);
    }
  });
});

describe('policyRolloutEngine', () => {
  const policy = () => new ScriptedPolicy({ respond: (p) => [p.length, 7, 9] });

  it('returns the policy tokens and log-probs with the synced version', async () => {
    const engine = policyRolloutEngine(policy());
    expect(engine.name).toBe('tfjs');
    expect(engine.weightsVersion).toBeUndefined();
    await engine.syncWeights({ version: 4, checkpointDir: 'unused' });
    const out = await engine.generate([[1, 2]], { maxNewTokens: 2, stopTokenIds: [] });
    expect(out.tokenIds).toEqual([[2, 7]]);
    expect(out.logProbs).toEqual([[-0.5, -0.5]]);
    expect(out.finishReasons).toEqual(['length']);
    expect(out.weightsVersion).toBe(4);
    expect(engine.weightsVersion).toBe(4);
  });

  it('refuses to go back to an older weights version', async () => {
    const engine = policyRolloutEngine(policy());
    await engine.syncWeights({ version: 2, checkpointDir: 'unused' });
    await expect(engine.syncWeights({ version: 1, checkpointDir: 'unused' })).rejects.toThrow(
      WeightSyncError,
    );
  });

  it('refuses to generate after close', async () => {
    const engine = policyRolloutEngine(policy());
    await engine.close();
    await engine.close();
    await expect(engine.generate([[1]], { maxNewTokens: 1 })).rejects.toThrow(/after close/);
  });
});
