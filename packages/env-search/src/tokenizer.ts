/**
 * Tokenisation for the BM25 index, an explicit and recorded option (an index remembers the
 * options it was built with, and a query is tokenised the same way).
 */
import { createRequire } from 'node:module';
import { z } from 'zod';

// wink-porter2-stemmer (MIT) is CommonJS without types: load it through require, typed here.
const porter2 = createRequire(import.meta.url)('wink-porter2-stemmer') as (word: string) => string;

/** How text becomes index terms. */
export interface TokenizerOptions {
  /** Lower-case terms. Default true. */
  readonly lowercase: boolean;
  /** `'none'` keeps every term; `'english'` drops Lucene's 33 English stop words. Default `'english'`. */
  readonly stopWords: 'none' | 'english';
  /**
   * `'none'` keeps terms as they are; `'s-stemmer'` folds English plurals only (Harman's
   * S-stemmer: `-ies`→`-y`, `-es`→`-e`, `-s`→``, with its exceptions); `'porter2'` is the
   * Snowball English stemmer (wink-porter2-stemmer). Default `'porter2'`.
   */
  readonly stemming: 'none' | 's-stemmer' | 'porter2';
}

/** The schema of {@link TokenizerOptions} (for manifests and configs). */
export const tokenizerOptionsSchema = z.object({
  lowercase: z.boolean(),
  stopWords: z.enum(['none', 'english']),
  stemming: z.enum(['none', 's-stemmer', 'porter2']),
});

/**
 * The default: lower-casing, English stop words, Porter2 stemming (the best recall of the
 * settings compared in the README on the shipped corpus).
 */
export const DEFAULT_TOKENIZER: TokenizerOptions = {
  lowercase: true,
  stopWords: 'english',
  stemming: 'porter2',
};

/** Lower-casing only, as MiniSearch tokenises by default (the measured baseline). */
export const PLAIN_TOKENIZER: TokenizerOptions = {
  lowercase: true,
  stopWords: 'none',
  stemming: 'none',
};

/** Lucene's English stop-word set. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

// Splits on whitespace, line breaks and Unicode punctuation (MiniSearch's default separator).
const SEPARATOR = /[\n\r\p{Z}\p{P}]+/u;

/** Harman's S-stemmer (1991): folds English plural endings only. */
export function sStem(term: string): string {
  if (term.length > 3 && term.endsWith('ies') && !term.endsWith('eies') && !term.endsWith('aies')) {
    return `${term.slice(0, -3)}y`;
  }
  if (
    term.length > 3 &&
    term.endsWith('es') &&
    !term.endsWith('aes') &&
    !term.endsWith('ees') &&
    !term.endsWith('oes')
  ) {
    return term.slice(0, -1);
  }
  if (term.length > 2 && term.endsWith('s') && !term.endsWith('us') && !term.endsWith('ss')) {
    return term.slice(0, -1);
  }
  return term;
}

// Porter2 is pure and costs microseconds per word; words repeat, so memoise (bounded).
const porter2Cache = new Map<string, string>();
const PORTER2_CACHE_LIMIT = 500_000;

function porter2Cached(word: string): string {
  let stem = porter2Cache.get(word);
  if (stem === undefined) {
    stem = porter2(word);
    if (porter2Cache.size >= PORTER2_CACHE_LIMIT) porter2Cache.clear();
    porter2Cache.set(word, stem);
  }
  return stem;
}

/** Splits text into raw tokens (before {@link processToken}). */
export function splitTokens(text: string): string[] {
  return text.split(SEPARATOR);
}

/** Turns one raw token into an index term, or null to drop it. */
export function processToken(token: string, options: TokenizerOptions): string | null {
  if (token === '') return null;
  let term = options.lowercase ? token.toLowerCase() : token;
  if (options.stopWords === 'english' && ENGLISH_STOP_WORDS.has(term.toLowerCase())) return null;
  if (options.stemming === 's-stemmer') term = sStem(term);
  else if (options.stemming === 'porter2') term = porter2Cached(term);
  return term;
}

/** All index terms of a text. */
export function tokenize(text: string, options: TokenizerOptions = DEFAULT_TOKENIZER): string[] {
  const out: string[] = [];
  for (const token of splitTokens(text)) {
    const term = processToken(token, options);
    if (term !== null) out.push(term);
  }
  return out;
}
