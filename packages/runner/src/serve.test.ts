/**
 * `OpenAICompletionsEngine` (`@agentrl/model-openai`) against `agentrl serve` on loopback: a real
 * llama.cpp engine behind the real wire. Full weights synced through /update_weights_from_disk
 * and LoRA adapters through /v1/load_lora_adapter (as PEFT folders) sample what the tfjs model
 * samples; requests spread over two servers give the tokens one server gives.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createRng, logProbMismatch } from '@agentrl/core';
import { OpenAICompletionsEngine } from '@agentrl/model-openai';
import { type CausalLM, createCausalLM } from '@agentrl/model-tfjs';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from './cli.ts';
import { type ServeHandle, startServe } from './serve.ts';

const work = await mkdtemp(join(tmpdir(), 'runner-serve-'));
const engineOptions = {
  threads: 1,
  contextSize: 64,
  parallelSequences: 2,
  kvCacheType: 'F32',
  flashAttention: false,
};
const PROMPTS = [
  [1, 17, 50, 3, 9],
  [5, 6, 7],
  [30, 2, 44, 44, 44, 12, 9],
  [1, 2],
];
const greedy = { maxNewTokens: 6, temperature: 0, stopTokenIds: [] };

let model: CausalLM;
let base: string;
const servers: ServeHandle[] = [];
beforeAll(async () => {
  model = await createCausalLM(
    {
      model_type: 'qwen2',
      num_attention_heads: 4,
      num_key_value_heads: 2,
      vocab_size: 96,
      hidden_size: 32,
      intermediate_size: 48,
      num_hidden_layers: 2,
      initializer_range: 0.3,
    },
    { seed: 4, backend: 'cpu' },
  );
  base = join(work, 'base');
  await model.save(base);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  model?.dispose();
  await rm(work, { recursive: true, force: true });
});

describe('the OpenAI-compatible engine against agentrl serve', () => {
  it('samples full weights synced from disk as the tfjs model does, and the same tokens from one server or two', {
    timeout: 60_000,
  }, async () => {
    const one = await startServe({ engineOptions });
    const two = await startServe({ engineOptions });
    servers.push(one, two);
    const single = await OpenAICompletionsEngine.create({
      baseUrls: [one.baseUrl],
      weightSync: 'disk',
    });
    const spread = await OpenAICompletionsEngine.create({
      baseUrls: [one.baseUrl, two.baseUrl],
      weightSync: 'disk',
    });
    try {
      await single.syncWeights({ version: 0, checkpointDir: base });
      const want = await model.generate(PROMPTS, greedy);
      const got = await single.generate(PROMPTS, greedy);
      expect(got.weightsVersion).toBe(0);
      expect(got.tokenIds).toEqual(want.tokenIds);
      expect(got.finishReasons).toEqual(want.finishReasons);
      expect(logProbMismatch(got.logProbs ?? [], want.logProbs).maxAbs).toBeLessThan(1e-4);

      await spread.syncWeights({ version: 3, checkpointDir: base });
      const sampling = { maxNewTokens: 6, temperature: 1, seed: 11, stopTokenIds: [7] };
      const a = await single.generate(PROMPTS, sampling);
      const b = await spread.generate(PROMPTS, sampling);
      expect(b.tokenIds).toEqual(a.tokenIds);
      expect(b.weightsVersion).toBe(3);
      for (const [i, ids] of a.tokenIds.entries())
        expect(a.finishReasons[i]).toBe(ids.at(-1) === 7 ? 'stop' : 'length');
      const other = await single.generate(PROMPTS, { ...sampling, seed: 12 });
      expect(other.tokenIds).not.toEqual(a.tokenIds);
    } finally {
      await single.close();
      await spread.close();
    }
  });

  it('syncs LoRA adapters through /v1/load_lora_adapter under a new name per version, sampling as tfjs does', {
    timeout: 60_000,
  }, async () => {
    const server = await startServe({ checkpoint: base, engineOptions });
    servers.push(server);
    const engine = await OpenAICompletionsEngine.create({
      baseUrls: [server.baseUrl],
      weightSync: 'lora',
    });
    model.enableLoRA({ rank: 4, alpha: 8 });
    const rng = createRng(5);
    const seen: number[][][] = [];
    try {
      for (const version of [1, 2]) {
        for (const { a, b } of model.lora?.adapters.values() ?? [])
          for (const v of [a, b])
            v.assign(
              tf.tensor(
                Array.from({ length: v.size }, () => rng.normal(0, 0.3)),
                v.shape,
              ),
            );
        model.weightsChanged();
        const dir = join(work, `step-${version}`);
        await model.save(dir);
        await model.saveTrainingState(dir);
        await engine.syncWeights({ version, checkpointDir: dir });
        expect(engine.modelFor(0)).toBe(`agentrl-v${version}`);
        const want = await model.generate(PROMPTS, greedy);
        const got = await engine.generate(PROMPTS, greedy);
        expect(got.tokenIds).toEqual(want.tokenIds);
        expect(logProbMismatch(got.logProbs ?? [], want.logProbs).maxAbs).toBeLessThan(1e-4);
        seen.push(got.tokenIds);
      }
      // The two adapter draws decode differently, so matching tfjs means each adapter applied.
      expect(seen[0]).not.toEqual(seen[1]);
      // The server serves only the latest adapter: a request naming the older one is refused.
      const stale = await fetch(`${server.baseUrl}/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'agentrl-v1', prompt: [1, 2], max_tokens: 2 }),
      });
      expect(stale.status).toBe(404);
    } finally {
      await engine.close();
    }
  });
});

describe('agentrl serve', () => {
  it('refuses a bad port and an unknown engine option before serving, naming the fix', async () => {
    const err = new PassThrough() as unknown as NodeJS.WriteStream;
    let text = '';
    (err as unknown as PassThrough).on('data', (d: Buffer) => (text += d.toString()));
    const io = { stdout: new PassThrough(), stderr: err };
    expect(await main(['serve', '--port', '70000'], io)).toBe(2);
    expect(text).toMatch(
      /\[USAGE\]: --port 70000: give a port from 0 to 65535 \(0 picks a free one\)/,
    );
    expect(await main(['serve', '--port', '0', '--set', 'threadz=1'], io)).toBe(1);
    expect(text).toMatch(/unknown key "threadz" in agentrl serve --set.*did you mean "threads"/);
  });
});
