/**
 * Small lossless vocabularies for tiny CPU models: whole words counted from given text (for
 * example an environment's observations and actions) on top of the 256 byte symbols of GPT-2's
 * byte-level scheme, written as a standard HF `tokenizer.json` that `loadTokenizer` and
 * transformers both load.
 *
 * Text is split into pieces (a tag such as `<search>` or `</action>`, a run of letters, a run of
 * digits, one punctuation character, or a run of whitespace), each carrying the single space
 * before it, as GPT-2's `Ġ` marker. With `letterDigitRuns: 'whole'` a run of letters and digits
 * that holds both (a product code such as `b0q87fmlx9`) is one piece too, the space before it a
 * piece of its own, so that a code is one token wherever it stands. A piece in the vocabulary is one token; any other piece is
 * spelled out byte by byte. Nothing is lowercased, dropped or re-spaced, so
 * `decode(encode(text)) === text` for every string: `search[red sneakers]` stays one action
 * and `<search>q</search>` keeps its tags whole. In `tokenizer.json` terms: a `Split`
 * pre-tokenizer with the piece pattern, a `ByteLevel` pre-tokenizer and decoder, and a BPE model
 * with no merges and `ignore_merges` (a whole piece is looked up; anything else falls to bytes).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { InvalidInputError } from '@agentrl/core';
import type { TokenizerFiles } from './hf-tokenizer.ts';
import {
  BYTE_SYMBOLS,
  byteLevelSymbols,
  type LetterDigitRuns,
  PIECE_PATTERNS,
  splitPieces,
} from './pieces.ts';

/** Options of {@link buildWordVocabulary}. */
export interface WordVocabularyOptions {
  /** Most words kept (by frequency, ties in code-point order), besides `required`'s. Default 256. */
  readonly maxWords?: number;
  /** Words seen fewer times are dropped. Default 1. */
  readonly minCount?: number;
  /** Texts whose every piece is a token whatever the counts (response tags, action verbs). */
  readonly required?: readonly string[];
  /** Special tokens, in id order (ids 0..n-1). Default {@link WORD_VOCABULARY_SPECIALS}. */
  readonly specialTokens?: readonly string[];
  /** End-of-sequence token (one of the specials). Default `<|im_end|>`. */
  readonly eosToken?: string;
  /** Padding token (one of the specials). Default `<|endoftext|>`. */
  readonly padToken?: string;
  /**
   * Keep the 256 byte symbols, so that any text encodes and decodes back to itself. Default true;
   * false leaves only the words (a smaller vocabulary for toy tasks), where any other piece's
   * bytes encode as `<unk>` (which must then be a special token).
   */
  readonly byteFallback?: boolean;
  /**
   * How a run of letters and digits that holds both splits (a product code such as `B0Q87FMLX9`,
   * a size such as `10oz`): `split` into its letter runs and digit runs (`B`, `0`, `Q`, `87`, …),
   * or `whole`, one piece with the space before it a piece of its own, so that a code the corpus
   * holds is one token whether a space or a bracket stands before it (WebShop's results line and
   * `click[…]`). Default `split`, the scheme's earlier pieces. Either way every text round-trips.
   */
  readonly letterDigitRuns?: LetterDigitRuns;
  /** Jinja chat template. Default ChatML (`<|im_start|>role\ncontent<|im_end|>\n`). */
  readonly chatTemplate?: string;
}

/** The default special tokens, in id order: pad, the ChatML markers (eos `<|im_end|>`), unknown. */
export const WORD_VOCABULARY_SPECIALS = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<unk>',
] as const;

const CHATML_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/**
 * Counts the pieces of `texts` and returns `tokenizer.json` / `tokenizer_config.json` contents for
 * a lossless word-level tokenizer (see the module comment): the specials, the 256 byte symbols,
 * then the `required` pieces and the `maxWords` most frequent others.
 */
export function buildWordVocabulary(
  texts: readonly string[],
  options: WordVocabularyOptions = {},
): TokenizerFiles {
  const maxWords = options.maxWords ?? 256;
  const minCount = options.minCount ?? 1;
  const specials = options.specialTokens ?? WORD_VOCABULARY_SPECIALS;
  const eosToken = options.eosToken ?? '<|im_end|>';
  const padToken = options.padToken ?? '<|endoftext|>';
  if (!Number.isInteger(maxWords) || maxWords < 0)
    throw new InvalidInputError(`maxWords must be a non-negative integer, got ${maxWords}`, {
      details: { field: 'maxWords', value: maxWords },
    });
  for (const [field, token] of [
    ['eosToken', eosToken],
    ['padToken', padToken],
  ] as const) {
    if (!specials.includes(token))
      throw new InvalidInputError(
        `${field} ${JSON.stringify(token)} is not one of the special tokens; add it to specialTokens or pick one of ${specials.join(', ')}`,
        { details: { field, value: token } },
      );
  }
  const runs = options.letterDigitRuns ?? 'split';
  if (!Object.hasOwn(PIECE_PATTERNS, runs))
    throw new InvalidInputError(
      `letterDigitRuns must be "split" or "whole", got ${JSON.stringify(runs)}`,
      { details: { field: 'letterDigitRuns', value: runs } },
    );
  const byteFallback = options.byteFallback ?? true;
  if (!byteFallback && !specials.includes('<unk>'))
    throw new InvalidInputError(
      'byteFallback false needs <unk> among the special tokens, for the pieces outside the vocabulary',
      { details: { field: 'specialTokens', value: specials } },
    );
  const counts = new Map<string, number>();
  for (const text of texts)
    for (const piece of splitPieces(text, runs)) counts.set(piece, (counts.get(piece) ?? 0) + 1);
  const vocab: Record<string, number> = {};
  let next = 0;
  const add = (token: string) => {
    if (vocab[token] === undefined) vocab[token] = next++;
  };
  for (const s of specials) add(s);
  if (byteFallback) for (const symbol of BYTE_SYMBOLS) add(symbol);
  const isSpecial = (piece: string) => specials.includes(piece);
  for (const text of options.required ?? [])
    for (const piece of splitPieces(text, runs))
      if (!isSpecial(piece)) add(byteLevelSymbols(piece));
  const words = [...counts.entries()]
    .filter(([piece, n]) => n >= minCount && !isSpecial(piece))
    .map(([piece, n]) => [byteLevelSymbols(piece), n] as const)
    .filter(([symbols]) => vocab[symbols] === undefined)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, maxWords);
  for (const [symbols] of words) add(symbols);
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: PIECE_PATTERNS[runs] },
          behavior: 'Isolated',
          invert: false,
        },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: byteFallback ? null : '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: true,
      vocab,
      merges: [],
    },
  };
  const config = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    model_max_length: 4096,
    clean_up_tokenization_spaces: false,
    eos_token: eosToken,
    pad_token: padToken,
    ...(specials.includes('<unk>') ? { unk_token: '<unk>' } : {}),
    additional_special_tokens: specials.filter((s) => s !== eosToken && s !== padToken),
    chat_template: options.chatTemplate ?? CHATML_TEMPLATE,
  };
  return { tokenizer, config };
}

/** Writes `tokenizer.json` and `tokenizer_config.json` into `dir` (created if needed). */
export async function writeTokenizerFiles(dir: string, files: TokenizerFiles): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}/tokenizer.json`, `${JSON.stringify(files.tokenizer, null, 2)}\n`);
  await writeFile(`${dir}/tokenizer_config.json`, `${JSON.stringify(files.config, null, 2)}\n`);
}
