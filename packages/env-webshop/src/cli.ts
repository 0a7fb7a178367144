#!/usr/bin/env node
/**
 * `webshop serve [--port N] [--host H] [--data DIR | --synthetic N] [--seed S]`: opens the local
 * shop site. The only module that prints.
 */
import { parseArgs } from 'node:util';
import { dropArgsSeparator } from '@agentrl/core';
import { WEBSHOP_DATA_SOURCE } from './catalogue.ts';
import { hasProductsFile, resolveDataDir } from './data.ts';
import { startWebshopServer } from './server.ts';
import { Shop } from './shop.ts';

const { positionals, values } = parseArgs({
  args: dropArgsSeparator(process.argv.slice(2)),
  allowPositionals: true,
  options: {
    port: { type: 'string', default: '3000' },
    host: { type: 'string', default: '127.0.0.1' },
    data: { type: 'string' },
    synthetic: { type: 'string' },
    seed: { type: 'string', default: '0' },
    human: { type: 'boolean', default: false },
  },
});

if (positionals[0] !== 'serve') {
  console.error(
    'usage: webshop serve [--port 3000] [--host 127.0.0.1] [--data DIR | --synthetic 200] [--seed 0] [--human]',
  );
  process.exit(2);
}

// The real files when asked for (--data, WEBSHOP_DATA) or present in the default data folder.
const asked = values.data !== undefined || process.env.WEBSHOP_DATA !== undefined;
const useData =
  values.synthetic === undefined && (asked || hasProductsFile(resolveDataDir(values.data)));
if (useData && !hasProductsFile(resolveDataDir(values.data))) {
  console.error(
    `items_shuffle_1000.json is not in ${resolveDataDir(values.data)}; \`agentrl data fetch webshop --dir ${resolveDataDir(values.data)}\` downloads it, or use --synthetic 200 (${WEBSHOP_DATA_SOURCE})`,
  );
  process.exit(1);
}
const shop = Shop.create({
  catalogue: useData
    ? { kind: 'data', dataDir: values.data, humanInstructions: values.human }
    : { kind: 'synthetic', size: Number(values.synthetic ?? 200), seed: Number(values.seed) },
  goals: values.human ? 'human' : 'synthetic',
});
const server = await startWebshopServer({
  shop,
  port: Number(values.port),
  host: values.host,
  goalSeed: Number(values.seed),
});
console.log(
  `WebShop at ${server.url}/fixed_0 (${shop.products.length} products; /fixed_<n> plays goal n)`,
);
const stop = () => {
  server.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
