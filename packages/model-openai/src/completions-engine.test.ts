/**
 * The OpenAI-compatible rollout engine's preflight and its PEFT conversion. Its completions and
 * weight syncs against a real engine behind the wire are tested in `@agentrl/runner`
 * (`agentrl serve`).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAgentRLError } from '@agentrl/core';
import { encodeSafetensors, type NamedTensor, readSafetensorsFile } from '@agentrl/core/checkpoint';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { OpenAICompletionsEngine } from './completions-engine.ts';
import { loraToPeft, peftToLora } from './peft.ts';
import { startOpenAITestServer } from './testing/index.ts';

const work = await mkdtemp(join(tmpdir(), 'model-openai-engine-'));
afterAll(() => rm(work, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('OpenAICompletionsEngine preflight', () => {
  it('refuses an unreachable server before any work, naming the fix', async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1`;
    const error = await OpenAICompletionsEngine.create({
      baseUrls: [url],
      weightSync: 'lora',
      maxAttempts: 1,
    }).catch((e: unknown) => e);
    expect(isAgentRLError(error) && error.code).toBe('BAD_CONFIG');
    expect((error as Error).message).toMatch(
      /baseUrls: http:\/\/127\.0\.0\.1:\d+\/v1\/models did not answer .*start the server/,
    );
  });

  it('refuses a server without runtime LoRA loading, naming the vLLM flags', async () => {
    const server = await startOpenAITestServer(() => '');
    try {
      const error = await OpenAICompletionsEngine.create({
        baseUrls: [server.baseUrl],
        weightSync: 'lora',
      }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        /weightSync is 'lora', but .* has no \/load_lora_adapter \(HTTP 404\); start vLLM with --enable-lora --max-lora-rank <rank> and the environment variable VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/,
      );
      const full = await OpenAICompletionsEngine.create({
        baseUrls: [server.baseUrl],
        weightSync: 'disk',
      }).catch((e: unknown) => e);
      expect((full as Error).message).toMatch(
        /has no \/update_weights_from_disk .*full-weight sync needs a server with \/update_weights_from_disk .*train a LoRA adapter instead/,
      );
    } finally {
      await server.close();
    }
  });

  it('refuses base URLs that do not end in /v1 and an empty list', async () => {
    await expect(
      OpenAICompletionsEngine.create({ baseUrls: ['http://127.0.0.1:8000'], weightSync: 'lora' }),
    ).rejects.toThrow(/ends in \/v1/);
    await expect(
      OpenAICompletionsEngine.create({ baseUrls: [], weightSync: 'lora' }),
    ).rejects.toThrow(/baseUrls is empty/);
  });
});

describe('LoRA adapters as PEFT folders', () => {
  it('writes transposed factors under PEFT names with r and lora_alpha, and reads them back unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.double({ min: 0.5, max: 64, noNaN: true }),
        fc.constantFrom('F32' as const, 'BF16' as const),
        async (rank, fanIn, fanOut, alpha, dtype) => {
          const dir = await mkdtemp(join(work, 'case-'));
          const values = (n: number, k: number) =>
            Float32Array.from({ length: n }, (_, i) => (i + 1) * k);
          const tensors = new Map<string, NamedTensor>([
            [
              'model.layers.0.self_attn.q_proj.lora_A',
              { dtype, shape: [fanIn, rank], data: values(fanIn * rank, 0.5) },
            ],
            [
              'model.layers.0.self_attn.q_proj.lora_B',
              { dtype, shape: [rank, fanOut], data: values(rank * fanOut, -0.25) },
            ],
          ]);
          // At most 20 multiples of 0.5 or -0.25: exact in BF16 as well as in F32.
          await writeFile(
            join(dir, 'lora.safetensors'),
            encodeSafetensors(tensors, { rank: String(rank), alpha: String(alpha) }),
          );
          const peft = join(dir, 'peft');
          const back = join(dir, 'back');
          await import('node:fs/promises').then((fs) =>
            Promise.all([fs.mkdir(peft), fs.mkdir(back)]),
          );
          await loraToPeft(dir, peft, 'base');
          const config = JSON.parse(await readFile(join(peft, 'adapter_config.json'), 'utf8'));
          expect(config).toMatchObject({ peft_type: 'LORA', r: rank, lora_alpha: alpha });
          expect(config.target_modules).toEqual(['q_proj']);
          const written = await readSafetensorsFile(join(peft, 'adapter_model.safetensors'));
          const a = written.tensors.get(
            'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
          );
          expect(a?.shape).toEqual([rank, fanIn]);
          expect(a?.dtype).toBe('F32');
          // PEFT's A[r][i] is our A[i][r].
          expect(a?.data[0 * fanIn + (fanIn - 1)]).toBe(
            tensors.get('model.layers.0.self_attn.q_proj.lora_A')?.data[(fanIn - 1) * rank],
          );
          await peftToLora(peft, back);
          const round = await readSafetensorsFile(join(back, 'lora.safetensors'));
          expect(Number(round.metadata.rank)).toBe(rank);
          expect(Number(round.metadata.alpha)).toBe(alpha);
          expect([...round.tensors.keys()].sort()).toEqual([...tensors.keys()].sort());
          for (const [name, t] of tensors) {
            expect(round.tensors.get(name)?.shape).toEqual(t.shape);
            expect([...(round.tensors.get(name)?.data ?? [])]).toEqual([...t.data]);
          }
          await rm(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: 20 },
    );
  });
});
