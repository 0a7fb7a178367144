import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultAlfworldDataDir, listAlfworldGames } from './data.ts';
import { createAlfworldEnv } from './env.ts';

const work = await mkdtemp(join(tmpdir(), 'agentrl-alfworld-data-'));
afterAll(() => rm(work, { recursive: true, force: true }));

const saved = { ALFWORLD_DATA: process.env.ALFWORLD_DATA, AGENTRL_DATA: process.env.AGENTRL_DATA };
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('the default data directory', () => {
  it('is ALFWORLD_DATA when set, else alfworld under AGENTRL_DATA', () => {
    process.env.AGENTRL_DATA = join(work, 'root');
    delete process.env.ALFWORLD_DATA;
    expect(defaultAlfworldDataDir()).toBe(join(work, 'root', 'alfworld'));
    process.env.ALFWORLD_DATA = join(work, 'games');
    expect(defaultAlfworldDataDir()).toBe(join(work, 'games'));
  });

  it('when empty, fails naming the folder looked in and the fetch command', async () => {
    process.env.AGENTRL_DATA = join(work, 'empty');
    delete process.env.ALFWORLD_DATA;
    const listing = listAlfworldGames({ split: 'valid_seen' });
    await expect(listing).rejects.toThrow(join(work, 'empty', 'alfworld'));
    await expect(listing).rejects.toThrow('`agentrl data fetch alfworld`');
    await expect(listing).rejects.toThrow('ALFWORLD_DATA');
  });
});

describe('an env on the default data directory', () => {
  it('fails at reset naming the folder looked in and the fetch command', async () => {
    process.env.AGENTRL_DATA = join(work, 'empty-env');
    delete process.env.ALFWORLD_DATA;
    const env = createAlfworldEnv({ split: 'valid_seen' });
    const reset = env.reset({ seed: 0 });
    await expect(reset).rejects.toThrow(`looked in ${join(work, 'empty-env', 'alfworld')}`);
    await expect(reset).rejects.toThrow('`agentrl data fetch alfworld`');
  });
});
