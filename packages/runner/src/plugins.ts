/**
 * How the CLI finds environments and models: an env package registers its envs when imported
 * (`env.module`); a model module exports `createModel(modelConfig, context)` returning a
 * trainable policy and its tokenizer.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ConfigError,
  checkOptionKeys,
  type EnvInfo,
  type EnvRegistration,
  getEnvRegistration,
  type OptionsSchema,
  type PromptTemplate,
  type Tokenizer,
  type TrainablePolicy,
} from '@agentrl/core';
import type { RunConfig } from './config.ts';
import type { Logger } from './logger.ts';
import type { EnvSpec } from './rollout.ts';
import type { Expert } from './sft.ts';

/** What a model module's `createModel` receives besides the model config. */
export interface ModelContext {
  readonly config: RunConfig;
  /** The training env. */
  readonly env: EnvSpec;
  /** The held-out env (validation and `agentrl eval`), when the caller has one. */
  readonly valEnv?: EnvSpec;
  readonly logger: Logger;
}

/** What a model module's `createModel` returns. */
export interface CreatedModel {
  readonly policy: TrainablePolicy;
  readonly tokenizer: Tokenizer;
  /**
   * Facts about the model to keep in the run's metadata (`config.resolved.json`, key `model`):
   * parameter count, compute backend, GPU adapter. Plain JSON data.
   */
  readonly info?: Readonly<Record<string, unknown>>;
}

/** The signature a model module exports as `createModel`. */
export type CreateModel = (
  model: RunConfig['model'],
  context: ModelContext,
) => Promise<CreatedModel>;

/**
 * The file a package folder's `exports` map names for `subpath` (`.` or `./sub`), else its
 * `main`, else its `index.js`: built files first unless this process runs the sources, and
 * either way a file that exists.
 */
function packageEntry(pkgDir: string, subpath: string): string | undefined {
  const pkgJson = join(pkgDir, 'package.json');
  const pkg = existsSync(pkgJson)
    ? (JSON.parse(readFileSync(pkgJson, 'utf8')) as { exports?: unknown; main?: string })
    : {};
  const conditions = process.execArgv.some((a) => a.includes('@agentrl/source'))
    ? ['@agentrl/source', 'import', 'default']
    : ['import', 'default', '@agentrl/source'];
  const exportsMap = pkg.exports as Record<string, unknown> | string | undefined;
  const entry =
    typeof exportsMap === 'string'
      ? subpath === '.'
        ? exportsMap
        : undefined
      : exportsMap?.[subpath];
  let target: string | undefined;
  if (typeof entry === 'string') target = entry;
  else if (entry && typeof entry === 'object') {
    const map = entry as Record<string, unknown>;
    const hit = conditions.find(
      (c) => typeof map[c] === 'string' && existsSync(join(pkgDir, map[c] as string)),
    );
    target = hit ? (map[hit] as string) : undefined;
  } else if (subpath === '.' && pkg.main) target = pkg.main;
  else if (subpath === '.' && existsSync(join(pkgDir, 'index.js'))) target = 'index.js';
  return target ? join(pkgDir, target) : undefined;
}

/**
 * Finds a package specifier (`@scope/name/sub`) from `baseDir` upwards through node_modules (and
 * pnpm's `node_modules/.pnpm/node_modules`, where a workspace's packages are all linked) and
 * returns the file its `exports` map names, so that a config can name a package the runner
 * itself does not depend on, from anywhere in a workspace or an installed project.
 */
function resolveFrom(specifier: string, baseDir: string): string | undefined {
  const parts = specifier.split('/');
  const nameParts = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameParts).join('/');
  const subpath = parts.length > nameParts ? `./${parts.slice(nameParts).join('/')}` : '.';
  for (let dir = resolve(baseDir); ; dir = dirname(dir)) {
    for (const pkgDir of [
      join(dir, 'node_modules', name),
      join(dir, 'node_modules', '.pnpm', 'node_modules', name),
    ]) {
      if (existsSync(join(pkgDir, 'package.json'))) return packageEntry(pkgDir, subpath);
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The file to import for a path specifier (absolute, or relative to `baseDir`): the file itself,
 * or for a folder the entry its package.json names (or its index.js).
 */
function pathEntry(specifier: string, baseDir: string): string {
  const path = resolve(baseDir, specifier);
  if (!existsSync(path) || !statSync(path).isDirectory()) return path;
  const entry = packageEntry(path, '.');
  if (entry === undefined)
    throw new Error(
      `the folder ${path} has no package.json entry (exports or main) and no index.js; name a file in it`,
    );
  return entry;
}

/** Imports a package or file named in a config (`field` names it in errors), from `baseDir` upwards. */
export async function importModule(
  specifier: string,
  field: string,
  baseDir = process.cwd(),
): Promise<Record<string, unknown>> {
  try {
    if (isAbsolute(specifier) || specifier.startsWith('./') || specifier.startsWith('../')) {
      const file = pathEntry(specifier, baseDir);
      return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    }
    try {
      return (await import(specifier)) as Record<string, unknown>;
    } catch (error) {
      const found =
        (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND'
          ? resolveFrom(specifier, baseDir)
          : undefined;
      if (!found) throw error;
      return (await import(pathToFileURL(found).href)) as Record<string, unknown>;
    }
  } catch (error) {
    throw new ConfigError(
      `${field}: cannot import "${specifier}" (${(error as Error).message}); install the package or fix the path`,
      {
        details: { field, value: specifier },
        cause: error,
      },
    );
  }
}

/** An object as a config file gives it (a class instance, e.g. a `Shop` given in code, is kept whole). */
function isDataObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `options` with every relative path among them (the keys `schema` marks `path`, at any depth)
 * resolved against `baseDir`, the config file's folder.
 */
export function withResolvedPaths(
  options: Record<string, unknown>,
  schema: OptionsSchema | undefined,
  baseDir: string,
): Record<string, unknown> {
  if (schema === undefined) return options;
  const out: Record<string, unknown> = { ...options };
  for (const [key, value] of Object.entries(options)) {
    const spec = schema[key];
    if (spec?.path && typeof value === 'string' && value !== '' && !isAbsolute(value))
      out[key] = resolve(baseDir, value);
    else if (spec?.options && isDataObject(value))
      out[key] = withResolvedPaths(value, spec.options, baseDir);
  }
  return out;
}

/** The package that registers each env family (the id's part before the slash). */
export const ENV_PACKAGES: Readonly<Record<string, string>> = {
  alfworld: '@agentrl/env-alfworld',
  webshop: '@agentrl/env-webshop',
  search: '@agentrl/env-search',
};

function hasRegistration(id: string): boolean {
  try {
    getEnvRegistration(id);
    return true;
  } catch {
    return false;
  }
}

/**
 * The prompt template a run uses: the registration's default `prompt`, or the one of its `prompts`
 * that `env.prompt` names (an unknown name fails, listing the names there are).
 */
function promptOf(
  registration: EnvRegistration,
  name: string | undefined,
  id: string,
): PromptTemplate | undefined {
  if (name === undefined) return registration.prompt;
  const named = registration.prompts ?? {};
  const found = Object.hasOwn(named, name) ? named[name] : undefined;
  if (found !== undefined) return found;
  const names = Object.keys(named);
  throw new ConfigError(
    `env.prompt "${name}" is not a prompt template of ${id}: ${
      names.length > 0
        ? `use one of ${names.map((n) => `"${n}"`).join(', ')}, or leave env.prompt out for the default`
        : 'it registers only its default; leave env.prompt out'
    }`,
    { details: { field: 'env.prompt', value: name, known: names } },
  );
}

/**
 * Imports the env module (`env.module`, else the package of a known env family) and returns the
 * env specs for training and validation.
 */
export async function loadEnvSpecs(
  config: RunConfig,
  valOverrides: Record<string, unknown> = {},
): Promise<{ train: EnvSpec; val: EnvSpec; module: Record<string, unknown> }> {
  // Without env.module, the package of a known env family registers it (so switching env.id
  // from a preset needs no module setting).
  const family = ENV_PACKAGES[config.env.id.split('/')[0] ?? ''];
  const specifier = config.env.module ?? (hasRegistration(config.env.id) ? undefined : family);
  const module = specifier ? await importModule(specifier, 'env.module', config.baseDir) : {};
  let registration: ReturnType<typeof getEnvRegistration>;
  try {
    registration = getEnvRegistration(config.env.id);
  } catch (error) {
    throw new ConfigError(`env.id: ${(error as Error).message}`, {
      details: { field: 'env.id', value: config.env.id },
      cause: error,
    });
  }
  // The registration's declared options: a misspelt key fails here, before any work.
  if (registration.options !== undefined) {
    checkOptionKeys(config.env.options, registration.options, 'env.options');
    checkOptionKeys(config.env.valOptions, registration.options, 'env.valOptions');
    checkOptionKeys(
      valOverrides,
      registration.options,
      `the validation options of ${config.env.id}`,
    );
  }
  const { parser } = registration;
  const prompt = promptOf(registration, config.env.prompt, config.env.id);
  if (!parser || !prompt)
    throw new ConfigError(
      `env.id "${config.env.id}" registers no parser or prompt template; the runner needs both`,
      {
        details: { field: 'env.id', value: config.env.id },
      },
    );
  const taskTypeOf =
    typeof module.taskTypeOf === 'function'
      ? (module.taskTypeOf as (info: EnvInfo) => string)
      : undefined;
  const expert = expertOf(module);
  const base = config.baseDir ?? process.cwd();
  const make = (given: Record<string, unknown>): EnvSpec => {
    const options = withResolvedPaths(given, registration.options, base);
    return {
      create: () => registration.create(options),
      parser,
      prompt,
      ...(taskTypeOf ? { taskTypeOf } : {}),
      ...(registration.metrics ? { metrics: registration.metrics } : {}),
      ...(expert ? { expert } : {}),
    };
  };
  const valOptions = {
    ...config.env.options,
    ...(config.validation.split !== undefined && config.env.id.startsWith('alfworld/')
      ? { split: config.validation.split }
      : {}),
    ...config.env.valOptions,
    ...valOverrides,
  };
  return { train: make(config.env.options), val: make(valOptions), module };
}

/**
 * Refuses, before any rollout, prompts and responses that cannot fit the model: with
 * `rollout.maxPromptTokens` set, it plus `rollout.maxNewTokens` must be within the positions the
 * model module reports (`info.maxPositions`).
 */
export function checkSequenceBudget(
  config: RunConfig,
  info: Readonly<Record<string, unknown>> | undefined,
): void {
  const positions = info?.maxPositions;
  const { maxPromptTokens, maxNewTokens } = config.rollout;
  if (typeof positions !== 'number' || maxPromptTokens === undefined) return;
  if (maxPromptTokens + maxNewTokens <= positions) return;
  throw new ConfigError(
    `rollout.maxPromptTokens (${maxPromptTokens}) + rollout.maxNewTokens (${maxNewTokens}) = ${maxPromptTokens + maxNewTokens} tokens exceed the model's ${positions} positions: set rollout.maxPromptTokens to at most ${Math.max(1, positions - maxNewTokens)}, or use a model with more positions`,
    { details: { field: 'rollout.maxPromptTokens', value: maxPromptTokens, limit: positions } },
  );
}

/** Loads the model module and creates the model. */
export async function loadModel(config: RunConfig, context: ModelContext): Promise<CreatedModel> {
  const specifier = config.model.module;
  if (!specifier)
    throw new ConfigError(
      'model.module is required for this command: name the module that exports createModel',
      {
        details: { field: 'model.module' },
      },
    );
  const module = await importModule(specifier, 'model.module', config.baseDir);
  const create = module.createModel;
  if (typeof create !== 'function')
    throw new ConfigError(
      `model.module "${specifier}" exports no createModel function; export createModel(model, context)`,
      {
        details: { field: 'model.module', value: specifier },
      },
    );
  return await (create as CreateModel)(config.model, context);
}

/**
 * The expert an env module exports as `expert` (or as an `AlfworldExpert` class with
 * `act(text, admissible)`), if any (for `agentrl sft`).
 */
export function expertOf(module: Record<string, unknown>): Expert | undefined {
  if (typeof module.expert === 'function') return module.expert as Expert;
  // @agentrl/env-alfworld exports its expert as a class with a per-episode state.
  const Alfworld = module.AlfworldExpert;
  if (typeof Alfworld === 'function') {
    type Act = { act(text: string, admissible: readonly string[]): string };
    const make = () => new (Alfworld as new () => Act)();
    let expert = make();
    return (context) => {
      if (context.stepIndex === 0) expert = make();
      return expert.act(context.current.text, context.current.admissibleActions ?? []);
    };
  }
  return undefined;
}
