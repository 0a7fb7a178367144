import { isAgentRLError } from '@agentrl/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Shop } from './shop.ts';
import { generateSyntheticCatalogue } from './synthetic.ts';

type Options = Record<string, { value: string }[]> | null;

describe('the synthetic catalogue generator', () => {
  it('makes the same files with its option ranges unset and set to their defaults', () => {
    for (const seed of [0, 7]) {
      expect(generateSyntheticCatalogue({ size: 60, seed })).toEqual(
        generateSyntheticCatalogue({ size: 60, seed, optionGroups: [0, 2], optionValues: [1, 3] }),
      );
    }
  });

  it('gives every product a number of option groups and values within the ranges asked for, and one goal per combination', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc
          .integer({ min: 0, max: 4 })
          .chain((a) => fc.tuple(fc.constant(a), fc.integer({ min: a, max: 4 }))),
        fc
          .integer({ min: 1, max: 7 })
          .chain((a) => fc.tuple(fc.constant(a), fc.integer({ min: a, max: 7 }))),
        (seed, groups, values) => {
          const files = generateSyntheticCatalogue({
            size: 30,
            seed,
            optionGroups: groups,
            optionValues: values,
          });
          let combinations = 0;
          for (const p of files.products) {
            const opts = Object.values((p.customization_options as Options) ?? {});
            expect(opts.length).toBeGreaterThanOrEqual(groups[0]);
            expect(opts.length).toBeLessThanOrEqual(groups[1]);
            for (const o of opts) {
              // A group offers no more values than it has (styles: 3).
              expect(o.length).toBeGreaterThanOrEqual(Math.min(values[0], 3));
              expect(o.length).toBeLessThanOrEqual(values[1]);
              expect(new Set(o.map((v) => v.value)).size).toBe(o.length);
            }
            if (files.attributes[p.asin as string]?.instruction !== undefined) {
              combinations += opts.reduce((n, o) => n * o.length, 1);
            }
          }
          const shop = Shop.create({
            catalogue: {
              kind: 'synthetic',
              size: 30,
              seed,
              optionGroups: groups,
              optionValues: values,
            },
          });
          expect(shop.goalSet(0).goals.length).toBe(combinations);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('refuses a range that is not [min, max] within its bounds, naming the option', () => {
    for (const [field, value] of [
      ['optionGroups', [3, 1]],
      ['optionGroups', [0, 5]],
      ['optionValues', [0, 2]],
      ['optionValues', [1, 8]],
      ['optionValues', [1.5, 2]],
      ['optionGroups', [1]],
    ] as const) {
      try {
        generateSyntheticCatalogue({ [field]: value });
        expect.unreachable(`${field} ${JSON.stringify(value)} was accepted`);
      } catch (e) {
        expect(isAgentRLError(e, 'BAD_INPUT')).toBe(true);
        expect(String(e)).toContain(field);
      }
    }
  });
});
