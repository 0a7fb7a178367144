import { Tokenizer as HFTokenizerImpl } from '@huggingface/tokenizers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HFTokenizer } from './hf-tokenizer.ts';
import { splitPieces } from './pieces.ts';
import { buildWordVocabulary } from './word-vocabulary.ts';

const corpus = [
  'You are in the middle of a room. Looking quickly around you, you see a cabinet 1.',
  'search[red sneakers under 50 dollars]',
  'click[Buy Now]',
  '<search>capital of France</search> <answer>Paris</answer> <think>hop again</think>',
  'results 1 : b0q87fmlx9 Classic Shirt $82 | B07ZX1 10oz x2',
  'click[b0q87fmlx9]',
];
const files = buildWordVocabulary(corpus);
const wordsOnly = buildWordVocabulary(corpus, { byteFallback: false });
const wholeRuns = buildWordVocabulary(corpus, { letterDigitRuns: 'whole' });
const wholeRunsWordsOnly = buildWordVocabulary(corpus, {
  letterDigitRuns: 'whole',
  byteFallback: false,
});

/** Strings built from the corpus' own fragments, tags and arbitrary unicode. */
const text = fc
  .array(
    fc.oneof(
      fc.constantFrom(...corpus, '<|im_end|>', '<|im_start|>', '\n', ' ', '  ', '[', ']', '</'),
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.stringMatching(/^[a-z0-9]{1,12}$/),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(''));

describe('the piece scheme of word vocabularies', () => {
  it.each(['split', 'whole'] as const)(
    'splits text into pieces that concatenate back to it (letter-digit runs %s)',
    (runs) => {
      fc.assert(fc.property(text, (t) => splitPieces(t, runs).join('') === t));
    },
  );

  it.each([
    ['split', files],
    ['whole', wholeRuns],
  ])('encodes and decodes every string back to itself (letter-digit runs %s)', (_, vocabulary) => {
    const tokenizer = new HFTokenizer(vocabulary);
    fc.assert(fc.property(text, (t) => tokenizer.decode(tokenizer.encode(t)) === t));
  });

  it('keeps a letter-digit run one piece and the space before it another, only when asked', () => {
    const line = 'results 1 : b0q87fmlx9 Classic $82 | click[b0q87fmlx9] 10oz';
    expect(splitPieces(line, 'whole')).toEqual([
      'results',
      ' 1',
      ' :',
      ' ',
      'b0q87fmlx9',
      ' Classic',
      ' $',
      '82',
      ' |',
      ' click',
      '[',
      'b0q87fmlx9',
      ']',
      ' ',
      '10oz',
    ]);
    expect(splitPieces('click[b0q87fmlx9]')).toEqual([
      ...['click', '[', 'b', '0', 'q', '87', 'fmlx', '9', ']'],
    ]);
    const tokenizer = new HFTokenizer(wholeRuns);
    expect(tokenizer.encode('b0q87fmlx9')).toHaveLength(1);
    expect(tokenizer.encode('click[b0q87fmlx9]')).toEqual([
      ...tokenizer.encode('click['),
      ...tokenizer.encode('b0q87fmlx9'),
      ...tokenizer.encode(']'),
    ]);
    expect(() =>
      buildWordVocabulary(corpus, { letterDigitRuns: 'joined' as unknown as 'whole' }),
    ).toThrow('letterDigitRuns must be "split" or "whole", got "joined"');
  });

  it.each([
    ['with byte symbols', files],
    ['of words only', wordsOnly],
    ['with letter-digit runs whole', wholeRuns],
    ['of words only, letter-digit runs whole', wholeRunsWordsOnly],
  ])(
    'gives the ids and text of @huggingface/tokenizers reading the same tokenizer.json (%s)',
    (_, vocabulary) => {
      const fast = new HFTokenizer(vocabulary);
      const reference = new HFTokenizerImpl(vocabulary.tokenizer, vocabulary.config);
      fc.assert(
        fc.property(text, fc.boolean(), (t, skip) => {
          const ids = reference.encode(t, { add_special_tokens: false }).ids;
          expect(fast.encode(t)).toEqual(ids);
          // (the reference refuses an empty id list)
          if (ids.length > 0)
            expect(fast.decode(ids, { skipSpecialTokens: skip })).toBe(
              reference.decode(ids, { skip_special_tokens: skip }),
            );
        }),
      );
    },
  );
});
