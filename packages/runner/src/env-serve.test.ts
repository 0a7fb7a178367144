import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { main } from './cli.ts';
import type { Flags } from './cli-flags.ts';
import { envServeSettings, startEnvServe } from './env-serve.ts';
import { silentLogger } from './logger.ts';

describe('agentrl env serve', () => {
  it('reads --env, --host, --port and --set env.options / server keys into the server settings', () => {
    const flags: Flags = {
      env: 'alfworld',
      port: '0',
      host: '0.0.0.0',
      set: ['env.options.split=valid_seen', 'env.options.maxSteps=30', 'server.maxSessions=4'],
    };
    expect(envServeSettings(flags)).toEqual({
      envId: 'alfworld/text-v1',
      module: '@agentrl/env-alfworld',
      envOptions: { split: 'valid_seen', maxSteps: 30 },
      server: { maxSessions: 4, host: '0.0.0.0', port: 0 },
    });
  });

  it('rejects a misspelt --set key naming the closest one', () => {
    expect(() => envServeSettings({ env: 'alfworld', set: ['server.maxSesions=3'] })).toThrow(
      /maxSessions/,
    );
    expect(() => envServeSettings({ env: 'alfworld', set: ['envs.options.a=1'] })).toThrow(/"env"/);
  });

  it('serves a short-named env that a WebSocket client resets over /ws', async () => {
    const handle = await startEnvServe(
      { env: 'alfworld', port: '0', set: ['env.options.source=generated'] },
      silentLogger,
    );
    try {
      expect(handle.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const socket = new WebSocket(`${handle.baseUrl.replace(/^http/, 'ws')}/ws`);
      const reply = await new Promise<{ type: string; data: { observation: { text: string } } }>(
        (resolve, reject) => {
          socket.once('open', () => socket.send('{"type": "reset", "data": {"seed": 2}}'));
          socket.once('message', (data) => resolve(JSON.parse(String(data))));
          socket.once('error', reject);
        },
      );
      expect(reply.type).toBe('observation');
      expect(reply.data.observation.text).toContain('Your task is to: ');
      socket.close();
    } finally {
      await handle.close();
    }
  });

  it('names the closest env and every env it can serve when --env is misspelt', async () => {
    const start = startEnvServe({ env: 'alfwrld', port: '0' }, silentLogger);
    await expect(start).rejects.toMatchObject({ code: 'UNKNOWN_ENV' });
    await expect(start).rejects.toThrow(
      /^--env "alfwrld" is not an env agentrl env serve knows; did you mean "alfworld"\? Serve one of: alfworld \(alfworld\/text-v1\), webshop \(webshop\/text-v1\), webshop-browser \(webshop\/browser-v1\), search \(search\/qa-v1\)/,
    );
    const err: string[] = [];
    const io = {
      stdout: { write: () => true } as unknown as NodeJS.WriteStream,
      stderr: { write: (s: string) => err.push(s) > 0 } as unknown as NodeJS.WriteStream,
    };
    expect(await main(['env', 'serve', '--env', 'alfwrld'], io)).toBe(1);
    expect(err.join('').trim().split('\n')).toHaveLength(1);
    expect(err.join('')).toMatch(/\[UNKNOWN_ENV\].*did you mean "alfworld"/);
  });

  it('serves a registry id of a known family without --set env.module', async () => {
    const handle = await startEnvServe(
      { env: 'alfworld/text-v1', port: '0', set: ['env.options.source=generated'] },
      silentLogger,
    );
    await handle.close();
  });

  it('refuses to start an env that cannot reset, naming agentrl data fetch and the setting that needs no data', async () => {
    const start = startEnvServe(
      { env: 'alfworld', port: '0', set: ['env.options.dataDir=/nonexistent/alfworld-data'] },
      silentLogger,
    );
    await expect(start).rejects.toMatchObject({ code: 'ENV_NOT_READY' });
    await expect(start).rejects.toThrow(
      /cannot start an episode, so the server does not start: reset failed: ALFWorld data not found.*Fix: get its data with `agentrl data fetch alfworld`, or serve it without data with --set env.options.source=generated/,
    );
  });

  it('refuses an env that cannot be created for want of data, naming agentrl data fetch and the synthetic catalogue', async () => {
    const start = startEnvServe(
      { env: 'webshop', port: '0', set: ['env.options.dataDir=/nonexistent/webshop-data'] },
      silentLogger,
    );
    await expect(start).rejects.toMatchObject({ code: 'ENV_NOT_READY' });
    await expect(start).rejects.toThrow(
      /^webshop\/text-v1 cannot start an episode, so the server does not start: creating the env failed: .*Fix: get its data with `agentrl data fetch webshop`, or serve it without data with --set env.options.catalogue.kind=synthetic/,
    );
  });

  it('names the port in use and --port in one line', async () => {
    const first = await startEnvServe(
      { env: 'alfworld', port: '0', set: ['env.options.source=generated'] },
      silentLogger,
    );
    try {
      const err: string[] = [];
      const io = {
        stdout: { write: () => true } as unknown as NodeJS.WriteStream,
        stderr: { write: (s: string) => err.push(s) > 0 } as unknown as NodeJS.WriteStream,
      };
      const args = ['env', 'serve', '--env', 'alfworld', '--port', String(first.port)];
      expect(await main([...args, '--set', 'env.options.source=generated'], io)).toBe(1);
      expect(err.join('')).toBe(
        `agentrl env failed [PORT_IN_USE]: port ${first.port} on 127.0.0.1 is already in use by another program: stop that program, or pick another port with --port N (--port 0 picks a free one)\n`,
      );
    } finally {
      await first.close();
    }
  });

  it('names the subcommand when it is missing', async () => {
    const err: string[] = [];
    const io = {
      stdout: { write: () => true } as unknown as NodeJS.WriteStream,
      stderr: { write: (s: string) => err.push(s) > 0 } as unknown as NodeJS.WriteStream,
    };
    expect(await main(['env', '--env', 'alfworld'], io)).toBe(2);
    expect(err.join('')).toContain('agentrl env serve --env NAME');
  });
});
