/**
 * Reading the WebShop data folder: products, attributes and human instructions, from an
 * option or the default folder (`resolveDataDir` of `@agentrl/core/data`: `WEBSHOP_DATA`,
 * `$AGENTRL_DATA/webshop`, a source checkout's shared folder, the user cache folder). The only
 * module that touches the file system for data.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';
import { missingDataFix, resolveDataDir as resolveDefaultDataDir } from '@agentrl/core/data';
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

/**
 * The data folder: the option, else the default one (`WEBSHOP_DATA` when set, else
 * `$AGENTRL_DATA/webshop`, else `data/webshop` of a source checkout's shared folder where that
 * exists, else `webshop` in the user cache folder, where `agentrl data fetch webshop` puts it).
 */
export function resolveDataDir(dataDir?: string): string {
  return dataDir ?? resolveDefaultDataDir('webshop').dir;
}

/** `given`: whether the folder came from an option (else it is the default folder). */
function readJson(path: string, given: boolean): unknown {
  if (!existsSync(path))
    throw new DataError(
      given
        ? `${path} is missing: the WebShop data folder must hold it (\`agentrl data fetch webshop --dir <folder>\` downloads it; ${WEBSHOP_DATA_SOURCE}), or use the synthetic catalogue`
        : `${path} is missing: ${missingDataFix('webshop')}; or pass { dataDir }, or use { kind: "synthetic" } (${WEBSHOP_DATA_SOURCE})`,
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
  const given = source.dataDir !== undefined;
  return loadProducts(
    readJson(products, given),
    readJson(attributes, given),
    source.humanInstructions ? readJson(human, given) : undefined,
    {
      products,
      attributes,
      humanInstructions: human,
    },
  );
}
