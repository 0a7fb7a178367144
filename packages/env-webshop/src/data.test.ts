import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAgentRLError } from '@agentrl/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadCatalogue, resolveDataDir } from './data.ts';

const work = await mkdtemp(join(tmpdir(), 'agentrl-webshop-data-'));
afterAll(() => rm(work, { recursive: true, force: true }));

const saved = { WEBSHOP_DATA: process.env.WEBSHOP_DATA, AGENTRL_DATA: process.env.AGENTRL_DATA };
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('the data folder', () => {
  it('is the option, else WEBSHOP_DATA, else webshop under AGENTRL_DATA', () => {
    process.env.AGENTRL_DATA = join(work, 'root');
    delete process.env.WEBSHOP_DATA;
    expect(resolveDataDir()).toBe(join(work, 'root', 'webshop'));
    process.env.WEBSHOP_DATA = join(work, 'mine');
    expect(resolveDataDir()).toBe(join(work, 'mine'));
    expect(resolveDataDir(join(work, 'given'))).toBe(join(work, 'given'));
  });

  it('when the default folder lacks the products, the error names the folder and the fetch command', () => {
    process.env.AGENTRL_DATA = join(work, 'empty');
    delete process.env.WEBSHOP_DATA;
    try {
      loadCatalogue({ kind: 'data' });
      expect.unreachable();
    } catch (e) {
      expect(isAgentRLError(e, 'BAD_DATA')).toBe(true);
      const message = String(e);
      expect(message).toContain(join(work, 'empty', 'webshop', 'items_shuffle_1000.json'));
      expect(message).toContain(`looked in ${join(work, 'empty', 'webshop')}`);
      expect(message).toContain('`agentrl data fetch webshop`');
    }
  });
});
