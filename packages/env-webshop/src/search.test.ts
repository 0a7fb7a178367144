import { describe, expect, it } from 'vitest';
import type { Product } from './catalogue.ts';
import { loadCatalogue } from './data.ts';
import { analyze, documentText, quantizedLength, SearchEngine } from './search.ts';

function doc(asin: string, Title: string): Product {
  return {
    asin,
    name: Title,
    Title,
    Description: '',
    BulletPoints: [],
    Price: '$1.0',
    pricing: [1],
    options: [],
    MainImage: '',
    Rating: 'N.A.',
    Attributes: [],
    category: '',
    query: '',
    product_category: '',
    instructionText: null,
    instructionAttributes: null,
    humanInstructions: null,
  };
}

describe('search engine', () => {
  it('analyzes with possessives, stop words and the Porter stemmer', () => {
    expect(analyze("The men's Running Shoes for a runner")).toEqual([
      'men',
      'run',
      'shoe',
      'runner',
    ]);
  });

  it('indexes title, description, the first bullet point only, and the options', () => {
    const p = {
      ...doc('B1', 'Tee'),
      Description: 'Soft',
      BulletPoints: ['first', 'second'],
      options: [
        { name: 'color', values: ['navy', 'red'] },
        { name: 'size', values: ['s'] },
      ],
    };
    expect(documentText(p)).toBe('tee soft first color: navy, red, and size: s');
  });

  it('keeps lengths exact up to 23 and rounds longer ones to four significant bits', () => {
    expect([0, 1, 23, 24, 25, 40].map(quantizedLength)).toEqual([0, 1, 23, 24, 25, 40]);
    expect(quantizedLength(100)).toBeLessThanOrEqual(100);
    expect(quantizedLength(1000)).not.toBe(1000);
  });

  it('scores a tiny corpus by the Lucene 8 BM25 formula', () => {
    const engine = new SearchEngine([
      doc('B1', 'red shirt'),
      doc('B2', 'blue shirt shirt'),
      doc('B3', 'green hat'),
    ]);
    const hits = engine.searchScored('shirt');
    // df = 2, N = 3: idf = ln(1 + 1.5/2.5); avgdl = 7/3
    const idf = Math.log(1 + 1.5 / 2.5);
    const avgdl = 7 / 3;
    const bm25 = (tf: number, dl: number) =>
      (idf * tf) / (tf + 0.9 * (1 - 0.4 + (0.4 * dl) / avgdl));
    expect(hits.map((h) => h.asin)).toEqual(['B2', 'B1']);
    expect(hits[0]?.score).toBeCloseTo(bm25(2, 3), 5);
    expect(hits[1]?.score).toBeCloseTo(bm25(1, 2), 5);
  });

  it('breaks ties by ASIN, caps hits at 50 and is deterministic', () => {
    const engine = new SearchEngine(
      Array.from({ length: 80 }, (_, i) =>
        doc(`B${String(80 - i).padStart(3, '0')}`, 'same words'),
      ),
    );
    const hits = engine.search('same');
    expect(hits.length).toBe(50);
    expect(hits[0]).toBe('B001');
    expect(engine.search('same')).toEqual(hits);
  });

  it('finds a synthetic product by its name', () => {
    const products = loadCatalogue({ kind: 'synthetic', size: 200, seed: 1 });
    const engine = new SearchEngine(products);
    const found = products.filter((p) => engine.search(p.Title).includes(p.asin)).length;
    expect(found / products.length).toBeGreaterThan(0.9);
  });
});
