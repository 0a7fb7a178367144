/**
 * The warm start's stopping rule: a run stops at the first step where the mean loss of the last
 * `window` steps has fallen to the rule's loss, and is otherwise the same run, step for step.
 */
import { isAgentRLError } from '@agentrl/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RESPONSES, TabularPolicy, tokenizer } from '../test/tabular-policy.ts';
import { type Demonstration, meanLossOfLast, runSft, type SftOptions } from './sft.ts';

/** Three rooms, each with the response the table should learn for it. */
const DEMONSTRATIONS: Demonstration[] = ['A', 'B', 'C'].map((room, i) => ({
  prompt: `Now: room ${room}`,
  response: RESPONSES[i] as string,
}));

const options = (steps: number): SftOptions => ({
  policy: new TabularPolicy(0.3),
  tokenizer,
  demonstrations: DEMONSTRATIONS,
  steps,
  batchSize: 2,
  seed: 7,
});

const losses = (history: readonly Record<string, number>[]) => history.map((m) => m.loss);

describe('runSft with a stopping rule', () => {
  it('stops at the first step whose last `window` losses average at most the rule, with the same losses until then', async () => {
    const full = await runSft(options(120));
    const fullLosses = losses(full);
    expect(fullLosses[0]).toBeGreaterThan(fullLosses.at(-1) as number);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0.01, max: 1.5, noNaN: true }),
        async (window, meanLoss) => {
          const stopped = await runSft({ ...options(120), stopWhen: { meanLoss, window } });
          let expected = full.length;
          for (let n = window; n <= full.length; n++)
            if (meanLossOfLast(full.slice(0, n), window) <= meanLoss) {
              expected = n;
              break;
            }
          expect(stopped).toHaveLength(expected);
          expect(losses(stopped)).toEqual(fullLosses.slice(0, expected));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('takes every step when the loss never falls that far, and at least `window` steps however low the rule', async () => {
    const never = await runSft({ ...options(30), stopWhen: { meanLoss: 1e-9, window: 5 } });
    expect(never).toHaveLength(30);
    const atOnce = await runSft({ ...options(30), stopWhen: { meanLoss: 100, window: 5 } });
    expect(atOnce).toHaveLength(5);
  });

  it('refuses a rule that names no positive loss or no whole window, naming the field', async () => {
    for (const [stopWhen, field] of [
      [{ meanLoss: 0, window: 50 }, 'stopWhen.meanLoss'],
      [{ meanLoss: Number.NaN, window: 50 }, 'stopWhen.meanLoss'],
      [{ meanLoss: 0.25, window: 0 }, 'stopWhen.window'],
      [{ meanLoss: 0.25, window: 2.5 }, 'stopWhen.window'],
    ] as const) {
      const refusal = await runSft({ ...options(10), stopWhen }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isAgentRLError(refusal, 'BAD_CONFIG')).toBe(true);
      expect(String((refusal as Error).message)).toContain(`${field} is `);
    }
  });
});

describe('meanLossOfLast', () => {
  it('is the mean of the last `window` losses, and NaN before `window` steps or over a step without a loss', () => {
    const history = [1, 2, 3, 6].map((loss) => ({ loss }));
    expect(meanLossOfLast(history, 2)).toBe(4.5);
    expect(meanLossOfLast(history, 4)).toBe(3);
    expect(meanLossOfLast(history, 5)).toBeNaN();
    expect(meanLossOfLast([...history, {}], 2)).toBeNaN();
  });
});
