/**
 * Where the real datasets (ALFWorld games, WebShop files, the search-QA set) live on disk. Every
 * environment package, the tests and `agentrl data fetch` ask {@link resolveDataDir}; nothing else
 * decides. For a dataset, in order:
 *
 * 1. the folder its own variable names (`ALFWORLD_DATA`, `WEBSHOP_DATA`, `SEARCH_QA_DATA`);
 * 2. `<AGENTRL_DATA>/<folder>` when `AGENTRL_DATA` is set;
 * 3. `data/<folder>` of a source checkout's shared folder (`AGENTRL_SHARED`, else the folder
 *    `shared` beside the checkout), only when that folder exists;
 * 4. `<folder>` under the user's cache folder ({@link platformCacheDir}), where
 *    `agentrl data fetch` puts it.
 *
 * A separate entry point (`@agentrl/core/data`) because it reads the file system and the
 * environment; the main entry point reads neither.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, posix, resolve, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A dataset's place: its folder name under a data root and the variable naming another copy. */
export interface DataLocation {
  /** The name `agentrl data fetch` takes. */
  readonly name: string;
  /** Its folder under a data root (`<root>/<folder>`). */
  readonly folder: string;
  /** The variable that names the dataset's folder itself, when the env reads one. */
  readonly variable?: string;
}

/** The datasets the environment packages read, by the name `agentrl data fetch` takes. */
export const DATA_LOCATIONS = {
  alfworld: { name: 'alfworld', folder: 'alfworld', variable: 'ALFWORLD_DATA' },
  webshop: { name: 'webshop', folder: 'webshop', variable: 'WEBSHOP_DATA' },
  search: { name: 'search', folder: 'search-qa', variable: 'SEARCH_QA_DATA' },
} as const satisfies Record<string, DataLocation>;

/** A dataset an environment package reads. */
export type DataLocationName = keyof typeof DATA_LOCATIONS;

/** The variable naming the user's data root (datasets under `<root>/<folder>`). */
export const DATA_ROOT_VARIABLE = 'AGENTRL_DATA';

/** The variable naming a source checkout's shared folder (its datasets under `data/<folder>`). */
export const SHARED_FOLDER_VARIABLE = 'AGENTRL_SHARED';

/** What the resolution reads; each defaults to this process's. Tests inject them. */
export interface DataDirContext {
  /** Environment variables (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Operating system (default `process.platform`). */
  readonly platform?: NodeJS.Platform;
  /** The user's home folder (default `os.homedir()`). */
  readonly home?: string;
  /**
   * The source checkout's folder, whose sibling `shared` is the default shared folder; `null`
   * when there is none (default: the checkout this file sits in, none for an installed package).
   */
  readonly checkout?: string | null;
  /** Whether a path exists (default `fs.existsSync`). */
  readonly exists?: (path: string) => boolean;
}

/** Where a dataset's folder was found, and every folder looked at on the way. */
export interface ResolvedDataDir {
  /** The dataset's folder. */
  readonly dir: string;
  /** Which rule chose it. */
  readonly from: 'variable' | 'AGENTRL_DATA' | 'shared' | 'cache';
  /** The folders considered, in order, the chosen one last. */
  readonly lookedIn: readonly string[];
}

/** A variable's value, `undefined` when unset or empty. */
function variable(env: DataDirContext['env'], name: string): string | undefined {
  const value = (env ?? process.env)[name];
  return value !== undefined && value.length > 0 ? value : undefined;
}

/** The repository's root when this file sits in a source checkout (packages/core/src or dist). */
function detectedCheckout(): string | null {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  return existsSync(join(root, 'pnpm-workspace.yaml')) &&
    existsSync(join(root, 'packages', 'core', 'package.json'))
    ? root
    : null;
}

/**
 * The user's cache folder for agentrl: on Linux and other Unixes `$XDG_CACHE_HOME/agentrl` (when
 * it is an absolute path, as the XDG base directory specification asks) or `~/.cache/agentrl`;
 * on macOS `~/Library/Caches/agentrl`; on Windows `%LOCALAPPDATA%\agentrl\Cache`.
 */
export function platformCacheDir(context: DataDirContext = {}): string {
  const platform = context.platform ?? process.platform;
  const home = context.home ?? homedir();
  if (platform === 'win32') {
    const local = variable(context.env, 'LOCALAPPDATA') ?? win32.join(home, 'AppData', 'Local');
    return win32.join(local, 'agentrl', 'Cache');
  }
  if (platform === 'darwin') return posix.join(home, 'Library', 'Caches', 'agentrl');
  const xdg = variable(context.env, 'XDG_CACHE_HOME');
  return posix.join(
    xdg !== undefined && posix.isAbsolute(xdg) ? xdg : posix.join(home, '.cache'),
    'agentrl',
  );
}

/** The user's data root: `AGENTRL_DATA` when set, else {@link platformCacheDir}. */
export function userDataRoot(context: DataDirContext = {}): {
  readonly root: string;
  readonly from: 'AGENTRL_DATA' | 'cache';
} {
  const fromEnv = variable(context.env, DATA_ROOT_VARIABLE);
  return fromEnv !== undefined
    ? { root: fromEnv, from: 'AGENTRL_DATA' }
    : { root: platformCacheDir(context), from: 'cache' };
}

/**
 * A source checkout's shared folder: `AGENTRL_SHARED` when set, else the folder `shared` beside
 * the checkout; `undefined` outside a checkout. It need not exist.
 */
export function sharedFolder(context: DataDirContext = {}): string | undefined {
  const fromEnv = variable(context.env, SHARED_FOLDER_VARIABLE);
  if (fromEnv !== undefined) return fromEnv;
  const checkout = context.checkout === undefined ? detectedCheckout() : context.checkout;
  return checkout === null ? undefined : join(dirname(checkout), 'shared');
}

/** A dataset's folder, by the rules of the module comment. */
export function resolveDataDir(
  dataset: DataLocationName | DataLocation,
  context: DataDirContext = {},
): ResolvedDataDir {
  const location = typeof dataset === 'string' ? DATA_LOCATIONS[dataset] : dataset;
  const own =
    location.variable !== undefined ? variable(context.env, location.variable) : undefined;
  if (own !== undefined) return { dir: own, from: 'variable', lookedIn: [own] };
  const root = userDataRoot(context);
  const inRoot = join(root.root, location.folder);
  if (root.from === 'AGENTRL_DATA')
    return { dir: inRoot, from: 'AGENTRL_DATA', lookedIn: [inRoot] };
  const shared = sharedFolder(context);
  if (shared !== undefined) {
    const inShared = join(shared, 'data', location.folder);
    if ((context.exists ?? existsSync)(inShared))
      return { dir: inShared, from: 'shared', lookedIn: [inShared] };
    return { dir: inRoot, from: 'cache', lookedIn: [inShared, inRoot] };
  }
  return { dir: inRoot, from: 'cache', lookedIn: [inRoot] };
}

/** What the default data folder of an env option is, for its options schema and help. */
export function dataDirDefault(dataset: DataLocationName | DataLocation): string {
  const location = typeof dataset === 'string' ? DATA_LOCATIONS[dataset] : dataset;
  const own = location.variable !== undefined ? `$${location.variable}, else ` : '';
  return `${own}$${DATA_ROOT_VARIABLE}/${location.folder}, else data/${location.folder} of a source checkout's shared folder, else ${location.folder} in the user cache folder (~/.cache/agentrl on Linux)`;
}

/**
 * The sentence an error gives when a dataset's files are not where the resolution points: the
 * folders looked in and the fix (`agentrl data fetch <name>`, or a variable naming a copy).
 */
export function missingDataFix(
  dataset: DataLocationName | DataLocation,
  context: DataDirContext = {},
): string {
  const location = typeof dataset === 'string' ? DATA_LOCATIONS[dataset] : dataset;
  const resolved = resolveDataDir(location, context);
  const fetch = `agentrl data fetch ${location.name}`;
  const copy =
    location.variable !== undefined
      ? `set ${location.variable} to a folder holding a copy`
      : `set ${DATA_ROOT_VARIABLE} to a folder holding ${location.folder}/`;
  switch (resolved.from) {
    case 'variable':
      return `looked in ${resolved.dir} (from ${location.variable}); run \`${fetch} --dir ${resolved.dir}\` to download it there, or point ${location.variable} at another copy`;
    case 'AGENTRL_DATA':
      return `looked in ${resolved.dir} (from ${DATA_ROOT_VARIABLE}); run \`${fetch}\` to download it there, or ${copy}`;
    case 'shared':
      return `looked in ${resolved.dir} (the source checkout's shared folder, read before the cache folder); run \`${fetch}\` and set ${location.variable ?? DATA_ROOT_VARIABLE} to the folder it prints, or ${copy}`;
    case 'cache':
      return `looked in ${resolved.lookedIn.join(' and ')}; run \`${fetch}\` to download it into ${resolved.dir}, or ${copy}`;
  }
}
