import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../model/load.ts';

const config = {
  vocab_size: 50,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rope_theta: 10000,
  tie_word_embeddings: true,
  initializer_range: 0.5,
};

describe('generation with a KV cache', async () => {
  const model = await createCausalLM(config, { seed: 7, backend: 'wasm' });
  const prompts = [[1, 2, 3, 4, 5, 6], [9], [10, 11, 12]];

  it('gives sampling log-probs equal to the full forward pass at the same temperature', async () => {
    for (const temperature of [1, 0.7]) {
      const out = await model.generate(prompts, {
        maxNewTokens: 8,
        temperature,
        seed: 5,
        stopTokenIds: [],
      });
      const full = await model.tokenLogProbs(
        prompts.map((p, b) => [...p, ...(out.tokenIds[b] as number[])]),
        { temperature },
      );
      prompts.forEach((p, b) => {
        const tail = (full[b] as number[]).slice(p.length - 1);
        expect(tail).toHaveLength(8);
        tail.forEach((v, i) => {
          expect(Math.abs(v - ((out.logProbs[b] as number[])[i] as number))).toBeLessThan(1e-4);
        });
      });
    }
  });

  it('decodes a left-padded row exactly as it decodes alone', async () => {
    const batch = await model.generate(prompts, {
      maxNewTokens: 6,
      temperature: 0,
      stopTokenIds: [],
    });
    for (const [b, p] of prompts.entries()) {
      const alone = await model.generate([p], {
        maxNewTokens: 6,
        temperature: 0,
        stopTokenIds: [],
      });
      expect(batch.tokenIds[b]).toEqual(alone.tokenIds[0]);
    }
  });

  it('gives the same tokens for the same seed and different tokens for another seed', async () => {
    const a = await model.generate(prompts, {
      maxNewTokens: 10,
      temperature: 1,
      seed: 1,
      stopTokenIds: [],
    });
    const b = await model.generate(prompts, {
      maxNewTokens: 10,
      temperature: 1,
      seed: 1,
      stopTokenIds: [],
    });
    const c = await model.generate(prompts, {
      maxNewTokens: 10,
      temperature: 1,
      seed: 2,
      stopTokenIds: [],
    });
    expect(b.tokenIds).toEqual(a.tokenIds);
    expect(c.tokenIds).not.toEqual(a.tokenIds);
  });

  it('stops a row at a stop id (kept in the response) and reports why each row ended', async () => {
    const probe = await model.generate(prompts, {
      maxNewTokens: 5,
      temperature: 0,
      stopTokenIds: [],
    });
    const stopId = (probe.tokenIds[0] as number[])[2] as number;
    const out = await model.generate(prompts, {
      maxNewTokens: 5,
      temperature: 0,
      stopTokenIds: [stopId],
    });
    const first = out.tokenIds[0] as number[];
    expect(first[first.length - 1]).toBe(stopId);
    expect(first.length).toBeLessThanOrEqual(3);
    expect(out.finishReasons[0]).toBe('stop');
    out.tokenIds.forEach((ids, b) => {
      expect(out.finishReasons[b]).toBe(ids.includes(stopId) ? 'stop' : 'length');
      expect(ids.length === 5 || ids[ids.length - 1] === stopId).toBe(true);
    });
  });

  it('keeps sampled tokens inside the top-k set', async () => {
    const greedy = await model.generate([[3, 4]], { maxNewTokens: 1, temperature: 0 });
    const out = await model.generate(
      [
        [3, 4],
        [3, 4],
        [3, 4],
        [3, 4],
      ],
      { maxNewTokens: 1, temperature: 5, topK: 1, seed: 9 },
    );
    for (const ids of out.tokenIds) expect(ids[0]).toBe(greedy.tokenIds[0]?.[0]);
    const nucleus = await model.generate(
      [
        [3, 4],
        [3, 4],
      ],
      { maxNewTokens: 1, temperature: 1, topP: 1e-6, seed: 9 },
    );
    for (const ids of nucleus.tokenIds) expect(ids[0]).toBe(greedy.tokenIds[0]?.[0]);
  });

  it('leaks no tensors across generate calls', async () => {
    const { memory } = await import('@tensorflow/tfjs');
    await model.generate(prompts, { maxNewTokens: 4, temperature: 1, seed: 3 });
    const before = memory().numTensors;
    await model.generate(prompts, { maxNewTokens: 4, temperature: 1, seed: 3 });
    expect(memory().numTensors).toBe(before);
  });
});

describe('generation of a batch larger than the wasm heap allows at once', () => {
  it('splits the rows into consecutive calls and samples the tokens of one call', async () => {
    const prompts = Array.from({ length: 9 }, (_, b) =>
      Array.from({ length: 6 + (b % 4) }, (_, t) => 2 + ((b * 7 + t * 3) % 45)),
    );
    const sampling = { maxNewTokens: 5, temperature: 0.8, seed: 11, stopTokenIds: [] };
    const whole = await createCausalLM(config, { seed: 7, backend: 'wasm' });
    expect(whole.generateChunks(prompts, sampling)).toEqual([[0, 9]]);
    const expected = await whole.generate(prompts, sampling);
    whole.dispose();
    // A heap of 1 MiB allows 65,536 float32 elements per prefill: about 3 of these rows.
    const small = await createCausalLM(config, {
      seed: 7,
      backend: 'wasm',
      wasm: { heapBytes: 2 ** 20 },
    });
    try {
      const chunks = small.generateChunks(prompts, sampling);
      expect(chunks.length).toBeGreaterThan(2);
      expect(chunks.flatMap(([s, e]) => Array.from({ length: e - s }, (_, i) => s + i))).toEqual(
        prompts.map((_, b) => b),
      );
      const split = await small.generate(prompts, sampling);
      expect(split.tokenIds).toEqual(expected.tokenIds);
      // Each call pads to its own longest prompt, so products run over other shapes: the same
      // numbers up to float32 rounding.
      for (const [b, row] of split.logProbs.entries()) {
        for (const [i, v] of row.entries())
          expect(v).toBeCloseTo(expected.logProbs[b]?.[i] as number, 5);
      }
      expect(split.finishReasons).toEqual(expected.finishReasons);
    } finally {
      small.dispose();
      await createCausalLM(config, { seed: 7, backend: 'wasm' }).then((m) => m.dispose());
    }
  });
});
