/**
 * The environment registry: versioned ids (`family/name-vN`) mapped to factories. A package
 * registers its environments when imported; `makeEnv(id, options)` builds one.
 */
import type { ActionParser, PromptTemplate, TextEnv } from './env.ts';
import { AgentRLError, InvalidInputError } from './errors.ts';
import { checkOptionKeys, type OptionsSchema } from './options.ts';

/** A registered environment: how to build it and how an agent talks to it. */
export interface EnvRegistration<Options = Record<string, unknown>> {
  /** Versioned id, `family/name-vN` (lower case, digits and dashes). */
  readonly id: string;
  /** One sentence for `agentrl envs` listings. */
  readonly description: string;
  /** Builds an environment instance. */
  readonly create: (options: Options) => TextEnv | Promise<TextEnv>;
  /** The parser that turns model text into actions for this environment. */
  readonly parser?: ActionParser;
  /** The default prompt template of this environment. */
  readonly prompt?: PromptTemplate;
  /**
   * Other prompt templates of this environment by name, which a run config picks instead of
   * `prompt` (the runner's `env.prompt`), e.g. a short `compact` one that tiny CPU models can
   * afford beside the paper's verbatim template.
   */
  readonly prompts?: Readonly<Record<string, PromptTemplate>>;
  /**
   * The options `create` accepts, with their defaults. When declared, {@link makeEnv} and the
   * runner reject any other key, naming the closest declared one.
   */
  readonly options?: OptionsSchema;
  /**
   * The env's own per-episode metrics beside success (the WebShop score, exact match per data
   * source), as plain data: the runner reads each from the final step's info and reports its
   * mean as `<prefix>/env/<name>`.
   */
  readonly metrics?: readonly EpisodeMetricSpec[];
}

/**
 * One per-episode number an env reports beside success, read from the info of the episode's last
 * step (an episode cut before any step, or whose info lacks the field, counts 0).
 */
export interface EpisodeMetricSpec {
  /** Metric name (`score` → `val/env/score`): letters, digits, `_` and `-`. */
  readonly name: string;
  /** The info field holding the episode's value: a number, or a boolean counted as 0 or 1. */
  readonly infoField: string;
  /** Factor applied to every value (the WebShop score is the mean task score × 100). Default 1. */
  readonly scale?: number;
  /**
   * Also report the mean per value of this info field (`val/env/<name>/<value>`), e.g. exact
   * match per data source (`dataSource`).
   */
  readonly groupBy?: string;
  /** How reports and the CLI name it (default `name`). */
  readonly label?: string;
}

const METRIC_NAME = /^[A-Za-z0-9_-]+$/;
const ID_PATTERN = /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*-v[0-9]+$/;

/** Registrations by id. Module-level on purpose: importing a package registers its envs once. */
const registry = new Map<string, EnvRegistration<never>>();

/**
 * Registers an environment. Registering the same id again with the same factory is a no-op (a
 * module evaluated twice); with a different factory it throws `DUPLICATE_ENV`.
 */
export function registerEnv<Options>(registration: EnvRegistration<Options>): void {
  if (!ID_PATTERN.test(registration.id)) {
    throw new InvalidInputError(
      `env id "${registration.id}" is not versioned: use "family/name-vN" (for example "alfworld/text-v1")`,
      { details: { field: 'id', value: registration.id } },
    );
  }
  for (const metric of registration.metrics ?? [])
    if (!METRIC_NAME.test(metric.name) || metric.infoField.length === 0)
      throw new InvalidInputError(
        `env "${registration.id}": metric name "${metric.name}" (info field "${metric.infoField}") is not usable: use letters, digits, "_" or "-" and name the info field`,
        { details: { field: 'metrics', value: metric.name } },
      );
  const existing = registry.get(registration.id);
  if (existing) {
    if (existing.create === (registration.create as unknown)) return;
    throw new AgentRLError(
      'DUPLICATE_ENV',
      `env id "${registration.id}" is already registered by another factory; bump the version (-vN) for a new behaviour`,
      { details: { id: registration.id } },
    );
  }
  registry.set(registration.id, registration as unknown as EnvRegistration<never>);
}

/** Removes a registration (tests and plugin reloading). Returns whether it existed. */
export function unregisterEnv(id: string): boolean {
  return registry.delete(id);
}

/** The registration of `id`; throws `UNKNOWN_ENV` listing the known ids when it is absent. */
export function getEnvRegistration<Options = Record<string, unknown>>(
  id: string,
): EnvRegistration<Options> {
  const found = registry.get(id);
  if (found) return found as unknown as EnvRegistration<Options>;
  const known = [...registry.keys()].sort();
  const family = id.split('/')[0] ?? '';
  const sameFamily = known.filter((k) => k.startsWith(`${family}/`));
  const hint =
    sameFamily.length > 0
      ? ` Did you mean ${sameFamily.map((k) => `"${k}"`).join(', ')}?`
      : known.length > 0
        ? ` Registered: ${known.join(', ')}.`
        : ' No environment is registered: import the env package (for example "@agentrl/env-alfworld") first.';
  throw new AgentRLError('UNKNOWN_ENV', `unknown env id "${id}".${hint}`, {
    details: { id, known },
  });
}

/**
 * Builds the environment registered as `id`. An option key the registration does not declare is
 * a `BAD_CONFIG` error naming the closest declared key.
 */
export async function makeEnv<Options = Record<string, unknown>>(
  id: string,
  options: Options,
): Promise<TextEnv> {
  const registration = getEnvRegistration<Options>(id);
  if (registration.options !== undefined)
    checkOptionKeys(options, registration.options, `the options of "${id}"`);
  return await registration.create(options);
}

/** Ids of every registered environment, sorted. */
export function listEnvs(): string[] {
  return [...registry.keys()].sort();
}
