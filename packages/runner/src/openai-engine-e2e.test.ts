/**
 * `rollout.engine: openai` through the CLI on the `alfworld-cpu` preset with a tiny budget,
 * against `agentrl serve` on loopback: rollouts generated over the OpenAI-compatible wire by
 * llama.cpp, full weights synced through /update_weights_from_disk before each rollout, the old
 * log-probs recomputed by the tfjs policy (and the gap logged), resume after a stop, and bad
 * server settings refused before any work.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { startOpenAITestServer } from '@agentrl/model-openai/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from './cli.ts';
import { type ServeHandle, startServe } from './serve.ts';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough() as unknown as NodeJS.WriteStream;
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  (stderr as unknown as PassThrough).on('data', (d: Buffer) => (err += d.toString()));
  const code = await main(args, { stdout, stderr });
  return { code, out, err };
}

const TINY = [
  '--set',
  'rollout.batchSize=4',
  '--set',
  'rollout.groupSize=2',
  '--set',
  'rollout.maxTurns=3',
  '--set',
  'validation.every=0',
  '--set',
  'model.options.architecture.vocabularyEpisodes=4',
  '--set',
  'rollout.engine.name=openai',
  '--set',
  'rollout.engine.options.concurrency=4',
];

function metricsOf(runDir: string): Record<string, number>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
}

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
    const runDir = join(mkdtempSync(join(tmpdir(), 'agentrl-openai-')), 'run');
    const args = ['train', '--preset', 'alfworld-cpu', '--run-dir', runDir, ...TINY, ...urls];
    const first = await run([...args, '--iterations', '1']);
    expect(first.code, first.err).toBe(0);
    expect(first.err).toMatch(
      /rollout engine openai: 1 server\(s\), weights synced by \/update_weights_from_disk/,
    );
    const resumed = await run([...args, '--iterations', '2', '--resume']);
    expect(resumed.code, resumed.err).toBe(0);
    const metrics = metricsOf(runDir);
    expect(metrics.map((m) => m.iteration)).toEqual([0, 1]);
    for (const m of metrics) {
      expect(m['time/engineSync']).toBeGreaterThan(0);
      // llama.cpp's defaults (F16 KV cache) against the tfjs policy at the rollout temperature.
      expect(m['rollout/engineLogProbAbsDiff']).toBeLessThan(1e-3);
      expect(m['rollout/engineLogProbAbsDiffMax']).toBeLessThan(1e-2);
      expect(m['train/negLogProb']).toBeGreaterThan(0);
    }
    expect(existsSync(join(runDir, 'report.html'))).toBe(true);

    const straightDir = join(mkdtempSync(join(tmpdir(), 'agentrl-openai-')), 'run');
    const straight = await run([
      'train',
      '--preset',
      'alfworld-cpu',
      '--run-dir',
      straightDir,
      ...TINY,
      ...urls,
      '--iterations',
      '2',
    ]);
    expect(straight.code, straight.err).toBe(0);
    const exact = (rows: Record<string, number>[]) =>
      rows.map((m) =>
        Object.fromEntries(
          Object.entries(m).filter(
            ([k]) => !k.startsWith('time/') && !k.startsWith('rollout/engine'),
          ),
        ),
      );
    // llama.cpp's own log-probs may move in the last digits between runs; the sampled tokens,
    // and so everything trained on, are the same.
    const other = metricsOf(straightDir);
    expect(exact(metrics)).toEqual(exact(other));
    for (const [i, m] of metrics.entries()) {
      expect(m['rollout/engineLogProbAbsDiff']).toBeCloseTo(
        other[i]?.['rollout/engineLogProbAbsDiff'] as number,
        6,
      );
    }
  });

  it('syncs only the adapters of a LoRA run through /v1/load_lora_adapter, with the same log-prob gap', {
    timeout: 120_000,
  }, async () => {
    const loraServer = await startServe({ engineOptions: { threads: 1, parallelSequences: 4 } });
    try {
      const runDir = join(mkdtempSync(join(tmpdir(), 'agentrl-openai-lora-')), 'run');
      const lora = await run([
        'train',
        '--preset',
        'alfworld-cpu',
        '--run-dir',
        runDir,
        ...TINY,
        '--set',
        `rollout.engine.options.baseUrls=["${loraServer.baseUrl}"]`,
        '--set',
        'model.options.lora.rank=4',
        '--iterations',
        '2',
      ]);
      expect(lora.code, lora.err).toBe(0);
      expect(lora.err).toMatch(/weights synced by \/v1\/load_lora_adapter/);
      const models = (await (await fetch(`${loraServer.baseUrl}/models`)).json()) as {
        data: { id: string }[];
      };
      expect(models.data.map((m) => m.id)).toEqual(['agentrl-v1']);
      for (const m of metricsOf(runDir)) {
        expect(m['rollout/engineLogProbAbsDiff']).toBeLessThan(1e-3);
        expect(m['rollout/engineLogProbAbsDiffMax']).toBeLessThan(1e-2);
      }
    } finally {
      await loraServer.close();
    }
  });

  it('refuses an unreachable server and a server without LoRA loading before any work, naming the fix', async () => {
    const runDir = join(mkdtempSync(join(tmpdir(), 'agentrl-openai-bad-')), 'run');
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const args = ['train', '--preset', 'alfworld-cpu', '--run-dir', runDir, ...TINY];
    const unreachable = await run([
      ...args,
      '--set',
      `rollout.engine.options.baseUrls=["http://127.0.0.1:${port}/v1"]`,
    ]);
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.err).toMatch(/\/v1\/models did not answer .*start the server/);
    const noLoRA = await startOpenAITestServer(() => '');
    try {
      const lora = await run([
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
