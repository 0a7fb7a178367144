import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Product } from './catalogue.ts';
import { createWebshopEnv } from './create-env.ts';
import { normalizeColor, tokenSetRatio } from './fuzz.ts';
import type { Goal } from './goals.ts';
import { attributeMatches } from './reward.ts';
import { Shop, ShopSession } from './shop.ts';

function product(asin: string, extra: Partial<Product> = {}): Product {
  return {
    asin,
    name: `Thing ${asin}`,
    Title: `Thing ${asin}`,
    Description: 'desc',
    BulletPoints: ['b1', 'b2'],
    Price: '$10.0',
    pricing: [10],
    options: [],
    MainImage: '',
    Rating: 'N.A.',
    Attributes: [],
    category: 'c',
    query: 'q',
    product_category: 'A › B',
    instructionText: 'Find me a thing',
    instructionAttributes: ['thing'],
    humanInstructions: null,
    ...extra,
  };
}

describe('quirks of the reference WebShop that we keep', () => {
  it('sets only the last option group when two groups share a value', () => {
    const p = product('B0SHARED01', {
      options: [
        { name: 'color', values: ['small', 'red'] },
        { name: 'size', values: ['small', 'large'] },
      ],
    });
    const shop = new Shop([p]);
    const { goals, prices } = shop.goalSet(0);
    const session = new ShopSession(shop, 's', goals[0] as Goal, prices);
    session.step('search[thing]');
    session.step('click[b0shared01]');
    expect(session.page.clickables.filter((c) => c === 'small')).toHaveLength(1);
    session.step('click[small]');
    expect(session.options).toEqual([['size', 'small']]);
  });

  it('shows an empty reviews page and a N.A. rating', () => {
    const shop = new Shop([product('B0REVIEW01')]);
    const { goals, prices } = shop.goalSet(0);
    const session = new ShopSession(shop, 's', goals[0] as Goal, prices);
    session.step('search[thing]');
    session.step('click[b0review01]');
    expect(session.page.text).toContain('Rating: N.A.');
    session.step('click[reviews]');
    expect(session.page.text.endsWith('Back to Search [SEP] < Prev')).toBe(true);
  });

  it('indexes only the first bullet point but matches attributes against all of them', () => {
    const p = product('B0BULLET01', { BulletPoints: ['alpha', 'zebra stripes'] });
    const shop = new Shop([p]);
    expect(shop.engine.search('zebra')).toEqual([]);
    expect(attributeMatches(p, ['zebra stripes'])).toBe(1);
  });

  it('does not lower-case the goal attribute in substring checks', () => {
    expect(attributeMatches(product('B0CASE0001', { Title: 'Zebra Stripes' }), ['Zebra'])).toBe(0);
  });

  it('compares synthetic goal options as str((name, value)) and colors only on exact values', () => {
    expect(normalizeColor(['color', 'navy blue'])).toEqual(['color', 'navy blue']);
    expect(normalizeColor(['color', 'navy'])).toBe('navy');
    expect(normalizeColor('navy blue')).toBe('blue');
    expect(tokenSetRatio('small', ['size', 'small'])).toBe(100);
    // 'rustic' normalises to 'rust' on the purchased side only: the reference misses this option
    expect(
      tokenSetRatio(normalizeColor('rustic'), normalizeColor(['style', 'rustic'])),
    ).toBeLessThan(85);
  });

  it('handles 10,000 random and adversarial actions without throwing', async () => {
    const shop = Shop.create({ catalogue: { kind: 'synthetic', size: 40, seed: 9 } });
    const env = createWebshopEnv({ shop, split: 'all', maxSteps: 1_000_000 });
    await env.reset({ seed: 0 });
    const samples = fc.sample(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.string({ maxLength: 40 }).map((s) => `search[${s}]`),
        fc.string({ maxLength: 40 }).map((s) => `click[${s}]`),
        fc.constantFrom(
          'click[buy now]',
          'click[< prev]',
          'click[next >]',
          'search[[[]]]',
          'click[]]',
          '[x]',
          `search[${'a '.repeat(5000)}]`,
          'search[shirt]\n',
          'click[\u0000]',
        ),
      ),
      { numRuns: 10_000, seed: 42 },
    );
    for (const action of samples) {
      const r = await env.step(action);
      expect(typeof r.observation.text).toBe('string');
      if (r.terminated || r.truncated) await env.reset({ seed: 0 });
    }
  });
});

describe('name noun providers', () => {
  it('uses a precomputed table first and the approximation for other names', async () => {
    const { nameNounsFromTable, approximateNameNouns } = await import('./name-nouns.ts');
    const nouns = nameNounsFromTable({ 'Blue Mug': ['mug'] });
    expect(nouns('Blue Mug')).toEqual(['mug']);
    expect(nouns("Men's Running Shoes, 2 Pack")).toEqual(
      approximateNameNouns("Men's Running Shoes, 2 Pack"),
    );
    expect(approximateNameNouns("Men's Running Shoes, 2 Pack")).toEqual([
      'men',
      'running',
      'shoes',
      'pack',
    ]);
    expect(approximateNameNouns('Soft Cotton Crew Neck T-Shirt for Men, Navy')).toEqual([
      'cotton',
      'crew',
      'neck',
      't',
      'shirt',
      'men',
      'navy',
    ]);
  });
});
