/**
 * The lossless piece scheme of word vocabularies (see `word-vocabulary.ts`): text splits into
 * pieces, each piece is one token when the vocabulary holds it and its bytes (GPT-2's byte
 * symbols) otherwise. {@link PieceCodec} encodes and decodes such a `tokenizer.json` directly, the
 * same ids as `@huggingface/tokenizers` at a fraction of its cost (the tiny models' rollouts
 * tokenize every prompt of every turn).
 */
/**
 * The piece pattern: an optional leading space, then a tag (`<search>`, `</action>`), a letter
 * run, a digit run or one other character; whitespace runs otherwise (all but their last space
 * when a piece follows, GPT-2's `\s+(?!\S)`). The same source goes into `tokenizer.json`, where
 * the Rust and JS tokenizers read it alike.
 */
export const PIECE_PATTERN =
  ' ?</?[A-Za-z_][A-Za-z0-9_-]*>| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]|\\s+(?!\\S)|\\s+';

/** A run of letters and digits that holds both (`b0q87fmlx9`, `10oz`, `x2`). */
const LETTER_DIGIT_RUN = '[\\p{L}\\p{N}]*(?:\\p{L}\\p{N}|\\p{N}\\p{L})[\\p{L}\\p{N}]*';

/**
 * {@link PIECE_PATTERN} with letter-digit runs whole (`letterDigitRuns: 'whole'` of
 * `buildWordVocabulary`): a run of letters and digits that holds both, such as a product code
 * (`b0q87fmlx9`), is one piece, and the space before it a piece of its own, so that the code is
 * the same piece after a space (a results line) as after a bracket (`click[b0q87fmlx9]`). Pure
 * letter runs and digit runs split as in {@link PIECE_PATTERN}.
 */
export const LETTER_DIGIT_PIECE_PATTERN = ` (?=${LETTER_DIGIT_RUN})|${LETTER_DIGIT_RUN}|${PIECE_PATTERN}`;

/**
 * How a run of letters and digits that holds both splits: `split`, into its letter runs and digit
 * runs, or `whole`, one piece (the `letterDigitRuns` option of `buildWordVocabulary`).
 */
export type LetterDigitRuns = 'split' | 'whole';

/** The piece pattern of each scheme (compiled once below). */
export const PIECE_PATTERNS: Readonly<Record<LetterDigitRuns, string>> = {
  split: PIECE_PATTERN,
  whole: LETTER_DIGIT_PIECE_PATTERN,
};
const PIECE_REGEXES = new Map(
  Object.values(PIECE_PATTERNS).map((pattern) => [pattern, new RegExp(pattern, 'gu')]),
);

/** Splits text into pieces (letter-digit runs as `runs` says); their concatenation is the text. */
export function splitPieces(text: string, runs: LetterDigitRuns = 'split'): string[] {
  return text.match(PIECE_REGEXES.get(PIECE_PATTERNS[runs]) as RegExp) ?? [];
}

/** GPT-2's byte → printable symbol table (printable Latin-1 bytes map to themselves). */
export const BYTE_SYMBOLS: readonly string[] = (() => {
  const keep = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let shifted = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep(b) ? b : 256 + shifted++);
  return out;
})();
const SYMBOL_BYTES = new Map(BYTE_SYMBOLS.map((s, b) => [s, b]));
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** A piece in byte symbols, as the vocabulary stores it (`' go'` → `'Ġgo'`). */
export function byteLevelSymbols(piece: string): string {
  let out = '';
  for (const b of utf8.encode(piece)) out += BYTE_SYMBOLS[b];
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The piece pattern of a parsed `tokenizer.json` when it is a word vocabulary of this scheme. */
function pieceRegexOf(tokenizer: Record<string, unknown>): RegExp | undefined {
  const pre = tokenizer.pre_tokenizer as
    | { type?: string; pretokenizers?: { type?: string; pattern?: { Regex?: string } }[] }
    | undefined;
  const model = tokenizer.model as
    | { type?: string; ignore_merges?: boolean; merges?: unknown[] }
    | undefined;
  const regex = PIECE_REGEXES.get(pre?.pretokenizers?.[0]?.pattern?.Regex ?? '');
  const scheme =
    tokenizer.normalizer === null &&
    pre?.type === 'Sequence' &&
    pre.pretokenizers?.[1]?.type === 'ByteLevel' &&
    (tokenizer.decoder as { type?: string } | undefined)?.type === 'ByteLevel' &&
    model?.type === 'BPE' &&
    model.ignore_merges === true &&
    model.merges?.length === 0;
  return scheme ? regex : undefined;
}

/** Direct encoder and decoder of a piece-scheme `tokenizer.json`. */
export class PieceCodec {
  readonly #ids: Map<string, number>;
  readonly #tokens: string[];
  /** What a byte outside the vocabulary encodes to (nothing when the model has no unk token). */
  readonly #unk: number | undefined;
  /** Added tokens: matched before splitting, decoded as themselves. */
  readonly #added: Map<string, number>;
  readonly #addedRegex: RegExp | undefined;
  readonly #special: Set<number>;
  readonly #cache = new Map<string, readonly number[]>();
  readonly #pieceRegex: RegExp;

  /** The codec of a parsed `tokenizer.json`, or undefined when it is not of this scheme. */
  static from(tokenizer: Readonly<Record<string, unknown>>): PieceCodec | undefined {
    const regex = pieceRegexOf(tokenizer);
    return regex === undefined ? undefined : new PieceCodec(tokenizer, regex);
  }

  private constructor(tokenizer: Readonly<Record<string, unknown>>, pieceRegex: RegExp) {
    this.#pieceRegex = pieceRegex;
    const { model, added_tokens } = tokenizer as {
      model: { vocab: Record<string, number>; unk_token?: string | null };
      added_tokens?: { id: number; content: string; special?: boolean }[];
    };
    this.#ids = new Map(Object.entries(model.vocab));
    this.#unk = model.unk_token == null ? undefined : this.#ids.get(model.unk_token);
    this.#tokens = [];
    for (const [token, id] of this.#ids) this.#tokens[id] = token;
    this.#added = new Map();
    this.#special = new Set();
    for (const t of added_tokens ?? []) {
      this.#added.set(t.content, t.id);
      this.#tokens[t.id] = t.content;
      if (t.special) this.#special.add(t.id);
    }
    const contents = [...this.#added.keys()].sort((a, b) => b.length - a.length);
    this.#addedRegex =
      contents.length === 0 ? undefined : new RegExp(contents.map(escapeRegex).join('|'), 'g');
  }

  #encodePieces(text: string, out: number[]): void {
    for (const piece of text.match(this.#pieceRegex) ?? []) {
      let ids = this.#cache.get(piece);
      if (ids === undefined) {
        const symbols = byteLevelSymbols(piece);
        const whole = this.#ids.get(symbols);
        ids =
          whole !== undefined
            ? [whole]
            : Array.from(symbols, (s) => this.#ids.get(s) ?? this.#unk).filter(
                (id) => id !== undefined,
              );
        if (this.#cache.size < 100_000) this.#cache.set(piece, ids);
      }
      for (const id of ids) out.push(id);
    }
  }

  /** Token ids of `text` (added tokens matched first, as HF does). */
  encode(text: string): number[] {
    const out: number[] = [];
    if (this.#addedRegex === undefined) {
      this.#encodePieces(text, out);
      return out;
    }
    let last = 0;
    for (const match of text.matchAll(this.#addedRegex)) {
      if (match.index > last) this.#encodePieces(text.slice(last, match.index), out);
      out.push(this.#added.get(match[0]) as number);
      last = match.index + match[0].length;
    }
    if (last < text.length) this.#encodePieces(text.slice(last), out);
    return out;
  }

  /** The text of `ids`; special added tokens dropped when `skipSpecialTokens`. */
  decode(ids: readonly number[], skipSpecialTokens: boolean): string {
    let text = '';
    const bytes: number[] = [];
    const flush = () => {
      if (bytes.length > 0) text += utf8Decoder.decode(Uint8Array.from(bytes));
      bytes.length = 0;
    };
    for (const id of ids) {
      const token = this.#tokens[id];
      if (token === undefined) continue;
      if (this.#added.get(token) === id) {
        if (skipSpecialTokens && this.#special.has(id)) continue;
        flush();
        text += token;
        continue;
      }
      for (const symbol of token) {
        const b = SYMBOL_BYTES.get(symbol);
        if (b !== undefined) bytes.push(b);
      }
    }
    flush();
    return text;
  }
}
