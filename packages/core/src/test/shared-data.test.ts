import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { platformCacheDir } from '../data-dir.ts';
import {
  DATASETS,
  type DatasetName,
  dataPath,
  fixturePath,
  hasData,
  sharedPath,
} from './shared-data.ts';

const work = await mkdtemp(join(tmpdir(), 'agentrl-shared-data-'));
afterAll(() => rm(work, { recursive: true, force: true }));

/** The variables these tests change, restored after each. */
const saved = Object.fromEntries(
  ['AGENTRL_SHARED', 'AGENTRL_DATA', ...Object.values(DATASETS).map((d) => d.variable)].map((k) => [
    k,
    process.env[k],
  ]),
);
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('fixturePath', () => {
  it('points into the fixtures committed in the repository', () => {
    expect(readdirSync(fixturePath()).length).toBeGreaterThan(0);
    expect(existsSync(fixturePath('gigpo', 'vectors-public.json'))).toBe(true);
    expect(existsSync(fixturePath('qwen2-tiny', 'model.safetensors'))).toBe(true);
  });
});

describe('dataPath', () => {
  it("follows the env's own variable when it is set, else data/<folder> of the shared folder", () => {
    process.env.AGENTRL_SHARED = join(work, 'shared');
    delete process.env.AGENTRL_DATA;
    for (const name of Object.keys(DATASETS) as DatasetName[]) {
      const { folder, variable } = DATASETS[name];
      mkdirSync(join(work, 'shared', 'data', folder), { recursive: true });
      delete process.env[variable];
      expect(dataPath(name, 'x.json')).toBe(join(work, 'shared', 'data', folder, 'x.json'));
      expect(dataPath(name)).toBe(sharedPath('data', folder));
      process.env[variable] = join(work, 'mine');
      expect(dataPath(name, 'x.json')).toBe(join(work, 'mine', 'x.json'));
      process.env[variable] = '';
      expect(dataPath(name)).toBe(sharedPath('data', folder));
    }
  });

  it('follows AGENTRL_DATA before the shared folder, and the cache folder when neither has it', () => {
    process.env.AGENTRL_SHARED = join(work, 'empty-shared');
    delete process.env.ALFWORLD_DATA;
    delete process.env.AGENTRL_DATA;
    expect(dataPath('alfworld')).toBe(join(platformCacheDir(), 'alfworld'));
    process.env.AGENTRL_DATA = join(work, 'user');
    expect(dataPath('alfworld', 'json_2.1.1')).toBe(join(work, 'user', 'alfworld', 'json_2.1.1'));
  });
});

describe('hasData', () => {
  it('says yes and prints nothing when every path is there', () => {
    const lines: string[] = [];
    const present = hasData('alfworld', 'a group', { paths: [work], log: (l) => lines.push(l) });
    expect(present).toBe(true);
    expect(lines).toEqual([]);
  });

  it('says no with one line naming the group, the missing path and how to get the data', () => {
    for (const name of Object.keys(DATASETS) as DatasetName[]) {
      const lines: string[] = [];
      const missing = join(work, 'absent', name);
      const present = hasData(name, `the ${name} group`, {
        paths: [work, missing],
        log: (l) => lines.push(l),
      });
      expect(present).toBe(false);
      expect(lines).toHaveLength(1);
      const line = lines[0] ?? '';
      expect(line).not.toContain('\n');
      expect(line).toContain(`the ${name} group`);
      expect(line).toContain(missing);
      expect(line).toContain(`agentrl data fetch ${name}`);
      expect(line).toContain(DATASETS[name].variable);
      expect(line).toContain('looked in');
    }
  });

  it("checks the dataset's folder when no paths are given", () => {
    process.env.AGENTRL_DATA = join(work, 'nothing-here');
    delete process.env.WEBSHOP_DATA;
    const lines: string[] = [];
    expect(hasData('webshop', 'g', { log: (l) => lines.push(l) })).toBe(false);
    expect(lines[0]).toContain(join(work, 'nothing-here', 'webshop'));
    process.env.WEBSHOP_DATA = work;
    expect(hasData('webshop', 'g', { log: (l) => lines.push(l) })).toBe(true);
    expect(lines).toHaveLength(1);
  });
});
