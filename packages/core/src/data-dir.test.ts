import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  DATA_LOCATIONS,
  type DataLocationName,
  dataDirDefault,
  missingDataFix,
  platformCacheDir,
  resolveDataDir,
  sharedFolder,
  userDataRoot,
} from './data-dir.ts';

const work = await mkdtemp(join(tmpdir(), 'agentrl-data-dir-'));
afterAll(() => rm(work, { recursive: true, force: true }));

const NAMES = Object.keys(DATA_LOCATIONS) as DataLocationName[];
const VARIABLES = [
  'AGENTRL_DATA',
  'AGENTRL_SHARED',
  'XDG_CACHE_HOME',
  ...NAMES.map((n) => DATA_LOCATIONS[n].variable),
];
const saved = Object.fromEntries(VARIABLES.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

/** A checkout at `<work>/<name>/main` whose sibling `shared/data` holds `present` datasets. */
function checkoutWith(name: string, present: readonly DataLocationName[]): string {
  const checkout = join(work, name, 'main');
  mkdirSync(checkout, { recursive: true });
  for (const d of present)
    mkdirSync(join(work, name, 'shared', 'data', DATA_LOCATIONS[d].folder), { recursive: true });
  return checkout;
}

describe('platformCacheDir', () => {
  it('is $XDG_CACHE_HOME/agentrl on Linux, else ~/.cache/agentrl', () => {
    const home = '/home/ada';
    expect(platformCacheDir({ platform: 'linux', home, env: {} })).toBe('/home/ada/.cache/agentrl');
    expect(platformCacheDir({ platform: 'linux', home, env: { XDG_CACHE_HOME: '/var/c' } })).toBe(
      '/var/c/agentrl',
    );
    expect(platformCacheDir({ platform: 'freebsd', home, env: { XDG_CACHE_HOME: '' } })).toBe(
      '/home/ada/.cache/agentrl',
    );
  });

  it('ignores a relative XDG_CACHE_HOME, as the XDG specification asks', () => {
    expect(
      platformCacheDir({ platform: 'linux', home: '/h', env: { XDG_CACHE_HOME: 'rel/cache' } }),
    ).toBe('/h/.cache/agentrl');
  });

  it('is ~/Library/Caches/agentrl on macOS, whatever XDG_CACHE_HOME says', () => {
    expect(
      platformCacheDir({ platform: 'darwin', home: '/Users/ada', env: { XDG_CACHE_HOME: '/x' } }),
    ).toBe('/Users/ada/Library/Caches/agentrl');
  });

  it('is %LOCALAPPDATA%\\agentrl\\Cache on Windows, else under the home folder', () => {
    expect(
      platformCacheDir({
        platform: 'win32',
        home: 'C:\\Users\\ada',
        env: { LOCALAPPDATA: 'D:\\Local' },
      }),
    ).toBe('D:\\Local\\agentrl\\Cache');
    expect(platformCacheDir({ platform: 'win32', home: 'C:\\Users\\ada', env: {} })).toBe(
      'C:\\Users\\ada\\AppData\\Local\\agentrl\\Cache',
    );
  });
});

describe('userDataRoot', () => {
  it('is AGENTRL_DATA when it is set and not empty, else the cache folder', () => {
    const context = { platform: 'linux', home: '/h' } as const;
    expect(userDataRoot({ ...context, env: { AGENTRL_DATA: '/data' } })).toEqual({
      root: '/data',
      from: 'AGENTRL_DATA',
    });
    expect(userDataRoot({ ...context, env: { AGENTRL_DATA: '' } })).toEqual({
      root: '/h/.cache/agentrl',
      from: 'cache',
    });
  });
});

describe('resolveDataDir', () => {
  const base = { platform: 'linux', home: '/h' } as const;

  it("prefers the dataset's own variable over everything else", () => {
    const checkout = checkoutWith('own', NAMES);
    for (const name of NAMES) {
      const variable = DATA_LOCATIONS[name].variable;
      const env = { [variable]: '/mine', AGENTRL_DATA: '/root' };
      expect(resolveDataDir(name, { ...base, env, checkout })).toEqual({
        dir: '/mine',
        from: 'variable',
        lookedIn: ['/mine'],
      });
    }
  });

  it("takes <AGENTRL_DATA>/<folder> next, even when the checkout's shared folder holds the dataset", () => {
    const checkout = checkoutWith('root', NAMES);
    for (const name of NAMES) {
      const resolved = resolveDataDir(name, { ...base, env: { AGENTRL_DATA: '/root' }, checkout });
      expect(resolved.dir).toBe(join('/root', DATA_LOCATIONS[name].folder));
      expect(resolved.from).toBe('AGENTRL_DATA');
    }
  });

  it("takes the checkout's shared data folder only for a dataset it holds, else the cache folder", () => {
    const checkout = checkoutWith('partial', ['alfworld']);
    const alfworld = resolveDataDir('alfworld', { ...base, env: {}, checkout });
    expect(alfworld).toEqual({
      dir: join(work, 'partial', 'shared', 'data', 'alfworld'),
      from: 'shared',
      lookedIn: [join(work, 'partial', 'shared', 'data', 'alfworld')],
    });
    const search = resolveDataDir('search', { ...base, env: {}, checkout });
    expect(search).toEqual({
      dir: '/h/.cache/agentrl/search-qa',
      from: 'cache',
      lookedIn: [
        join(work, 'partial', 'shared', 'data', 'search-qa'),
        '/h/.cache/agentrl/search-qa',
      ],
    });
  });

  it('reads AGENTRL_SHARED as the shared folder when it is set', () => {
    mkdirSync(join(work, 'elsewhere', 'data', 'webshop'), { recursive: true });
    const env = { AGENTRL_SHARED: join(work, 'elsewhere') };
    expect(sharedFolder({ env, checkout: null })).toBe(join(work, 'elsewhere'));
    expect(resolveDataDir('webshop', { ...base, env, checkout: null }).dir).toBe(
      join(work, 'elsewhere', 'data', 'webshop'),
    );
  });

  it('outside a checkout, with nothing set, is the folder in the platform cache folder', () => {
    for (const name of NAMES) {
      const folder = DATA_LOCATIONS[name].folder;
      expect(resolveDataDir(name, { ...base, env: {}, checkout: null })).toEqual({
        dir: `/h/.cache/agentrl/${folder}`,
        from: 'cache',
        lookedIn: [`/h/.cache/agentrl/${folder}`],
      });
      expect(
        resolveDataDir(name, { platform: 'darwin', home: '/Users/a', env: {}, checkout: null }).dir,
      ).toBe(`/Users/a/Library/Caches/agentrl/${folder}`);
    }
  });

  it('follows the process environment when no context is given', () => {
    const checkout = checkoutWith('process', ['alfworld']);
    process.env.AGENTRL_SHARED = join(work, 'process', 'shared');
    delete process.env.ALFWORLD_DATA;
    delete process.env.AGENTRL_DATA;
    expect(resolveDataDir('alfworld').dir).toBe(
      join(work, 'process', 'shared', 'data', 'alfworld'),
    );
    process.env.AGENTRL_DATA = join(work, 'user-data');
    expect(resolveDataDir('alfworld').dir).toBe(join(work, 'user-data', 'alfworld'));
    process.env.ALFWORLD_DATA = join(work, 'games');
    expect(resolveDataDir('alfworld').dir).toBe(join(work, 'games'));
    expect(checkout).toContain('process');
  });
});

describe('missingDataFix', () => {
  const base = { platform: 'linux', home: '/h', checkout: null } as const;

  it('names every folder looked in and the fetch command', () => {
    const checkout = checkoutWith('fix', []);
    const line = missingDataFix('alfworld', { ...base, env: {}, checkout });
    expect(line).toContain(join(work, 'fix', 'shared', 'data', 'alfworld'));
    expect(line).toContain('/h/.cache/agentrl/alfworld');
    expect(line).toContain('`agentrl data fetch alfworld`');
    expect(line).toContain('ALFWORLD_DATA');
  });

  it('names the variable that chose the folder and fetches into it with --dir', () => {
    const line = missingDataFix('webshop', { ...base, env: { WEBSHOP_DATA: '/w' } });
    expect(line).toContain('/w (from WEBSHOP_DATA)');
    expect(line).toContain('`agentrl data fetch webshop --dir /w`');
    const root = missingDataFix('search', { ...base, env: { AGENTRL_DATA: '/r' } });
    expect(root).toContain('/r/search-qa (from AGENTRL_DATA)');
    expect(root).toContain('`agentrl data fetch search`');
  });
});

describe('dataDirDefault', () => {
  it('states the order for an options schema', () => {
    expect(dataDirDefault('alfworld')).toMatch(/^\$ALFWORLD_DATA, else \$AGENTRL_DATA\/alfworld, /);
    expect(dataDirDefault('search')).toContain('search-qa');
  });
});
