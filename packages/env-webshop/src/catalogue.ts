/**
 * Products as the WebShop engine holds them after `load_products`, and loading them
 * from the raw JSON records. Pure: the caller reads the files (see `data.ts`).
 */
import { DataError } from '@agentrl/core';
import { pyFloatRepr, pyStrip } from './python-format.ts';

/** One option group of a product: lower-cased name, normalised values in file order. */
export interface OptionGroup {
  readonly name: string;
  readonly values: readonly string[];
}

/** A human-written instruction (`items_human_ins.json`). */
export interface HumanInstruction {
  readonly instruction: string;
  readonly instructionAttributes: readonly string[];
  readonly instructionOptions: readonly string[];
}

/** A product after loading (the fields the env, the site and the reward use). */
export interface Product {
  readonly asin: string;
  /** The raw `name` (= `Title`); the reward's type check reads it. */
  readonly name: string;
  readonly Title: string;
  readonly Description: string;
  readonly BulletPoints: readonly string[];
  /** The displayed price: `$12.99`, `$5.0 to $9.5`, `$100.0` when missing. */
  readonly Price: string;
  /** The parsed prices (one or two values). */
  readonly pricing: readonly number[];
  readonly options: readonly OptionGroup[];
  readonly MainImage: string;
  readonly Rating: string;
  readonly Attributes: readonly string[];
  readonly category: string;
  readonly query: string;
  readonly product_category: string;
  /** Synthetic instruction from the attribute file, or null. */
  readonly instructionText: string | null;
  readonly instructionAttributes: readonly string[] | null;
  /** Human instructions for this ASIN, when the human file was given. */
  readonly humanInstructions: readonly HumanInstruction[] | null;
}

/** What `items_ins_v2_1000.json` holds per ASIN. */
export interface AttributeRecord {
  readonly attributes?: readonly string[];
  readonly instruction?: string | null;
  readonly instruction_attributes?: readonly string[] | null;
}

/** Where loading was told the files came from, for error messages. */
export interface SourceNames {
  readonly products: string;
  readonly attributes: string;
  readonly humanInstructions?: string;
}

/** Where the real data comes from (the reference repository's download step). */
export const WEBSHOP_DATA_SOURCE =
  "see the @agentrl/env-webshop README, 'Missing data': the files princeton-nlp/WebShop's setup.sh downloads";

function bad(file: string, field: string, value: unknown, fix: string): DataError {
  const shown = JSON.stringify(value)?.slice(0, 80) ?? String(value);
  return new DataError(`${file}: field "${field}" is ${shown}; ${fix} (${WEBSHOP_DATA_SOURCE})`, {
    details: { file, field },
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringField(
  rec: Record<string, unknown>,
  key: string,
  file: string,
  where: string,
): string {
  const v = rec[key];
  if (typeof v === 'string') return v;
  throw bad(file, `${where}.${key}`, v, 'expected a string');
}

function stringList(v: unknown, file: string, field: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw bad(file, field, v, 'expected a list of strings');
  return v as string[];
}

/** Parses `pricing` as the engine's `load_products` does. */
export function parsePricing(
  pricing: unknown,
  file = 'products',
  field = 'pricing',
): {
  pricing: number[];
  Price: string;
} {
  if (pricing === undefined || pricing === null || pricing === '' || pricing === false) {
    return { pricing: [100], Price: '$100.0' };
  }
  if (typeof pricing !== 'string') throw bad(file, field, pricing, 'expected a "$12.99" string');
  const values = pricing
    .split('$')
    .slice(1)
    .map((piece) => {
      const digits = piece.replace(/[^\d.]/g, '');
      if (!/^(\d+\.?\d*|\.\d+)$/.test(digits))
        throw bad(file, field, pricing, 'every "$" must be followed by a decimal number');
      return Number(digits);
    });
  if (values.length === 0) throw bad(file, field, pricing, 'expected at least one "$" price');
  if (values.length === 1)
    return { pricing: values, Price: `$${pyFloatRepr(values[0] as number)}` };
  const [a, b] = values as [number, number];
  return { pricing: [a, b], Price: `$${pyFloatRepr(a)} to $${pyFloatRepr(b)}` };
}

/** Normalises `customization_options` as `load_products` does. Later duplicate names keep the first slot. */
export function parseOptions(raw: unknown, file: string, where: string): OptionGroup[] {
  if (!raw) return [];
  if (!isRecord(raw)) throw bad(file, `${where}.customization_options`, raw, 'expected an object');
  const groups = new Map<string, string[]>();
  for (const [name, contents] of Object.entries(raw)) {
    if (contents === null) continue;
    if (!Array.isArray(contents))
      throw bad(file, `${where}.customization_options.${name}`, contents, 'expected a list');
    const values = contents.map((c, i) => {
      if (!isRecord(c) || typeof c.value !== 'string')
        throw bad(
          file,
          `${where}.customization_options.${name}[${i}].value`,
          c,
          'expected a string',
        );
      return c.value.trim().replaceAll('/', ' | ').toLowerCase();
    });
    groups.set(name.toLowerCase(), values);
  }
  return [...groups].map(([name, values]) => ({ name, values }));
}

/** Loads products from parsed JSON as `load_products`: skip rules, key cleaning, prices, options, attributes. */
export function loadProducts(
  rawProducts: unknown,
  rawAttributes: unknown,
  rawHuman: unknown,
  sources: SourceNames,
): Product[] {
  if (!Array.isArray(rawProducts))
    throw bad(sources.products, '(root)', typeof rawProducts, 'expected a JSON array of products');
  if (!isRecord(rawAttributes))
    throw bad(
      sources.attributes,
      '(root)',
      typeof rawAttributes,
      'expected an object keyed by ASIN',
    );
  if (rawHuman !== undefined && rawHuman !== null && !isRecord(rawHuman))
    throw bad(
      sources.humanInstructions ?? 'human instructions',
      '(root)',
      typeof rawHuman,
      'expected an object keyed by ASIN',
    );
  const file = sources.products;
  const seen = new Set<string>();
  const out: Product[] = [];
  rawProducts.forEach((rec: unknown, i: number) => {
    const where = `[${i}]`;
    if (!isRecord(rec)) throw bad(file, where, rec, 'expected a product object');
    const asin = stringField(rec, 'asin', file, where);
    if (asin === 'nan' || asin.length > 10 || seen.has(asin)) return;
    seen.add(asin);
    const small = rec.small_description;
    const BulletPoints = Array.isArray(small)
      ? stringList(small, file, `${where}.small_description`)
      : [String(small ?? '')];
    const { pricing, Price } = parsePricing(rec.pricing, file, `${where}.pricing`);
    const attr = rawAttributes[asin];
    const attrRec = isRecord(attr) ? (attr as AttributeRecord) : undefined;
    const Attributes =
      attrRec && Array.isArray(attrRec.attributes)
        ? stringList(attrRec.attributes, sources.attributes, `${asin}.attributes`)
        : ['DUMMY_ATTR'];
    const instruction = attrRec?.instruction;
    const instructionAttributes = attrRec?.instruction_attributes;
    let humanInstructions: HumanInstruction[] | null = null;
    const humanList = isRecord(rawHuman) ? rawHuman[asin] : undefined;
    if (Array.isArray(humanList)) {
      const hfile = sources.humanInstructions ?? 'human instructions';
      humanInstructions = humanList.map((h: unknown, k: number) => {
        if (!isRecord(h)) throw bad(hfile, `${asin}[${k}]`, h, 'expected an object');
        return {
          instruction: stringField(h, 'instruction', hfile, `${asin}[${k}]`),
          instructionAttributes: stringList(
            h.instruction_attributes,
            hfile,
            `${asin}[${k}].instruction_attributes`,
          ),
          instructionOptions: stringList(
            h.instruction_options,
            hfile,
            `${asin}[${k}].instruction_options`,
          ),
        };
      });
    }
    const images = rec.images;
    const name = stringField(rec, 'name', file, where);
    out.push({
      asin,
      name,
      Title: name,
      Description:
        typeof rec.full_description === 'string'
          ? rec.full_description
          : String(rec.full_description ?? ''),
      BulletPoints,
      Price,
      pricing,
      options: parseOptions(rec.customization_options, file, where),
      MainImage: Array.isArray(images) && typeof images[0] === 'string' ? images[0] : '',
      Rating: 'N.A.',
      Attributes,
      category: typeof rec.category === 'string' ? rec.category : '',
      query: pyStrip((typeof rec.query === 'string' ? rec.query : '').toLowerCase()),
      product_category: typeof rec.product_category === 'string' ? rec.product_category : '',
      instructionText: typeof instruction === 'string' ? instruction : null,
      instructionAttributes: Array.isArray(instructionAttributes)
        ? stringList(instructionAttributes, sources.attributes, `${asin}.instruction_attributes`)
        : null,
      humanInstructions,
    });
  });
  return out;
}
