/**
 * The other npm BM25 libraries we compared against, wrapped to the same `(query, k) → contents[]`
 * shape. Settings are each library's defaults unless noted.
 */
import { createRequire } from 'node:module';
import type { Passage } from '@agentrl/env-search';
import { create, insertMultiple, search } from '@orama/orama';
import MiniSearch from 'minisearch';

/** A built index: search by query, top k contents in rank order. */
export type SearchFunction = (query: string, k: number) => string[];

/** MiniSearch 7.2 with its defaults (BM25+ k 1.2, b 0.7, d 0.5; lower-casing only). */
export function buildMiniSearch(passages: readonly Passage[]): SearchFunction {
  const index = new MiniSearch<{ i: number; c: string }>({ idField: 'i', fields: ['c'] });
  index.addAll(passages.map((p, i) => ({ i, c: p.contents })));
  return (query, k) =>
    index
      .search(query)
      .slice(0, k)
      .map((hit) => (passages[hit.id as number] as Passage).contents);
}

/** Orama 3 (BM25, its default English tokenizer, threshold 1 = any term matches). */
export async function buildOrama(passages: readonly Passage[]): Promise<SearchFunction> {
  const db = create({ schema: { contents: 'string' } as const });
  await insertMultiple(
    db,
    passages.map((p, i) => ({ id: String(i), contents: p.contents })),
  );
  return (query, k) => {
    const result = search(db, { term: query, properties: ['contents'], limit: k, threshold: 1 });
    if (result instanceof Promise) throw new Error('Orama search unexpectedly async');
    return result.hits.map((hit) => String(hit.document.contents));
  };
}

interface WinkBm25 {
  defineConfig(config: unknown): void;
  definePrepTasks(tasks: unknown[]): void;
  addDoc(doc: Record<string, string>, id: number): void;
  consolidate(): void;
  search(text: string, limit?: number): Array<[number, number]>;
}

const require = createRequire(import.meta.url);

/** wink-bm25-text-search 3 (classic BM25 k1 1.2, b 0.75), with wink-nlp-utils' lower-case, tokenize, stop words and stemming. */
export function buildWink(passages: readonly Passage[]): SearchFunction {
  const factory = require('wink-bm25-text-search') as () => WinkBm25;
  const nlp = require('wink-nlp-utils') as {
    string: Record<string, unknown>;
    tokens: Record<string, unknown>;
  };
  const engine = factory();
  engine.defineConfig({ fldWeights: { body: 1 }, bm25Params: { k1: 1.2, b: 0.75, k: 1 } });
  engine.definePrepTasks([
    nlp.string.lowerCase,
    nlp.string.removeExtraSpaces,
    nlp.string.tokenize0,
    nlp.tokens.removeWords,
    nlp.tokens.stem,
  ]);
  passages.forEach((p, i) => {
    engine.addDoc({ body: p.contents }, i);
  });
  engine.consolidate();
  return (query, k) => engine.search(query, k).map(([id]) => (passages[id] as Passage).contents);
}
