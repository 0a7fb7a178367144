/**
 * `agentrl env serve`: one registered environment served over OpenEnv's WebSocket protocol by
 * `@agentrl/env-server`, until SIGINT or SIGTERM. `--env` takes a short name (the packages below)
 * or a registry id; `--set env.module=MODULE` imports a module that registers more envs;
 * `--set env.options.KEY=VALUE` sets an env option and `--set server.KEY=VALUE` a server option.
 */
import {
  AgentRLError,
  ConfigError,
  checkOptionKeys,
  closestName,
  getEnvRegistration,
  isAgentRLError,
  listEnvs,
} from '@agentrl/core';
import {
  ENV_SERVER_OPTIONS,
  type EnvServerHandle,
  type EnvServerOptions,
  startEnvServer,
} from '@agentrl/env-server';
import { listenError } from './cli-errors.ts';
import type { Flags } from './cli-flags.ts';
import { applyOverride } from './config.ts';
import { DATASET_NAMES } from './data/datasets.ts';
import type { Logger } from './logger.ts';
import { ENV_PACKAGES, importModule } from './plugins.ts';

/**
 * Short names of `--env`: the package that registers the env, its registry id, and the `--set`
 * that serves it without downloaded data (when it has such an option).
 */
export const SERVED_ENVS: Readonly<
  Record<string, { readonly module: string; readonly id: string; readonly withoutData?: string }>
> = {
  alfworld: {
    module: '@agentrl/env-alfworld',
    id: 'alfworld/text-v1',
    withoutData: '--set env.options.source=generated',
  },
  webshop: {
    module: '@agentrl/env-webshop',
    id: 'webshop/text-v1',
    withoutData: '--set env.options.catalogue.kind=synthetic',
  },
  'webshop-browser': { module: '@agentrl/env-webshop', id: 'webshop/browser-v1' },
  search: {
    module: '@agentrl/env-search',
    id: 'search/qa-v1',
    withoutData: '--set env.options.generator.seed=0',
  },
};

const SET_KEYS = {
  env: {
    description: 'the env served',
    options: {
      options: { description: 'options of the env (its registered options)' },
      module: { description: 'a package or file to import first (it registers envs)' },
    },
  },
  server: { description: 'options of the server', options: ENV_SERVER_OPTIONS },
} as const;

/** What `agentrl env serve` resolves its flags to. */
export interface EnvServeSettings {
  readonly envId: string;
  readonly module: string | undefined;
  readonly envOptions: Record<string, unknown>;
  readonly server: EnvServerOptions;
}

/** Reads `--env`, `--host`, `--port` and every `--set` of `agentrl env serve`. */
export function envServeSettings(flags: Flags): EnvServeSettings {
  const name = flags.env;
  if (name === undefined)
    throw new ConfigError(
      `agentrl env serve: --env is required; use ${Object.keys(SERVED_ENVS).join(', ')} or a registry id`,
      { details: { field: '--env' } },
    );
  let raw: Record<string, unknown> = {};
  for (const s of flags.set ?? []) raw = applyOverride(raw, s);
  checkOptionKeys(raw, SET_KEYS, '--set');
  const env = (raw.env ?? {}) as { options?: Record<string, unknown>; module?: unknown };
  const server = { ...((raw.server ?? {}) as Record<string, unknown>) };
  if (flags.host !== undefined) server.host = flags.host;
  if (flags.port !== undefined) server.port = Number(flags.port);
  const alias = SERVED_ENVS[name];
  const module = typeof env.module === 'string' ? env.module : alias?.module;
  return {
    envId: alias?.id ?? name,
    module,
    envOptions: env.options ?? {},
    server: server as EnvServerOptions,
  };
}

/** The envs `agentrl env serve` can serve: each short name with its id, then other registered ids. */
function servableList(): string {
  const ids = new Set(Object.values(SERVED_ENVS).map((e) => e.id));
  const others = listEnvs().filter((id) => !ids.has(id));
  return [...Object.entries(SERVED_ENVS).map(([name, e]) => `${name} (${e.id})`), ...others].join(
    ', ',
  );
}

/** The error for an `--env` that names no registered env: the closest name, and every one. */
function unknownEnvError(name: string, cause: unknown): AgentRLError {
  const names = [
    ...Object.keys(SERVED_ENVS),
    ...Object.values(SERVED_ENVS).map((e) => e.id),
    ...listEnvs(),
  ];
  const near = closestName(name, [...new Set(names)]);
  return new AgentRLError(
    'UNKNOWN_ENV',
    `--env "${name}" is not an env agentrl env serve knows${near !== undefined ? `; did you mean "${near}"?` : ''} Serve one of: ${servableList()}; or another registry id, with --set env.module=MODULE naming the package that registers it`,
    { details: { field: '--env', value: name, known: names }, cause },
  );
}

/**
 * The fix for an env that cannot reset at start: its dataset's `agentrl data fetch`, and the
 * setting that serves it without data.
 */
function notReadyError(error: AgentRLError, name: string, envId: string): AgentRLError {
  const family = envId.split('/')[0] ?? '';
  const fixes = [
    ...((DATASET_NAMES as readonly string[]).includes(family)
      ? [`get its data with \`agentrl data fetch ${family}\``]
      : []),
    ...(SERVED_ENVS[name]?.withoutData !== undefined
      ? [`serve it without data with ${SERVED_ENVS[name]?.withoutData}`]
      : []),
    'set its options with --set env.options.KEY=VALUE',
  ];
  return new AgentRLError('ENV_NOT_READY', `${error.message}. Fix: ${fixes.join(', or ')}`, {
    details: error.details,
    cause: error,
  });
}

/** Starts the server `flags` describe (the caller stops it). */
export async function startEnvServe(flags: Flags, logger: Logger): Promise<EnvServerHandle> {
  const settings = envServeSettings(flags);
  // A registry id of a known family (alfworld/text-v1) needs no --set env.module either.
  const family = ENV_PACKAGES[settings.envId.split('/')[0] ?? ''];
  const module =
    settings.module ??
    (settings.envId.includes('/') && !isRegistered(settings.envId) ? family : undefined);
  if (module !== undefined) await importModule(module, 'env.module');
  try {
    getEnvRegistration(settings.envId);
  } catch (error) {
    throw unknownEnvError(flags.env ?? settings.envId, error);
  }
  const port = settings.server.port ?? ENV_SERVER_OPTIONS.port.default;
  const host = settings.server.host ?? ENV_SERVER_OPTIONS.host.default;
  try {
    return await startEnvServer({
      envId: settings.envId,
      envOptions: settings.envOptions,
      ...settings.server,
      logger,
    });
  } catch (error) {
    if (isAgentRLError(error, 'ENV_NOT_READY'))
      throw notReadyError(error, flags.env ?? '', settings.envId);
    throw listenError(error, port, host);
  }
}

function isRegistered(id: string): boolean {
  return listEnvs().includes(id);
}
