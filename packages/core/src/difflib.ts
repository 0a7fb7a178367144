/**
 * A faithful port of CPython's `difflib.SequenceMatcher(None, a, b, autojunk).ratio()` over
 * Unicode code points (CPython's `Lib/difflib.py`), built on flat `Int32Array`s
 * instead of dicts. GiGPO's similarity grouping and WebShop's thefuzz ratio both use it.
 *
 * Strings are first encoded as dense symbol ids (an {@link Alphabet}); the second sequence `b`
 * is indexed once ({@link PreparedSequence}: its `b2j` as a CSR table, popular elements removed
 * by the autojunk rule, plus its full multiset for the quick upper bound) so that similarity
 * grouping can compare many anchors against one representative without re-indexing it.
 */
import { ConfigError, InvalidInputError } from './errors.ts';

/** Maps code points to dense symbol ids 0, 1, 2, … by first appearance. */
export class Alphabet {
  private readonly ascii = new Int32Array(128).fill(-1);
  private readonly other = new Map<number, number>();
  private nextId = 0;

  /** Number of symbols seen so far. */
  get size(): number {
    return this.nextId;
  }

  /** The code points of `s` as symbol ids (surrogate pairs joined; a lone surrogate is one code point). */
  encode(s: string): Int32Array {
    const out = new Int32Array(s.length);
    const n = this.encodeInto(s, out);
    return n === out.length ? out : out.slice(0, n);
  }

  /**
   * {@link encode} into `out` (at least `s.length` long, a code point never takes more than its
   * UTF-16 units); returns how many symbols were written.
   */
  encodeInto(s: string, out: Int32Array): number {
    const length = s.length;
    const ascii = this.ascii;
    let n = 0;
    for (let k = 0; k < length; k++) {
      let cp = s.charCodeAt(k);
      if (cp < 128) {
        let id = ascii[cp] as number;
        if (id < 0) {
          id = this.nextId++;
          ascii[cp] = id;
        }
        out[n++] = id;
        continue;
      }
      if (cp >= 0xd800 && cp <= 0xdbff && k + 1 < length) {
        const lo = s.charCodeAt(k + 1);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          k++;
        }
      }
      let id = this.other.get(cp);
      if (id === undefined) {
        id = this.nextId++;
        this.other.set(cp, id);
      }
      out[n++] = id;
    }
    return n;
  }

  /** Forgets every symbol: the next code point encoded gets id 0 again. */
  clear(): void {
    this.ascii.fill(-1);
    if (this.other.size > 0) this.other.clear();
    this.nextId = 0;
  }
}

/** A sequence with its multiset, ready to be the first argument `a` of a comparison. */
export interface EncodedSequence {
  readonly seq: Int32Array;
  /** Distinct symbols of `seq`, in order of first appearance. */
  readonly symbols: Int32Array;
  /** Occurrences of `symbols[k]` in `seq`. */
  readonly counts: Int32Array;
}

/** The dense multiset of a sequence `b` (CPython's `fullbcount`, popular elements included). */
export interface SymbolHistogram {
  /** Symbols < this bound may occur in `b` (symbols of later strings do not). */
  readonly indexedSymbols: number;
  /** Occurrences of every symbol s < indexedSymbols. */
  readonly fullCount: Int32Array;
}

/** A sequence indexed to be the second argument `b` (CPython's `set_seq2` / `__chain_b`). */
export interface PreparedSequence extends EncodedSequence, SymbolHistogram {
  /** b2j as CSR: positions of symbol s are `b2jPos[b2jStart[s] .. b2jStart[s + 1]]`, increasing. */
  readonly b2jStart: Int32Array;
  readonly b2jPos: Int32Array;
}

/** The dense histogram of an encoded sequence. */
export function histogramOf(encoded: EncodedSequence): SymbolHistogram {
  const { symbols, counts } = encoded;
  let maxSymbol = -1;
  for (let k = 0; k < symbols.length; k++) maxSymbol = Math.max(maxSymbol, symbols[k] as number);
  const fullCount = new Int32Array(maxSymbol + 1);
  for (let k = 0; k < symbols.length; k++) fullCount[symbols[k] as number] = counts[k] as number;
  return { indexedSymbols: maxSymbol + 1, fullCount };
}

// Per-symbol counter reused by encodeSequence (all zero between calls).
let symbolScratch = new Int32Array(256);

/**
 * Adds the multiset of a symbol sequence (distinct symbols and their counts). `symbolBound` is
 * an exclusive bound of the symbols (an {@link Alphabet}'s `size`); computed when absent.
 */
export function encodeSequence(seq: Int32Array, symbolBound = maxSymbol(seq) + 1): EncodedSequence {
  if (symbolScratch.length < symbolBound) {
    symbolScratch = new Int32Array(Math.max(symbolBound, symbolScratch.length * 2));
  }
  const scratch = symbolScratch;
  const first = new Int32Array(Math.min(seq.length, symbolBound));
  let distinct = 0;
  for (let k = 0; k < seq.length; k++) {
    const s = seq[k] as number;
    const c = scratch[s] as number;
    if (c === 0) first[distinct++] = s;
    scratch[s] = c + 1;
  }
  const symbols = first.subarray(0, distinct);
  const counts = new Int32Array(distinct);
  for (let k = 0; k < distinct; k++) {
    const s = symbols[k] as number;
    counts[k] = scratch[s] as number;
    scratch[s] = 0;
  }
  return { seq, symbols, counts };
}

function maxSymbol(seq: Int32Array): number {
  let max = -1;
  for (let k = 0; k < seq.length; k++) if ((seq[k] as number) > max) max = seq[k] as number;
  return max;
}

/**
 * Indexes `b` (CPython `__chain_b`). Autojunk: when on and len(b) ≥ 200,
 * every element occurring more than ⌊len/100⌋ + 1 times is "popular" and left out of b2j.
 */
export function prepareSequence(
  encoded: EncodedSequence,
  autojunk: boolean,
  histogram: SymbolHistogram = histogramOf(encoded),
): PreparedSequence {
  const { seq, symbols, counts } = encoded;
  const n = seq.length;
  const { indexedSymbols, fullCount } = histogram;
  const popularLimit = autojunk && n >= 200 ? Math.floor(n / 100) + 1 : Number.POSITIVE_INFINITY;
  const size = new Int32Array(indexedSymbols + 1);
  for (let k = 0; k < symbols.length; k++) {
    const c = counts[k] as number;
    if (c <= popularLimit) size[(symbols[k] as number) + 1] = c;
  }
  for (let s = 0; s < indexedSymbols; s++)
    size[s + 1] = (size[s + 1] as number) + (size[s] as number);
  const b2jStart = size;
  const b2jPos = new Int32Array(b2jStart[indexedSymbols] as number);
  const fill = b2jStart.slice(0, indexedSymbols);
  for (let j = 0; j < n; j++) {
    const s = seq[j] as number;
    if ((b2jStart[s + 1] as number) > (b2jStart[s] as number)) {
      b2jPos[fill[s] as number] = j;
      fill[s] = (fill[s] as number) + 1;
    }
  }
  return { seq, symbols, counts, b2jStart, b2jPos, indexedSymbols, fullCount };
}

/**
 * CPython's `real_quick_ratio` numerator, 2·min(len a, len b): an upper bound of 2·M.
 */
export function lengthBound(a: EncodedSequence, b: EncodedSequence): number {
  return 2 * Math.min(a.seq.length, b.seq.length);
}

/**
 * CPython's `quick_ratio` match count: the size of the multiset intersection, an upper bound of
 * M (every matched pair uses one equal element of each side).
 */
export function multisetBound(a: EncodedSequence, b: SymbolHistogram): number {
  const { symbols, counts } = a;
  const full = b.fullCount;
  const bound = b.indexedSymbols;
  let total = 0;
  for (let k = 0; k < symbols.length; k++) {
    const s = symbols[k] as number;
    if (s < bound) {
      const x = counts[k] as number;
      const y = full[s] as number;
      total += Math.min(x, y);
    }
  }
  return total;
}

// Scratch buffers reused across calls (grown on demand): j2len of the previous and current row
// of find_longest_match, indexed j + 1, with the list of entries to clear.
let prevLen = new Int32Array(0);
let curLen = new Int32Array(0);
let prevTouched = new Int32Array(0);
let curTouched = new Int32Array(0);
let stack = new Int32Array(0);

function ensureScratch(lb: number, la: number): void {
  if (prevLen.length < lb + 1) {
    const size = Math.max(lb + 1, prevLen.length * 2);
    prevLen = new Int32Array(size);
    curLen = new Int32Array(size);
    prevTouched = new Int32Array(size);
    curTouched = new Int32Array(size);
  }
  const stackSize = 4 * (Math.min(la, lb) + 2);
  if (stack.length < stackSize) stack = new Int32Array(Math.max(stackSize, stack.length * 2));
}

/**
 * M: the total size of CPython's matching blocks of `a` against `b` (`get_matching_blocks`).
 *
 * With a finite `target`, the walk stops as soon as the comparison `M >= target` is decided, and
 * the value returned is on the same side of `target` as the exact M: a partial sum once it
 * reaches `target` (blocks, once recorded, are final), or an upper bound below `target` (the
 * blocks found plus, for every range still to search, the shorter of its two sides).
 */
export function matchingCharacters(
  a: Int32Array,
  b: PreparedSequence,
  target = Number.POSITIVE_INFINITY,
): number {
  return matchingBlocksTotal(
    a,
    a.length,
    b.seq,
    b.seq.length,
    b.b2jStart,
    b.b2jPos,
    b.indexedSymbols,
    target,
  );
}

/** {@link matchingCharacters} on the first `la` / `lb` elements of `a` / `bseq`, b2j given as CSR. */
function matchingBlocksTotal(
  a: Int32Array,
  la: number,
  bseq: Int32Array,
  lb: number,
  b2jStart: Int32Array,
  b2jPos: Int32Array,
  indexedSymbols: number,
  target: number,
): number {
  const decide = target !== Number.POSITIVE_INFINITY;
  ensureScratch(lb, la);
  let prev = prevLen;
  let cur = curLen;
  let prevT = prevTouched;
  let curT = curTouched;
  let matches = 0;
  // matches + Σ over pending ranges of min(ahi − alo, bhi − blo): an upper bound of the final M.
  let potential = Math.min(la, lb);
  // get_matching_blocks: an explicit stack of ranges (alo, ahi, blo, bhi); the order in which
  // ranges are visited does not change the total.
  const st = stack;
  let sp = 0;
  st[sp++] = 0;
  st[sp++] = la;
  st[sp++] = 0;
  st[sp++] = lb;
  while (sp > 0) {
    const bhi = st[--sp] as number;
    const blo = st[--sp] as number;
    const ahi = st[--sp] as number;
    const alo = st[--sp] as number;
    // find_longest_match(alo, ahi, blo, bhi), as CPython.
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let prevCount = 0;
    for (let i = alo; i < ahi; i++) {
      let curCount = 0;
      const s = a[i] as number;
      if (s < indexedSymbols) {
        const end = b2jStart[s + 1] as number;
        for (let p = b2jStart[s] as number; p < end; p++) {
          const j = b2jPos[p] as number;
          if (j < blo) continue;
          if (j >= bhi) break;
          const k = (prev[j] as number) + 1;
          cur[j + 1] = k;
          curT[curCount++] = j + 1;
          // Strict >: the earliest (i, then j) of the longest matches wins.
          if (k > bestsize) {
            besti = i - k + 1;
            bestj = j - k + 1;
            bestsize = k;
          }
        }
      }
      for (let t = 0; t < prevCount; t++) prev[prevT[t] as number] = 0;
      const swap = prev;
      prev = cur;
      cur = swap;
      const swapT = prevT;
      prevT = curT;
      curT = swapT;
      prevCount = curCount;
    }
    for (let t = 0; t < prevCount; t++) prev[prevT[t] as number] = 0;
    // Extend over equal elements on both sides (popular ones included; with no junk function
    // CPython's junk-extension loops never run).
    while (besti > alo && bestj > blo && a[besti - 1] === bseq[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (
      besti + bestsize < ahi &&
      bestj + bestsize < bhi &&
      a[besti + bestsize] === bseq[bestj + bestsize]
    ) {
      bestsize++;
    }
    potential -= Math.min(ahi - alo, bhi - blo);
    if (bestsize > 0) {
      matches += bestsize;
      potential += bestsize;
      if (alo < besti && blo < bestj) {
        st[sp++] = alo;
        st[sp++] = besti;
        st[sp++] = blo;
        st[sp++] = bestj;
        potential += Math.min(besti - alo, bestj - blo);
      }
      if (besti + bestsize < ahi && bestj + bestsize < bhi) {
        st[sp++] = besti + bestsize;
        st[sp++] = ahi;
        st[sp++] = bestj + bestsize;
        st[sp++] = bhi;
        potential += Math.min(ahi - besti - bestsize, bhi - bestj - bestsize);
      }
    }
    if (decide && (matches >= target || potential < target)) {
      sp = 0;
      if (matches < target) matches = potential;
    }
  }
  prevLen = prev;
  curLen = cur;
  prevTouched = prevT;
  curTouched = curT;
  return matches;
}

/** CPython `_calculate_ratio`: 2·M / T as a float64, or 1.0 when both sequences are empty. */
export function ratioOf(matches: number, total: number): number {
  return total === 0 ? 1.0 : (2.0 * matches) / total;
}

/** Options of {@link sequenceMatcherRatio}. */
export interface SequenceMatcherOptions {
  /** CPython's autojunk heuristic (popular elements of b when len(b) ≥ 200). Default true. */
  autojunk?: boolean;
}

/**
 * `difflib.SequenceMatcher(None, a, b, autojunk).ratio()` over code points, bit-exact
 * (as CPython's, including float rounding). Not symmetric: autojunk examines `b` only.
 */
export function sequenceMatcherRatio(
  a: string,
  b: string,
  options?: SequenceMatcherOptions,
): number {
  const autojunk = options?.autojunk ?? true;
  if (typeof a !== 'string' || typeof b !== 'string') {
    throw new InvalidInputError(
      `sequenceMatcherRatio compares two strings; got ${typeof a} and ${typeof b}`,
      { details: { field: typeof a !== 'string' ? 'a' : 'b' } },
    );
  }
  if (typeof autojunk !== 'boolean') {
    throw new ConfigError(`autojunk must be true or false; got ${String(autojunk)}`, {
      details: { field: 'autojunk', value: autojunk },
    });
  }
  // One comparison, so no per-call Alphabet, EncodedSequence or PreparedSequence: both strings
  // are encoded and b is indexed into reused scratch buffers (the same ids and b2j as the
  // general path, so the same M), which keeps short strings (thefuzz's tokens) cheap.
  if (oneShotA.length < a.length)
    oneShotA = new Int32Array(Math.max(a.length, 2 * oneShotA.length));
  if (oneShotB.length < b.length)
    oneShotB = new Int32Array(Math.max(b.length, 2 * oneShotB.length));
  const la = oneShotAlphabet.encodeInto(a, oneShotA);
  const lb = oneShotAlphabet.encodeInto(b, oneShotB);
  const symbols = oneShotAlphabet.size;
  oneShotAlphabet.clear();
  if (oneShotStart.length < symbols + 1) {
    oneShotStart = new Int32Array(Math.max(symbols + 1, 2 * oneShotStart.length));
    oneShotFill = new Int32Array(oneShotStart.length);
  }
  if (oneShotPos.length < lb) oneShotPos = new Int32Array(Math.max(lb, 2 * oneShotPos.length));
  const bseq = oneShotB;
  const start = oneShotStart;
  const pos = oneShotPos;
  const fill = oneShotFill;
  // b2j as CSR, popular elements left out (the rule of prepareSequence).
  start.fill(0, 0, symbols + 1);
  for (let j = 0; j < lb; j++) {
    const s = (bseq[j] as number) + 1;
    start[s] = (start[s] as number) + 1;
  }
  const popularLimit = autojunk && lb >= 200 ? Math.floor(lb / 100) + 1 : Number.POSITIVE_INFINITY;
  for (let s = 0; s < symbols; s++) {
    const c = start[s + 1] as number;
    start[s + 1] = (start[s] as number) + (c <= popularLimit ? c : 0);
    fill[s] = start[s] as number;
  }
  for (let j = 0; j < lb; j++) {
    const s = bseq[j] as number;
    if ((start[s + 1] as number) > (start[s] as number)) {
      pos[fill[s] as number] = j;
      fill[s] = (fill[s] as number) + 1;
    }
  }
  const matches = matchingBlocksTotal(
    oneShotA,
    la,
    bseq,
    lb,
    start,
    pos,
    symbols,
    Number.POSITIVE_INFINITY,
  );
  return ratioOf(matches, la + lb);
}

// Scratch of sequenceMatcherRatio (grown on demand): the symbols of the current call (cleared
// after encoding), the symbol ids of a and b, and b's b2j.
const oneShotAlphabet = new Alphabet();
let oneShotA = new Int32Array(64);
let oneShotB = new Int32Array(64);
let oneShotStart = new Int32Array(64);
let oneShotFill = new Int32Array(64);
let oneShotPos = new Int32Array(64);
