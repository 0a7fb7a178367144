import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAgentRLError, type TextEnv } from '@agentrl/core';
import { hasData } from '@agentrl/core/test';
import { describe, expect, it } from 'vitest';
import { createAlfworldBridgeEnv } from './bridge.ts';
import { defaultAlfworldDataDir } from './data.ts';

const FAKE = fileURLToPath(new URL('./test-fixtures/fake_bridge_server.py', import.meta.url));
const hasPython = spawnSync('python3', ['-c', 'print(1)']).status === 0;
const importAlfworld = spawnSync('python3', ['-c', 'import alfworld, textworld'], {
  encoding: 'utf8',
});
const hasAlfworld = importAlfworld.status === 0;

function fake(mode: string, extra: Record<string, unknown> = {}): TextEnv {
  return createAlfworldBridgeEnv({
    split: 'valid_seen',
    script: FAKE,
    env: { FAKE_BRIDGE_MODE: mode },
    requestTimeoutMs: 20_000,
    startTimeoutMs: 30_000,
    ...extra,
  });
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return (await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  )) as Error & { code?: string };
}

if (!hasPython) console.log('bridge protocol tests skipped: no python3 on PATH');
// The bridge draws its games from the valid_seen split, as createAlfworldEnv does.
const hasGames =
  hasPython &&
  hasData('alfworld', 'env-alfworld: createAlfworldBridgeEnv against a real subprocess', {
    paths: [join(defaultAlfworldDataDir(), 'json_2.1.1', 'valid_seen')],
  });

describe.skipIf(!hasGames)(
  'createAlfworldBridgeEnv against a real subprocess speaking the protocol',
  () => {
    it('plays an episode: the chosen game file is sent, reward 10 on the winning step, then ENV_FINISHED', async () => {
      const env = fake('ok');
      const { observation, info } = await env.reset({ seed: 4 });
      expect(observation.text).toContain(`game ${String(info['gamePath'])}`);
      expect(observation.admissibleActions).toEqual(['go to desk 1', 'help', 'inventory', 'look']);
      const miss = await env.step('look');
      expect([miss.observation.text, miss.reward, miss.terminated]).toEqual([
        'Nothing happens.',
        0,
        false,
      ]);
      const win = await env.step('go to desk 1');
      expect([win.reward, win.terminated, win.info.won]).toEqual([10, true, true]);
      expect((await rejection(env.step('look'))).code).toBe('ENV_FINISHED');
      await env.close();
      await env.close();
    });

    it('chooses the same game as createAlfworldEnv for the same seed', async () => {
      const env = fake('ok');
      const a = await env.reset({ seed: 9 });
      const b = await env.reset({ seed: 9 });
      expect(b.info['gamePath']).toBe(a.info['gamePath']);
      await env.close();
    });

    it('reports a crashed process on that episode, refuses further steps, and restarts at the next reset', async () => {
      const env = fake('crash-on-step');
      await env.reset({ seed: 0 });
      const crash = await rejection(env.step('look'));
      expect(crash.code).toBe('BACKEND_FAILURE');
      expect(crash.message).toMatch(/exited \(code 3/);
      expect(crash.message).toContain('simulated crash');
      const again = await rejection(env.step('look'));
      expect(again.code).toBe('BACKEND_FAILURE');
      expect(again.message).toMatch(/reset\(\)/);
      const restarted = await env.reset({ seed: 0 });
      expect(restarted.observation.text).toContain('Your task is to: fake.');
      await env.close();
    });

    it('times out a hung process instead of hanging, and restarts it at the next reset', async () => {
      const env = fake('hang-on-step', { requestTimeoutMs: 300 });
      await env.reset({ seed: 0 });
      const hung = await rejection(env.step('look'));
      expect(hung.code).toBe('TIMEOUT');
      expect(hung.message).toMatch(/no answer to "step" within 300 ms/);
      await env.reset({ seed: 0 });
      await env.close();
    });

    it('rejects protocol violations and server-side errors with typed errors', async () => {
      const garbage = fake('garbage-on-step');
      await garbage.reset({ seed: 0 });
      expect((await rejection(garbage.step('look'))).code).toBe('PROTOCOL');
      await garbage.close();
      const failing = fake('error-on-step');
      await failing.reset({ seed: 0 });
      const error = await rejection(failing.step('look'));
      expect(error.code).toBe('BACKEND_FAILURE');
      expect(error.message).toContain('RuntimeError: simulated');
      await failing.close();
    });

    it('says why when the server cannot start: not ready, wrong protocol, silent, or no python', async () => {
      const notReady = await rejection(fake('not-ready').reset({ seed: 0 }));
      expect([notReady.code, /cannot import/.test(notReady.message)]).toEqual([
        'BACKEND_UNAVAILABLE',
        true,
      ]);
      const old = await rejection(fake('old-protocol').reset({ seed: 0 }));
      expect([old.code, /protocol 0/.test(old.message)]).toEqual(['BACKEND_UNAVAILABLE', true]);
      const silent = await rejection(
        fake('hang-at-start', { startTimeoutMs: 300 }).reset({ seed: 0 }),
      );
      expect(silent.code).toBe('TIMEOUT');
      const missing = await rejection(
        fake('ok', { python: '/nonexistent/python3' }).reset({ seed: 0 }),
      );
      expect([missing.code, /not found/.test(missing.message)]).toEqual([
        'BACKEND_UNAVAILABLE',
        true,
      ]);
    });

    it.skipIf(hasAlfworld)(
      'reports a missing alfworld install from the shipped server script',
      async () => {
        const env = createAlfworldBridgeEnv({ split: 'valid_seen', startTimeoutMs: 30_000 });
        const error = await rejection(env.reset({ seed: 0 }));
        expect(isAgentRLError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
        expect(error.message).toMatch(/cannot import alfworld/);
        await env.close();
      },
    );
  },
);
