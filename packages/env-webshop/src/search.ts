/**
 * WebShop's search engine (pyserini's `LuceneSearcher` over its product index): one document per product, Lucene 8 BM25 (k1 = 0.9, b = 0.4) with
 * one-byte length norms, a bag-of-words query with term counts as boosts, top 50 hits.
 *
 * Ranking approximates pyserini's Lucene index: the analyzer here is `Intl.Segmenter` word
 * segmentation (for Lucene's UAX #29 StandardTokenizer), English possessive removal, lower-casing,
 * Lucene's 33 English stop words and the original Porter stemmer (`stemmer` on npm); tokenizer edge
 * cases (numbers with dots, hyphens, units) and float ties can differ from Java Lucene.
 */
import { stemmer } from 'stemmer';
import type { Product } from './catalogue.ts';

/** Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`. */
export const LUCENE_STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
const stemCache = new Map<string, string>();

/** The analyzer chain: word segments → possessive removal → lower case → stop words → Porter. */
export function analyze(text: string): string[] {
  const out: string[] = [];
  for (const s of segmenter.segment(text)) {
    if (!s.isWordLike) continue;
    let w = s.segment.toLowerCase();
    if (w.endsWith("'s") || w.endsWith('’s')) w = w.slice(0, -2);
    if (w.length === 0 || LUCENE_STOP_WORDS.has(w)) continue;
    let stem = stemCache.get(w);
    if (stem === undefined) {
      stem = /^[a-z]+$/.test(w) ? stemmer(w) : w;
      if (stemCache.size < 200_000) stemCache.set(w, stem);
    }
    out.push(stem);
  }
  return out;
}

/** The indexed text of a product: Title, Description, first bullet point, options (lower case). */
export function documentText(p: Product): string {
  const optionText = p.options.map((g) => `${g.name}: ${g.values.join(', ')}`).join(', and ');
  return `${p.Title} ${p.Description} ${p.BulletPoints[0] ?? ''} ${optionText}`.toLowerCase();
}

// Lucene's SmallFloat int4 encoding of document lengths into one byte (BM25 norms).
function longToInt4(i: number): number {
  const numBits = 32 - Math.clz32(i);
  if (numBits < 4) return i;
  const shift = numBits - 4;
  return ((i >>> shift) & 0x07) | ((shift + 1) << 3);
}
function int4ToLong(i: number): number {
  const bits = i & 0x07;
  const shift = (i >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}
const NUM_FREE_VALUES = 255 - longToInt4(0x7fffffff);

/** `SmallFloat.intToByte4` then `byte4ToInt`: the length BM25 sees for a document of `length` terms. */
export function quantizedLength(length: number): number {
  const b =
    length < NUM_FREE_VALUES ? length : NUM_FREE_VALUES + longToInt4(length - NUM_FREE_VALUES);
  return b < NUM_FREE_VALUES ? b : NUM_FREE_VALUES + int4ToLong(b - NUM_FREE_VALUES);
}

/** Options of the engine. */
export interface SearchOptions {
  readonly k1?: number;
  readonly b?: number;
  /** Hits returned (`SEARCH_RETURN_N`, 50). */
  readonly topK?: number;
}

const f = Math.fround;

/** A BM25 index over a catalogue. */
export class SearchEngine {
  readonly #asins: string[];
  readonly #postings = new Map<string, { docs: Int32Array; tfs: Int32Array }>();
  /** Per document: 1 / (k1 · (1 − b + b · dl / avgdl)), as Lucene caches it in float. */
  readonly #normInverse: Float64Array;
  readonly #k1: number;
  readonly #topK: number;

  constructor(products: readonly Product[], options: SearchOptions = {}) {
    this.#k1 = options.k1 ?? 0.9;
    const b = options.b ?? 0.4;
    this.#topK = options.topK ?? 50;
    this.#asins = products.map((p) => p.asin);
    const lengths: number[] = [];
    const building = new Map<string, { docs: number[]; tfs: number[] }>();
    let total = 0;
    products.forEach((p, d) => {
      const terms = analyze(documentText(p));
      lengths.push(terms.length);
      total += terms.length;
      const counts = new Map<string, number>();
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, c] of counts) {
        let list = building.get(t);
        if (!list) {
          list = { docs: [], tfs: [] };
          building.set(t, list);
        }
        list.docs.push(d);
        list.tfs.push(c);
      }
    });
    for (const [t, l] of building)
      this.#postings.set(t, { docs: Int32Array.from(l.docs), tfs: Int32Array.from(l.tfs) });
    const avgdl = f(products.length === 0 ? 1 : total / products.length);
    this.#normInverse = Float64Array.from(lengths, (len) =>
      f(1 / f(this.#k1 * f(f(1 - b) + f(f(b * quantizedLength(len)) / avgdl)))),
    );
  }

  /** Number of indexed documents. */
  get size(): number {
    return this.#asins.length;
  }

  /** Ranked ASINs for a query (at most `topK`), ties broken by ASIN. */
  search(query: string): string[] {
    return this.searchScored(query).map((h) => h.asin);
  }

  /** Ranked hits with their scores. */
  searchScored(query: string): { asin: string; score: number }[] {
    const boosts = new Map<string, number>();
    for (const t of analyze(query)) boosts.set(t, (boosts.get(t) ?? 0) + 1);
    const n = this.#asins.length;
    const scores = new Map<number, number>();
    for (const [term, boost] of boosts) {
      const posting = this.#postings.get(term);
      if (!posting) continue;
      const df = posting.docs.length;
      const idf = f(Math.log(1 + (n - df + 0.5) / (df + 0.5)));
      const weight = f(boost * idf);
      for (let k = 0; k < df; k++) {
        const d = posting.docs[k] as number;
        const tf = posting.tfs[k] as number;
        const s = f(weight - f(weight / f(1 + f(tf * (this.#normInverse[d] as number)))));
        scores.set(d, f((scores.get(d) ?? 0) + s));
      }
    }
    const hits = [...scores].map(([d, score]) => ({ asin: this.#asins[d] as string, score }));
    hits.sort((x, y) => y.score - x.score || (x.asin < y.asin ? -1 : x.asin > y.asin ? 1 : 0));
    return hits.slice(0, this.#topK);
  }
}
