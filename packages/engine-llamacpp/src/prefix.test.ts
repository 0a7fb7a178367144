/** The prompt-prefix reuse plan: which sequence, which cached prefix, in which round. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commonPrefixLength, planPrefixReuse } from './prefix.ts';

// Small alphabets and shared stems make long common prefixes likely.
const stem = fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 6 });
const tokens = fc
  .tuple(fc.constantFrom([], [7, 7], [7, 8, 9, 1]), stem)
  .map(([a, b]) => [...a, ...b]);
const prompt = tokens.map((t) => (t.length === 0 ? [5] : t));

describe('planPrefixReuse', () => {
  it('gives each prompt its own sequence and reuses only prefixes that are really there, never the last token', () => {
    fc.assert(
      fc.property(
        fc
          .array(tokens, { minLength: 1, maxLength: 6 })
          .chain((held) =>
            fc.tuple(fc.constant(held), fc.array(prompt, { minLength: 0, maxLength: held.length })),
          ),
        ([held, prompts]) => {
          const plan = planPrefixReuse(prompts, held);
          expect(new Set(plan.sequence).size).toBe(prompts.length);
          for (const [i, p] of prompts.entries()) {
            const s = plan.sequence[i] as number;
            const parent = plan.parent[i] as number;
            const reused = plan.reused[i] as number;
            expect(s).toBeGreaterThanOrEqual(0);
            expect(s).toBeLessThan(held.length);
            expect(reused).toBeLessThanOrEqual(p.length - 1);
            if (parent === -1) {
              expect(plan.round[i]).toBe(0);
              expect(commonPrefixLength(p, held[s] as number[])).toBeGreaterThanOrEqual(reused);
            } else {
              expect(parent).toBeLessThan(i);
              expect(plan.round[i]).toBe((plan.round[parent] as number) + 1);
              const source = prompts[parent] as number[];
              expect(reused).toBeLessThanOrEqual(source.length - 1);
              expect(commonPrefixLength(p, source)).toBeGreaterThanOrEqual(reused);
              // A copy is planned only when it beats what the prompt's own sequence holds.
              expect(reused).toBeGreaterThan(
                Math.min(commonPrefixLength(p, held[s] as number[]), p.length - 1),
              );
            }
          }
        },
      ),
    );
  });

  it('sends a prompt that extends a sequence’s previous prompt and response to that sequence', () => {
    const held = [[1, 2, 3], [4, 5, 6, 7, 8], []];
    const plan = planPrefixReuse(
      [
        [9, 9],
        [4, 5, 6, 7, 8, 10, 11],
      ],
      held,
    );
    expect(plan.sequence[1]).toBe(1);
    expect(plan.reused).toEqual([0, 5]);
    expect(plan.parent).toEqual([-1, -1]);
  });

  it('evaluates identical prompts once and copies the prefix to the others', () => {
    const same = [3, 1, 4, 1, 5];
    const plan = planPrefixReuse([same, same, [3, 1, 9], same], [[], [], [], []]);
    expect(plan.parent).toEqual([-1, 0, 0, 0]);
    expect(plan.reused).toEqual([0, 4, 2, 4]);
    expect(plan.round).toEqual([0, 1, 1, 1]);
  });

  it('refuses more prompts than sequences', () => {
    expect(() => planPrefixReuse([[1], [2]], [[]])).toThrow(/2 prompts for 1 sequences/);
  });
});
