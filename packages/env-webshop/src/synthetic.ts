/**
 * A seeded generator of small synthetic catalogues in the schema of the real files
 * (`items_shuffle_*.json` products and `items_ins_v2_*.json` attributes with synthetic
 * instructions), so tests and examples run on a fresh clone without the products file.
 */
import { createRng, InvalidInputError, type Rng } from '@agentrl/core';

/** The raw files a generated catalogue consists of (JSON-serialisable, as on disk). */
export interface SyntheticCatalogueFiles {
  /** `items_shuffle_*.json`: an array of product records. */
  readonly products: Record<string, unknown>[];
  /** `items_ins_v2_*.json`: ASIN → attributes, instruction, instruction attributes. */
  readonly attributes: Record<string, Record<string, unknown>>;
}

/** Options of {@link generateSyntheticCatalogue}. */
export interface SyntheticCatalogueOptions {
  /** Number of products (default 100). */
  readonly size?: number;
  /** Seed of the generator (default 0). */
  readonly seed?: number;
  /** Fraction of products that carry a synthetic instruction (default 0.6; the real file: 0.415). */
  readonly instructedFraction?: number;
  /**
   * Fewest and most option groups (colour, size, flavour, style) per product, default `[0, 2]`;
   * at most 4. A goal is made for every combination of option values, as in WebShop, so more
   * groups and values give more goals per product.
   */
  readonly optionGroups?: readonly [min: number, max: number];
  /**
   * Fewest and most values per option group, default `[1, 3]`; at most 7, and no more than the
   * group has (styles: 3).
   */
  readonly optionValues?: readonly [min: number, max: number];
}

const KINDS: readonly [category: string, path: string, query: string, nouns: readonly string[]][] =
  [
    [
      'fashion',
      'Clothing, Shoes & Jewelry › Men › Clothing › Shirts',
      "men's shirts",
      ['t-shirt', 'polo shirt', 'henley', 'button down shirt'],
    ],
    [
      'fashion',
      'Clothing, Shoes & Jewelry › Women › Shoes',
      "women's sneakers",
      ['sneakers', 'running shoes', 'slip on loafers', 'sandals'],
    ],
    [
      'beauty',
      'Beauty & Personal Care › Hair Care › Shampoo',
      'shampoo',
      ['shampoo', 'conditioner', 'hair mask', 'scalp serum'],
    ],
    [
      'beauty',
      'Beauty & Personal Care › Skin Care › Face',
      'face moisturizer',
      ['face cream', 'night serum', 'eye gel', 'cleansing balm'],
    ],
    [
      'grocery',
      'Grocery & Gourmet Food › Snacks › Nuts',
      'snack nuts',
      ['almonds', 'cashews', 'trail mix', 'pistachios'],
    ],
    [
      'grocery',
      'Grocery & Gourmet Food › Beverages › Tea',
      'herbal tea',
      ['green tea', 'chamomile tea', 'rooibos tea', 'matcha powder'],
    ],
    [
      'electronics',
      'Electronics › Headphones › Earbuds',
      'wireless earbuds',
      ['earbuds', 'headphones', 'headset', 'neckband'],
    ],
    [
      'electronics',
      'Electronics › Computers › Accessories',
      'usb hub',
      ['usb hub', 'docking station', 'card reader', 'charging cable'],
    ],
    [
      'garden',
      'Home & Kitchen › Furniture › Living Room',
      'coffee table',
      ['coffee table', 'side table', 'bookshelf', 'tv stand'],
    ],
    [
      'garden',
      'Home & Kitchen › Bedding › Blankets',
      'throw blanket',
      ['throw blanket', 'duvet cover', 'pillow case', 'quilt set'],
    ],
  ];
const ADJECTIVES = [
  'soft',
  'classic',
  'premium',
  'lightweight',
  'organic',
  'compact',
  'durable',
  'vintage',
  'modern',
  'slim',
];
const BRANDS = ['Acme', 'Nordby', 'Lumen', 'Orchard', 'Vesta', 'Kestrel', 'Pinecrest', 'Halcyon'];
const ATTRIBUTES = [
  'machine wash',
  'long lasting',
  'easy clean',
  'high quality',
  'non slip',
  'gluten free',
  'natural ingredients',
  'fast charging',
  'water resistant',
  'dry skin',
  'easy assemble',
  'sugar free',
  'noise cancelling',
  'solid wood',
  'tea tree',
  'wireless bluetooth',
  'eco friendly',
  'heavy duty',
  'travel size',
  'memory foam',
];
const OPTION_KINDS: readonly [name: string, values: readonly string[]][] = [
  ['Color', ['Navy', 'Black/White', 'Heather Grey', 'Rose Gold', 'Forest Green', 'Red', 'Ivory']],
  ['Size', ['Small', 'Medium', 'Large', 'X-Large', 'XX-Large', '8 Ounce (Pack of 2)', '16 Ounce']],
  ['Flavor Name', ['Vanilla', 'Sea Salt', 'Dark Chocolate', 'Honey Roasted']],
  ['Style', ['Modern', 'Classic', 'Farmhouse']],
];

function pickDistinct<T>(rng: Rng, items: readonly T[], k: number): T[] {
  return rng.sample(items, Math.min(k, items.length));
}

function makeAsin(rng: Rng, used: Set<string>): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (;;) {
    let s = 'B0';
    for (let i = 0; i < 8; i++) s += alphabet[rng.int(alphabet.length)];
    if (!used.has(s)) {
      used.add(s);
      return s;
    }
  }
}

function priceString(rng: Rng): string {
  const cents = (x: number) => (Math.round(x * 100) / 100).toFixed(2);
  const r = rng.next();
  const a = 3 + rng.next() * 120;
  if (r < 0.08) return '';
  if (r < 0.3) return `$${cents(a)} - $${cents(a + 1 + rng.next() * 40)}`;
  return `$${cents(a)}`;
}

/** The generator's defaults (the catalogue options of `webshop/text-v1` declare the same). */
export const SYNTHETIC_CATALOGUE_DEFAULTS = {
  size: 100,
  seed: 0,
  instructedFraction: 0.6,
  optionGroups: [0, 2],
  optionValues: [1, 3],
} as const satisfies Required<SyntheticCatalogueOptions>;

/** Checks an inclusive integer range option, naming it when it is not one. */
function rangeOption(
  name: string,
  value: readonly [number, number] | undefined,
  fallback: readonly [number, number],
  lowest: number,
  highest: number,
): readonly [number, number] {
  if (value === undefined) return fallback;
  const [min, max] = Array.isArray(value) ? value : [];
  if (
    value.length !== 2 ||
    !Number.isInteger(min) ||
    !Number.isInteger(max) ||
    (min as number) < lowest ||
    (max as number) > highest ||
    (min as number) > (max as number)
  ) {
    throw new InvalidInputError(
      `synthetic catalogue: ${name} must be [min, max], integers with ${lowest} <= min <= max <= ${highest}; got ${JSON.stringify(value)}`,
      { details: { field: name, value } },
    );
  }
  return [min as number, max as number];
}

/** Generates a catalogue of `size` products in the real files' schema. Same seed, same files. */
export function generateSyntheticCatalogue(
  options: SyntheticCatalogueOptions = {},
): SyntheticCatalogueFiles {
  const defaults = SYNTHETIC_CATALOGUE_DEFAULTS;
  const size = options.size ?? defaults.size;
  const rng = createRng(options.seed ?? defaults.seed);
  const instructed = options.instructedFraction ?? defaults.instructedFraction;
  const [fewestGroups, mostGroups] = rangeOption(
    'optionGroups',
    options.optionGroups,
    defaults.optionGroups,
    0,
    OPTION_KINDS.length,
  );
  const [fewestValues, mostValues] = rangeOption(
    'optionValues',
    options.optionValues,
    defaults.optionValues,
    1,
    Math.max(...OPTION_KINDS.map(([, values]) => values.length)),
  );
  const used = new Set<string>();
  const products: Record<string, unknown>[] = [];
  const attributes: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < size; i++) {
    const [category, productCategory, query, nouns] = rng.pick(KINDS);
    const noun = rng.pick(nouns);
    const adjective = rng.pick(ADJECTIVES);
    const brand = rng.pick(BRANDS);
    const attrs = pickDistinct(rng, ATTRIBUTES, rng.intBetween(0, 4));
    const asin = makeAsin(rng, used);
    const name = `${brand} ${adjective[0]?.toUpperCase()}${adjective.slice(1)} ${noun
      .split(' ')
      .map((w) => `${w[0]?.toUpperCase()}${w.slice(1)}`)
      .join(' ')}${attrs[0] ? `, ${attrs[0]}` : ''} ${i + 1}`;
    const groups = pickDistinct(rng, OPTION_KINDS, rng.intBetween(fewestGroups, mostGroups));
    const customization: Record<string, { value: string; image: string }[]> = {};
    for (const [optName, values] of groups) {
      customization[optName] = pickDistinct(
        rng,
        values,
        rng.intBetween(fewestValues, mostValues),
      ).map((value, k) => ({
        value,
        image: `img/${asin}-${k}.jpg`,
      }));
    }
    const bullets = [
      `${adjective} ${noun} made for everyday use`,
      ...attrs.map((a) => `${a} design`),
      `ships from ${brand}`,
    ];
    products.push({
      name,
      full_description: `The ${brand} ${noun} is ${adjective}. ${attrs.join(', ')}.`,
      small_description: bullets,
      pricing: priceString(rng),
      customization_options: groups.length > 0 ? customization : null,
      images: [`img/${asin}.jpg`],
      product_category: productCategory,
      category,
      query,
      asin,
      // a field the engine deletes on load
      brand,
    });
    const record: Record<string, unknown> = { attributes: attrs };
    if (attrs.length > 0 && rng.next() < instructed) {
      const asked = pickDistinct(rng, attrs, rng.intBetween(1, Math.min(2, attrs.length)));
      record.instruction = `Find me ${asked.join(', ')} ${noun}`;
      record.instruction_attributes = asked;
    }
    attributes[asin] = record;
  }
  return { products, attributes };
}
