/**
 * `rollout.engine: openai` through the CLI on the `alfworld-cpu` preset with a tiny budget,
 * against `agentrl serve` on loopback: rollouts generated over the OpenAI-compatible wire by
 * llama.cpp, full weights synced through /update_weights_from_disk before each rollout, the old
 * log-probs recomputed by the tfjs policy (and the gap logged), resume after a stop, and bad
 * server settings refused before any work.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startOpenAITestServer } from '@agentrl/model-openai/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alfworldTrain,
  expectEngineLogProbGap,
  expectResumeRepeatsStraightRun,
  freshRunDir,
  readMetrics,
  runCli,
  TINY_ALFWORLD,
} from '../test/cli.ts';
import { type ServeHandle, startServe } from './serve.ts';

const TINY = [
  ...TINY_ALFWORLD,
  '--set',
  'rollout.engine.name=openai',
  '--set',
  'rollout.engine.options.concurrency=4',
];

let server: ServeHandle;
beforeAll(async () => {
  server = await startServe({ engineOptions: { threads: 1, parallelSequences: 4 } });
});
afterAll(() => server?.close());

describe('training with rollout.engine openai against agentrl serve', () => {
  it('trains on served rollouts with recomputed log-probs, and a run resumed after a stop repeats the uninterrupted one', {
    timeout: 180_000,
  }, async () => {
    const urls = ['--set', `rollout.engine.options.baseUrls=["${server.baseUrl}"]`];
    const { runDir, firstErr } = await expectResumeRepeatsStraightRun('agentrl-openai-', (dir) =>
      alfworldTrain(dir, ...TINY, ...urls),
    );
    expect(firstErr).toMatch(
      /rollout engine openai: 1 server\(s\), weights synced by \/update_weights_from_disk/,
    );
    expect(existsSync(join(runDir, 'report.html'))).toBe(true);
  });

  it('syncs only the adapters of a LoRA run through /v1/load_lora_adapter, with the same log-prob gap', {
    timeout: 120_000,
  }, async () => {
    const loraServer = await startServe({ engineOptions: { threads: 1, parallelSequences: 4 } });
    try {
      const runDir = freshRunDir('agentrl-openai-lora-');
      const lora = await runCli(
        alfworldTrain(
          runDir,
          ...TINY,
          '--set',
          `rollout.engine.options.baseUrls=["${loraServer.baseUrl}"]`,
          '--set',
          'model.options.lora.rank=4',
          '--iterations',
          '2',
        ),
      );
      expect(lora.code, lora.err).toBe(0);
      expect(lora.err).toMatch(/weights synced by \/v1\/load_lora_adapter/);
      const models = (await (await fetch(`${loraServer.baseUrl}/models`)).json()) as {
        data: { id: string }[];
      };
      expect(models.data.map((m) => m.id)).toEqual(['agentrl-v1']);
      for (const m of readMetrics(runDir)) expectEngineLogProbGap(m);
    } finally {
      await loraServer.close();
    }
  });

  it('refuses an unreachable server and a server without LoRA loading before any work, naming the fix', async () => {
    const runDir = freshRunDir('agentrl-openai-bad-');
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const args = alfworldTrain(runDir, ...TINY);
    const unreachable = await runCli([
      ...args,
      '--set',
      `rollout.engine.options.baseUrls=["http://127.0.0.1:${port}/v1"]`,
    ]);
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.err).toMatch(/\/v1\/models did not answer .*start the server/);
    const noLoRA = await startOpenAITestServer(() => '');
    try {
      const lora = await runCli([
        ...args,
        '--set',
        `rollout.engine.options.baseUrls=["${noLoRA.baseUrl}"]`,
        '--set',
        'model.options.lora.rank=4',
      ]);
      expect(lora.code).not.toBe(0);
      expect(lora.err).toMatch(
        /has no \/load_lora_adapter \(HTTP 404\); start vLLM with --enable-lora --max-lora-rank <rank> and the environment variable VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/,
      );
    } finally {
      await noLoRA.close();
    }
    expect(existsSync(runDir)).toBe(false);
  });
});
