import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCheckpointTensors, writeSafetensors } from '@agentrl/core/checkpoint';
import { createCausalLM } from '@agentrl/model-tfjs';
import fc from 'fast-check';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointToGguf, permuteRotaryRows, uniqueTokenStrings } from './convert.ts';
import { LlamaCppEngine } from './engine.ts';

const work = await mkdtemp(join(tmpdir(), 'engine-llamacpp-convert-'));
afterAll(() => rm(work, { recursive: true, force: true }));

describe('permuteRotaryRows', () => {
  it('moves row t·d/2 + i of each head to row 2i + t, keeping every row', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        (heads, half, rowLength) => {
          const d = 2 * half;
          const data = Float32Array.from({ length: heads * d * rowLength }, (_, k) => k);
          const out = permuteRotaryRows(data, heads, rowLength);
          expect([...out].sort((a, b) => a - b)).toEqual([...data]);
          for (let h = 0; h < heads; h++)
            for (let t = 0; t < 2; t++)
              for (let i = 0; i < half; i++)
                for (let c = 0; c < rowLength; c++)
                  expect(out[(h * d + 2 * i + t) * rowLength + c]).toBe(
                    data[(h * d + t * half + i) * rowLength + c],
                  );
        },
      ),
    );
  });

  it('rejects rows that do not split into heads of even size', () => {
    expect(() => permuteRotaryRows(new Float32Array(6), 2, 1)).toThrow(/heads of even size/);
  });
});

describe('uniqueTokenStrings', () => {
  it('gives one unique, non-empty string per id and keeps every usable given string', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.oneof(fc.constantFrom('', '[3]', 'a', '<eos>'), fc.string()), {
          maxLength: 50,
        }),
        (size, tokens) => {
          const out = uniqueTokenStrings(size, tokens);
          expect(out).toHaveLength(size);
          expect(new Set(out).size).toBe(size);
          expect(out.every((s) => s !== '')).toBe(true);
          const firstSeen = new Set<string>();
          for (let id = 0; id < Math.min(size, tokens.length); id++) {
            const s = tokens[id] as string;
            if (s !== '' && !firstSeen.has(s)) expect(out[id]).toBe(s);
            firstSeen.add(s);
          }
        },
      ),
    );
  });
});

describe('checkpointToGguf', () => {
  it('writes a word-level vocabulary that llama.cpp loads and decodes by id as tfjs does', async () => {
    // A vocabulary like the main job's word tokenizer: specials, tags, then words.
    const words = [
      '<pad>',
      '<eos>',
      '<unk>',
      '<sep>',
      '<think>',
      '</think>',
      '<action>',
      '</action>',
    ];
    for (const w of ['go', 'to', 'desk', 'take', 'from', 'put', 'in', 'on', '1', '2', '.', ','])
      words.push(w);
    const dir = join(work, 'words');
    const model = await createCausalLM(
      {
        vocab_size: words.length,
        hidden_size: 32,
        intermediate_size: 96,
        num_hidden_layers: 1,
        num_attention_heads: 4,
        tie_word_embeddings: true,
        eos_token_id: 1,
        initializer_range: 0.5,
      },
      { seed: 9, backend: 'cpu' },
    );
    await model.save(dir);
    const path = join(work, 'words.gguf');
    await checkpointToGguf(dir, path, { tokens: words });
    const info = await readGgufFileInfo(path, { logWarnings: false });
    const tokenizer = info.metadata.tokenizer?.ggml as Record<string, unknown>;
    expect(tokenizer.model).toBe('gpt2');
    expect(tokenizer.tokens).toEqual(words);
    expect(tokenizer.eos_token_id).toBe(1);

    const prompts = [[3, 8, 9, 10, 3], [6, 11], [1]];
    const sampling = { maxNewTokens: 6, temperature: 0, stopTokenIds: [] };
    const want = await model.generate(prompts, sampling);
    model.dispose();
    const engine = await LlamaCppEngine.create({
      contextSize: 32,
      parallelSequences: 3,
      threads: 1,
      gguf: { tokens: words },
    });
    try {
      await engine.syncWeights({ version: 0, checkpointDir: dir });
      expect((await engine.generate(prompts, sampling)).tokenIds).toEqual(want.tokenIds);
    } finally {
      await engine.close();
    }
  });

  it('rejects a checkpoint whose tensors do not match its config, naming the tensor', async () => {
    const dir = join(work, 'mismatch');
    const model = await createCausalLM(
      {
        vocab_size: 16,
        hidden_size: 8,
        intermediate_size: 8,
        num_hidden_layers: 1,
        num_attention_heads: 2,
      },
      { seed: 1, backend: 'cpu' },
    );
    await model.save(dir);
    model.dispose();
    const tensors = await readCheckpointTensors(dir);
    tensors.set('model.extra.weight', { dtype: 'F32', shape: [2], data: new Float32Array(2) });
    await writeSafetensors(`${dir}/model.safetensors`, tensors);
    await expect(checkpointToGguf(dir, join(work, 'x.gguf'))).rejects.toThrow(
      /unexpected tensor model\.extra\.weight/,
    );
    tensors.delete('model.extra.weight');
    tensors.delete('model.norm.weight');
    await writeSafetensors(`${dir}/model.safetensors`, tensors);
    await expect(checkpointToGguf(dir, join(work, 'x.gguf'))).rejects.toThrow(
      /no tensor model\.norm\.weight/,
    );
    await writeFile(`${dir}/config.json`, '{');
    await expect(checkpointToGguf(dir, join(work, 'x.gguf'))).rejects.toThrow(
      /cannot be read as JSON/,
    );
  });
});
