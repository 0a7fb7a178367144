import { describe, expect, it } from 'vitest';
import { loadQwen25Tokenizer } from './hf-tokenizer.ts';

describe('the offline Qwen2.5 tokenizer', async () => {
  const tokenizer = await loadQwen25Tokenizer();

  it('encodes and decodes text losslessly, with Qwen2.5 ids', () => {
    const text = 'go to countertop 1\nHello, world! 你好';
    const ids = tokenizer.encode(text);
    expect(tokenizer.decode(ids)).toBe(text);
    expect(tokenizer.encode('Hello')).toEqual([9707]);
    expect(tokenizer.vocabSize).toBe(151665);
    expect(tokenizer.eosTokenIds).toEqual([151645, 151643]);
  });

  it('renders the ChatML chat template and maps special tokens to single ids', () => {
    const text = tokenizer.renderChat([{ role: 'user', content: 'hi' }], {
      addGenerationPrompt: true,
    });
    expect(text).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    const ids = tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }], {
      addGenerationPrompt: true,
    });
    expect(ids[0]).toBe(151644);
    expect(ids.filter((t) => t === 151645)).toHaveLength(2);
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).not.toContain('<|im_start|>');
  });
});
