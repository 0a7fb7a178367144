import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { CodePointTokenizer, ScriptedPolicy } from '@agentrl/core/test';
import { startOpenAITestServer } from '@agentrl/model-openai/testing';
import { describe, expect, it } from 'vitest';
import { corridorSpec } from '../test/helpers.ts';
import { tempDir } from '../test/temp-dir.ts';
import { policyAgent } from './agent.ts';
import { main } from './cli.ts';
import { evaluateAgent } from './evaluate.ts';
import { OpenAICompatibleAgent } from './index.ts';

/** A fixed imperfect rule: go towards the exit, except wait in cell 2 (so some episodes fail). */
function rule(prompt: string): string {
  const now = /Now: You are in cell (\d+) of \d+\. The exit is to the (east|west)/.exec(prompt);
  if (!now) return 'no idea';
  return now[1] === '2' ? '<action>wait</action>' : `<action>go ${now[2]}</action>`;
}

const tokenizer = new CodePointTokenizer();
const scripted = () =>
  new ScriptedPolicy({
    respond: (prompt) => [...tokenizer.encode(rule(tokenizer.decode(prompt))), 0],
  });

describe('evaluation through an OpenAI-compatible endpoint', () => {
  it('scores exactly what the scripted policy scores with the same rule', async () => {
    const server = await startOpenAITestServer(rule);
    try {
      const common = { env: corridorSpec(), episodes: 24, seed: 0, maxTurns: 8 };
      const viaPolicy = await evaluateAgent({
        ...common,
        agent: policyAgent(scripted(), tokenizer, { sampling: { maxNewTokens: 64 } }),
      });
      const viaHttp = await evaluateAgent({
        ...common,
        agent: new OpenAICompatibleAgent({
          baseUrl: server.baseUrl,
          model: 'scripted',
          concurrency: 3,
        }),
      });
      expect(viaPolicy.success.rate).toBeGreaterThan(0);
      expect(viaPolicy.success.rate).toBeLessThan(1);
      expect(viaHttp.success).toEqual(viaPolicy.success);
      expect(viaHttp.result.records.map((r) => r.action)).toEqual(
        viaPolicy.result.records.map((r) => r.action),
      );
    } finally {
      await server.close();
    }
  });

  it('is what `agentrl eval --base-url` uses, with the same success rate', async () => {
    const server = await startOpenAITestServer(rule);
    try {
      const dir = tempDir('agentrl-eval-');
      const config = join(dir, 'eval.yaml');
      const fixture = new URL('../test/fixtures/corridor-env.ts', import.meta.url).pathname;
      writeFileSync(
        config,
        `runDir: ${dir}\nenv: { id: test/corridor-v1, module: ${fixture} }\nmodel: { backend: module }\nrollout: { maxTurns: 8, batchSize: 8, groupSize: 8 }\nvalidation: { episodes: 24 }\n`,
      );
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (d: Buffer) => (out += d.toString()));
      const stderr = new PassThrough() as unknown as NodeJS.WriteStream;
      const code = await main(
        ['eval', '-c', config, '--base-url', server.baseUrl, '--model-name', 'scripted'],
        {
          stdout,
          stderr,
        },
      );
      expect(code).toBe(0);
      const reference = await evaluateAgent({
        env: corridorSpec(),
        episodes: 24,
        seed: 0,
        maxTurns: 8,
        agent: policyAgent(scripted(), tokenizer, { sampling: { maxNewTokens: 64 } }),
      });
      expect(out).toContain(`success ${reference.success.wins}/24`);
      expect(server.requests()).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});
