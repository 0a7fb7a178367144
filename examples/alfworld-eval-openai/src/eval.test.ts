import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ALFWORLD_TEMPLATE } from '@agentrl/env-alfworld';
import { startOpenAITestServer } from '@agentrl/model-openai/testing';
import { main } from '@agentrl/runner';
import { describe, expect, it, onTestFinished } from 'vitest';

const config = new URL('../eval.yaml', import.meta.url).pathname;

describe('the alfworld-eval-openai example', () => {
  it('sends the paper prompt to the endpoint and scores the episodes (generated households here)', async () => {
    const prompts: string[] = [];
    const server = await startOpenAITestServer((content) => {
      prompts.push(content);
      return '<think>I look around.</think><action>look</action>';
    });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'agentrl-eval-openai-'));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (d: Buffer) => (out += d.toString()));
      const stderr = new PassThrough() as unknown as NodeJS.WriteStream;
      const code = await main(
        [
          'eval',
          '-c',
          config,
          '--base-url',
          server.baseUrl,
          '--episodes',
          '3',
          '--run-dir',
          dir,
          '--set',
          'rollout.maxTurns=2',
          '--set',
          'env.valOptions={source: generated}',
        ],
        { stdout, stderr },
      );
      expect(code).toBe(0);
      expect(out).toMatch(/success 0\/3 = 0.0%/);
      expect(prompts).toHaveLength(6);
      const [intro] = ALFWORLD_TEMPLATE.split('{task_description}');
      expect(prompts[5]).toContain((intro as string).trim().slice(0, 60));
      expect(JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')).success.n).toBe(3);
    } finally {
      await server.close();
    }
  });
});
