/**
 * Reading the WebShop data folder: products, attributes and human instructions, from an
 * option or `WEBSHOP_DATA`. The only module that touches the file system for data.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, DataError } from '@agentrl/core';
import { loadProducts, type Product, WEBSHOP_DATA_SOURCE } from './catalogue.ts';
import { generateSyntheticCatalogue, type SyntheticCatalogueOptions } from './synthetic.ts';

/** File names of the 1,000-product configuration verl-agent uses (`use_small`). */
export const DATA_FILES = {
  products: 'items_shuffle_1000.json',
  attributes: 'items_ins_v2_1000.json',
  humanInstructions: 'items_human_ins.json',
} as const;

/** Where the products come from. */
export type CatalogueSource =
  | { readonly kind: 'data'; readonly dataDir?: string; readonly humanInstructions?: boolean }
  | ({ readonly kind: 'synthetic' } & SyntheticCatalogueOptions)
  | { readonly kind: 'products'; readonly products: readonly Product[] };

/** The data folder: the option, else `WEBSHOP_DATA`; a clear error when neither is set. */
export function resolveDataDir(dataDir?: string): string {
  const dir = dataDir ?? process.env.WEBSHOP_DATA;
  if (!dir)
    throw new ConfigError(
      `dataDir is not set and WEBSHOP_DATA is empty: pass { dataDir } or set WEBSHOP_DATA to the WebShop data folder (${WEBSHOP_DATA_SOURCE}), or use { kind: "synthetic" }`,
      { details: { field: 'dataDir' } },
    );
  return dir;
}

function readJson(path: string): unknown {
  if (!existsSync(path))
    throw new DataError(
      `${path} is missing: the WebShop data folder must hold it (${WEBSHOP_DATA_SOURCE}), or use the synthetic catalogue`,
      { details: { file: path } },
    );
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new DataError(
      `${path} is not valid JSON (${String(cause)}); re-download it (${WEBSHOP_DATA_SOURCE})`,
      {
        cause,
        details: { file: path },
      },
    );
  }
}

/** Whether the real products file is present in `dataDir`. */
export function hasProductsFile(dataDir: string): boolean {
  return existsSync(join(dataDir, DATA_FILES.products));
}

/** Loads products from a source. */
export function loadCatalogue(source: CatalogueSource): Product[] {
  if (source.kind === 'products') return [...source.products];
  if (source.kind === 'synthetic') {
    const files = generateSyntheticCatalogue(source);
    return loadProducts(files.products, files.attributes, undefined, {
      products: 'synthetic products',
      attributes: 'synthetic attributes',
    });
  }
  const dir = resolveDataDir(source.dataDir);
  const products = join(dir, DATA_FILES.products);
  const attributes = join(dir, DATA_FILES.attributes);
  const human = join(dir, DATA_FILES.humanInstructions);
  return loadProducts(
    readJson(products),
    readJson(attributes),
    source.humanInstructions ? readJson(human) : undefined,
    {
      products,
      attributes,
      humanInstructions: human,
    },
  );
}
