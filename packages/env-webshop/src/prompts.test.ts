import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  admissibleActions,
  buildWebshopPrompt,
  formatObservation,
  MAX_PROMPT_CHARS,
  webshopParser,
} from './prompts.ts';

describe('verl-agent projection', () => {
  it('takes the first action block, lower-cased and stripped, and needs think tags', () => {
    expect(
      webshopParser('<think>x</think><action> Click[Buy Now] </action><action>no</action>'),
    ).toEqual({ action: 'click[buy now]', valid: true });
    expect(webshopParser('<action>search[a]</action>')).toEqual({
      action: 'search[a]',
      valid: false,
    });
    expect(webshopParser('<THINK>x</THINK><action>a</action>').valid).toBe(false);
    expect(webshopParser('<think></think></action><action>').action).toBe('');
  });

  it('falls back to the last 20 characters and rejects CJK', () => {
    expect(webshopParser('<think></think> I will click[buy now] please')).toEqual({
      action: 'lick[buy now] please',
      valid: false,
    });
    expect(webshopParser('<think>买</think><action>click[x]</action>').valid).toBe(false);
  });

  it('never throws on any string', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        (s) => typeof webshopParser(s).action === 'string',
      ),
      { numRuns: 300 },
    );
  });
});

describe('observation formatting and prompts', () => {
  it('quotes the parts after the task and leaves the done page raw', () => {
    const raw =
      'Instruction: [SEP] find x [SEP] Back to Search [SEP] Page 1 (Total results: 0) [SEP] Next >';
    expect(formatObservation(raw, 'find x')).toBe(
      "'Back to Search' [SEP] 'Page 1 (Total results: 0)' [SEP] 'Next >'",
    );
    expect(formatObservation('Thank you for shopping with us! [SEP] 1.0', 'find x')).toBe(
      'Thank you for shopping with us! [SEP] 1.0',
    );
  });

  it('lists search first when there is a search bar', () => {
    expect(admissibleActions({ hasSearchBar: true, clickables: ['search'] })).toEqual([
      'search[<your query>]',
      'click[search]',
    ]);
  });

  it('falls back to the no-history template above 13,000 characters', () => {
    const long = 'x'.repeat(MAX_PROMPT_CHARS);
    const p = buildWebshopPrompt({
      task: 't',
      observation: 'o',
      admissibleActions: ['click[a]'],
      history: [{ observation: long, action: 'a' }],
    });
    expect(p).not.toContain('Prior to this step');
    expect(p).toContain("[\n'click[a]',\n].");
  });
});
